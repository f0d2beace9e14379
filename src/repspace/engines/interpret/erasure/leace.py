"""LEACE: least-squares linear concept erasure in closed form (Belrose et al. 2023).

Owns :class:`LeaceEraser`, :func:`erase`, the concept matrix built from the
labels (class ids one-hot, or a numeric concept) and the closed form itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.estimators import restore_state
from repspace.core.linalg import svd
from repspace.core.moments import moments
from repspace.engines.interpret.erasure.common import _class_ids, _DimensionKeepingMap

__all__ = ["LeaceEraser", "erase"]


def _concept(labels: Any, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The concept matrix ``Z`` (float64) and the classes (None for a numeric concept).

    Class ids become one-hot columns, the last class dropped: once centred, the
    ``k − 1`` columns span what all ``k`` span.
    """
    try:
        lab = np.asarray(labels)
    except (TypeError, ValueError) as e:
        raise InputError(f"labels are not an array: {e}") from None
    if lab.ndim == 2:
        Z = as_matrix(lab, "labels", min_rows=0)
        if Z.shape[0] != n:
            raise InputError(f"labels has {Z.shape[0]} rows and X has {n}: one concept row per row of X")
        return np.asarray(Z, dtype=np.float64), None
    classes, codes = _class_ids(lab, n)
    Z = np.zeros((n, classes.shape[0] - 1))
    keep = codes < classes.shape[0] - 1
    Z[np.flatnonzero(keep), codes[keep]] = 1.0
    return Z, classes



