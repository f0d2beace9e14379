"""repspace.core.arrays: the small-input step of unit_rows gives exactly what the block loop gives."""

from __future__ import annotations

import numpy as np
import pytest

import repspace.core.arrays as arrays
from repspace.core.arrays import unit_rows


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    one = rng.standard_normal((1, 384))
    few = rng.standard_normal((16, 384))
    mixed = rng.standard_normal((6, 5))
    mixed[1] = 0.0  # a zero row
    mixed[3] = 1e-200  # squares underflow: the scaled norm
    mixed[4] = 1e300  # squares overflow
    # One float32 row (a query) at float32's edges: zero, subnormal, the largest finite value.
    edges = [np.full((1, 3), v, np.float32) for v in (0.0, 1e-40, np.finfo(np.float32).max)]
    return [one, one.astype(np.float32), few.astype(np.float32), mixed, rng.integers(-5, 5, (4, 3)),
            np.zeros((2, 3)), np.zeros((0, 4)), *edges]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", range(10))
def test_small_inputs_match_the_block_loop_bit_for_bit(monkeypatch, case, dtype):
    X = _inputs()[case]
    fast = unit_rows(X, dtype)
    monkeypatch.setattr(arrays, "SMALL_ELEMENTS", -1)  # every input through the block loop
    blocked = unit_rows(X, dtype)
    assert fast.dtype == blocked.dtype == np.dtype(dtype)
    assert fast.shape == X.shape
    np.testing.assert_array_equal(fast, blocked)
    assert fast.tobytes() == blocked.tobytes()


def test_zero_rows_stay_zero_and_the_input_is_not_changed():
    X = np.array([[3.0, 4.0], [0.0, 0.0]])
    out = unit_rows(X)
    assert out.tolist() == [[0.6, 0.8], [0.0, 0.0]]
    assert X.tolist() == [[3.0, 4.0], [0.0, 0.0]] and out is not X
    assert np.isfinite(unit_rows(np.array([[1e-200, 1e-200], [1e300, -1e300]]))).all()


def test_many_blocks_give_the_rows_of_one_block(monkeypatch):
    X = _inputs()[3]
    whole = unit_rows(X, np.float32)
    monkeypatch.setattr(arrays, "SMALL_ELEMENTS", -1)
    monkeypatch.setattr(arrays, "BLOCK_ELEMENTS", 10)  # two rows a block
    np.testing.assert_array_equal(unit_rows(X, np.float32), whole)
