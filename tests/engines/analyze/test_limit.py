"""Free-embedding capacity (repspace.engines.analyze.limit) against the LIMIT paper's fitted critical-n curve,
a direct count of the accuracy and margin, and the one-dimensional bound."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.analyze import critical_dimension, free_embedding_fit, limit_curve, topk_relevance
from repspace.engines.analyze.limit import paper_critical_n, scores_margin

pytestmark = pytest.mark.numerics


def test_critical_dimensions_reproduce_the_papers_curve_for_small_n():
    # Weller et al. 2025, figure 2: critical n(d) = -10.5322 + 4.0309 d + 0.0520 d^2 + 0.0037 d^3 (published fit);
    # the paper's d for n is the smallest d whose fitted critical n reaches n
    paper = {n: min(d for d in range(1, 50) if -10.5322 + 4.0309 * d + 0.0520 * d**2 + 0.0037 * d**3 >= n)
             for n in (10, 20)}
    assert paper == {10: 5, 20: 7}
    curve = limit_curve([10, 20])
    assert [(p.n, p.critical_d, p.paper_d) for p in curve.points] == [(10, 5, 5), (20, 7, 7)]
    assert curve.points[1].to_dict()["queries"] == 190


def test_the_papers_extrapolated_figures_follow_from_its_fit():
    # its text: 500k (512), 1.7m (768), 4m (1024), 107m (3072), 250m (4096)
    for d, quoted in ((512, 5e5), (768, 1.7e6), (1024, 4e6), (3072, 1.07e8), (4096, 2.5e8)):
        assert paper_critical_n(d) == pytest.approx(quoted, rel=0.05)


def test_accuracy_and_margin_equal_a_direct_count():
    rng = np.random.default_rng(0)
    A = topk_relevance(7, 2)
    S = rng.standard_normal(A.shape)
    acc, margin = scores_margin(A, S)
    hits = sum(len(set(np.argsort(-S[i])[:2]) & set(np.flatnonzero(A[i]))) for i in range(len(A)))
    worst = min(min(S[i][A[i]]) - max(S[i][~A[i]]) for i in range(len(A)))
    assert acc == pytest.approx(hits / (2 * len(A)), abs=1e-15) and margin == pytest.approx(worst, abs=1e-15)


def test_topk_relevance_holds_every_subset_once():
    A = topk_relevance(6, 3)
    assert A.shape == (math.comb(6, 3), 6)
    assert {tuple(np.flatnonzero(r)) for r in A} == set(itertools.combinations(range(6), 3))


def test_one_dimension_cannot_realise_more_than_two_pairs():
    # in 1-d a query's top 2 are the two largest or the two smallest documents
    assert not free_embedding_fit(topk_relevance(4, 2), 1, max_steps=2000).realised


def test_max_margin_realises_with_a_positive_margin_and_the_fit_is_reproducible():
    A = topk_relevance(6, 2)
    r = critical_dimension(A, loss="margin", d_max=8)
    assert r.d is not None and r.fits[-1].margin > 0 and all(not f.realised for f in r.fits[:-1])
    again = free_embedding_fit(A, r.d, loss="margin")
    assert again.to_dict() == r.fits[-1].to_dict()


@pytest.mark.parametrize("call, message", [
    (lambda: topk_relevance(3, 3), "k must be below n"),
    (lambda: topk_relevance(1000, 2), "queries is more than"),
    (lambda: free_embedding_fit([[1, 1]], 2), "relevant and one irrelevant"),
    (lambda: free_embedding_fit([[2, 0]], 2), "only 0 and 1"),
    (lambda: free_embedding_fit(topk_relevance(4), 2, loss="mse"), "loss"),
    (lambda: limit_curve([]), "at least one"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(InputError, match=message):
        call()
