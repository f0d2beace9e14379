"""The Gaussian optimal-transport (Bures–Wasserstein) map between two groups, in their top principal components.

Owns :class:`GaussianTransport`: it moves group A's mean and covariance onto
group B's in the PCA subspace of their pooled rows and leaves the residual
outside it as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator

from repspace.core.arrays import as_matrix, block64, row_slices
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.estimators import restore_state
from repspace.engines.interpret.erasure.common import _DimensionKeepingMap, _fitted_input

__all__ = ["GaussianTransport"]

#: A group covariance (in PCA space) whose smallest eigenvalue is below this share of its largest counts as
#: singular: ``C^{-1/2}`` would amplify rounding by more than ``1e5``.
_MAX_CONDITION = 1e-10


def _mean_scatter(X: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Column means and the centred scatter ``Σ (x − μ)(x − μ)ᵀ``, two passes in float64 blocks."""
    n, d = X.shape
    total = np.zeros(d)
    for rows in row_slices(n, d):
        total += block64(X, rows, what).sum(axis=0)
    mean = total / n
    S = np.zeros((d, d))
    for rows in row_slices(n, d):
        c = block64(X, rows, what) - mean
        S += c.T @ c
    return mean, (S + S.T) / 2


class GaussianTransport(_DimensionKeepingMap, BaseEstimator):
    """The Gaussian (Bures–Wasserstein) optimal-transport map from group A to group B, in PCA space.

    ``fit(X_a, X_b)`` finds the top ``dims`` principal axes ``V`` (dims × d) of
    the pooled rows of both groups (mean ``μ``), writes each group in those
    coordinates ``z = (x − μ)Vᵀ`` and models it as a Gaussian ``N(m, C)``
    (``C`` with ``n`` in the denominator, as POT's empirical estimate). The
    map between the two Gaussians that moves mass least (in squared distance)
    is affine, ``T(z) = zA + b`` with
    ``A = C_a^{-1/2}(C_a^{1/2} C_b C_a^{1/2})^{1/2} C_a^{-1/2}`` and
    ``b = m_b − m_a A`` (Knott & Smith 1984), computed by POT's
    :func:`ot.gaussian.bures_wasserstein_mapping`. ``transform`` applies it in
    the PCA coordinates and keeps the residual outside the PCA subspace:
    ``x' = x + (T(z) − z)V``.

    Afterwards group A has group B's mean and covariance in the PCA subspace
    (exactly, on the fitted rows), so unlike removing the mean-difference
    direction it also erases second-order differences (what a quadratic
    classifier sees), at the price of moving points further.

    Parameters
    ----------
    dims : int
        Principal components of the pooled rows the map acts in (``1 ≤ dims ≤ d``).
        Each group needs more than ``dims`` rows for its covariance to be invertible.
    reg : float
        Added to the diagonal of both groups' covariances (``reg ≥ 0``; POT's
        ``reg``). With 0 a singular covariance (condition number above 1e10)
        raises :class:`~repspace.core.errors.InputError`.

    Attributes
    ----------
    mean_ : (d,) float64
        The pooled mean ``μ``.
    components_ : (dims, d) float64
        The principal axes ``V`` as rows, sign-fixed (largest entry positive).
    explained_variance_ : (dims,) float64
        Their pooled variances.
    A_ : (dims, dims) float64
        The (symmetric) linear part of the map, acting on row vectors: ``zA + b``.
    b_ : (dims,) float64
    mean_a_, mean_b_ : (dims,) float64
        The groups' means in the PCA coordinates.
    cov_a_, cov_b_ : (dims, dims) float64
        Their covariances there (before ``reg``).
    n_features_in_ : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xa = rng.normal(size=(400, 3)) * [1.0, 2.0, 0.5]
    >>> Xb = rng.normal(size=(300, 3)) * [2.0, 1.0, 0.5] + [1.0, 0.0, 0.0]
    >>> ot_map = GaussianTransport(dims=3).fit(Xa, Xb)
    >>> moved = ot_map.transform(Xa)
    >>> bool(np.allclose(moved.mean(axis=0), Xb.mean(axis=0)))
    True
    >>> bool(np.allclose(np.cov(moved.T, bias=True), np.cov(Xb.T, bias=True)))
    True
    """

    _state_attrs = ("mean_", "components_", "explained_variance_", "A_", "b_",
                    "mean_a_", "mean_b_", "cov_a_", "cov_b_")

    def __init__(self, dims: int = 10, reg: float = 0.0) -> None:
        self.dims = dims
        self.reg = reg

    def fit(self, X_a: Any, X_b: Any) -> Self:
        """Learn the map from the rows of group A (n_a, d) to those of group B (n_b, d); returns ``self``."""
        A = as_matrix(X_a, "X_a", min_rows=0, scan=False)
        B = as_matrix(X_b, "X_b", min_rows=0, scan=False)
        if A.shape[1] != B.shape[1]:
            raise InputError(f"X_a has {A.shape[1]} dimensions and X_b {B.shape[1]}: both groups must live "
                             "in one space")
        for name, G in (("X_a", A), ("X_b", B)):
            if G.shape[0] < 2:
                raise InputError(f"GaussianTransport needs at least 2 rows in each group; {name} has {G.shape[0]}")
        d = A.shape[1]
        dims = check_scalar(self.dims, "dims", int, low=1)
        if dims > d:
            raise InputError(f"GaussianTransport: dims={dims} is more than the {d} dimensions of the data")
        reg = check_scalar(self.reg, "reg", float, low=0)
        (na, nb) = A.shape[0], B.shape[0]
        mu_a, S_a = _mean_scatter(A, "X_a")
        mu_b, S_b = _mean_scatter(B, "X_b")
        n = na + nb
        mean = (na * mu_a + nb * mu_b) / n
        delta = mu_b - mu_a
        pooled = (S_a + S_b + (na * nb / n) * np.outer(delta, delta)) / (n - 1)
        lam, vecs = np.linalg.eigh(pooled)
        order = np.argsort(lam)[::-1][:dims]
        V = vecs[:, order].T
        idx = np.argmax(np.abs(V), axis=1)
        V *= np.sign(V[np.arange(dims), idx])[:, None]
        if not lam[order[0]] > 0:
            raise InputError("GaussianTransport: the rows of both groups have no variance (all rows are equal)")
        ma, mb = (mu_a - mean) @ V.T, (mu_b - mean) @ V.T
        Ca, Cb = V @ (S_a / na) @ V.T, V @ (S_b / nb) @ V.T
        Ca, Cb = (Ca + Ca.T) / 2, (Cb + Cb.T) / 2
        eye = float(reg) * np.eye(dims)
        for name, C, m_rows in (("A", Ca + eye, na), ("B", Cb + eye, nb)):
            ev = np.linalg.eigvalsh(C)
            if not ev[0] > ev[-1] * _MAX_CONDITION:
                raise InputError(f"GaussianTransport: group {name}'s covariance in the {dims}-dimensional PCA "
                                 f"space is singular or nearly ({m_rows} rows); use fewer dims or reg > 0")
        import ot

        Amap, b = ot.gaussian.bures_wasserstein_mapping(ma, mb, Ca + eye, Cb + eye)
        Amap, b = np.asarray(Amap, np.float64), np.asarray(b, np.float64).reshape(-1)
        if not (np.isfinite(Amap).all() and np.isfinite(b).all()):  # pragma: no cover - guarded above
            raise InputError("GaussianTransport: the map is not finite; use fewer dims or reg > 0")
        self.mean_, self.components_, self.explained_variance_ = mean, V, lam[order]
        self.A_, self.b_ = Amap, b
        self.mean_a_, self.mean_b_, self.cov_a_, self.cov_b_ = ma, mb, Ca, Cb
        self.n_features_in_ = int(d)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Move rows (of group A, or like them) toward group B: ``x + (zA + b − z)V``, ``z = (x − μ)Vᵀ``."""
        def move(x: np.ndarray) -> np.ndarray:
            z = (x - self.mean_) @ self.components_.T
            return x + (z @ self.A_ + self.b_ - z) @ self.components_

        return self.map_blocks(X, move)

    def project(self, X: Any) -> np.ndarray:
        """The PCA coordinates ``z = (x − μ)Vᵀ`` of rows ``X`` (float64, (n, dims))."""
        arr = _fitted_input(self, X, "GaussianTransport")
        out = np.empty((arr.shape[0], self.components_.shape[0]))
        for rows in row_slices(*arr.shape):
            out[rows] = (block64(arr, rows, "X") - self.mean_) @ self.components_.T
        return out

    @classmethod
    def from_state(cls, params: Mapping[str, Any], state: Mapping[str, Any]) -> Self:
        """A fitted map from ``get_params()`` and :meth:`state` (transforms exactly as the original)."""
        obj = restore_state(cls, params, state, cls._state_attrs)
        d, V = obj.n_features_in_, obj.components_
        k = V.shape[0] if V.ndim == 2 else -1
        shapes = {"mean_": (d,), "components_": (k, d), "explained_variance_": (k,), "A_": (k, k), "b_": (k,),
                  "mean_a_": (k,), "mean_b_": (k,), "cov_a_": (k, k), "cov_b_": (k, k)}
        bad = [a for a, s in shapes.items() if getattr(obj, a).shape != s]
        if k < 1 or k > d or bad:
            raise InputError(f"state of GaussianTransport: shapes do not agree ({', '.join(bad) or 'components_'} "
                             f"for n_features_in_ {d})")
        return obj


# -- measured: held-out accuracy and displacement ----------------------------------------------------
