"""Synthetic pairs of representations, and the maps between them, for the compare and align tests."""

from __future__ import annotations

import numpy as np


def related(n: int, d1: int, d2: int, seed: int = 0, noise: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (n × d1, columns of unequal scale and nonzero mean) and ``Y = tanh(X W) + noise`` (n × d2)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d1)) * rng.uniform(0.5, 3.0, d1) + rng.standard_normal(d1)
    Y = np.tanh(X @ rng.standard_normal((d1, d2))) + noise * rng.standard_normal((n, d2))
    return X, Y


def orthogonal(d: int, seed: int = 1) -> np.ndarray:
    """A random d × d orthogonal matrix (the Q of a Gaussian matrix's QR)."""
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return Q


def rotation(d: int, seed: int) -> np.ndarray:
    """A random d × d rotation, unique for its seed (the QR's signs fixed by R's diagonal)."""
    q, r = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return q * np.sign(np.diag(r))
