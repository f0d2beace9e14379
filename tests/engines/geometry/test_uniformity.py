"""repspace.engines.geometry.uniformity against direct all-pairs formulas, real GloVe vectors and degenerate input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _reference_math import unit

from repspace.core.errors import InputError
from repspace.engines.geometry.uniformity import alignment, uniformity

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


#: Elements per block under the ``small_blocks`` fixture (tests/engines/conftest.py): a few rows.
SMALL_BLOCK_ELEMENTS = 300


def direct_uniformity(X: np.ndarray, t: float = 2.0) -> float:
    """log of the mean of exp(−t‖x̂_i − x̂_j‖²) over i < j, with explicit differences."""
    U = unit(X)
    i, j = np.triu_indices(len(U), 1)
    sq = ((U[i] - U[j]) ** 2).sum(axis=1)
    return float(np.log(np.mean(np.exp(-t * sq))))


def blocked_direct_uniformity(X: np.ndarray, rows: int = 500) -> float:
    """The same over all n² ordered pairs, a block of rows at a time, from ‖x̂ − ŷ‖² = 2 − 2x̂·ŷ (no zero rows).

    Plain sums of exponentials (no log-space); the diagonal contributes exp(0) = 1 per row.
    """
    U = unit(X)
    n = len(U)
    total = sum(float(np.exp(-2.0 * np.clip(2.0 - 2.0 * (U[a:a + rows] @ U.T), 0.0, 4.0)).sum())
                for a in range(0, n, rows))
    return math.log((total - n) / (n * (n - 1)))


def cloud(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.linspace(2.0, 0.2, d) + 0.5 * rng.standard_normal(d)


# Uniformity ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d", [(2, 3), (31, 5), (400, 24)])
def test_exact_matches_all_pairs(n: int, d: int, small_blocks: None) -> None:
    X = cloud(n, d)
    e = uniformity(X)
    assert e.exact and e.n_pairs == n * (n - 1) // 2 and e.low == e.value == e.high
    assert e.value == pytest.approx(direct_uniformity(X), abs=1e-10)


@pytest.mark.parametrize("t", [0.5, 2.0, 7.0])
def test_kernel_scale(t: float) -> None:
    X = cloud(120, 6, seed=1)
    assert uniformity(X, t=t).value == pytest.approx(direct_uniformity(X, t), abs=1e-10)


def test_very_large_t_stays_finite() -> None:
    X = cloud(50, 4)
    e = uniformity(X, t=1000.0)
    assert math.isfinite(e.value) and -4000.0 <= e.value <= 0.0
    s = uniformity(X, t=1000.0, exact_max=0, pairs=500)
    assert all(math.isfinite(v) for v in (s.value, s.low, s.high)) and s.low >= -4000.0


def test_zero_rows_duplicates_and_one_dimension() -> None:
    X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0], [0.0, -1.0]])
    assert uniformity(X).value == pytest.approx(direct_uniformity(X), abs=1e-12)
    assert uniformity(np.tile([[3.0, 4.0]], (6, 1))).value == 0.0  # all the same direction
    assert uniformity(np.zeros((3, 2))).value == 0.0  # zero rows coincide at the origin
    col = np.array([[1.0], [-2.0], [3.0]])  # d = 1: two directions
    assert uniformity(col).value == pytest.approx(direct_uniformity(col), abs=1e-12)
    antipodal = uniformity([[1.0, 0.0], [-1.0, 0.0]])
    assert antipodal.value == pytest.approx(-8.0)  # the smallest possible value for t = 2


def test_one_direction_is_exactly_zero_on_every_cpu() -> None:
    # ‖x̂‖² + ‖ŷ‖² − 2x̂·ŷ of equal rows rounds to ±1e-15, differently by BLAS kernel (about a third
    # of these directions gave −8.9e-16 before rounding-level distances were set to 0)
    rng = np.random.default_rng(0)
    for d in rng.integers(2, 400, size=20):
        assert uniformity(np.tile(rng.standard_normal(d), (12, 1))).value == 0.0


def test_sampled_on_small_data() -> None:
    X = cloud(300, 8)
    e = uniformity(X, exact_max=0, pairs=20_000, seed=2)
    assert not e.exact and e.n_pairs == 20_000 and e.low < e.value < e.high
    assert e.low <= direct_uniformity(X) <= e.high
    assert uniformity(X, exact_max=0, pairs=20_000, seed=2) == e


def test_sampled_intervals_cover_the_exact_value_on_glove(glove8000: np.ndarray) -> None:
    exact = uniformity(glove8000, exact_max=10_000)
    assert exact.exact
    assert exact.value == pytest.approx(blocked_direct_uniformity(glove8000), abs=1e-9)
    covered = 0
    for seed in range(20):
        e = uniformity(glove8000, seed=seed)  # n > 5000: sampled by default
        assert not e.exact and e.n_pairs == 100_000 and e.high - e.low < 0.02
        covered += e.low <= exact.value <= e.high
    assert covered >= 16  # a 95% interval; P(≤ 15 of 20) < 0.3%


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_extreme_scales(scale: float) -> None:
    X = cloud(60, 5)
    assert uniformity(X * scale).value == pytest.approx(uniformity(X).value, abs=1e-12)
    assert alignment(X * scale, X[::-1] * scale) == pytest.approx(alignment(X, X[::-1]), abs=1e-12)


def test_uniformity_errors() -> None:
    with pytest.raises(InputError, match="at least 2"):
        uniformity([[1.0, 0.0]])
    with pytest.raises(InputError, match="positive"):
        uniformity(np.eye(3), t=0.0)
    with pytest.raises(InputError, match="positive"):
        uniformity(np.eye(3), t=float("inf"))
    with pytest.raises(InputError, match="pairs"):
        uniformity(np.eye(3), pairs=0)
    with pytest.raises(InputError, match="row 1"):
        uniformity([[1.0, 0.0], [np.nan, 0.0]])


# Alignment ----------------------------------------------------------------------------------------------------------


def test_alignment_matches_direct(small_blocks: None) -> None:
    rng = np.random.default_rng(7)
    X = rng.standard_normal((250, 16))
    Y = X + 0.3 * rng.standard_normal((250, 16))
    direct = float(np.mean(np.sum((unit(X) - unit(Y)) ** 2, axis=1)))
    assert alignment(X, Y) == pytest.approx(direct, rel=1e-12)
    assert alignment(X.astype(np.float32), Y.astype(np.float32)) == pytest.approx(direct, rel=1e-5)


def test_alignment_degenerate() -> None:
    assert alignment([[1.0, 2.0]], [[2.0, 4.0]]) == 0.0  # one pair, same direction
    assert alignment([[1.0, 0.0]], [[-5.0, 0.0]]) == 4.0  # opposite
    assert alignment([[0.0, 0.0], [1.0, 0.0]], [[0.0, 3.0], [0.0, 0.0]]) == 1.0  # zero rows: distance 1
    assert alignment(np.zeros((2, 3)), np.zeros((2, 3))) == 0.0


def test_alignment_errors() -> None:
    with pytest.raises(InputError, match="same shape"):
        alignment(np.eye(3), np.eye(4)[:3])
    with pytest.raises(InputError, match="same shape"):
        alignment(np.eye(3), np.eye(3)[:2])
    with pytest.raises(InputError, match="Y has NaN"):
        alignment(np.eye(2), [[1.0, 0.0], [np.nan, 1.0]])
    with pytest.raises(InputError, match="0 rows"):
        alignment(np.zeros((0, 2)), np.zeros((0, 2)))
