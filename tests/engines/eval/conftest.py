"""Fixtures shared by the evaluation tests that fit scikit-learn models on small data."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def one_blas_thread():
    """One BLAS thread: on a busy 2-core runner, threaded BLAS makes these tiny fits ~15x slower."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def digit_halves():
    """scikit-learn's bundled digits (1,797 images, 10 classes) in halves: even rows train, odd rows test."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = x.astype(np.float32)
    return x[0::2], y[0::2], x[1::2], y[1::2]
