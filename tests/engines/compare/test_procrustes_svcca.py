"""repspace.engines.compare.procrustes and .svcca against direct computations on the n × d data, identities and GloVe."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _related_pairs import orthogonal, related
from scipy.linalg import orthogonal_procrustes

from repspace.core.errors import InputError
from repspace.engines.compare import procrustes, svcca

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


#: Elements per block under the ``small_blocks`` fixture (tests/engines/conftest.py): a few rows.
SMALL_BLOCK_ELEMENTS = 64


# Procrustes --------------------------------------------------------------------------------------------------------


def direct_procrustes(X: np.ndarray, Y: np.ndarray) -> float:
    """Centre, unit Frobenius norm, zero-pad, then the residual of scipy's best rotation."""
    d = max(X.shape[1], Y.shape[1])
    A, B = (np.pad(M - M.mean(axis=0), ((0, 0), (0, d - M.shape[1]))) for M in (X, Y))
    A, B = A / np.linalg.norm(A), B / np.linalg.norm(B)
    R, _ = orthogonal_procrustes(B, A)
    return float(np.linalg.norm(A - B @ R))


@pytest.mark.parametrize(("n", "d1", "d2"), [(50, 4, 4), (80, 3, 9), (10, 30, 5), (2, 2, 3)])
def test_procrustes_equals_scipy_rotation_residual(n: int, d1: int, d2: int) -> None:
    X, Y = related(n, d1, d2)
    assert procrustes(X, Y) == pytest.approx(direct_procrustes(X, Y), abs=1e-7)


def test_procrustes_streamed_in_many_blocks(small_blocks: None) -> None:
    X, Y = related(120, 5, 3)
    assert procrustes(X, Y) == pytest.approx(direct_procrustes(X, Y), abs=1e-7)


def test_procrustes_zero_for_a_rotated_copy_and_positive_otherwise() -> None:
    X, Y = related(200, 10, 10)
    assert procrustes(X, -3.0 * X @ orthogonal(10) + 5.0) < 1e-6
    assert procrustes(X, X[:, ::-1]) < 1e-6
    assert procrustes(X, np.hstack([X, np.zeros((200, 3))])) < 1e-6  # zero-padding by hand changes nothing
    d = procrustes(X, Y)
    assert 0.1 < d <= math.sqrt(2)
    A = np.diag(np.linspace(0.1, 5.0, 10))
    assert procrustes(X, X @ A) > 0.05  # not invariant to an anisotropic linear map


def test_procrustes_symmetric_and_bounded() -> None:
    X, Y = related(100, 6, 4, seed=4)
    assert procrustes(X, Y) == pytest.approx(procrustes(Y, X), abs=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(5):
        A, B = rng.standard_normal((30, 3)), rng.standard_normal((30, 7))
        assert 0.0 <= procrustes(A, B) <= math.sqrt(2)


def test_procrustes_degenerate() -> None:
    X, Y = related(20, 4, 3)
    with pytest.raises(InputError, match="X has no variance"):
        procrustes(np.ones((20, 4)), Y)
    with pytest.raises(InputError, match="at least 2 items"):
        procrustes(X[:1], Y[:1])
    Xc = np.hstack([X, np.full((20, 2), 3.0)])  # constant columns change nothing
    assert procrustes(Xc, Y) == pytest.approx(procrustes(X, Y), abs=1e-9)


# SVCCA -------------------------------------------------------------------------------------------------------------


def direct_svcca(X: np.ndarray, Y: np.ndarray, variance: float = 0.99) -> tuple[float, int, int]:
    """SVD of the centred data, keep 99% of the variance, QR of the reduced data, SVD of QxᵀQy."""
    bases = []
    for M in (X, Y):
        M = M - M.mean(axis=0)
        U, s, _ = np.linalg.svd(M, full_matrices=False)
        share = np.cumsum(s**2) / np.sum(s**2)
        r = int(np.argmax(share >= variance - 1e-12)) + 1
        Q, _ = np.linalg.qr(U[:, :r] * s[:r])
        bases.append(Q)
    rho = np.linalg.svd(bases[0].T @ bases[1], compute_uv=False)
    return float(np.clip(rho, 0, 1).mean()), bases[0].shape[1], bases[1].shape[1]


@pytest.mark.parametrize(("n", "d1", "d2"), [(300, 6, 8), (500, 20, 5), (100, 3, 3)])
def test_svcca_equals_direct_computation(n: int, d1: int, d2: int) -> None:
    X, Y = related(n, d1, d2, noise=0.3)
    r = svcca(X, Y)
    value, dx, dy = direct_svcca(X, Y)
    assert (r.dims_x, r.dims_y) == (dx, dy)
    assert r.value == pytest.approx(value, abs=1e-8)
    assert len(r.correlations) == min(dx, dy)
    assert np.all(np.diff(r.correlations) <= 1e-12)


def test_svcca_truncation_is_used() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 10)) * np.array([10, 8, 6, 5, 4, 3, 0.01, 0.01, 0.01, 0.01])
    r = svcca(X, rng.standard_normal((400, 4)))
    assert r.dims_x == 6 and r.dims_y == 4
    assert svcca(X, rng.standard_normal((400, 4)), variance=0.5).dims_x == 2


