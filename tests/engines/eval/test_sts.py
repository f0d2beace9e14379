"""STS scores under MTEB's names, computed as MTEB's STS task computes them (mteb 2.26.24 itself is the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval import load_sts, sts
from repspace.engines.eval.sts import sts_scores

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def stsb_static(shared_data):
    from repspace.engines.encoders import get_encoder

    pairs = load_sts(shared_data / "stsb" / "stsb-en-test.csv")
    enc = get_encoder("static", normalize=False)  # raw vectors: the distances differ from the cosine's order
    return pairs, enc.encode(pairs.sentences1), enc.encode(pairs.sentences2)


def test_sts_scores_are_mtebs_sts_scores(stsb_static):
    mteb = pytest.importorskip("mteb")
    from sklearn.metrics.pairwise import (
        paired_cosine_distances,
        paired_euclidean_distances,
        paired_manhattan_distances,
    )

    pairs, a, b = stsb_static
    a, b = a.astype(np.float64), b.astype(np.float64)
    ours = sts_scores(a, b, pairs.scores)
    # MTEB's STS evaluator (any_sts_evaluator) and AbsTaskSTS._calculate_scores, gold scaled to 0-1 as MTEB does
    evaluator = {"cosine_scores": (1 - paired_cosine_distances(a, b)).tolist(),
                 "manhattan_distances": (-paired_manhattan_distances(a, b)).tolist(),
                 "euclidean_distances": (-paired_euclidean_distances(a, b)).tolist(),
                 "similarity_scores": None}
    theirs = mteb.abstasks.AbsTaskSTS._calculate_scores(None, evaluator, list(pairs.scores / 5))
    assert set(theirs) == set(ours)
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-12), key
    assert ours["euclidean_spearman"] != ours["cosine_spearman"]  # the check can tell the measures apart


def test_sts_reports_mtebs_main_score_beside_ours(stsb_static):
    pairs = stsb_static[0]
    r = sts(lambda texts: np.array([[len(t), t.count("a") + 1.0, t.count("e")] for t in texts]), pairs)
    assert r.main_metric == "spearman" and r.scores["cosine_spearman"] == r.main_score
    assert r.scores["cosine_pearson"] == r.scores["pearson"]
    assert {"euclidean_spearman", "manhattan_pearson"} <= set(r.scores)


def test_distance_correlations_are_left_out_when_undefined():
    # every pair one unit apart (Euclidean and Manhattan), at different angles: only the cosine ranks them
    a = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    b = a + np.array([0.0, 1.0])
    s = sts_scores(a, b, np.array([1.0, 2.0, 3.0]))
    assert s["cosine_spearman"] == pytest.approx(1.0)
    assert sorted(s) == ["cosine_pearson", "cosine_spearman", "pearson", "spearman"]
    with pytest.raises(InputError, match="same cosine"):
        sts_scores(np.ones((3, 2)), np.ones((3, 2)), np.array([1.0, 2.0, 3.0]))