class LeaceEraser(_DimensionKeepingMap, BaseEstimator):
    """LEACE (Belrose et al. 2023): the least-squares affine map that erases a concept linearly.

    With ``Σ_XX`` the covariance of ``X``, ``Σ_XZ`` its cross-covariance with the
    concept ``Z``, the whitening ``W = (Σ_XX^{1/2})⁺`` on the column space of
    ``Σ_XX`` and ``P`` the orthogonal projection onto the column space of
    ``W Σ_XZ``, the eraser is ``r(x) = x − W⁺PW(x − μ_X)``. After it:

    * ``Cov(r(X), Z) = 0``: for class ids, every class has the same mean, so no
      linear classifier (under any convex loss) beats a constant predictor on
      the fitted rows (the paper's Theorem 3.1);
    * ``E‖r(X) − X‖²_M`` is the least of all such affine maps, for every inner
      product ``M`` at once (Theorem 4.3);
    * ``r`` is an (oblique) projection: ``r(r(x)) = r(x)``.

    It equals the eraser of ``concept_erasure.LeaceFitter(..., shrinkage=False,
    constrain_cov_trace=False)`` (the authors' package, 0.2.4; tested to 1e-6
    with a small ``svd_tol``), that is, without the package's default
    covariance shrinkage, trace constraint and ``svd_tol=0.01``.

    Parameters
    ----------
    tol : float
        Threshold on the singular values ``s`` of ``W Σ_XZ``, relative to the
        concept's spread ``√λ_max(Σ_ZZ)`` (their upper bound, so ``s`` on that
        scale is a canonical correlation): directions with
        ``s ≤ tol · √λ_max(Σ_ZZ)`` carry only rounding and are not erased, so
        refitting on erased rows erases nothing more. Eigenvalues of ``Σ_XX``
        below ``d · ε · λ_max`` count as zero (the threshold of
        ``numpy.linalg.pinv``), so a feature without variance is left unchanged.

    Attributes
    ----------
    mean_ : (d,) float64
        ``μ_X`` of the fitted rows.
    proj_left_ : (d, r) float64
        ``W⁺U``, with ``U`` (d × r) an orthonormal basis of the column space of ``W Σ_XZ``.
    proj_right_ : (r, d) float64
        ``UᵀW``; ``r(x) = x − (x − μ) proj_right_ᵀ proj_left_ᵀ``.
    rank_ : int
        ``r``, the directions erased (at most ``k − 1`` for ``k`` classes, ``m`` for an (n, m) concept).
    classes_ : ndarray or None
        The sorted class ids, or None for a numeric concept.
    n_features_in_ : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=500)
    >>> X = rng.normal(size=(500, 4)) + np.outer(y, [2.0, 0.0, 1.0, 0.0])
    >>> eraser = LeaceEraser().fit(X, y)
    >>> Xe = eraser.transform(X)
    >>> eraser.rank_, bool(np.allclose(Xe[y == 0].mean(axis=0), Xe[y == 1].mean(axis=0), atol=1e-10))
    (1, True)
    >>> bool(np.allclose(eraser.transform(Xe), Xe, atol=1e-10))   # a projection
    True
    """

    _state_attrs = ("mean_", "proj_left_", "proj_right_")
    _fit_call = "fit(X, labels)"

    def __init__(self, tol: float = 1e-8) -> None:
        self.tol = tol

    def fit(self, X: Any, labels: Any) -> Self:
        """Learn the eraser from rows ``X`` (n, d) and their concept; returns ``self``.

        ``labels`` are class ids of shape (n,) (integers, strings, booleans),
        one-hot encoded, or a numeric concept matrix of shape (n, m) used as it is.
        """
        tol = check_scalar(self.tol, "tol", float, low=0, high=1, include="left")
        arr = as_matrix(X, "X", min_rows=0, scan=False)
        n, d = arr.shape
        if n < 2:
            raise InputError(f"LeaceEraser needs at least 2 rows to fit, got {n}")
        Z, classes = _concept(labels, n)
        m = moments(arr, Z, grams=True, precision="float64")
        if m.constant_y:
            raise InputError("the concept (labels) has no variance: there is nothing to erase")
        assert m.cxx is not None and m.cyy is not None
        sxz, _, _ = m.cross()
        sxx = m.cxx / m.scale_x / m.scale_x
        z_spread = float(np.sqrt(max(np.linalg.eigvalsh(m.cyy)[-1], 0.0))) / m.scale_y
        self.mean_ = np.asarray(m.mean_x, np.float64)
        threshold = float(tol) * z_spread / np.sqrt(n - 1)  # tol · √λ_max(Σ_ZZ)
        self.proj_left_, self.proj_right_ = _leace(sxx / (n - 1), sxz / (n - 1), threshold)
        self.rank_ = int(self.proj_left_.shape[1])
        self.classes_ = classes
        self.n_features_in_ = int(d)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Erase the concept from rows ``X``: ``x − (x − μ) proj_right_ᵀ proj_left_ᵀ``."""
        return self.map_blocks(X, lambda b: b - ((b - self.mean_) @ self.proj_right_.T) @ self.proj_left_.T)

    def fit_transform(self, X: Any, labels: Any) -> np.ndarray:
        """Fit on ``(X, labels)`` and return ``X`` erased."""
        return self.fit(X, labels).transform(X)

    def erase(self, X: Any, labels: Any) -> np.ndarray:
        """:meth:`fit_transform` under the name of what it does: ``X`` with the concept erased."""
        return self.fit_transform(X, labels)

    @classmethod
    def from_state(cls, params: Mapping[str, Any], state: Mapping[str, Any]) -> Self:
        """A fitted eraser from ``get_params()`` and :meth:`state` (erases exactly as the original).

        ``classes_`` is not part of the state (class ids need not be numbers); it is None here.
        """
        obj = restore_state(cls, params, state, cls._state_attrs)
        d, left, right = obj.n_features_in_, obj.proj_left_, obj.proj_right_
        if obj.mean_.shape != (d,) or left.ndim != 2 or right.ndim != 2 or left.shape[0] != d \
                or right.shape != (left.shape[1], d) or left.shape[1] > d:
            raise InputError(f"state of LeaceEraser: shapes do not agree (mean_ {obj.mean_.shape}, "
                             f"proj_left_ {left.shape}, proj_right_ {right.shape}, n_features_in_ {d})")
        obj.rank_ = int(left.shape[1])
        obj.classes_ = None
        return obj


def erase(X: Any, labels: Any) -> np.ndarray:
    """``X`` with the concept ``labels`` erased by LEACE fitted on the same rows (:class:`LeaceEraser`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 300)
    >>> X = rng.standard_normal((300, 5)) + 2.0 * y[:, None]
    >>> E = erase(X, y)
    >>> bool(np.allclose(E[y == 0].mean(0), E[y == 1].mean(0)))
    True
    """
    return LeaceEraser().fit_transform(X, labels)


def _leace(sxx: np.ndarray, sxz: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """``(W⁺U, UᵀW)`` of the LEACE closed form from ``Σ_XX`` (d × d) and ``Σ_XZ`` (d × m).

    ``U`` spans the left singular vectors of ``W Σ_XZ`` with singular values above ``threshold``.
    """
    d = sxx.shape[0]
    lam, V = np.linalg.eigh((sxx + sxx.T) / 2)
    lam = np.maximum(lam, 0.0)
    keep = lam > lam[-1] * d * np.finfo(np.float64).eps
    root = np.sqrt(lam, where=keep, out=np.zeros_like(lam))
    inv_root = np.divide(1.0, root, where=keep, out=np.zeros_like(lam))
    W = (V * inv_root) @ V.T
    W_pinv = (V * root) @ V.T
    M = W @ sxz
    if not M.size or not np.any(M):
        return np.zeros((d, 0)), np.zeros((0, d))
    U, s, _ = svd(M, full_matrices=False)
    U = U[:, s > threshold]
    return W_pinv @ U, U.T @ W
