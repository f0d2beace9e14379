"""repspace.engines.geometry.norms against direct NumPy computations, and on degenerate input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.geometry.norms import NormStats, norms

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


#: Elements per block under the ``small_blocks`` fixture (tests/engines/conftest.py): a few rows.
SMALL_BLOCK_ELEMENTS = 64


def direct(X: np.ndarray) -> tuple[float, float, float, float]:
    lengths = np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1)
    return lengths.mean(), lengths.std(), lengths.min(), lengths.max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_matches_numpy(dtype: type, small_blocks: None) -> None:
    rng = np.random.default_rng(1)
    X = (rng.standard_normal((301, 17)) * rng.uniform(0.1, 5, size=(301, 1)) * 10).astype(dtype)
    s = norms(X)
    mean, std, lo, hi = direct(X)
    assert s.mean == pytest.approx(mean, rel=1e-12)
    assert s.std == pytest.approx(std, rel=1e-10)
    assert s.min == pytest.approx(lo, rel=1e-12)
    assert s.max == pytest.approx(hi, rel=1e-12)
    assert s.cv == pytest.approx(std / mean, rel=1e-10)


def test_to_dict_keys_and_json() -> None:
    d = norms(np.eye(3) * 2).to_dict()
    assert d == {"norms.mean": 2.0, "norms.std": 0.0, "norms.min": 2.0, "norms.max": 2.0, "norms.cv": 0.0}
    json.dumps(d, allow_nan=False)
    assert "cv=0" in repr(norms(np.eye(3)))


def test_all_zero_rows_give_cv_zero() -> None:
    assert norms(np.zeros((4, 3))) == NormStats(0.0, 0.0, 0.0, 0.0, 0.0)


def test_single_row_single_dimension_and_duplicates() -> None:
    assert norms([[-3.0]]) == NormStats(3.0, 0.0, 3.0, 3.0, 0.0)
    s = norms(np.tile([[1.0, 2.0, 2.0]], (5, 1)))
    assert (s.mean, s.std, s.cv) == (3.0, 0.0, 0.0)


def test_some_zero_rows() -> None:
    s = norms([[3.0, 4.0], [0.0, 0.0]])
    assert (s.mean, s.std, s.min, s.max, s.cv) == (2.5, 2.5, 0.0, 5.0, 1.0)


@pytest.mark.parametrize("scale", [1e-200, 1e200, 1e307])
def test_extreme_magnitudes_stay_finite_and_right(scale: float) -> None:
    X = np.array([[3.0, 4.0], [6.0, 8.0]]) * scale
    s = norms(X)
    for v in (s.mean, s.std, s.min, s.max, s.cv):
        assert math.isfinite(v)
    assert s.min == pytest.approx(5 * scale, rel=1e-12)
    assert s.max == pytest.approx(10 * scale, rel=1e-12)
    assert s.mean == pytest.approx(7.5 * scale, rel=1e-12)
    assert s.cv == pytest.approx(1 / 3, rel=1e-12)


def test_norm_beyond_float64_is_clipped_not_inf() -> None:
    big = np.finfo(np.float64).max
    s = norms(np.full((2, 4), big))
    assert s.max == big and math.isfinite(s.mean) and s.cv == 0.0


@pytest.mark.parametrize(
    "bad, message",
    [
        ([1.0, 2.0], "2-d"),
        (np.zeros((0, 3)), "0 rows"),
        (np.zeros((3, 0)), "no dimensions"),
        ([[1.0, np.nan], [0.0, 1.0]], "row 0"),
        ([[1.0, 0.0], [np.inf, 1.0]], "row 1"),
        ([["a", "b"]], "real numbers"),
        ([[True, False]], "real numbers"),
    ],
)
def test_bad_input_is_one_clear_error(bad: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        norms(bad)
