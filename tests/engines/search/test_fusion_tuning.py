"""Convex fusion equals a direct computation; the tuned weight is the dev argmax; the split is a partition."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.search.fusion_tuning import ALPHAS, convex, dev_test_split, tune_convex

pytestmark = pytest.mark.numerics


def _direct(sparse, dense, alpha, k):
    """Per query: min-max normalise each list, sum α·sparse + (1−α)·dense by row, best first, ties to lower."""
    out = []
    for (ss, sr), (ds, dr) in zip(zip(*sparse), zip(*dense)):
        total: dict[int, float] = {}
        for s, r, w in ((ss, sr, alpha), (ds, dr, 1 - alpha)):
            lo, hi = s.min(), s.max()
            for v, row in zip(s, r):
                total[int(row)] = total.get(int(row), 0.0) + w * ((v - lo) / (hi - lo) if hi > lo else 1.0)
        out.append(sorted(total.items(), key=lambda t: (-t[1], t[0]))[:k])
    return out


def test_convex_equals_direct_computation():
    rng = np.random.default_rng(0)
    m, depth, n = 20, 15, 40
    sr = np.stack([rng.choice(n, depth, replace=False) for _ in range(m)])
    dr = np.stack([rng.choice(n, depth, replace=False) for _ in range(m)])
    ss = -np.sort(-rng.gamma(2.0, 3.0, (m, depth)), axis=1)
    ds = -np.sort(-rng.uniform(0.2, 0.9, (m, depth)), axis=1)
    for alpha in (0.0, 0.3, 1.0):
        scores, rows = convex((ss, sr), (ds, dr), alpha, k=10)
        want = _direct((ss, sr), (ds, dr), alpha, 10)
        for q in range(m):
            kept = [(r, s) for r, s in zip(rows[q], scores[q]) if r >= 0]
            # sums of at most two products of doubles: equal within a few ulps of values ≤ 1
            assert [r for r, _ in kept] == [r for r, _ in want[q]][: len(kept)]
            np.testing.assert_allclose([s for _, s in kept], [s for _, s in want[q]][: len(kept)], rtol=0, atol=1e-12)


def test_tune_convex_takes_the_dev_argmax_ties_to_the_smaller_weight():
    best, seen = tune_convex(lambda a: round(abs(a - 0.55), 6) * -1)
    assert best == 0.5 and seen[0.5] == seen[0.6] and set(seen) == set(ALPHAS)
    with pytest.raises(InputError):
        tune_convex(lambda a: 0.0, alphas=())


def test_dev_test_split_is_a_seeded_partition():
    dev, test = dev_test_split(225, 0.3, seed=0)
    assert len(dev) == 68 and len(test) == 157
    assert np.array_equal(np.sort(np.concatenate([dev, test])), np.arange(225))
    assert np.array_equal(dev, dev_test_split(225, 0.3, seed=0)[0])
    with pytest.raises(InputError):
        dev_test_split(3, 0.01)
