"""Linear repairs of a space: centring, normalising, whitening, all-but-the-top, PCA.

Each is a scikit-learn style estimator (see :mod:`repspace.engines.transforms._base`):
fit on the rows of a space, then ``transform`` the same or other rows. All work in
float64 and return float32; degenerate input either has a defined result (a zero
row stays zero, a zero-variance direction is regularised by ``eps``) or raises an
:class:`~repspace.core.errors.InputError` naming what is wrong; none returns NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.arrays import block64, row_slices
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.transforms._base import (
    Transform,
    _int_param,
    mean_and_covariance,
    principal_axes,
)

__all__ = ["PCA", "AllButTheTop", "Center", "Normalize", "Whiten", "default_abtt_components"]


class Center(Transform):
    """Subtract the mean of the fitted rows.

    Attributes
    ----------
    mean_ : (d,) float64

    Examples
    --------
    >>> c = Center().fit([[1.0, 2.0], [3.0, 6.0]])
    >>> c.mean_.tolist(), c.transform([[2.0, 4.0]]).tolist()
    ([2.0, 4.0], [[0.0, 0.0]])
    >>> c.inverse_transform([[1.0, 1.0]]).tolist()
    [[3.0, 5.0]]
    """

    name = "center"
    _state_attrs = ("mean_",)

    def _fit(self, X: np.ndarray) -> None:
        self.mean_, _ = _mean(X)

    def _transform(self, X: np.ndarray) -> np.ndarray:
        return X - self.mean_

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """Add the mean back."""
        return self.inverse_rows(Z, lambda z: z + self.mean_)

    def _restored(self) -> None:
        _check_shape(self, "mean_", (self.n_features_in_,))


class Normalize(Transform):
    """Scale each row to unit L2 norm; a zero row stays zero. Learns nothing but the dimension.

    There is no inverse (the norms are gone).

    Examples
    --------
    >>> Normalize().fit_transform([[3.0, 4.0], [0.0, 0.0]]).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """

    name = "normalize"
    _min_rows = 0

    def _fit(self, X: np.ndarray) -> None:
        pass

    def _transform(self, X: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)


class Whiten(Transform):
    """BERT-whitening (Su et al., 2021): ``y = (x − μ) W`` with ``W = U·diag(1/√S)``.

    ``μ`` is the mean and ``U, S`` the SVD of the sample covariance (``n − 1`` in the
    denominator, as ``np.cov``), so the whitened training rows have identity
    covariance. ``k`` keeps the first ``k`` columns of ``W`` (the ``k`` directions of
    largest variance), which also reduces the dimension.

    Parameters
    ----------
    k : int or None
        Output dimensions (``1 <= k <= d``); None keeps all ``d``.
    eps : float
        Relative floor on the eigenvalues: each ``S_i`` below ``eps·S_max`` is
        raised to it before ``1/√S`` is taken, so a direction with (near) zero
        variance (a constant dimension, fewer rows than dimensions) gets a large but
        finite scale instead of infinity. Data whose eigenvalues all lie above the
        floor are whitened exactly. Rows with no variance at all raise
        :class:`~repspace.core.errors.InputError`.

    Attributes
    ----------
    mean_ : (d,) float64
    components_ : (k, d) float64
        The principal directions as rows (``Uᵀ``), sign-fixed (largest entry positive).
    explained_variance_ : (k,) float64
        Their eigenvalues ``S``, before the floor.
    scale_ : (k,) float64
        ``1 / √max(S, eps·S_max)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) @ np.array([[3.0, 0, 0], [1, 1, 0], [0, 0, 0.1]])
    >>> Z = Whiten().fit_transform(X)
    >>> bool(np.allclose(np.cov(Z.T), np.eye(3), atol=1e-6))
    True
    >>> Whiten(k=2).fit_transform(X).shape
    (500, 2)
    """

    name = "whiten"
    _state_attrs = ("mean_", "components_", "explained_variance_", "scale_")
    _min_rows = 2

    def __init__(self, k: int | None = None, eps: float = 1e-6) -> None:
        self.k = k
        self.eps = eps

    def _fit(self, X: np.ndarray) -> None:
        d = X.shape[1]
        k = d if self.k is None else _int_param(self.k, "k", "Whiten")
        if k > d:
            raise InputError(f"Whiten: k={k} is more than the {d} dimensions of the data")
        eps = _eps(self.eps, "Whiten")
        mean, cov = mean_and_covariance(X, ddof=1)
        s, axes = principal_axes(cov)
        if not s[0] > 0:
            raise InputError(f"Whiten: the {X.shape[0]} rows have no variance (all rows are equal)")
        self.mean_ = mean
        self.components_ = axes[:k]
        self.explained_variance_ = s[:k]
        self.scale_ = 1.0 / np.sqrt(np.maximum(s[:k], eps * s[0]))

    def _transform(self, X: np.ndarray) -> np.ndarray:
        return ((X - self.mean_) @ self.components_.T) * self.scale_

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """Undo the whitening (only when all ``d`` dimensions are kept: with ``k < d`` some are gone)."""
        self.check_fitted()
        if self.components_.shape[0] != self.n_features_in_:
            raise InputError(f"Whiten(k={self.k}) keeps {self.components_.shape[0]} of "
                             f"{self.n_features_in_} dimensions and has no inverse; use k=None")
        return self.inverse_rows(Z, lambda z: (z / self.scale_) @ self.components_ + self.mean_)

    @property
    def n_features_out(self) -> int:
        self.check_fitted()
        return int(self.components_.shape[0])

    def to_spec(self) -> str:
        return "whiten" if self.k is None else f"whiten{self.k}"

    def _restored(self) -> None:
        _check_components(self)
        _check_shape(self, "scale_", (self.components_.shape[0],))


def default_abtt_components(d: int) -> int:
    """Mu & Viswanath's rule of thumb: ``D = d/100`` rounded half up, at least 1 (and below ``d``).

    Examples
    --------
    >>> [default_abtt_components(d) for d in (2, 50, 300, 384, 768, 1024)]
    [1, 1, 3, 4, 8, 10]
    """
    return max(1, min(d - 1, int(np.floor(d / 100 + 0.5))))


class AllButTheTop(Transform):
    """All-but-the-top (Mu & Viswanath, ICLR 2018): remove the mean and the top principal directions.

    ``x' = x̃ − Σ_{i ≤ D} (u_iᵀ x̃) u_i`` with ``x̃ = x − μ`` and ``u_i`` the top ``D``
    principal directions of the centred fitted rows. The dominating directions
    of word and sentence embeddings carry frequency more than meaning; removing
    them makes the space more isotropic. There is no inverse.

    Parameters
    ----------
    n_components : int or None
        ``D``, the directions removed (``1 <= D < d`` and ``D < n``). None uses the
        paper's rule of thumb ``D = d/100`` rounded half up, at least 1
        (:func:`default_abtt_components`: 1 for d = 50, 3 for 300, 8 for 768); the
        value used is stored as ``n_components_``.

    Attributes
    ----------
    mean_ : (d,) float64
    components_ : (D, d) float64
        The removed directions as rows, sign-fixed.
    explained_variance_ : (D,) float64
    n_components_ : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 4)) * [10.0, 1.0, 1.0, 1.0]
    >>> abtt = AllButTheTop(n_components=1).fit(X)
    >>> np.abs(abtt.components_[0]).argmax()
    np.int64(0)
    >>> bool(np.abs(abtt.transform(X) @ abtt.components_[0]).max() < 1e-5)
    True
    """

    name = "abtt"
    _state_attrs = ("mean_", "components_", "explained_variance_")
    _min_rows = 2

    def __init__(self, n_components: int | None = None) -> None:
        self.n_components = n_components

    def _fit(self, X: np.ndarray) -> None:
        n, d = X.shape
        if d < 2:
            raise InputError("AllButTheTop needs at least 2 dimensions (it would remove everything)")
        if self.n_components is None:
            D = default_abtt_components(d)
        else:
            D = _int_param(self.n_components, "n_components", "AllButTheTop")
        if D >= d:
            raise InputError(f"AllButTheTop: n_components={D} must be below the {d} dimensions")
        if D >= n:
            raise InputError(f"AllButTheTop: n_components={D} needs at least {D + 1} rows to fit, got {n}")
        mean, cov = mean_and_covariance(X, ddof=1)
        s, axes = principal_axes(cov)
        self.mean_ = mean
        self.components_ = axes[:D]
        self.explained_variance_ = s[:D]
        self.n_components_ = D

    def _transform(self, X: np.ndarray) -> np.ndarray:
        c = X - self.mean_
        return c - (c @ self.components_.T) @ self.components_

    def to_spec(self) -> str:
        return "abtt" if self.n_components is None else f"abtt{self.n_components}"

    def _restored(self) -> None:
        _check_components(self)
        self.n_components_ = int(self.components_.shape[0])


class PCA(Transform):
    """Project onto the top principal components: a thin wrapper over :class:`sklearn.decomposition.PCA`.

    The decomposition is scikit-learn's (not re-implemented here), fitted on a
    float64 copy; its ``mean_``, ``components_`` and ``explained_variance_`` are kept,
    and ``transform`` applies ``(x − mean_) @ components_ᵀ`` (scikit-learn's own
    non-whitened transform) in float64 blocks, so a transform rebuilt by
    :meth:`from_state` needs no pickled scikit-learn object.

    Parameters
    ----------
    n_components : int, float or None
        Components kept: an int ``1 <= n_components <= min(n, d)``, a float in (0, 1)
        (the fraction of variance to keep), or None for ``min(n, d)``.
    svd_solver : str
        Passed to scikit-learn (``auto``, ``full``, ``covariance_eigh``, ``randomized``, ...).
    random_state : int
        Passed to scikit-learn; fixed by default so the randomized solver is reproducible.

    Attributes
    ----------
    mean_ : (d,) float64
    components_ : (n_components_, d) float64
    explained_variance_ : (n_components_,) float64
    n_components_ : int

    Examples
    --------
    >>> X = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    >>> p = PCA(n_components=1).fit(X)
    >>> p.transform([[3.0, 5.0]]).round(6).tolist(), p.explained_variance_.round(6).tolist()
    ([[3.0]], [2.666667])
    """

    name = "pca"
    _state_attrs = ("mean_", "components_", "explained_variance_")
    _min_rows = 2

    def __init__(self, n_components: float | None = None, svd_solver: str = "auto",
                 random_state: int = 0) -> None:
        self.n_components = n_components
        self.svd_solver = svd_solver
        self.random_state = random_state

    def _fit(self, X: np.ndarray) -> None:
        from sklearn.decomposition import PCA as SklearnPCA

        n, d = X.shape
        nc = self.n_components
        if isinstance(nc, (int, np.integer)) and not isinstance(nc, bool):
            nc = _int_param(nc, "n_components", "PCA")
            if nc > min(n, d):
                raise InputError(f"PCA: n_components={nc} is more than min(rows, dimensions) = {min(n, d)}")
        X64 = np.empty((n, d), np.float64)
        for rows in row_slices(n, d):
            X64[rows] = block64(X, rows)
        try:
            pca = SklearnPCA(n_components=nc, svd_solver=self.svd_solver, random_state=self.random_state).fit(X64)
        except ValueError as e:
            raise InputError(f"PCA: {str(e).splitlines()[0]}") from None
        self.mean_ = np.asarray(pca.mean_, np.float64)
        self.components_ = np.asarray(pca.components_, np.float64)
        self.explained_variance_ = np.asarray(pca.explained_variance_, np.float64)
        self.n_components_ = int(self.components_.shape[0])

    def _transform(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, Z: Any) -> np.ndarray:
        """scikit-learn's reconstruction ``z @ components_ + mean_`` (exact only with all components)."""
        return self.inverse_rows(Z, lambda z: z @ self.components_ + self.mean_)

    @property
    def n_features_out(self) -> int:
        self.check_fitted()
        return int(self.components_.shape[0])

    def to_spec(self) -> str:
        nc = self.n_components
        if nc is None:
            return "pca"
        if isinstance(nc, (int, np.integer)) and not isinstance(nc, bool):
            return f"pca{int(nc)}"
        return f"pca{nc!r}"  # a variance fraction has no compact token; parse_transforms rejects it

    def _restored(self) -> None:
        _check_components(self)
        self.n_components_ = int(self.components_.shape[0])


