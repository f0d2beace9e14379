"""Concept erasure: LEACE, and the Gaussian optimal-transport map between two groups.

* :class:`LeaceEraser` — least-squares concept erasure (Belrose et al. 2023,
  "LEACE: Perfect linear concept erasure in closed form"): the affine map
  ``r(x) = x − W⁺PW(x − μ)`` after which no linear classifier predicts the
  concept better than a constant, and which moves the points least among all
  such maps.
* :class:`GaussianTransport` — the closed-form optimal-transport
  (Bures–Wasserstein) map between two groups modelled as Gaussians, in the top
  principal components of their pooled rows: it moves group A's mean *and*
  covariance onto group B's, and leaves the residual outside the PCA subspace
  as it is.
* :func:`evaluate_erasure` and :func:`compare_group_maps` — held-out logistic
  accuracy (scikit-learn) before and after, and how far the points moved.

All fitting is in float64 and deterministic. ``transform`` returns float32 when
``X`` is float32 (a stored space keeps its size) and float64 otherwise (the
guarantees, e.g. equal class means, then hold to float64 rounding).

Degenerate input
----------------
A NaN or infinite value, fewer than 2 rows, labels of the wrong length, a single
class (or a numeric concept without variance) raise
:class:`~repspace.core.errors.InputError` with one line. Constant features are
fine: LEACE whitens on the column space of the covariance only, so a feature
without variance is left as it is; rows without any variance give the identity
(there is nothing linear to erase).

Measured
--------
GloVe 6B 50d, the words among the 20,000 most frequent that end in "-ly"
(409) against twice as many other alphabetic words, 30% held out: logistic
accuracy 0.851 before LEACE, 0.667 after (the majority rate); word-similarity
Spearman WS-353 0.503 → 0.510, SimLex-999 0.265 → 0.267, MEN 0.652 → 0.652.
Between the same two groups, removing the mean-difference direction moves
points by 1.27 (mean squared), LEACE by 1.06, both leaving a quadratic probe
at 0.76; the Gaussian map in 10 PCA dimensions moves them by 0.94 and brings
the quadratic probe to 0.667, but leaves a linear signal outside those 10
dimensions (0.70); in all 50 dimensions it moves them by 2.00 and both probes
fall to 0.667 (tests/engines/interpret/test_erasure.py prints these figures).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator

from repspace.core.arrays import as_matrix, block64, row_slices
from repspace.core.errors import InputError
from repspace.core.estimators import NotFittedError, export_state, restore_state
from repspace.core.linalg import svd
from repspace.core.moments import moments

__all__ = [
    "erase",
    "ErasureReport",
    "GaussianTransport",
    "GroupMapComparison",
    "GroupMapScore",
    "LeaceEraser",
    "compare_group_maps",
    "evaluate_erasure",
]

#: A group covariance (in PCA space) whose smallest eigenvalue is below this share of its largest counts as
#: singular: ``C^{-1/2}`` would amplify rounding by more than ``1e5``.
_MAX_CONDITION = 1e-10

#: The methods :func:`compare_group_maps` scores, in order.
GROUP_MAP_METHODS = ("none", "mean_direction", "leace", "gaussian_ot")


# -- inputs ------------------------------------------------------------------------------------


def _out_dtype(arr: np.ndarray) -> type:
    return np.float32 if arr.dtype == np.float32 else np.float64


def _int_param(value: Any, name: str, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{owner}: {name} must be a positive integer, not {value!r}")
    return int(value)


def _class_ids(labels: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, codes)`` of 1-d class ids, checked: one per row, finite, at least two classes."""
    try:
        lab = np.asarray(labels)
    except (TypeError, ValueError) as e:
        raise InputError(f"labels are not an array: {e}") from None
    if lab.ndim != 1:
        raise InputError(f"labels must be class ids of shape (n,), got shape {lab.shape}")
    if lab.shape[0] != n:
        raise InputError(f"labels has {lab.shape[0]} entries and X has {n} rows: one label per row")
    if lab.dtype.kind == "c":
        raise InputError("labels are complex numbers; class ids must be integers, strings or booleans")
    if lab.dtype.kind == "f":
        bad = ~np.isfinite(lab)
        if bad.any():
            raise InputError(f"labels has NaN or infinite values (row {int(np.argmax(bad))})")
        if not np.array_equal(lab, np.round(lab)):
            raise InputError("1-d labels are class ids, and these are non-integer numbers; pass a numeric "
                             "concept as an (n, m) matrix, e.g. labels.reshape(-1, 1)")
    try:
        classes, codes = np.unique(lab, return_inverse=True)
    except TypeError as e:
        raise InputError(f"labels mix types that cannot be ordered ({e}); use one type of class id") from None
    if classes.shape[0] < 2:
        what = f" ({classes[0]!r})" if classes.shape[0] else ""
        raise InputError(f"labels have a single class{what}: there is no concept to erase")
    return classes, codes.reshape(-1)


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


