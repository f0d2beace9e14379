"""Independent reference computations shared by several test modules: written from the definitions, never
through repspace, so that a test compares repspace with something else."""

from __future__ import annotations

import numpy as np


def unit(X: np.ndarray) -> np.ndarray:
    """The rows of ``X`` scaled to unit length in float64 (a zero row stays zero)."""
    X = np.asarray(X, dtype=np.float64)
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, n, out=np.zeros_like(X), where=n > 0)
