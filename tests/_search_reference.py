"""Fixtures of the search tests (engines and stored-space workflows): a seeded rng and a float64
brute-force reference. Each search test folder's conftest.py imports them (the fresh ``store`` is
tests/conftest.py's)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(987654321)


def brute_scores(queries, base, metric: str) -> np.ndarray:
    """All (m, n) scores in float64, computed directly (no expansion tricks)."""
    q = np.atleast_2d(np.asarray(queries, dtype=np.float64))
    x = np.asarray(base, dtype=np.float64).reshape(-1, q.shape[1])
    if metric == "cosine":
        qn = np.linalg.norm(q, axis=1, keepdims=True)
        xn = np.linalg.norm(x, axis=1, keepdims=True)
        q = np.divide(q, qn, out=np.zeros_like(q), where=qn > 0)
        x = np.divide(x, xn, out=np.zeros_like(x), where=xn > 0)
        return q @ x.T
    if metric == "ip":
        return q @ x.T
    if metric == "l2":
        return np.sqrt(((q[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))
    raise ValueError(metric)


def brute_topk(queries, base, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Top-k by (score, then lower row), from :func:`brute_scores`."""
    s = brute_scores(queries, base, metric)
    n = s.shape[1]
    key = s if metric == "l2" else -s
    rows = np.broadcast_to(np.arange(n), s.shape)
    order = np.lexsort((rows, key), axis=-1)[:, : min(k, n)]
    return np.take_along_axis(s, order, axis=1), order


def duplicated_rows(seed: int, *, dims: tuple[int, int], sizes: tuple[int, int], groups: int,
                    queries: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows that are exact copies of one another, for the tie-breaking tests: ``(pattern, x, q)``.

    ``x`` (float32) holds ``groups`` random vectors, row ``i`` a copy of vector ``pattern[i]``; its
    dimension is drawn from ``dims`` and its row count from ``sizes`` (half-open ranges). ``q`` is
    ``queries`` float32 query rows, or one 1-d query when ``queries`` is None. All drawn from ``seed``.
    """
    r = np.random.default_rng(seed)
    d, n = int(r.integers(*dims)), int(r.integers(*sizes))
    pattern = r.integers(0, groups, n)
    x = r.standard_normal((groups, d)).astype(np.float32)[pattern]
    q = r.standard_normal(d if queries is None else (queries, d)).astype(np.float32)
    return pattern, x, q


class Brute:
    scores = staticmethod(brute_scores)
    topk = staticmethod(brute_topk)

    @staticmethod
    def check(scores, idx, queries, base, k, metric, tol=1e-4, exact_order=True):
        """Assert (scores, idx) is a correct top-k of ``base`` for ``queries``.

        Scores must match the reference's top-k scores; each returned index must
        really have its score; indices must be distinct. With ``exact_order`` the
        indices must equal the reference wherever the reference has no near-tie.
        """
        exp_s, exp_i = brute_topk(queries, base, k, metric)
        all_s = brute_scores(queries, base, metric)
        m = exp_s.shape[0]
        assert scores.shape == idx.shape == exp_s.shape, (scores.shape, exp_s.shape)
        assert scores.dtype == np.float32 and idx.dtype == np.int64
        np.testing.assert_allclose(scores, exp_s, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.take_along_axis(all_s, idx, axis=1), scores, rtol=tol, atol=tol)
        for r in range(m):
            assert len(set(idx[r].tolist())) == idx.shape[1]
        if exact_order:
            srt = np.sort(all_s, axis=1)
            for r in range(m):
                for j in range(exp_s.shape[1]):
                    gaps = np.abs(srt[r] - exp_s[r, j])
                    if np.sum(gaps < 10 * tol) == 1:  # only itself nearby: no near-tie
                        assert idx[r, j] == exp_i[r, j], (r, j, idx[r], exp_i[r])


@pytest.fixture
def brute():
    return Brute
