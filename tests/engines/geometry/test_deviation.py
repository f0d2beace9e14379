"""REMA manifold deviation against a brute-force numpy computation, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.geometry.deviation import manifold_deviation

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _brute(ref: np.ndarray, q: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Query and leave-one-out mean k-NN distances from the full float64 distance matrices."""
    def dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if metric == "l2":
            return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
        an = a / np.linalg.norm(a, axis=1, keepdims=True)
        bn = b / np.linalg.norm(b, axis=1, keepdims=True)
        return 1.0 - an @ bn.T

    dq = np.sort(dist(q, ref), axis=1)[:, :k].mean(1)
    dr = dist(ref, ref)
    np.fill_diagonal(dr, np.inf)
    return dq, np.sort(dr, axis=1)[:, :k].mean(1)


@pytest.mark.parametrize("metric", ["l2", "cosine"])
def test_scores_equal_a_brute_force_computation(metric):
    rng = np.random.default_rng(3)
    ref = rng.standard_normal((300, 16))
    q = np.vstack([rng.standard_normal((40, 16)), 3 + rng.standard_normal((40, 16))])
    d = manifold_deviation(ref, q, k=7, metric=metric)
    dq, base = _brute(ref, q, 7, metric)
    # the search runs in float32: distances of size ~|x| (~4 here) carry relative errors ~ d * eps32 ~ 2e-6
    tol = 16 * np.finfo(np.float32).eps * max(1.0, float(np.abs(dq).max()))
    np.testing.assert_allclose(d.distance, dq, rtol=0, atol=tol)
    np.testing.assert_allclose(d.baseline, base, rtol=0, atol=tol)
    z = (dq - base.mean()) / base.std(ddof=1)
    np.testing.assert_allclose(d.z, z, rtol=0, atol=tol / base.std(ddof=1) * 2)
    pct = np.array([(np.sum(base < x) + np.sum(base <= x)) / (2 * base.size) for x in dq])
    assert np.mean(d.percentile == pct) > 0.95  # ties within float32 noise may move a value by one rank
    if metric == "l2":  # the shifted queries lie off the reference's cloud (their directions need not)
        assert d.z[40:].mean() > d.z[:40].mean() + 1


def test_bad_input_is_refused():
    ref = np.eye(4)
    with pytest.raises(InputError, match="empty"):
        manifold_deviation(np.zeros((0, 4)), ref, k=1)
    with pytest.raises(InputError, match="from 1 to 3"):
        manifold_deviation(ref, ref, k=4)
    with pytest.raises(InputError, match="dimensions"):
        manifold_deviation(ref, np.ones((2, 3)), k=2)
    with pytest.raises(InputError, match="metric"):
        manifold_deviation(ref, ref, k=2, metric="ip")
