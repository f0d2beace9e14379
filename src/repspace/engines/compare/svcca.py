"""Singular vector canonical correlation analysis (``svcca``), Raghu et al. 2017.

Each space is reduced to its top principal directions explaining 99% of its
variance, then the canonical correlations between the two reduced spaces are
averaged. Both steps are done on the centred ``d × d`` moments of one streamed
pass (:mod:`repspace.core.moments`), not on the ``n × d`` data and not with
scikit-learn's iterative ``CCA``: with ``Cxx = V Λ Vᵀ`` the reduced, whitened
basis of ``X`` is ``X V_r Λ_r^{-1/2}`` (orthonormal columns), and the canonical
correlations are exactly the singular values of the cross-covariance of the two
whitened bases, ``Λ_y^{-1/2} V_yᵀ Cyx V_x Λ_x^{-1/2}`` (an SVD of an
``r_y × r_x`` matrix). The products are always float64 here: whitening divides by
the smallest kept eigenvalues, which float32 block products would blur.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import check_pair
from repspace.core.errors import InputError
from repspace.core.linalg import svd
from repspace.core.backend import Backend
from repspace.core.moments import Moments, moments, require_variance

__all__ = ["SVCCAResult", "svcca"]

#: Share of the variance the kept singular directions must explain.
DEFAULT_VARIANCE = 0.99

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, eq=False)
class SVCCAResult:
    """SVCCA of two spaces.

    Attributes
    ----------
    value : float
        Mean canonical correlation, in ``[0, 1]``.
    correlations : ndarray of shape (min(dims_x, dims_y),)
        The canonical correlations, descending.
    dims_x, dims_y : int
        Singular directions kept in each space.
    variance : float
        The share of variance they were chosen to explain (0.99).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((100, 3))
    >>> r = svcca(X, X @ np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 1.0]]))
    >>> round(r.value, 8), r.dims_x, r.dims_y
    (1.0, 3, 3)
    """

    value: float
    correlations: np.ndarray = field(repr=False)
    dims_x: int
    dims_y: int
    variance: float = DEFAULT_VARIANCE

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "dims_x", "dims_y", "variance", "correlations"}``."""
        return {"value": float(self.value), "dims_x": int(self.dims_x), "dims_y": int(self.dims_y),
                "variance": float(self.variance), "correlations": [float(c) for c in self.correlations]}

    def __repr__(self) -> str:
        return f"SVCCAResult({self.value:.4f}, dims_x={self.dims_x}, dims_y={self.dims_y})"


def _whitening(c: np.ndarray, n: int, variance: float) -> np.ndarray:
    """``V_r Λ_r^{-1/2}``: the top eigen-directions of ``c`` explaining ``variance``, whitened."""
    lam, V = np.linalg.eigh(c)
    lam, V = lam[::-1], V[:, ::-1]
    keep = lam > max(float(lam[0]), 0.0) * max(n, c.shape[0]) * _EPS  # exact zeros up to rounding
    if not keep.any():
        raise InputError("a space has no variance above rounding: SVCCA is undefined")
    lam, V = lam[keep], V[:, keep]
    share = np.cumsum(lam) / lam.sum()
    r = min(len(lam), int(np.searchsorted(share, variance * (1.0 - 1e-12))) + 1)
    return V[:, :r] / np.sqrt(lam[:r])


def _from(m: Moments, variance: float = DEFAULT_VARIANCE) -> SVCCAResult:
    require_variance(m, "SVCCA")
    assert m.cxx is not None and m.cyy is not None
    if m.trace_x == 0.0 or m.trace_y == 0.0:
        raise InputError(f"{'X' if m.trace_x == 0.0 else 'Y'} has no variance (every row is the same): "
                         "SVCCA is undefined")
    wx, wy = _whitening(m.cxx, m.n, variance), _whitening(m.cyy, m.n, variance)
    rho = np.clip(svd(wy.T @ m.cyx @ wx, compute_uv=False), 0.0, 1.0)
    return SVCCAResult(float(rho.mean()), rho, wx.shape[1], wy.shape[1], float(variance))


def svcca(X: Any, Y: Any, *, variance: float = DEFAULT_VARIANCE, backend: Backend | None = None) -> SVCCAResult:
    """SVCCA (Raghu et al. 2017): mean canonical correlation of the top singular directions of each space.

    Parameters
    ----------
    X : array of shape (n, d₁)
    Y : array of shape (n, d₂)
        The same ``n ≥ 2`` items, row for row. Arrays or memory maps.
    variance : float, default 0.99
        Keep, in each centred space, the fewest top singular directions whose
        share of the variance reaches this (``0 < variance ≤ 1``).
    backend : Backend, optional
        As in :func:`repspace.engines.compare.cka_linear` (``None``: this process).

    Returns
    -------
    SVCCAResult
        ``value`` (mean of the ``min(dims_x, dims_y)`` canonical correlations),
        the correlations and the kept dimensions. Invariant to orthogonal maps,
        isotropic scaling and translation; to an invertible linear map only
        when it keeps the same directions above the variance cut (a full-rank,
        well-conditioned map of a space whose directions all carry more than
        1% of the variance), because the truncation depends on the spectrum.
        When ``dims_x + dims_y ≥ n − 1`` (fewer items than kept dimensions)
        the two reduced spaces must intersect and the correlations are
        trivially near 1: compare spaces on more items than dimensions.

    Raises
    ------
    InputError
        Different numbers of rows, fewer than 2 rows, a NaN / inf, a space
        without variance, or ``variance`` outside ``(0, 1]``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 6))
    >>> A = rng.standard_normal((6, 6))                  # an invertible linear map
    >>> round(svcca(X, X @ A + 3.0).value, 8)
    1.0
    >>> round(svcca(X, rng.standard_normal((500, 6))).value, 2)
    0.07
    """
    variance = float(variance)
    if not 0.0 < variance <= 1.0:
        raise InputError(f"variance must be in (0, 1], got {variance}")
    X, Y = check_pair(X, Y, min_rows=2, scan=False, measure="SVCCA")
    return _from(moments(X, Y, precision="float64", backend=backend), variance)