def _fitted_input(obj: Any, X: Any, owner: str) -> np.ndarray:
    if not obj.__sklearn_is_fitted__():
        raise NotFittedError(f"{owner} is not fitted; call fit first")
    arr = as_matrix(X, "X", min_rows=0, scan=False)
    if arr.shape[1] != obj.n_features_in_:
        raise InputError(f"{owner} was fitted on {obj.n_features_in_} dimensions; X has {arr.shape[1]}")
    return arr


# -- LEACE ------------------------------------------------------------------------------------


class LeaceEraser(BaseEstimator):
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

    def __init__(self, tol: float = 1e-8) -> None:
        self.tol = tol

    def fit(self, X: Any, labels: Any) -> Self:
        """Learn the eraser from rows ``X`` (n, d) and their concept; returns ``self``.

        ``labels`` are class ids of shape (n,) (integers, strings, booleans),
        one-hot encoded, or a numeric concept matrix of shape (n, m) used as it is.
        """
        tol = self.tol
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) or not (
                np.isfinite(tol) and 0 <= tol < 1):
            raise InputError(f"LeaceEraser: tol must be a number in [0, 1), not {tol!r}")
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
        arr = _fitted_input(self, X, "LeaceEraser")
        out = np.empty(arr.shape, _out_dtype(arr))
        for rows in row_slices(*arr.shape):
            b = block64(arr, rows, "X")
            out[rows] = b - ((b - self.mean_) @ self.proj_right_.T) @ self.proj_left_.T
        return out

    def fit_transform(self, X: Any, labels: Any) -> np.ndarray:
        """Fit on ``(X, labels)`` and return ``X`` erased."""
        return self.fit(X, labels).transform(X)

    def erase(self, X: Any, labels: Any) -> np.ndarray:
        """:meth:`fit_transform` under the name of what it does: ``X`` with the concept erased."""
        return self.fit_transform(X, labels)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    @property
    def n_features_out(self) -> int:
        """``d``: erasure keeps the dimension."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("LeaceEraser is not fitted; call fit(X, labels) first")
        return int(self.n_features_in_)

    def state(self) -> dict[str, np.ndarray]:
        """The fitted state as arrays (``n_features_in_`` as a 0-d int64 array), for ``np.savez``."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("LeaceEraser is not fitted; call fit(X, labels) first")
        return export_state(self, self._state_attrs)

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


# -- the Gaussian optimal-transport map ------------------------------------------------------------


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


class GaussianTransport(BaseEstimator):
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
        dims = _int_param(self.dims, "dims", "GaussianTransport")
        if dims > d:
            raise InputError(f"GaussianTransport: dims={dims} is more than the {d} dimensions of the data")
        reg = self.reg
        if isinstance(reg, bool) or not isinstance(reg, (int, float, np.integer, np.floating)) or not (
                np.isfinite(reg) and reg >= 0):
            raise InputError(f"GaussianTransport: reg must be a finite number ≥ 0, not {reg!r}")
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
        arr = _fitted_input(self, X, "GaussianTransport")
        out = np.empty(arr.shape, _out_dtype(arr))
        for rows in row_slices(*arr.shape):
            x = block64(arr, rows, "X")
            z = (x - self.mean_) @ self.components_.T
            out[rows] = x + (z @ self.A_ + self.b_ - z) @ self.components_
        return out

    def project(self, X: Any) -> np.ndarray:
        """The PCA coordinates ``z = (x − μ)Vᵀ`` of rows ``X`` (float64, (n, dims))."""
        arr = _fitted_input(self, X, "GaussianTransport")
        out = np.empty((arr.shape[0], self.components_.shape[0]))
        for rows in row_slices(*arr.shape):
            out[rows] = (block64(arr, rows, "X") - self.mean_) @ self.components_.T
        return out

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    @property
    def n_features_out(self) -> int:
        """``d``: the map keeps the dimension."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("GaussianTransport is not fitted; call fit(X_a, X_b) first")
        return int(self.n_features_in_)

    def state(self) -> dict[str, np.ndarray]:
        """The fitted state as arrays (``n_features_in_`` as a 0-d int64 array), for ``np.savez``."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("GaussianTransport is not fitted; call fit(X_a, X_b) first")
        return export_state(self, self._state_attrs)

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


