"""repspace.engines.compare.cka against the n × n Gram formulas, known identities, streaming edge cases and GloVe."""

from __future__ import annotations

import numpy as np
import pytest
from _related_pairs import orthogonal, related

from repspace.core.errors import InputError
from repspace.engines.compare import cka, cka_debiased, cka_linear

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


#: Elements per block under the ``small_blocks`` fixture (tests/engines/conftest.py): a few rows.
SMALL_BLOCK_ELEMENTS = 64


# Independent computations -----------------------------------------------------------------------------------------


def gram_cka(X: np.ndarray, Y: np.ndarray) -> float:
    """tr(KHLH) / √(tr(KHKH) tr(LHLH)) with explicit n × n matrices."""
    n = len(X)
    H = np.eye(n) - np.ones((n, n)) / n
    K, L = H @ (X @ X.T) @ H, H @ (Y @ Y.T) @ H
    return float(np.sum(K * L) / np.sqrt(np.sum(K * K) * np.sum(L * L)))


def hsic_unbiased(K: np.ndarray, L: np.ndarray) -> float:
    """Song et al. 2012 eq. 5 on explicit Gram matrices (as minyoungg/platonic-rep writes it)."""
    m = K.shape[0]
    Kt, Lt = K.copy(), L.copy()
    np.fill_diagonal(Kt, 0.0)
    np.fill_diagonal(Lt, 0.0)
    value = np.sum(Kt * Lt.T) + Kt.sum() * Lt.sum() / ((m - 1) * (m - 2)) - 2.0 * np.sum(Kt @ Lt) / (m - 2)
    return float(value / (m * (m - 3)))


def gram_cka_debiased(X: np.ndarray, Y: np.ndarray) -> float:
    K, L = X @ X.T, Y @ Y.T
    return hsic_unbiased(K, L) / np.sqrt(hsic_unbiased(K, K) * hsic_unbiased(L, L))


# Direct formulas ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d1", "d2"), [(60, 5, 7), (12, 40, 3), (200, 16, 16), (5, 2, 9)])
def test_linear_equals_gram_form(n: int, d1: int, d2: int) -> None:
    X, Y = related(n, d1, d2)
    assert cka_linear(X, Y) == pytest.approx(gram_cka(X, Y), abs=1e-10)


@pytest.mark.parametrize(("n", "d1", "d2"), [(60, 5, 7), (12, 40, 3), (200, 16, 16), (4, 3, 2), (7, 1, 1)])
def test_debiased_equals_gram_form(n: int, d1: int, d2: int) -> None:
    X, Y = related(n, d1, d2, seed=3)
    expected = gram_cka_debiased(X, Y)
    if np.isfinite(expected) and -1.0 <= expected <= 1.0:
        assert cka_debiased(X, Y) == pytest.approx(expected, abs=1e-10)
    else:  # the reference divides by a non-positive or tiny HSIC; ours gives its defined value
        assert -1.0 <= cka_debiased(X, Y) <= 1.0


def test_streamed_in_many_blocks_equals_gram_form(small_blocks: None) -> None:
    X, Y = related(150, 6, 4, seed=5)
    assert cka_linear(X, Y) == pytest.approx(gram_cka(X, Y), abs=1e-10)
    assert cka_debiased(X, Y) == pytest.approx(gram_cka_debiased(X, Y), abs=1e-10)


def test_debiased_differs_from_biased_on_unrelated_spaces() -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((100, 50)), rng.standard_normal((100, 50))
    assert cka_linear(X, Y) > 0.3  # the bias of the plain estimator with d close to n
    assert abs(cka_debiased(X, Y)) < 0.1


# Identities and invariances -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [cka_linear, cka_debiased])
def test_one_under_orthogonal_scaling_translation(fn) -> None:
    X, _ = related(300, 12, 1)
    Q = orthogonal(12)
    assert fn(X, X @ Q) == pytest.approx(1.0, abs=1e-10)
    assert fn(X, -7.5 * X) == pytest.approx(1.0, abs=1e-10)
    assert fn(X, 0.01 * X @ Q + 40.0) == pytest.approx(1.0, abs=1e-10)
    assert fn(X, X[:, ::-1]) == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize("fn", [cka_linear, cka_debiased])
