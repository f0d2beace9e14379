"""The layer profile: its figures against transformers run directly, its streaming, its baselines and its errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.workflows.layer_profile import profile_encoders, profile_layers

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

ENCODER = "hf-layers:minilm"


@pytest.fixture(scope="module")
def sentences(stsb_dev_sentence1: list[str]) -> list[str]:
    """The first 40 ``sentence1`` of STS-B dev and two inputs of 3 tokens."""
    return stsb_dev_sentence1[:40] + ["Hi", "a"]


def _direct(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per layer, the mean over texts of prompt entropy (α = 1 and 2) and curvature, from transformers alone.

    Each text runs alone (no padding) through AutoModel on the folder hf-layers:minilm loads; the formulas
    of the issue are written out here in float64.
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    from repspace.engines.encoders import get_encoder

    folder = str(get_encoder(ENCODER).folder)
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    shannon, renyi, curv = [], [], []
    with torch.no_grad():
        for text in texts:
            hidden = model(**tok(text, return_tensors="pt"), output_hidden_states=True).hidden_states
            rows = [[], [], []]
            for h in hidden:
                z = h[0].double().numpy()  # T x d, every token the tokenizer emits
                lam = np.clip(np.linalg.eigvalsh(z @ z.T), 0, None)
                p = lam / lam.sum()
                p = p[p > 1e-12 * p.max()]
                log_t = np.log(len(z))
                rows[0].append(-np.sum(p * np.log(p)) / log_t)
                rows[1].append(-np.log(np.sum(p**2)) / log_t)
                v = np.diff(z, axis=0)
                cos = [a @ b / (np.linalg.norm(a) * np.linalg.norm(b)) for a, b in zip(v[:-1], v[1:])]
                rows[2].append(np.mean(np.arccos(np.clip(cos, -1, 1))))
            for out, row in zip((shannon, renyi, curv), rows):
                out.append(row)
    return np.mean(shannon, axis=0), np.mean(renyi, axis=0), np.mean(curv, axis=0)


@pytest.mark.slow  # loads MiniLM twice (hf-layers and transformers directly)
def test_entropy_and_curvature_equal_transformers_run_directly(sentences):
    p = profile_layers(ENCODER, sentences, alphas=[2], batch_size=8, bootstrap=0)
    shannon, renyi, curv = _direct(sentences)
    assert p.layers == tuple(range(7)) and p.n_inputs == len(sentences)
    for j in p.layers:
        assert p.figure("prompt_entropy", j).mean == pytest.approx(shannon[j], abs=1e-5)
        assert p.figure("prompt_entropy_alpha_2", j).mean == pytest.approx(renyi[j], abs=1e-5)
        assert p.figure("curvature", j).mean == pytest.approx(curv[j], abs=1e-5)
        assert p.figure("curvature", j).n == len(sentences)
    assert p.skipped["curvature"] == 0 and p.skipped["neighbourhood_overlap"] == 2  # "Hi", "a": 3 tokens, k = 3
    assert p.figure("neighbourhood_overlap", 0) is None and p.figure("neighbourhood_overlap", 1).n == 40


@pytest.mark.slow  # loads MiniLM
def test_batches_and_intervals_do_not_change_the_figures(sentences):
    """Streaming a batch at a time: the batch size changes padding only; intervals hold their means."""
    a = profile_layers(ENCODER, iter(sentences), layers=[0, 3, -1], batch_size=3, bootstrap=200, seed=5)
    b = profile_layers(ENCODER, sentences, layers=[0, 3, -1], batch_size=64, bootstrap=200, seed=5)
    assert a.settings["unchanged_by_augment"] == b.settings["unchanged_by_augment"]
    for name in a.figures:
        for fa, fb in zip(a.figures[name], b.figures[name]):
            if fa is None:
                assert fb is None
                continue
            assert fa.n == fb.n and fa.mean == pytest.approx(fb.mean, abs=1e-5), name
            assert fa.low <= fa.mean <= fa.high
    # the geometry-of-tokens paper's finding: the overlap of neighbours between layers is higher for real
    # inputs than for the same tokens shuffled, in the middle layers
    assert b.figure("neighbourhood_overlap", 3).mean > b.figure("neighbourhood_overlap_shuffled", 3).mean
    data = b.to_dict()
    assert json.loads(json.dumps(data)) == data and data["layers"][2]["layer"] == 6


@pytest.mark.slow  # loads MiniLM
def test_a_shuffle_that_cannot_move_anything_is_its_own_baseline_and_the_task_picks_a_layer(shared_data):
    texts = ["dog dog dog dog dog", "cat cat cat cat cat cat"]  # every non-special token the same
    p = profile_layers(ENCODER, texts, layers=[1, 6], augment="casing", bootstrap=0,
                       task="sts", task_data=shared_data / "stsb" / "stsb-en-test.csv")
    assert p.settings["unshuffled"] == 2
    for base in ("intrinsic_dimension", "mean_cosine", "neighbourhood_overlap"):
        for j in p.layers:
            assert p.figure(f"{base}_shuffled", j) == p.figure(base, j)
    # casing cannot change an uncased tokenizer's tokens: the pooled states are the same
    assert p.figure("augmentation_invariance", 6).mean == pytest.approx(1.0, abs=1e-6)
    # MiniLM's last layer is its trained output; EVALUATION.md has its STS-B test Spearman, 0.8203
    assert p.task == "sts:stsb-en-test" and p.best_layer == 6
    assert p.task_scores[1].mean == pytest.approx(0.8203, abs=1e-4) and p.task_scores[1].n == 1379


def test_bad_input_is_refused_before_any_model_runs():
    with pytest.raises(InputError, match="one vector per text"):
        profile_layers("static", ["a cat"])
    with pytest.raises(InputError, match="no texts"):
        profile_layers(ENCODER, [])
    with pytest.raises(InputError, match="alpha"):
        profile_layers(ENCODER, ["a cat"], alphas=[-1])
    with pytest.raises(InputError, match="task"):
        profile_layers(ENCODER, ["a cat"], task="sts")
    with pytest.raises(InputError, match="perturbation"):
        profile_layers(ENCODER, ["a cat"], augment="nonsense")
    with pytest.raises(InputError, match="twice"):
        profile_encoders([ENCODER, ENCODER], ["a cat"])