def _dense(X: Any, name: str) -> np.ndarray:
    arr = as_matrix(X, name, min_rows=0, scan=False)
    return block64(arr, slice(None), name)


def _probe_accuracy(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray) -> float:
    """Held-out accuracy of standardised L2 logistic regression (scikit-learn, lbfgs: deterministic)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    return float(clf.fit(X_train, y_train).score(X_test, y_test))


def _quadratic_accuracy(Z_train: np.ndarray, y_train: np.ndarray, Z_test: np.ndarray, y_test: np.ndarray,
                        reg: float = 1e-3) -> float:
    """Held-out accuracy of quadratic discriminant analysis: one Gaussian per class, ``(1 − reg)C + reg·I``.

    The same rule as scikit-learn's ``QuadraticDiscriminantAnalysis(reg_param=reg)`` (class priors from
    the training rows, covariances with ``n − 1``), on coordinates of unit spread; written out because
    it needs only a ``dims × dims`` eigendecomposition per class.
    """
    classes = np.unique(y_train)
    logp = np.empty((Z_test.shape[0], classes.shape[0]))
    for j, c in enumerate(classes):
        Zc = Z_train[y_train == c]
        C = (1 - reg) * np.cov(Zc.T, ddof=1).reshape(Z_train.shape[1], -1) + reg * np.eye(Z_train.shape[1])
        lam, V = np.linalg.eigh(C)
        proj = ((Z_test - Zc.mean(axis=0)) @ V) / np.sqrt(lam)
        logp[:, j] = -0.5 * (np.sum(proj**2, axis=1) + np.sum(np.log(lam))) + np.log(Zc.shape[0] / y_train.shape[0])
    return float(np.mean(classes[np.argmax(logp, axis=1)] == y_test))


def _split(y: np.ndarray, test_size: float, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.model_selection import train_test_split

    if isinstance(test_size, bool) or not isinstance(test_size, (int, float, np.integer, np.floating)) or not (
            0 < test_size < 1):
        raise InputError(f"test_size must be a fraction in (0, 1), not {test_size!r}")
    counts = np.bincount(y)
    if counts.min() < 2:
        raise InputError(f"every class needs at least 2 rows for a held-out split; the smallest has {counts.min()}")
    idx = np.arange(y.shape[0])
    try:
        train, test = train_test_split(idx, test_size=test_size, random_state=random_state, stratify=y)
    except ValueError as e:
        raise InputError(f"cannot split the rows: {str(e).splitlines()[0]}") from None
    return np.sort(train), np.sort(test)


def _majority(y_train: np.ndarray, y_test: np.ndarray) -> float:
    """Accuracy on the test rows of always predicting the most frequent training class."""
    return float(np.mean(y_test == np.bincount(y_train).argmax()))


@dataclass(frozen=True)
class ErasureReport:
    """What :func:`evaluate_erasure` measured: held-out linear decodability before and after LEACE.

    Attributes
    ----------
    n_train, n_test : int
    n_classes : int
    rank : int
        Directions erased.
    majority_rate : float
        Test accuracy of always predicting the most frequent training class.
    accuracy_before, accuracy_after : float
        Held-out accuracy of a logistic probe trained on the (erased) training rows.
    displacement : float
        Mean ``‖r(x) − x‖²`` over the test rows.
    variance : float
        Mean ``‖x − μ‖²`` over the test rows (the scale ``displacement`` compares with).
    """

    n_train: int
    n_test: int
    n_classes: int
    rank: int
    majority_rate: float
    accuracy_before: float
    accuracy_after: float
    displacement: float
    variance: float

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (JSON-able)."""
        return asdict(self)


