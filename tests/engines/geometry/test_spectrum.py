"""repspace.engines.geometry.spectrum against direct SVD / eigenvalue computations, and on degenerate input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.geometry.spectrum import (
    covariance_eigenvalues,
    effective_rank,
    rankme,
    spectrum,
    spectrum_alpha,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


#: Elements per block under the ``small_blocks`` fixture (tests/engines/conftest.py): a few rows.
SMALL_BLOCK_ELEMENTS = 200


# Independent computations, straight from the definitions -------------------------------------------------------


def svd_entropy_rank(A: np.ndarray, eps: float = 0.0) -> float:
    s = np.linalg.svd(np.asarray(A, dtype=np.float64), compute_uv=False)
    p = s / s.sum() + eps
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def direct_effective_rank(X: np.ndarray) -> float:
    return svd_entropy_rank(X - X.mean(axis=0))


def direct_rankme(X: np.ndarray) -> float:
    return svd_entropy_rank(X, eps=1e-7)


def direct_alpha(X: np.ndarray) -> float:
    lam = np.sort(np.linalg.eigvalsh(np.cov(X.T, bias=True)))[::-1]
    d = X.shape[1]
    r = np.arange(10, d // 2 + 1)
    slope, _ = np.polyfit(np.log(r), np.log(lam[r - 1]), 1)
    return -float(slope)


def anisotropic(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.linspace(3.0, 0.1, d) + rng.standard_normal(d) * 2


# Agreement with the direct computations -----------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(500, 40), (40, 40), (25, 60), (3, 7)])
def test_effective_rank_and_rankme_match_svd(shape: tuple[int, int], small_blocks: None) -> None:
    X = anisotropic(*shape)
    assert effective_rank(X) == pytest.approx(direct_effective_rank(X), rel=1e-9)
    assert rankme(X) == pytest.approx(direct_rankme(X), rel=1e-9)


def test_float32_and_integer_input() -> None:
    X = anisotropic(300, 20)
    X32 = X.astype(np.float32)
    # the reference takes the float32 values exactly (in float64): centring them in float32 would put
    # float32 rounding into the reference itself (it was 9.9e-10 off, at a 1e-9 tolerance)
    assert effective_rank(X32) == pytest.approx(direct_effective_rank(X32.astype(np.float64)), rel=1e-9)
    Xi = np.round(X * 100).astype(np.int32)
    assert rankme(Xi) == pytest.approx(direct_rankme(Xi.astype(np.float64)), rel=1e-9)


def test_rank_deficient_gram_path_matches_svd() -> None:
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 3)) @ rng.standard_normal((3, 30)) + 5.0  # rank 3 after centring
    er = effective_rank(X)
    assert er == pytest.approx(direct_effective_rank(X), abs=1e-6)
    assert 1.0 < er <= 3.0
    assert rankme(X) == pytest.approx(direct_rankme(X), abs=1e-5)


def test_spectrum_alpha_matches_polyfit() -> None:
    X = anisotropic(2000, 64, seed=2)
    assert spectrum_alpha(X) == pytest.approx(direct_alpha(X), rel=1e-9)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_spectrum_alpha_recovers_an_exact_power_law(alpha: float) -> None:
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((600, 80))
    Q, _ = np.linalg.qr(Z - Z.mean(axis=0))  # centred orthonormal columns
    R, _ = np.linalg.qr(rng.standard_normal((80, 80)))  # then a random rotation
    X = (Q * np.arange(1, 81) ** (-alpha / 2)) @ R
    r = spectrum(X)
    assert r.alpha == pytest.approx(alpha, rel=1e-8)
    assert r.alpha_ranks == (10, 40)


def test_covariance_eigenvalues_match_numpy(small_blocks: None) -> None:
    X = anisotropic(300, 12) * 7.0
    expected = np.sort(np.linalg.eigvalsh(np.cov(X.T, bias=True)))[::-1]
    np.testing.assert_allclose(covariance_eigenvalues(X), expected, rtol=1e-10)
    Xs = anisotropic(5, 12) * 7.0  # n ≤ d: the SVD path; the rest are exactly 0
    ev = covariance_eigenvalues(Xs)
    assert ev.shape == (12,) and (ev[4:] == 0).all()
    expected = np.sort(np.linalg.eigvalsh(np.cov(Xs.T, bias=True)))[::-1]
    np.testing.assert_allclose(ev[:4], expected[:4], rtol=1e-9)


def test_spectrum_bundle_matches_functions_and_serialises() -> None:
    X = anisotropic(800, 50)
    r = spectrum(X)
    assert r.effective_rank == effective_rank(X)
    assert r.rankme == rankme(X)
    assert r.alpha == spectrum_alpha(X)
    np.testing.assert_array_equal(r.eigenvalues, covariance_eigenvalues(X))
    d = r.to_dict()
    assert {"rank.effective_rank", "rank.rankme", "spectrum.alpha", "spectrum.eigenvalues"} <= set(d)
    assert len(d["spectrum.eigenvalues"]) == 50 and d["spectrum.alpha_ranks"] == [10, 25]
    json.dumps(d, allow_nan=False)
    assert "alpha=" in repr(r)


# Scale, degenerate input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_extreme_scales_give_the_same_values(scale: float) -> None:
    X = anisotropic(200, 30)
    for fn in (effective_rank, rankme, spectrum_alpha):
        assert fn(X * scale) == pytest.approx(fn(X), rel=1e-9)
    np.testing.assert_allclose(covariance_eigenvalues(X * 1e100), covariance_eigenvalues(X) * 1e200, rtol=1e-9)


def test_huge_eigenvalues_are_clipped_not_inf() -> None:
    X = anisotropic(50, 4) * 1e200
    ev = covariance_eigenvalues(X)
    assert np.isfinite(ev).all() and ev[0] == np.finfo(np.float64).max


def test_constant_and_zero_matrices() -> None:
    const = np.tile([[1.0, 2.0, 3.0]], (6, 1))
    assert effective_rank(const) == 0.0
    assert rankme(const) == pytest.approx(direct_rankme(const), rel=1e-9)  # rank 1 uncentred
    assert spectrum_alpha(const) == 0.0
    zero = np.zeros((6, 3))
    assert effective_rank(zero) == 0.0 and rankme(zero) == 0.0 and spectrum_alpha(zero) == 0.0
    r = spectrum(zero)
    assert r.alpha_ranks == (0, 0) and (r.eigenvalues == 0).all()


def test_single_row_and_single_dimension() -> None:
    one = np.array([[1.0, -2.0, 0.5]])
    assert effective_rank(one) == 0.0
    assert rankme(one) == pytest.approx(direct_rankme(one), rel=1e-12)
    col = np.arange(10.0)[:, None]
    assert effective_rank(col) == pytest.approx(1.0)
    assert rankme(col) == pytest.approx(direct_rankme(col), rel=1e-12)
    assert spectrum_alpha(col) == 0.0 and spectrum(col).alpha_ranks == (0, 0)


def test_duplicate_rows_do_not_change_the_spectrum_shape() -> None:
    X = anisotropic(60, 10)
    doubled = np.vstack([X, X])
    assert effective_rank(doubled) == pytest.approx(effective_rank(X), rel=1e-9)
    assert spectrum_alpha(doubled) == pytest.approx(spectrum_alpha(X), rel=1e-9)


def test_alpha_fallback_for_small_d_fits_the_head() -> None:
    X = anisotropic(500, 8)
    r = spectrum(X)
    assert r.alpha_ranks == (1, 4)
    lam = np.sort(np.linalg.eigvalsh(np.cov(X.T, bias=True)))[::-1]
    slope, _ = np.polyfit(np.log(np.arange(1, 5)), np.log(lam[:4]), 1)
    assert r.alpha == pytest.approx(-slope, rel=1e-9)
    assert spectrum(anisotropic(100, 3)).alpha_ranks == (1, 2)


def test_alpha_stops_at_the_last_nonzero_eigenvalue() -> None:
    X = anisotropic(15, 100)  # n ≤ d: 14 non-zero covariance eigenvalues
    r = spectrum(X)
    assert r.alpha_ranks == (10, 14)
    assert math.isfinite(r.alpha) and r.alpha > 0
    assert spectrum(anisotropic(8, 100)).alpha_ranks == (1, 7)  # rank 7 < 11: the head


def test_errors() -> None:
    with pytest.raises(InputError, match="0 rows"):
        effective_rank(np.zeros((0, 4)))
    with pytest.raises(InputError, match="NaN"):
        rankme([[np.nan, 1.0]])
    with pytest.raises(InputError, match="2-d"):
        spectrum_alpha(np.zeros((2, 2, 2)))
