"""``model_thresholds``: a model's similarity thresholds read off STS-B test, checked against cosines recomputed
with scikit-learn and thresholds recomputed with numpy and scikit-learn's ROC curve; MiniLM's and the static
model's thresholds differ; bad input is one clear error before anything is embedded."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from _data_subsets import sts_head

from repspace import InputError
from repspace.engines.encoders import get_encoder
from repspace.evaluate import model_thresholds
from repspace.workflows.evaluate._thresholds import random_pairs

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _rows(path: Path) -> list[tuple[str, str, float]]:
    with path.open(encoding="utf-8", newline="") as f:
        return [(a, b, float(s)) for a, b, s in csv.reader(f)]


def test_static_thresholds_on_stsb_test_equal_an_independent_recomputation(shared_data):
    from sklearn.metrics import roc_curve
    from sklearn.metrics.pairwise import paired_cosine_distances

    path = shared_data / "stsb" / "stsb-en-test.csv"
    t = model_thresholds(path, encoder="static", bootstrap=0)
    rows = _rows(path)
    sentences = list(dict.fromkeys([a for a, _, _ in rows] + [b for _, b, _ in rows]))
    vectors = get_encoder("static").encode(sentences)
    at = {s: i for i, s in enumerate(sentences)}
    related = [(at[a], at[b]) for a, b, s in rows if s >= 4.0]
    drawn = random_pairs(len(sentences), 0, exclude=[(at[a], at[b]) for a, b, _ in rows])
    assert not {tuple(sorted(p)) for p in drawn.tolist()} & {tuple(sorted((at[a], at[b]))) for a, b, _ in rows}

    def cos(pairs):
        pairs = np.asarray(pairs)
        return 1.0 - paired_cosine_distances(vectors[pairs[:, 0]], vectors[pairs[:, 1]])

    rel, rnd = cos(related), cos(drawn)
    assert (t.n_related, t.n_random, t.info["n_sentences"]) == (len(related), len(sentences), len(sentences))
    assert t.info["kind"] == "sts" and t.info["min_score"] == 4.0 and t.info["encoder"] == "static"
    # cosines in float64 from float32 vectors, two ways: equal to ~1e-7 (float32 inputs), so the cuts are too
    assert t.random_cut == pytest.approx(np.quantile(rnd, 0.95), abs=1e-6)
    assert t.related_above == pytest.approx(np.mean(rel > np.quantile(rnd, 0.95)), abs=1.5 / len(rel))
    y = np.r_[np.ones(len(rel)), np.zeros(len(rnd))]
    fpr, tpr, thresholds = roc_curve(y, np.r_[rel, rnd])
    best = int(np.argmax(tpr - fpr))
    assert t.youden_cut == pytest.approx(thresholds[best], abs=1e-6)
    assert t.youden_j == pytest.approx(tpr[best] - fpr[best], abs=1e-9)


@pytest.mark.slow  # loads MiniLM
def test_minilm_and_the_static_model_have_different_thresholds(shared_data, tmp_path):
    path = sts_head(shared_data, tmp_path / "stsb-head-test.csv", 300)
    static = model_thresholds(path, encoder="static", bootstrap=300)
    minilm = model_thresholds(path, encoder="minilm", bootstrap=300)
    assert static.n_related == minilm.n_related > 50 and static.n_random == minilm.n_random
    # the static model's random pairs sit far higher: the two intervals do not even touch
    assert minilm.random_cut_interval.high < static.random_cut_interval.low
    assert minilm.related_above > static.related_above  # more of MiniLM's related pairs clear its own cut
    assert minilm.youden_j > static.youden_j  # and MiniLM tells related from random pairs better
    # (Youden's cut is not compared: where related and random pairs barely overlap, any cut in the gap between
    # them separates them about as well, and its interval spans that gap; on these 300 pairs the two overlap)


def test_a_pair_file_s_related_pairs_are_those_labelled_1(tmp_path):
    rows = ["sentence1,sentence2,label", "a cat sits on the mat,a cat is sitting on a mat,1",
            "a man plays a guitar,a man plays guitar,1", "a dog runs,a dog is running,1",
            "a woman cooks,the sun is hot,0", "kids play football,a plane lands,0"]
    path = tmp_path / "pairs-dev.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    t = model_thresholds(path, encoder="static", bootstrap=0, seed=3)
    assert (t.n_related, t.n_random, t.info["kind"], t.info["split"]) == (3, 10, "pairs", "dev")
    assert t.info["related"] == "labelled 1" and "min_score" not in t.info
    with pytest.raises(InputError, match="--min-score applies to an STS file"):
        model_thresholds(path, encoder="static", min_score=3.0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"min_score": 6.0}, "no pair of .* has a gold score >= 6"),
    ({"quantile": 0.0}, "quantile"),
    ({"bootstrap": -1}, "bootstrap"),
    ({"encoder": "static", "space": "docs"}, "not both"),
    ({"encoder": None, "space": "docs"}, "a store is needed"),
])
def test_bad_input_is_one_clear_error(tmp_path, kwargs, match):
    path = tmp_path / "toy-test.csv"
    path.write_text("a cat,a kitten,4.5\na dog,a puppy,4\na car,the sea,0\n", encoding="utf-8")
    with pytest.raises(InputError, match=match):
        model_thresholds(path, **{"encoder": "no-such-encoder", **kwargs})  # fails before any model loads


def test_random_pairs_are_seeded_and_never_pair_a_sentence_with_itself():
    a, b = random_pairs(300, seed=5), random_pairs(300, seed=5)
    assert (a == b).all() and (a[:, 0] == np.arange(300)).all() and (a[:, 0] != a[:, 1]).all()
    assert not (random_pairs(300, seed=6) == a).all()
    with pytest.raises(InputError, match="at least 2 distinct sentences"):
        random_pairs(1, seed=0)