def evaluate_erasure(X: Any, labels: Any, *, test_size: float = 0.3, random_state: int = 0,
                     tol: float = 1e-8) -> ErasureReport:
    """Fit LEACE on a stratified training split and probe the held-out rows before and after.

    The probe is a standardised L2 logistic regression (scikit-learn). On the
    training rows LEACE makes the class means equal, so the best linear probe
    there is a constant, and the held-out accuracy after erasure falls to about
    the majority rate.

    Parameters
    ----------
    X : (n, d) array
    labels : (n,) class ids
    test_size : float
        Share of rows held out (stratified by class).
    random_state : int
        Seed of the split.
    tol : float
        :class:`LeaceEraser`'s ``tol``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=600)
    >>> X = rng.normal(size=(600, 5)) + np.outer(y, [3.0, 0.0, 0.0, 0.0, 0.0])
    >>> r = evaluate_erasure(X, y)
    >>> r.accuracy_before > 0.9, r.accuracy_after <= r.majority_rate + 0.02
    (True, True)
    """
    arr = _dense(X, "X")
    try:
        lab = np.asarray(labels)
    except (TypeError, ValueError) as e:
        raise InputError(f"labels are not an array: {e}") from None
    _, codes = _class_ids(lab, arr.shape[0])
    train, test = _split(codes, test_size, random_state)
    eraser = LeaceEraser(tol=tol).fit(arr[train], codes[train])
    Xtr, Xte = arr[train], arr[test]
    Etr, Ete = eraser.transform(Xtr), eraser.transform(Xte)
    return ErasureReport(
        n_train=int(train.shape[0]), n_test=int(test.shape[0]), n_classes=int(codes.max() + 1), rank=eraser.rank_,
        majority_rate=_majority(codes[train], codes[test]),
        accuracy_before=_probe_accuracy(Xtr, codes[train], Xte, codes[test]),
        accuracy_after=_probe_accuracy(Etr, codes[train], Ete, codes[test]),
        displacement=float(np.mean(np.sum((Ete - Xte) ** 2, axis=1))),
        variance=float(np.mean(np.sum((Xte - eraser.mean_) ** 2, axis=1))),
    )


