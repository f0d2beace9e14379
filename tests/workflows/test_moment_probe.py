"""The moment probe: its features against transformers run directly, its probe against scikit-learn on the same
features, and its refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.workflows.moment_probe import FEATURE_SETS, moment_features_per_layer, moment_probe

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

ENCODER = "hf-layers:minilm"
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "senteval-probing" / "sentence_length.txt"


def _sample(n_per_class: int) -> tuple[list[str], list[str]]:
    """The first ``n_per_class`` training sentences of each SentLen class of the shipped sample."""
    texts, labels, seen = [], [], {}
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        split, label, text = line.split("\t")
        if split == "tr" and seen.get(label, 0) < n_per_class:
            seen[label] = seen.get(label, 0) + 1
            texts.append(text)
            labels.append(label)
    return texts, labels


@pytest.mark.slow  # loads MiniLM twice (hf-layers and transformers directly)
def test_features_equal_moments_of_transformers_token_states():
    import torch
    from transformers import AutoModel, AutoTokenizer

    from repspace.engines.encoders import get_encoder

    texts = _sample(2)[0] + ["Hi"]
    enc = get_encoder(ENCODER)
    feats = moment_features_per_layer(enc, texts, [0, 3, 6], 4, batch_size=5)
    folder = str(enc.folder)
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    with torch.no_grad():
        states = [model(**tok(t, return_tensors="pt"), output_hidden_states=True).hidden_states for t in texts]
    for j, layer in enumerate([0, 3, 6]):
        zs = [s[layer][0].double().numpy() for s in states]  # T x d, every token, one text at a time (no padding)
        allz = np.vstack(zs)
        cov = np.cov(allz.T, bias=True)
        w, v = np.linalg.eigh(cov)
        u = v[:, np.argsort(w)[::-1][:4]]
        u *= np.sign(u[np.abs(u).argmax(0), np.arange(4)])
        iu = np.triu_indices(4)
        for i, z in enumerate(zs):
            c = np.cov(z.T, bias=True) if len(z) > 1 else np.zeros((z.shape[1],) * 2)
            np.testing.assert_allclose(feats[j]["mean"][i], z.mean(0), atol=1e-5)
            np.testing.assert_allclose(feats[j]["var"][i], z.var(0), atol=1e-5)
            np.testing.assert_allclose(feats[j]["lowrank"][i], (u.T @ c @ u)[iu], atol=1e-5)


@pytest.mark.slow  # loads MiniLM
def test_the_probe_equals_scikit_learn_on_the_same_features():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from repspace.engines.encoders import get_encoder

    texts, labels = _sample(10)
    r = moment_probe(ENCODER, texts, labels, layers=[0], rank=3, cv=5, seed=1)
    f = moment_features_per_layer(get_encoder(ENCODER), texts, [0], 3)[0]
    for name in FEATURE_SETS:
        X = np.hstack([f[p] for p in name.split("+")])
        pipe = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, tol=1e-6, max_iter=10_000))
        ref = cross_val_score(pipe, X, np.asarray(labels), cv=StratifiedKFold(5, shuffle=True, random_state=1))
        assert r.results[0][name].score == pytest.approx(ref.mean(), abs=1e-9), name
    rows = r.to_dict()["rows"]
    assert [row["features"] for row in rows] == list(FEATURE_SETS) and rows[2]["d"] == 384 * 2 + 6
    assert all(row["ci_low"] <= row["score"] <= row["ci_high"] for row in rows)


def test_bad_input_is_refused_before_any_model_runs():
    with pytest.raises(InputError, match="labels"):
        moment_probe(ENCODER, ["a", "b"], ["x"])
    with pytest.raises(InputError, match="non-empty"):
        moment_probe(ENCODER, [], [])
    with pytest.raises(InputError, match="kind"):
        moment_probe(ENCODER, ["a", "b"], ["x", "y"], kind="sparse")
