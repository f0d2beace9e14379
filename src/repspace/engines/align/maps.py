"""Supervised linear maps from a source space to a target space, learned from paired rows.

Both maps have the form ``y ≈ (x − mean_x_) W_ + mean_y_`` (METRICS.md, "Maps
between spaces"), work in float64 on blocks of rows, and return float32.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold

from repspace.core.arrays import as_matrix, block64, row_slices
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.linalg import svd
from repspace.engines.align._base import Map, pair_moments

__all__ = ["DEFAULT_ALPHAS", "Procrustes", "RidgeMap"]

#: The ridge penalties tried by default.
DEFAULT_ALPHAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)


def padded_rotation(cross: np.ndarray) -> np.ndarray:
    """The orthogonal ``W`` maximising ``tr(Wᵀ·cross)``: ``UVᵀ`` from the SVD of ``cross`` zero-padded to square.

    ``cross`` is ``XᵀY`` (``d_x × d_y``); the top-left ``d_x × d_y`` block of the
    ``d × d`` rotation (``d = max(d_x, d_y)``) is returned, float64.

    The SVD is :func:`repspace.core.linalg.svd`, which falls back to LAPACK's
    ``gesvd`` where ``gesdd`` does not converge (seen on 100 Cranfield
    documents in 256 × 384 dimensions, rank 91, under OpenBLAS's SkylakeX kernels).
    """
    dx, dy = cross.shape
    d = max(dx, dy)
    padded = np.zeros((d, d))
    padded[:dx, :dy] = cross
    u, _, vt = svd(padded)
    return np.ascontiguousarray((u @ vt)[:dx, :dy])


class Procrustes(Map):
    """Orthogonal Procrustes: the rotation that best carries the centred source pairs onto the targets.

    Both sides are centred with their pair means (``mean_x_``, ``mean_y_``), the
    smaller dimension is zero-padded to ``d = max(d_x, d_y)``, and ``W = UVᵀ``
    from the SVD ``UΣVᵀ`` of ``XᵀY`` minimises ``‖XW − Y‖_F`` over orthogonal
    ``W`` (Schönemann 1966). Only the top-left ``d_x × d_y`` block of the
    ``d × d`` rotation acts on padded rows and is kept as ``W_``, so
    ``transform(x) = (x − mean_x_) W_ + mean_y_`` has the target's dimension.
    Distances and angles among the centred source rows are preserved exactly
    when ``d_x ≤ d_y``.

    Attributes
    ----------
    mean_x_ : (d_x,) float64
    mean_y_ : (d_y,) float64
    W_ : (d_x, d_y) float64
        Orthonormal rows when ``d_x ≤ d_y``, orthonormal columns otherwise.
    n_features_in_ : int

    Raises
    ------
    InputError
        Fewer than 2 pairs, different numbers of rows, NaN / inf, or a side
        whose rows are all the same (nothing to rotate).

    Examples
    --------
    A planted rotation and translation are recovered:

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3))
    >>> R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    >>> Y = X @ R + [1.0, -2.0, 0.5]
    >>> m = Procrustes().fit(X, Y)
    >>> bool(np.allclose(m.W_, R)), bool(np.allclose(m.transform(X), Y, atol=1e-5))
    (True, True)
    >>> bool(np.allclose(m.inverse_transform(Y), X, atol=1e-5))
    True
    """

    def _fit(self, X: np.ndarray, Y: np.ndarray) -> None:
        mx, my, cross, tx, ty = pair_moments(X, Y)
        for name, t in (("X", tx), ("Y", ty)):
            if not t > 0.0:
                raise InputError(f"Procrustes: every row of {name} is the same; there is nothing to rotate")
        self.mean_x_, self.mean_y_ = mx, my
        self.W_ = padded_rotation(cross)

    def inverse_transform(self, Y: Any) -> np.ndarray:
        """Map target rows back into the source space, ``(y − mean_y_) W_ᵀ + mean_x_``; float32."""
        self.check_fitted()
        arr = as_matrix(Y, "Y", min_rows=0, scan=False)
        if arr.shape[1] != self.W_.shape[1]:
            raise InputError(f"Procrustes maps into {self.W_.shape[1]} dimensions; Y has {arr.shape[1]}")
        out = np.empty((arr.shape[0], self.n_features_in_), np.float32)
        for rows in row_slices(*arr.shape):
            out[rows] = (block64(arr, rows, "Y") - self.mean_y_) @ self.W_.T + self.mean_x_
        return out


class RidgeMap(Map):
    """Ridge linear map ``W = (XᵀX + λI)⁻¹XᵀY`` on centred pairs, ``λ`` chosen by k-fold cross-validation.

    For each ``λ`` in ``alphas``, scikit-learn's :class:`~sklearn.linear_model.Ridge`
    (``fit_intercept=True``: each training fold is centred with its own means) is
    fitted on ``cv − 1`` folds and scored by the **mean squared error** of its
    predictions on the held-out fold, averaged over folds (folds shuffled with
    ``random_state``). The ``λ`` with the lowest error is refitted on all pairs.
    This is what ``RidgeCV(alphas, cv=KFold(...), scoring="neg_mean_squared_error")``
    does; the grid search is run directly so that the error of every ``λ`` is
    kept (``cv_mse_``).

    MSE rather than mean cosine: it is the loss the ridge solution itself
    minimises, so the selection and the fit agree; cosine ignores the length of
    a prediction and so cannot see the shrinkage that ``λ`` controls along each
    direction.

    Parameters
    ----------
    alphas : sequence of float
        Penalties ``λ > 0`` to try.
    cv : int
        Number of folds (``≥ 2``; at most the number of pairs).
    random_state : int
        Seed of the fold shuffle.

    Attributes
    ----------
    mean_x_ : (d_x,) float64
    mean_y_ : (d_y,) float64
    W_ : (d_x, d_y) float64
    alpha_ : float
        The chosen ``λ`` (a 0-d array in :meth:`state`).
    cv_mse_ : (len(alphas),) float64
        Mean held-out MSE (per entry of ``Y``) of each ``λ``, in the order of ``alphas``.
    n_features_in_ : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> A = rng.normal(size=(4, 2))
    >>> Y = X @ A + 0.01 * rng.normal(size=(300, 2)) + 3.0
    >>> m = RidgeMap(cv=3).fit(X, Y)
    >>> bool(np.allclose(m.W_, A, atol=0.01)), m.transform(X).shape
    (True, (300, 2))
    >>> float(m.alpha_) <= 1.0
    True
    """

    _state_attrs = ("mean_x_", "mean_y_", "W_", "alpha_", "cv_mse_")

    def __init__(self, alphas: Any = DEFAULT_ALPHAS, cv: int = 5, random_state: int = 0) -> None:
        self.alphas = alphas
        self.cv = cv
        self.random_state = random_state

    def _checked_params(self, n: int) -> tuple[list[float], int]:
        try:
            alphas = [float(a) for a in np.atleast_1d(np.asarray(self.alphas, dtype=np.float64))]
        except (TypeError, ValueError):
            raise InputError(f"RidgeMap: alphas must be positive numbers, not {self.alphas!r}") from None
        if not alphas or not all(math.isfinite(a) and a > 0 for a in alphas):
            raise InputError(f"RidgeMap: alphas must be a non-empty list of positive finite numbers, "
                             f"not {self.alphas!r}")
        cv = self.cv
        check_scalar(cv, "RidgeMap: cv", int, low=2)
        if n < max(int(cv), 3):
            raise InputError(f"RidgeMap needs at least {max(int(cv), 3)} pairs for {int(cv)}-fold "
                             f"cross-validation, got {n}")
        return alphas, int(cv)

    def _fit(self, X: np.ndarray, Y: np.ndarray) -> None:
        alphas, cv = self._checked_params(X.shape[0])
        mx, my, _, _, _ = pair_moments(X, Y)  # also rejects NaN / inf
        X64, Y64 = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
        search = GridSearchCV(
            Ridge(fit_intercept=True),
            {"alpha": alphas},
            cv=KFold(cv, shuffle=True, random_state=self.random_state),
            scoring="neg_mean_squared_error",
            refit=False,
        ).fit(X64, Y64)
        mse = -np.asarray(search.cv_results_["mean_test_score"], dtype=np.float64)
        best = int(np.argmin(mse))
        alpha = alphas[best]
        xc, yc = X64 - mx, Y64 - my
        gram = xc.T @ xc
        gram[np.diag_indices_from(gram)] += alpha
        W = np.linalg.solve(gram, xc.T @ yc)
        if not np.isfinite(W).all():  # pragma: no cover - λ > 0 keeps the system positive definite
            raise InputError("RidgeMap: the ridge system could not be solved")
        self.mean_x_, self.mean_y_, self.W_ = mx, my, W
        self.alpha_ = np.float64(alpha)
        self.cv_mse_ = mse

    def _restored(self) -> None:
        super()._restored()
        if self.alpha_.shape != () or not self.alpha_ > 0:
            raise InputError("state of RidgeMap: alpha_ must be a positive scalar")
        self.alpha_ = np.float64(self.alpha_)