# -- helpers ---------------------------------------------------------------------------------


def _mean(X: np.ndarray) -> tuple[np.ndarray, int]:
    total = np.zeros(X.shape[1])
    for rows in row_slices(*X.shape):
        total += block64(X, rows).sum(axis=0)
    return total / X.shape[0], X.shape[0]


def _eps(value: Any, owner: str) -> float:
    return check_scalar(value, f"{owner}: eps", float, low=0, high=1, include="neither")


def _check_shape(obj: Transform, attr: str, shape: tuple[int, ...]) -> None:
    got = getattr(obj, attr).shape
    if got != shape:
        raise InputError(f"state of {type(obj).__name__}: {attr} has shape {got}, expected {shape}")


def _check_components(obj: Any) -> None:
    d = obj.n_features_in_
    _check_shape(obj, "mean_", (d,))
    comps = obj.components_
    if comps.ndim != 2 or comps.shape[1] != d or not 1 <= comps.shape[0] <= d:
        raise InputError(f"state of {type(obj).__name__}: components_ has shape {comps.shape} for d={d}")
    _check_shape(obj, "explained_variance_", (comps.shape[0],))


class Affine(Transform):
    """A fitted affine map ``x ↦ x·W + b`` (``W`` of shape ``(d_in, d_out)``), as a step of a chain.

    It is not learnt from rows alone: a map between two spaces
    (:mod:`repspace.engines.align`: Procrustes, ridge) is fitted on pairs and handed
    over with :meth:`from_map`, so that a space mapped into another is a
    derived space like any other (its chain applies to every query it embeds).

    Examples
    --------
    >>> a = Affine.from_map(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0]))
    >>> a.transform([[2.0, 3.0]]).tolist(), a.to_spec()
    ([[4.0, 2.0]], 'affine')
    """

    name = "affine"
    _state_attrs = ("W_", "b_")

    @classmethod
    def from_map(cls, W: Any, b: Any) -> Affine:
        """The fitted step from a matrix ``(d_in, d_out)`` and an offset ``(d_out,)``."""
        W = np.asarray(W, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64).reshape(-1)
        if W.ndim != 2 or b.shape != (W.shape[1],) or not (np.isfinite(W).all() and np.isfinite(b).all()):
            raise InputError(f"an affine map needs a finite (d_in, d_out) matrix and a (d_out,) offset; got "
                             f"{W.shape} and {b.shape}")
        obj = cls()
        obj.W_, obj.b_, obj.n_features_in_ = W, b, int(W.shape[0])
        return obj

    def _fit(self, X: np.ndarray) -> None:
        raise InputError("an affine map is fitted on pairs of spaces (repspace align), not on one space's rows")

    def _transform(self, X: np.ndarray) -> np.ndarray:
        return X @ self.W_ + self.b_

    @property
    def n_features_out(self) -> int:
        self.check_fitted()
        return int(self.W_.shape[1])

    def _restored(self) -> None:
        if self.W_.ndim != 2 or self.W_.shape[0] != self.n_features_in_ or self.b_.shape != (self.W_.shape[1],):
            raise InputError(f"state of Affine does not fit: W_ {self.W_.shape}, b_ {self.b_.shape}")