def test_not_invariant_to_invertible_linear_maps(fn) -> None:
    X, _ = related(300, 6, 1)
    A = np.diag([1.0, 10.0, 0.1, 3.0, 1.0, 0.5]) @ orthogonal(6)
    assert fn(X, X @ A) < 0.99


def test_symmetric() -> None:
    X, Y = related(80, 7, 3)
    assert cka_linear(X, Y) == pytest.approx(cka_linear(Y, X), abs=1e-14)
    assert cka_debiased(X, Y) == pytest.approx(cka_debiased(Y, X), abs=1e-14)


def test_alias() -> None:
    X, Y = related(50, 3, 3)
    assert cka(X, Y) == cka_linear(X, Y)


# Numerics of the streamed form ---------------------------------------------------------------------------------------


def test_large_mean_does_not_cancel() -> None:
    """The one-pass formula without a shift loses every digit when the mean is 1e8 times the spread."""
    X, Y = related(500, 8, 5)
    assert cka_linear(X + 1e8, Y) == pytest.approx(cka_linear(X, Y), abs=1e-7)
    assert cka_debiased(X + 1e8, Y - 1e8) == pytest.approx(cka_debiased(X, Y), abs=1e-7)


@pytest.mark.parametrize("scale", [1e-200, 1e-30, 1e30, 1e200])
def test_extreme_magnitudes(scale: float) -> None:
    X, Y = related(100, 5, 4)
    assert cka_linear(X * scale, Y) == pytest.approx(cka_linear(X, Y), abs=1e-12)
    assert cka_debiased(X * scale, Y / scale) == pytest.approx(cka_debiased(X, Y), abs=1e-12)


def test_subnormal_values_give_a_defined_value() -> None:
    X, Y = related(50, 3, 2)
    for fn in (cka_linear, cka_debiased):
        assert -1.0 <= fn(X * 1e-310, Y) <= 1.0
        assert -1.0 <= fn(np.float32(1e-42) * X.astype(np.float32), Y.astype(np.float32)) <= 1.0


def test_overflow_in_a_later_block_is_redone(small_blocks: None) -> None:
    X, Y = related(120, 4, 3)
    X[60:] *= 1e160  # the first block looks ordinary; products of the later rows overflow float64
    reference = gram_cka(X / np.abs(X).max(), Y)
    assert cka_linear(X, Y) == pytest.approx(reference, abs=1e-10)


def test_float32_overflow_in_a_later_block_is_redone(small_blocks: None) -> None:
    X, Y = related(120, 4, 3)
    X[60:] *= 1e25
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    reference = gram_cka(X32.astype(np.float64) / np.abs(X).max(), Y32.astype(np.float64))
    assert cka_linear(X32, Y32) == pytest.approx(reference, abs=1e-9)


def test_float32_products_agree_with_float64(glove_vectors) -> None:
    X = np.array(glove_vectors[:10000])
    Y = np.array(glove_vectors[10000:20000])[:, ::-1] + X  # float32, related
    assert X.dtype == np.float32
    fast = cka_linear(X, Y)
    precise = cka_linear(X, Y, precision="float64")
    assert fast == pytest.approx(precise, abs=1e-5)
    assert cka_debiased(X, Y) == pytest.approx(cka_debiased(X, Y, precision="float64"), abs=1e-5)


def test_memory_map_gives_the_same_value(tmp_path) -> None:
    X, Y = related(3000, 20, 10)
    np.save(tmp_path / "x.npy", X.astype(np.float32))
    np.save(tmp_path / "y.npy", Y.astype(np.float32))
    Xm = np.load(tmp_path / "x.npy", mmap_mode="r")
    Ym = np.load(tmp_path / "y.npy", mmap_mode="r")
    assert cka_linear(Xm, Ym) == cka_linear(np.asarray(Xm), np.asarray(Ym))
    assert cka_linear(Xm, Ym) == pytest.approx(cka_linear(X, Y), abs=1e-5)


