"""The streamed moments read back in the data's own units (means, centred cross product, traces)."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.core.moments import moments

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.mark.parametrize("offset, scale", [(0.0, 1.0), (1e6, 1.0), (0.0, 1e-200), (0.0, 1e150), (-3e4, 7.0)])
def test_means_cross_and_traces_equal_a_two_pass_float64_reference(offset, scale):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(500, 7)) + offset) * scale
    Y = (rng.normal(size=(500, 4)) @ rng.normal(size=(4, 4)) - offset) * scale
    m = moments(X, Y, grams=False, precision="float64")
    xc, yc = X - X.mean(axis=0), Y - Y.mean(axis=0)
    cross, tx, ty = m.cross()
    np.testing.assert_allclose(m.mean_x, X.mean(axis=0), rtol=1e-12, atol=1e-12 * max(1.0, abs(offset)) * scale)
    np.testing.assert_allclose(m.mean_y, Y.mean(axis=0), rtol=1e-12, atol=1e-12 * max(1.0, abs(offset)) * scale)
    np.testing.assert_allclose(cross, xc.T @ yc, rtol=1e-9, atol=1e-9 * np.abs(xc.T @ yc).max())
    assert tx == pytest.approx(float((xc * xc).sum()), rel=1e-10)
    assert ty == pytest.approx(float((yc * yc).sum()), rel=1e-10)


def test_a_nan_is_one_error_naming_its_row():
    X = np.ones((10, 3))
    X[:, 0] = np.arange(10)
    X[6, 1] = np.nan
    with pytest.raises(InputError, match=r"X has NaN or infinite values \(row 6\)"):
        moments(X, X.copy(), grams=False)
