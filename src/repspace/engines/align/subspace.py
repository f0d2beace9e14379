"""A map between two spaces fitted only within chosen subspaces of each (S150).

Both sides are centred with their pair means and projected on an orthonormal
basis of their own: the top ``rank`` principal directions of the pairs
(:class:`SubspaceMap` with ``rank``), or directions the caller gives
(``basis_x``, ``basis_y``, orthonormalised). A Procrustes or ridge map
(:mod:`repspace.engines.align.maps`) is fitted between the two projections, and
carried back into the full target space:

``transform(x) = (x − mean_x_) B_x W B_yᵀ + mean_y_``,

so the result is again a map of the form ``(x − mean_x_) W_ + mean_y_`` with
``W_ = B_x W B_yᵀ``, scored, stored and inverted like any other. What lies
outside the two subspaces is neither read from the source nor written into the
target: the map is as good as the directions it is restricted to.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.linalg import svd
from repspace.engines.align._base import Map, pair_moments
from repspace.engines.align.maps import Procrustes, RidgeMap

__all__ = ["SUBSPACE_MAPS", "SubspaceMap"]

#: The maps fitted between the two projections.
SUBSPACE_MAPS = ("procrustes", "ridge")


def _basis(given: Any, d: int, name: str) -> np.ndarray:
    """``given`` (k × d directions, as rows) as an orthonormal d × k basis."""
    arr = np.asarray(given, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != d or arr.shape[0] < 1:
        raise InputError(f"{name} must be k directions of {d} numbers (a k × {d} array), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} holds NaN or infinite values")
    u, sv, vt = svd(arr, full_matrices=False)
    if sv.size < arr.shape[0] or not sv[-1] > 1e-10 * max(float(sv[0]), 1e-300):
        raise InputError(f"the {arr.shape[0]} directions of {name} are not linearly independent")
    return np.ascontiguousarray((u @ vt).T)  # the orthonormal matrix nearest the rows, transposed


def _top(centred: np.ndarray, r: int) -> tuple[np.ndarray, float]:
    """The top ``r`` right singular vectors of ``centred`` (d × r) and the share of variance they hold."""
    _, sv, vt = svd(centred, full_matrices=False)
    total = float(np.sum(sv * sv))
    return np.ascontiguousarray(vt[:r].T), float(np.sum(sv[:r] ** 2) / total) if total > 0 else 0.0


def _share(centred: np.ndarray, basis: np.ndarray) -> float:
    total = float(np.sum(centred * centred))
    return float(np.sum((centred @ basis) ** 2) / total) if total > 0 else 0.0


class SubspaceMap(Map):
    """Procrustes or ridge map between projections of both spaces on subspaces, back in full coordinates.

    Parameters
    ----------
    rank : int, optional
        Keep the top ``rank`` principal directions of each side's centred pairs (at most
        ``min(d_x, d_y, n − 1)``). Required unless both bases are given.
    method : ``procrustes`` or ``ridge``
        The map fitted between the projections (:class:`~repspace.engines.align.Procrustes`,
        :class:`~repspace.engines.align.RidgeMap` with its default penalties and folds).
    basis_x, basis_y : (k, d) array, optional
        Directions (rows) spanning the source / target subspace, used instead of the principal ones
        (orthonormalised; need not be orthogonal).

    Attributes
    ----------
    basis_x_ : (d_x, r_x) float64
    basis_y_ : (d_y, r_y) float64
        Orthonormal columns.
    W_sub_ : (r_x, r_y) float64
        The map between the projections.
    W_ : (d_x, d_y) float64
        ``basis_x_ @ W_sub_ @ basis_y_.T``.
    mean_x_, mean_y_ : float64
    variance_x_, variance_y_ : 0-d float64
        Share of each side's centred pair variance inside its subspace.
    n_features_in_ : int

    Examples
    --------
    Two 6-d spaces that share a planted rotation on 2 strong directions and differ elsewhere:

    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(300, 2)) * 5
    >>> X = np.hstack([Z, rng.normal(size=(300, 4))])
    >>> R, _ = np.linalg.qr(rng.normal(size=(2, 2)))
    >>> Y = np.hstack([Z @ R, rng.normal(size=(300, 4))])
    >>> m = SubspaceMap(rank=2).fit(X, Y)
    >>> m.W_sub_.shape, bool(np.allclose(np.abs(m.W_[:2, :2]), np.abs(R), atol=0.05))
    ((2, 2), True)
    """

    _state_attrs = ("mean_x_", "mean_y_", "W_", "basis_x_", "basis_y_", "W_sub_", "variance_x_", "variance_y_")

    def __init__(self, rank: int | None = None, method: str = "procrustes", basis_x: Any = None,
                 basis_y: Any = None) -> None:
        self.rank = rank
        self.method = method
        self.basis_x = basis_x
        self.basis_y = basis_y

    def _fit(self, X: np.ndarray, Y: np.ndarray) -> None:
        check_choice(self.method, "method", SUBSPACE_MAPS)
        mx, my, _, tx, ty = pair_moments(X, Y)  # also rejects NaN / inf
        for name, t in (("X", tx), ("Y", ty)):
            if not t > 0.0:
                raise InputError(f"SubspaceMap: every row of {name} is the same; there is no subspace to fit")
        xc, yc = np.asarray(X, np.float64) - mx, np.asarray(Y, np.float64) - my
        n, dx, dy = xc.shape[0], xc.shape[1], yc.shape[1]
        if self.basis_x is None or self.basis_y is None:
            if self.rank is None:
                raise InputError("SubspaceMap needs rank (top principal directions) unless both bases are given")
            check_scalar(self.rank, "rank", int, low=1)
            top = min(dx, dy, n - 1)
            if self.rank > top:
                raise InputError(f"rank {self.rank} is more than min(d_x, d_y, pairs − 1) = {top}")
        if self.basis_x is None:
            bx, vx = _top(xc, int(self.rank))
        else:
            bx = _basis(self.basis_x, dx, "basis_x")
            vx = _share(xc, bx)
        if self.basis_y is None:
            by, vy = _top(yc, int(self.rank))
        else:
            by = _basis(self.basis_y, dy, "basis_y")
            vy = _share(yc, by)
        px, py = xc @ bx, yc @ by
        inner = (Procrustes() if self.method == "procrustes" else RidgeMap()).fit(px, py)
        self.basis_x_, self.basis_y_, self.W_sub_ = bx, by, inner.W_
        self.variance_x_, self.variance_y_ = np.float64(vx), np.float64(vy)
        self.mean_x_ = mx
        # (p − m_p) W + m_q in the projections; m_p, m_q ≈ 0 (centred data) but kept exact
        self.mean_y_ = my + (inner.mean_y_ - inner.mean_x_ @ inner.W_) @ by.T
        self.W_ = bx @ inner.W_ @ by.T

    def _restored(self) -> None:
        super()._restored()
        dx, dy = self.W_.shape
        bx, by, w = self.basis_x_, self.basis_y_, self.W_sub_
        if not (bx.ndim == by.ndim == w.ndim == 2 and bx.shape[0] == dx and by.shape[0] == dy
                and w.shape == (bx.shape[1], by.shape[1])):
            raise InputError("state of SubspaceMap: basis_x_ (d_x, r_x), basis_y_ (d_y, r_y) and W_sub_ "
                             "(r_x, r_y) do not agree with W_")
        self.variance_x_, self.variance_y_ = np.float64(self.variance_x_), np.float64(self.variance_y_)