def test_svcca_one_for_an_invertible_linear_map() -> None:
    rng = np.random.default_rng(2)
    X = rng.standard_normal((500, 8))
    A = rng.standard_normal((8, 8)) + 3.0 * np.eye(8)
    assert svcca(X, X @ A + 10.0).value == pytest.approx(1.0, abs=1e-8)
    assert svcca(X, X @ orthogonal(8)).value == pytest.approx(1.0, abs=1e-8)


def test_svcca_symmetric_and_in_range() -> None:
    X, Y = related(300, 7, 4, noise=0.5)
    assert svcca(X, Y).value == pytest.approx(svcca(Y, X).value, abs=1e-10)
    assert 0.0 <= svcca(X, Y).value <= 1.0


def test_svcca_degenerate() -> None:
    X, Y = related(30, 4, 3)
    with pytest.raises(InputError, match="Y has no variance"):
        svcca(X, np.zeros((30, 3)))
    with pytest.raises(InputError, match="variance must be"):
        svcca(X, Y, variance=0.0)
    Xc = np.hstack([X, np.full((30, 5), -1.0)])  # constant columns add no direction
    assert svcca(Xc, Y).value == pytest.approx(svcca(X, Y).value, abs=1e-9)
    Xw, Yw = related(8, 40, 60)  # n < d: at most n − 1 directions
    r = svcca(Xw, Yw)
    assert r.dims_x <= 7 and r.dims_y <= 7 and 0.0 <= r.value <= 1.0
    assert svcca(X[:2], Y[:2]).value == pytest.approx(1.0)  # two points: one direction each


def test_svcca_to_dict() -> None:
    X, Y = related(100, 3, 3)
    d = svcca(X, Y).to_dict()
    assert set(d) == {"value", "dims_x", "dims_y", "variance", "correlations"}
    assert d["variance"] == 0.99


# Real data ---------------------------------------------------------------------------------------------------------


def test_glove_procrustes_and_svcca(glove_vectors) -> None:
    X = np.array(glove_vectors[:2000], dtype=np.float64)
    Q = orthogonal(50, seed=3)
    assert procrustes(X, X @ Q) < 1e-6
    assert svcca(X, X @ Q).value == pytest.approx(1.0, abs=1e-8)
    rng = np.random.default_rng(0)
    noisy = [X + s * rng.standard_normal(X.shape) for s in (0.1, 0.5, 2.0)]
    dists = [procrustes(X, Y) for Y in noisy]
    sims = [svcca(X, Y).value for Y in noisy]
    assert dists[0] < dists[1] < dists[2] <= math.sqrt(2)
    assert sims[0] > sims[1] > sims[2]
    assert procrustes(X, noisy[1]) == pytest.approx(direct_procrustes(X, noisy[1]), abs=1e-7)
    assert svcca(X, noisy[1]).value == pytest.approx(direct_svcca(X, noisy[1])[0], abs=1e-8)
