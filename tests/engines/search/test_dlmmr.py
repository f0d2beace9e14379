"""Length-aware MMR (DL-MMR) against the formula recomputed from scratch at every step."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.search.dlmmr import length_mmr
from repspace.engines.search.mmr import mmr

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def relevance(q, x, metric):
    q, x = np.asarray(q, float), np.asarray(x, float)
    if metric == "cosine":
        return [float(np.dot(row, q) / (np.linalg.norm(row) * np.linalg.norm(q))) for row in x]
    if metric == "l2":
        return [-float(np.linalg.norm(row - q)) for row in x]
    return [float(np.dot(row, q)) for row in x]


def reference_dlmmr(q, x, rows, lengths, k, lam, metric):
    """The paper's greedy rule, one candidate and one pick at a time, scaled by min and max as the authors do."""
    rel = relevance(q, x, metric)
    lo, hi = min(rel), max(rel)
    rel_s = [(r - lo) / (hi - lo) for r in rel]
    llo, lhi = min(lengths), max(lengths)
    len_s = [(v - llo) / (lhi - llo) for v in lengths]
    picked: list[int] = []
    for _ in range(min(k, len(rows))):
        best, best_j = None, None
        for j in range(len(rows)):
            if j in picked:
                continue
            if not picked:
                val = rel[j]
            else:
                val = lam * rel_s[j] + (1 - lam) * min(abs(len_s[j] - len_s[s]) for s in picked)
            if best is None or val > best + 1e-12 or (abs(val - best) <= 1e-12 and rows[j] < rows[best_j]):
                best, best_j = val, j
        picked.append(best_j)
    return [int(rows[j]) for j in picked]


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
@pytest.mark.parametrize("lam", [0.0, 0.3, 0.5, 0.8])
def test_matches_the_formula_from_scratch(metric, lam):
    rng = np.random.default_rng(int(lam * 10) + 7 * len(metric))
    x = rng.standard_normal((40, 6))
    q = rng.standard_normal(6)
    rows = rng.permutation(500)[:40]
    lengths = rng.integers(5, 400, 40).astype(float)
    scores, got = length_mmr(q, x, rows, lengths, 12, lambda_=lam, metric=metric)
    assert got.tolist() == reference_dlmmr(q, x, rows, lengths, 12, lam, metric)
    assert len(set(got.tolist())) == 12
    want = np.array(relevance(q, x, metric))[[rows.tolist().index(r) for r in got]]
    np.testing.assert_allclose(scores, -want if metric == "l2" else want, rtol=1e-5)


def test_lambda_one_is_the_plain_ranking_and_lengths_spread_with_lambda_zero():
    rng = np.random.default_rng(2)
    x, q = rng.standard_normal((60, 5)), rng.standard_normal(5)
    rows = np.arange(60)
    lengths = rng.integers(1, 1000, 60).astype(float)
    assert length_mmr(q, x, rows, lengths, 10, lambda_=1.0)[1].tolist() == mmr(q, x, rows, 10, lambda_=1.0)[1].tolist()
    _, picks = length_mmr(q, x, rows, lengths, 3, lambda_=0.0)
    # after the most relevant, λ = 0 picks the length farthest from it, then the one farthest from both
    first = lengths[picks[0]]
    assert lengths[picks[1]] == max(lengths, key=lambda v: abs(v - first))


def test_padding_equal_lengths_and_errors():
    q = np.array([1.0, 0.0])
    x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [5.0, 5.0]])
    # the -1 candidate is padding, its length dropped with it; equal lengths: plain relevance order
    assert length_mmr(q, x, [4, 3, 5, -1], [7, 7, 7, 99], 3, lambda_=0.5)[1].tolist() == [4, 3, 5]
    with pytest.raises(InputError, match="3 lengths for 4"):
        length_mmr(q, x, [0, 1, 2, 3], [1, 2, 3], 2)
    with pytest.raises(InputError, match="negative, NaN"):
        length_mmr(q, x, [0, 1, 2, 3], [1, 2, np.nan, 3], 2)
    with pytest.raises(InputError, match="lambda_"):
        length_mmr(q, x, [0, 1, 2, 3], [1, 2, 3, 4], 2, lambda_=1.5)
