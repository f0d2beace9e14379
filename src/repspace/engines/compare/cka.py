"""Centered kernel alignment (``cka_linear``, ``cka_debiased``), computed in feature space.

Both are computed from one streamed pass over the rows
(:mod:`repspace.core.moments`): column sums and the three Gram products
``XᵀX``, ``YᵀY``, ``YᵀX`` accumulated in float64, centred afterwards. Memory is
``O(d₁² + d₂² + d₁d₂)``; no ``n × n`` matrix is ever formed, and a memory-mapped
array is read once, block by block.

Degenerate input
----------------
A space without variance (every row the same, or ``n = 1``) has a zero centred
Gram matrix, and CKA is 0/0: both functions raise
:class:`~repspace.core.errors.InputError` saying so. Zero-variance columns,
duplicate rows and ``n < d`` are fine (CKA only needs a non-zero centred Gram).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from repspace.core.arrays import check_pair
from repspace.core.errors import InputError
from repspace.core.backend import Backend
from repspace.core.moments import Moments, moments, require_variance
from repspace.engines.compare._inputs import check_precision

__all__ = ["cka", "cka_debiased", "cka_linear"]

#: An unbiased HSIC(K, K) below this fraction of the biased one counts as "not positive" (rounding).
_HSIC_TOL = 1e-12


def _linear_from(m: Moments) -> float:
    require_variance(m, "CKA")
    assert m.cxx is not None and m.cyy is not None
    nx, ny = float(np.linalg.norm(m.cxx)), float(np.linalg.norm(m.cyy))
    if nx == 0.0 or ny == 0.0:  # variance below rounding: the centred Gram vanished
        raise InputError(f"{'X' if nx == 0.0 else 'Y'} has no variance (every row is the same): CKA is undefined")
    cross = float(np.linalg.norm(m.cyx))
    return float(min(1.0, max(0.0, (cross / nx) * (cross / ny))))


def _debiased_from(m: Moments) -> float:
    if m.n < 4:
        raise InputError(f"debiased CKA needs at least 4 items (the unbiased HSIC divides by n(n−3)), got {m.n}")
    require_variance(m, "debiased CKA")
    assert m.hsic_xy is not None and m.hsic_xx is not None and m.hsic_yy is not None
    assert m.cxx is not None and m.cyy is not None
    n2 = float(m.n) * float(m.n)
    tol_x = _HSIC_TOL * float(np.sum(m.cxx * m.cxx)) / n2  # the biased HSIC(K, K), times the tolerance
    tol_y = _HSIC_TOL * float(np.sum(m.cyy * m.cyy)) / n2
    if m.hsic_xx <= tol_x or m.hsic_yy <= tol_y:
        return 0.0
    value = m.hsic_xy / (math.sqrt(m.hsic_xx) * math.sqrt(m.hsic_yy))
    return float(min(1.0, max(-1.0, value)))


def cka_linear(X: Any, Y: Any, *, precision: str = "auto", backend: Backend | None = None) -> float:
    """Linear CKA (Kornblith et al. 2019) in its feature-space form.

    ``CKA = ‖YᵀX‖²_F / (‖XᵀX‖_F ‖YᵀY‖_F)`` on column-centred ``X`` and ``Y``,
    equal to the Gram form ``tr(KHLH) / √(tr(KHKH) tr(LHLH))`` with
    ``K = XXᵀ``, ``L = YYᵀ``, ``H = I − 11ᵀ/n``, but in ``O(d²)`` memory.

    Parameters
    ----------
    X : array of shape (n, d₁)
    Y : array of shape (n, d₂)
        The same ``n ≥ 2`` items, row for row; any dimensions. Arrays or
        memory maps (streamed in blocks of rows).
    precision : ``auto`` or ``float64``, default ``auto``
        ``auto`` multiplies blocks in float32 when both inputs are float32
        (each block's product is then added into float64 accumulators;
        relative error about 1e-6); ``float64`` always multiplies in float64.
        Centring is done after the pass from the float64 column sums, on rows
        shifted by the first row (see :mod:`repspace.core.moments`).
    backend : Backend, optional
        Where the moment pass sums its rows (:class:`repspace.core.backend.Backend`;
        ``None``: this process).

    Returns
    -------
    float
        In ``[0, 1]``; 1 when ``Y`` is ``X`` up to an orthogonal map, an
        isotropic scaling and a translation.

    Raises
    ------
    InputError
        Different numbers of rows, fewer than 2 rows, a NaN / inf, or a space
        without variance (CKA is 0/0 there).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 5))
    >>> Q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    >>> round(cka_linear(X, 3.0 * X @ Q + 1.0), 10)
    1.0
    >>> round(cka_linear(X, rng.standard_normal((200, 4))), 2)   # unrelated spaces
    0.03
    """
    X, Y = check_pair(X, Y, min_rows=2, scan=False, measure="CKA")
    return _linear_from(moments(X, Y, precision=check_precision(precision), backend=backend))


def cka_debiased(X: Any, Y: Any, *, precision: str = "auto", backend: Backend | None = None) -> float:
    """Debiased linear CKA (Nguyen et al. 2021): CKA with the unbiased HSIC of Song et al. 2012 (eq. 5).

    ``HSIC₁(K, L) = [tr(K̃L̃) + 1ᵀK̃1·1ᵀL̃1/((n−1)(n−2)) − 2·1ᵀK̃L̃1/(n−2)] / (n(n−3))``
    with ``K̃ = K`` with a zero diagonal, and
    ``CKA = HSIC₁(K, L) / √(HSIC₁(K, K) HSIC₁(L, L))`` for linear kernels
    ``K = XXᵀ``, ``L = YYᵀ``. The Gram form is not formed: for linear kernels
    each term is an exact identity in feature space (``tr(K̃L̃) = ‖YᵀX‖²_F −
    Σ‖x_i‖²‖y_i‖²``, ...), accumulated in the same single pass as
    :func:`cka_linear`. So the value is exact for every ``n`` (METRICS.md
    allows sampling 20,000 rows above 20,000; it is not needed) and equals the
    ``n × n`` Gram formula to rounding.

    Parameters
    ----------
    X : array of shape (n, d₁)
    Y : array of shape (n, d₂)
        The same ``n ≥ 4`` items, row for row.
    precision : ``auto`` or ``float64``
        As in :func:`cka_linear`.
    backend : Backend, optional
        As in :func:`cka_linear` (``None``: this process).

    Returns
    -------
    float
        In ``[−1, 1]`` (the unbiased estimator is not bounded by Cauchy–Schwarz
        on small samples, so the ratio is clipped to ``[−1, 1]``). When
        ``HSIC₁(K, K)`` or ``HSIC₁(L, L)`` is not positive (beyond a relative
        rounding tolerance of 1e-12 of the biased value) — the sample is too
        small or too degenerate for the estimator to see any variance, e.g.
        all rows but one equal, where ``HSIC₁(K, K)`` is exactly 0 — the
        result is defined as ``0.0`` (no measurable shared structure), never NaN.

    Raises
    ------
    InputError
        Different numbers of rows, fewer than 4 rows, a NaN / inf, or a space
        without any variance.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 5))
    >>> round(cka_debiased(X, 2.0 * X[:, ::-1] - 5.0), 10)
    1.0
    >>> abs(cka_debiased(X, rng.standard_normal((200, 4)))) < 0.02
    True
    """
    X, Y = check_pair(X, Y, min_rows=4, scan=False, measure="debiased CKA")
    return _debiased_from(moments(X, Y, debiased=True, precision=check_precision(precision), backend=backend))


#: ``repspace.compare.cka(X, Y)`` is linear CKA.
cka = cka_linear
