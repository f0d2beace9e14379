"""The orthogonal Procrustes distance between two spaces (``procrustes``).

Williams et al. 2021 (*Generalized shape metrics on neural representations*):
centre both spaces, scale each to unit Frobenius norm, zero-pad the smaller
dimension, and measure the distance left after the best rotation of one onto
the other. Only ``YᵀX`` and the two traces are needed, accumulated in one
streamed pass over the rows (:mod:`repspace.core.moments`), so memory is
``O(d₁d₂)`` for any ``n``.
"""

from __future__ import annotations

import math
from typing import Any

from repspace.core.arrays import check_pair
from repspace.core.errors import InputError
from repspace.core.linalg import svd
from repspace.core.backend import Backend
from repspace.core.moments import Moments, moments, require_variance
from repspace.engines.compare._inputs import check_precision

__all__ = ["procrustes"]


def _from(m: Moments) -> float:
    require_variance(m, "the Procrustes distance")
    if m.trace_x == 0.0 or m.trace_y == 0.0:
        name = "X" if m.trace_x == 0.0 else "Y"
        raise InputError(f"{name} has no variance (every row is the same): the Procrustes distance is undefined")
    nuclear = float(svd(m.cyx, compute_uv=False).sum())
    similarity = min(1.0, max(0.0, nuclear / (math.sqrt(m.trace_x) * math.sqrt(m.trace_y))))
    return float(math.sqrt(max(0.0, 2.0 - 2.0 * similarity)))


def procrustes(X: Any, Y: Any, *, precision: str = "auto", backend: Backend | None = None) -> float:
    """Orthogonal Procrustes distance ``√(2 − 2‖X̂ᵀŶ‖_*)`` in ``[0, √2]`` (METRICS.md ``procrustes``).

    ``X̂``, ``Ŷ`` are the column-centred spaces divided by their Frobenius norms
    (the smaller dimension zero-padded, which leaves the singular values of
    ``X̂ᵀŶ`` unchanged), and ``‖·‖_*`` is the nuclear norm: ``min_Q ‖X̂ − ŶQ‖_F``
    over orthogonal ``Q`` is ``√(2 − 2‖X̂ᵀŶ‖_*)``.

    Parameters
    ----------
    X : array of shape (n, d₁)
    Y : array of shape (n, d₂)
        The same ``n ≥ 2`` items, row for row. Arrays or memory maps.
    precision : ``auto`` or ``float64``
        As in :func:`repspace.engines.compare.cka_linear`.
    backend : Backend, optional
        As in :func:`repspace.engines.compare.cka_linear` (``None``: this process).

    Returns
    -------
    float
        A distance: 0 when ``Y`` is a rotated, scaled and translated copy of
        ``X`` (in practice about 1e-8: the square root of rounding), larger
        for less similar spaces, at most ``√2``.

    Raises
    ------
    InputError
        Different numbers of rows, fewer than 2 rows, a NaN / inf, or a space
        without variance (it cannot be scaled to unit norm).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 4))
    >>> Q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    >>> procrustes(X, 5.0 * X @ Q - 2.0) < 1e-6
    True
    >>> round(procrustes(X, rng.standard_normal((100, 6))), 2)
    1.27
    """
    X, Y = check_pair(X, Y, min_rows=2, scan=False, measure="the Procrustes distance")
    return _from(moments(X, Y, grams=False, precision=check_precision(precision), backend=backend))