# Degenerate input --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [cka_linear, cka_debiased])
def test_constant_space_is_an_error(fn) -> None:
    X, _ = related(30, 4, 1)
    with pytest.raises(InputError, match="Y has no variance"):
        fn(X, np.full((30, 3), 2.5))
    with pytest.raises(InputError, match="X has no variance"):
        fn(np.zeros((30, 3)), X)


def test_zero_variance_columns_duplicates_and_n_below_d() -> None:
    X, Y = related(40, 6, 5)
    Xc = np.hstack([X, np.ones((40, 3)) * 7.0])
    assert cka_linear(Xc, Y) == pytest.approx(cka_linear(X, Y), abs=1e-12)
    assert cka_debiased(Xc, Y) == pytest.approx(cka_debiased(X, Y), abs=1e-12)
    Xd, Yd = np.vstack([X, X[:10]]), np.vstack([Y, Y[:10]])
    assert cka_linear(Xd, Yd) == pytest.approx(gram_cka(Xd, Yd), abs=1e-10)
    Xw, Yw = related(6, 50, 80)
    assert cka_linear(Xw, Yw) == pytest.approx(gram_cka(Xw, Yw), abs=1e-10)
    assert -1.0 <= cka_debiased(Xw, Yw) <= 1.0


def test_tiny_n() -> None:
    X, Y = related(3, 2, 2)
    assert cka_linear(X[:2], Y[:2]) == pytest.approx(1.0)  # two points: rank-one centred Grams
    with pytest.raises(InputError, match="CKA needs at least 2 items, got 1"):
        cka_linear(X[:1], Y[:1])
    with pytest.raises(InputError, match="debiased CKA needs at least 4 items, got 3"):
        cka_debiased(X, Y)


@pytest.mark.parametrize("X", [
    np.array([[0.0], [0.0], [1.0], [0.0]]),
    np.array([[3.0, 1.0], [3.0, 1.0], [3.0, 1.0], [-2.0, 5.0], [3.0, 1.0]]),
])
def test_debiased_zero_denominator_is_zero(X: np.ndarray) -> None:
    """All rows but one equal: HSIC₁(K, K) is exactly 0 (rounding makes it ±tiny); the defined value is 0.0."""
    K = X @ X.T
    assert abs(hsic_unbiased(K, K)) < 1e-12
    Y = np.random.default_rng(0).standard_normal((len(X), 3))
    assert cka_debiased(X, Y) == 0.0
    assert cka_debiased(Y, X) == 0.0


def test_bad_input() -> None:
    X, Y = related(10, 3, 3)
    with pytest.raises(InputError, match="X has 10 rows and Y has 9"):
        cka_linear(X, Y[:9])
    bad = X.copy()
    bad[7, 1] = np.nan
    with pytest.raises(InputError, match="row 7"):
        cka_linear(bad, Y)
    with pytest.raises(InputError, match="row 7"):
        cka_debiased(X, bad)
    with pytest.raises(InputError, match="2-d"):
        cka_linear(X[:, 0], Y)
    with pytest.raises(InputError, match="precision"):
        cka_linear(X, Y, precision="half")


# Real data ---------------------------------------------------------------------------------------------------------


def test_glove_rotation_and_noise(glove_vectors) -> None:
    X = np.array(glove_vectors[:3000], dtype=np.float64)
    Q = orthogonal(50, seed=7)
    assert cka_linear(X, X @ Q) == pytest.approx(1.0, abs=1e-10)
    rng = np.random.default_rng(0)
    values = [cka_linear(X, X + s * rng.standard_normal(X.shape)) for s in (0.1, 0.5, 2.0)]
    assert values[0] > values[1] > values[2]
    assert values[0] > 0.95 and values[2] < 0.6
    # against the Gram form on a subsample small enough for n × n matrices
    Y = X + 0.5 * rng.standard_normal(X.shape)
    assert cka_linear(X[:500], Y[:500]) == pytest.approx(gram_cka(X[:500], Y[:500]), abs=1e-10)
    assert cka_debiased(X[:500], Y[:500]) == pytest.approx(gram_cka_debiased(X[:500], Y[:500]), abs=1e-10)