@dataclass(frozen=True)
class GroupMapScore:
    """One method of :func:`compare_group_maps`.

    Attributes
    ----------
    method : str
        ``none``, ``mean_direction`` (project out the difference of the group
        means), ``leace`` or ``gaussian_ot`` (:class:`GaussianTransport`, A moved to B).
    accuracy : float
        Held-out accuracy of a logistic probe for the group, trained on the mapped training rows.
    quadratic_accuracy : float
        The same with a quadratic discriminant (QDA, one Gaussian per group) on the ``dims`` PCA
        coordinates of the pooled training rows: what second-order differences give away.
    displacement : float
        Mean ``‖x' − x‖²`` over all rows of both groups (a row that is not moved counts 0).
    """

    method: str
    accuracy: float
    quadratic_accuracy: float
    displacement: float

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (JSON-able)."""
        return asdict(self)


@dataclass(frozen=True)
class GroupMapComparison:
    """What :func:`compare_group_maps` measured, one :class:`GroupMapScore` per method.

    Attributes
    ----------
    n_a, n_b : int
        Rows of each group.
    n_test : int
        Held-out rows (both groups).
    dims : int
    majority_rate : float
        Test accuracy of always predicting the larger training group.
    scores : tuple of GroupMapScore
        In the order of ``GROUP_MAP_METHODS``.
    """

    n_a: int
    n_b: int
    n_test: int
    dims: int
    majority_rate: float
    scores: tuple[GroupMapScore, ...]

    def score(self, method: str) -> GroupMapScore:
        """The score of one method by name."""
        for s in self.scores:
            if s.method == method:
                return s
        raise InputError(f"no method {method!r}; the methods are {', '.join(GROUP_MAP_METHODS)}")

    def to_dict(self) -> dict[str, Any]:
        """The fields by name, ``scores`` as a list of dicts."""
        out = {k: v for k, v in asdict(self).items() if k != "scores"}
        out["scores"] = [s.to_dict() for s in self.scores]
        return out


def compare_group_maps(X_a: Any, X_b: Any, *, dims: int = 10, reg: float = 0.0, test_size: float = 0.3,
                       random_state: int = 0) -> GroupMapComparison:
    """How well each map makes two groups indistinguishable, and how far it moves the points.

    Each method is fitted on a stratified training split of the rows of both
    groups and applied to all rows:

    * ``none`` — the identity (the baseline);
    * ``mean_direction`` — remove one direction: ``x − ((x − c)·u)u`` with ``u``
      the unit difference of the group means and ``c`` the pooled mean;
    * ``leace`` — :class:`LeaceEraser` with the group as the concept (for two
      groups it also removes one direction, obliquely, moving points least);
    * ``gaussian_ot`` — :class:`GaussianTransport` (``dims``, ``reg``) applied
      to group A only; group B stays where it is.

    Then a logistic probe and a quadratic discriminant (one Gaussian per group,
    on the ``dims`` PCA coordinates of the pooled training rows, each divided
    by its standard deviation, covariances regularised as ``0.999C + 0.001I``
    so that a direction a map flattened stays usable) are trained on the mapped training rows and
    scored on the mapped held-out rows.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xa = rng.normal(size=(400, 4)) * [1.0, 3.0, 1.0, 1.0]
    >>> Xb = rng.normal(size=(600, 4)) * [3.0, 1.0, 1.0, 1.0] + [0.0, 0.0, 1.0, 0.0]
    >>> c = compare_group_maps(Xa, Xb, dims=4)
    >>> c.majority_rate
    0.6
    >>> for s in c.scores:
    ...     print(f"{s.method:15} {s.accuracy:.2f} {s.quadratic_accuracy:.2f} {s.displacement:.2f}")
    none            0.70 0.88 0.00
    mean_direction  0.60 0.83 1.45
    leace           0.60 0.83 1.34
    gaussian_ot     0.60 0.60 3.47
    """
    A, B = _dense(X_a, "X_a"), _dense(X_b, "X_b")
    if A.shape[1] != B.shape[1]:
        raise InputError(f"X_a has {A.shape[1]} dimensions and X_b {B.shape[1]}: both groups must live in one space")
    X = np.vstack([A, B])
    y = np.repeat([0, 1], [A.shape[0], B.shape[0]])
    train, test = _split(y, test_size, random_state)
    tr_a, tr_b = train[y[train] == 0], train[y[train] == 1]
    ot_map = GaussianTransport(dims=dims, reg=reg).fit(X[tr_a], X[tr_b])

    delta = X[tr_b].mean(axis=0) - X[tr_a].mean(axis=0)
    norm = float(np.linalg.norm(delta))
    u = delta / norm if norm > 0 else delta
    c = X[train].mean(axis=0)
    moved_ot = X.copy()
    moved_ot[y == 0] = ot_map.transform(X[y == 0])
    mapped = {
        "none": X,
        "mean_direction": X - np.outer((X - c) @ u, u),
        "leace": LeaceEraser().fit(X[train], y[train]).transform(X),
        "gaussian_ot": moved_ot,
    }

    ev = ot_map.explained_variance_
    unit = np.sqrt(np.where(ev > ev[0] * 1e-12, ev, ev[0]))  # PCA coordinates in units of their pooled spread
    scores = []
    for method in GROUP_MAP_METHODS:
        M = mapped[method]
        Z = ot_map.project(M) / unit
        scores.append(GroupMapScore(
            method=method,
            accuracy=_probe_accuracy(M[train], y[train], M[test], y[test]),
            quadratic_accuracy=_quadratic_accuracy(Z[train], y[train], Z[test], y[test]),
            displacement=float(np.mean(np.sum((M - X) ** 2, axis=1))),
        ))
    return GroupMapComparison(n_a=int(A.shape[0]), n_b=int(B.shape[0]), n_test=int(test.shape[0]), dims=int(dims),
                              majority_rate=_majority(y[train], y[test]), scores=tuple(scores))
