"""Canonical correlation analysis between two spaces over shared items: regularised, closed form, float64.

CCA finds directions ``wx_k`` in the first space and ``wy_k`` in the second
whose projections of the same items correlate as much as possible
(Hotelling 1936), each pair uncorrelated with the pairs before it. With the
covariances ``Cxx``, ``Cyy`` and the cross-covariance ``Cxy`` of the centred
rows (divided by ``n − 1``), ridge-regularised to ``Cxx + rx·I`` and
``Cyy + ry·I``, the solution is

1. whiten each side: ``Kx = (Cxx + rx·I)^(−1/2)``, ``Ky = (Cyy + ry·I)^(−1/2)``
   (symmetric inverse square roots from ``numpy.linalg.eigh``);
2. take the SVD ``Kx·Cxy·Ky = U·diag(ρ)·Vᵀ``: the singular values ``ρ`` are
   the canonical correlations, largest first;
3. ``Wx = Kx·U[:, :k]``, ``Wy = Ky·V[:, :k]``; item ``x`` maps to
   ``(x − mean_x)·Wx`` and item ``y`` to ``(y − mean_y)·Wy``, canonical variates
   with unit variance under the regularised covariances.

The ridge is relative, ``rx = reg · tr(Cxx)/d_x`` (``reg`` times the mean
variance of a dimension), so the same ``reg`` means the same thing whatever the
scale of a space. Signs are fixed deterministically: in each column of ``Wx``
the largest-magnitude entry (the first of those within 1e-9 relative of it)
is made positive, and the same column of ``Wy`` is flipped with it.

Why not :class:`sklearn.cross_decomposition.CCA`: it fits each component by
NIPALS power iterations with deflation (the PLS "mode B" algorithm), so it is
iterative (``max_iter``, ``tol``, convergence warnings), slow at 384
dimensions with many components, and not regularised, which breaks down when
the number of shared items is not much larger than the dimensions. The closed
form above is exact in one eigendecomposition per side and one SVD; on a small
well-posed problem the two agree (tests/engines/align/test_cca.py).

This engine imports only :mod:`repspace.core` and third-party libraries.

Examples
--------
A signal shared by two spaces of different dimensions is found first:

>>> import numpy as np
>>> from repspace.engines.align.cca import fit_cca
>>> rng = np.random.default_rng(0)
>>> z = rng.normal(size=(500, 1))
>>> X = np.hstack([z, rng.normal(size=(500, 4))]) @ rng.normal(size=(5, 5))
>>> Y = np.hstack([z + 0.1 * rng.normal(size=(500, 1)), rng.normal(size=(500, 2))]) @ rng.normal(size=(3, 3))
>>> cca = fit_cca(X, Y)
>>> cca.n_components, bool(cca.correlations[0] > 0.98), bool(cca.correlations[1] < 0.2)
(3, True, True)
>>> u, v = cca.transform_x(X)[:, 0], cca.transform_y(Y)[:, 0]
>>> round(abs(float(np.corrcoef(u, z[:, 0])[0, 1])), 2)
1.0
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, check_pair
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.linalg import svd

__all__ = ["CCAResult", "fit_cca"]

#: Relative tolerance for ties when fixing signs.
SIGN_TIE_RTOL = 1e-9


@dataclass(frozen=True, eq=False, repr=False)
class CCAResult:
    """A fitted CCA: per-side centring means, projection matrices and canonical correlations.

    Attributes
    ----------
    mean_x : ndarray of float64, shape (d_x,)
    mean_y : ndarray of float64, shape (d_y,)
    Wx : ndarray of float64, shape (d_x, k)
        Item ``x`` maps to ``(x − mean_x) @ Wx``.
    Wy : ndarray of float64, shape (d_y, k)
        Item ``y`` maps to ``(y − mean_y) @ Wy``.
    correlations : ndarray of float64, shape (k,)
        Canonical correlations, descending (of the regularised problem: with
        ``reg > 0`` slightly below the plain sample correlations).
    recipe : dict
        ``method`` (``cca``), ``n_components``, ``reg``, ``ridge_x`` and
        ``ridge_y`` (the absolute ridges added), ``n``, ``d_x``, ``d_y``,
        ``x_fingerprint``, ``y_fingerprint`` (SHA-256 of the float64 inputs),
        ``numpy_version``.

    All arrays are read-only.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> r = fit_cca(X, X @ rng.normal(size=(3, 2)))  # Y is a linear image of X
    >>> r.n_components, r.Wx.shape, r.Wy.shape, [round(c, 3) for c in r.correlations.tolist()]
    (2, (3, 2), (2, 2), [1.0, 1.0])
    >>> r.transform_x(X[:5], n_components=1).shape, r.recipe["n"]
    ((5, 1), 100)
    """

    mean_x: np.ndarray
    mean_y: np.ndarray
    Wx: np.ndarray
    Wy: np.ndarray
    correlations: np.ndarray
    recipe: dict[str, Any]

    @property
    def n_components(self) -> int:
        """Number of canonical pairs kept."""
        return int(self.correlations.shape[0])

    def transform_x(self, X: Any, *, n_components: int | None = None) -> np.ndarray:
        """``(X − mean_x) @ Wx[:, :n_components]`` as float32."""
        return self._project(X, self.mean_x, self.Wx, "X", n_components)

    def transform_y(self, Y: Any, *, n_components: int | None = None) -> np.ndarray:
        """``(Y − mean_y) @ Wy[:, :n_components]`` as float32."""
        return self._project(Y, self.mean_y, self.Wy, "Y", n_components)

    def _project(self, X: Any, mean: np.ndarray, W: np.ndarray, name: str, k: int | None) -> np.ndarray:
        arr = as_matrix(X, name, min_rows=0)
        if arr.shape[1] != W.shape[0]:
            raise InputError(f"CCA was fitted on {W.shape[0]} dimensions for {name}; {name} has {arr.shape[1]}")
        k = self.n_components if k is None else _components(k, self.n_components)
        return ((np.asarray(arr, dtype=np.float64) - mean) @ W[:, :k]).astype(np.float32)

    def to_dict(self) -> dict[str, Any]:
        """The correlations and the recipe, as plain JSON values."""
        return {"correlations": [float(c) for c in self.correlations], "recipe": dict(self.recipe)}

    def __repr__(self) -> str:
        top = ", ".join(f"{c:.3f}" for c in self.correlations[:3])
        more = ", …" if self.n_components > 3 else ""
        return (f"CCAResult({self.recipe['d_x']} × {self.recipe['d_y']} dims, {self.n_components} components, "
                f"correlations=[{top}{more}], reg={self.recipe['reg']:g})")


def _components(k: Any, limit: int) -> int:
    return check_scalar(k, "n_components", int, low=1, high=limit)


def _inv_sqrt(C: np.ndarray, name: str) -> np.ndarray:
    """The symmetric inverse square root of a symmetric positive definite matrix; InputError when it is singular."""
    vals, vecs = np.linalg.eigh(C)
    top = float(vals[-1])
    if not vals[0] > top * C.shape[0] * np.finfo(np.float64).eps:
        raise InputError(f"the covariance of {name} is singular (its dimensions are linearly dependent or "
                         "there are fewer items than dimensions); use reg > 0")
    return (vecs / np.sqrt(vals)) @ vecs.T


def _fingerprint(A: np.ndarray) -> str:
    digest = hashlib.sha256(f"{A.dtype.str}{A.shape}".encode())
    digest.update(np.ascontiguousarray(A).tobytes())
    return digest.hexdigest()


def _readonly(a: np.ndarray) -> np.ndarray:
    out = np.array(a, dtype=np.float64, order="C", copy=True)
    out.setflags(write=False)
    return out


def fit_cca(X: Any, Y: Any, *, n_components: int | None = None, reg: float = 1e-6) -> CCAResult:
    """Fit regularised CCA between two spaces over the same items (row ``i`` of ``X`` ↔ row ``i`` of ``Y``).

    See the module docstring for the method (whitening by symmetric inverse
    square roots of the regularised covariances, SVD of the whitened
    cross-covariance, all in float64) and why it is not scikit-learn's
    iterative ``CCA``.

    Parameters
    ----------
    X : array_like, shape (n, d_x)
    Y : array_like, shape (n, d_y)
    n_components : int, optional
        Canonical pairs to keep; default (and most) ``min(d_x, d_y, n − 1)``.
    reg : float
        Relative ridge ``≥ 0``: ``reg · tr(C)/d`` is added to the diagonal of
        each side's covariance ``C``. ``0`` is plain CCA (which needs both
        covariances non-singular: more items than dimensions, no duplicated
        dimension).

    Returns
    -------
    CCAResult

    Raises
    ------
    InputError
        Different numbers of rows, fewer than 2 items, NaN / inf, a side whose
        rows are all the same, a bad ``n_components`` or ``reg``, or a singular
        covariance with ``reg=0``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(200, 3))
    >>> r = fit_cca(X, X[:, ::-1] + 0.01 * rng.normal(size=(200, 3)), n_components=2)
    >>> r.Wx.shape, r.Wy.shape, bool(r.correlations[1] > 0.99)
    ((3, 2), (3, 2), True)
    >>> fit_cca(X, X[:10])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: X has 200 rows and Y has 10: the two spaces must hold the same items, row for row
    """
    X, Y = check_pair(X, Y, min_rows=2, measure="CCA", unit="shared items")
    reg = check_scalar(reg, "reg", float, low=0)
    n, dx = X.shape
    dy = Y.shape[1]
    limit = min(dx, dy, n - 1)
    k = limit if n_components is None else _components(n_components, limit)
    X64, Y64 = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    mx, my = X64.mean(axis=0), Y64.mean(axis=0)
    Xc, Yc = X64 - mx, Y64 - my
    Cxx, Cyy, Cxy = Xc.T @ Xc / (n - 1), Yc.T @ Yc / (n - 1), Xc.T @ Yc / (n - 1)
    ridges = []
    for name, C in (("X", Cxx), ("Y", Cyy)):
        mean_var = float(np.trace(C)) / C.shape[0]
        if not mean_var > 0:
            raise InputError(f"CCA: every row of {name} is the same; there is nothing to correlate")
        C[np.diag_indices_from(C)] += reg * mean_var
        ridges.append(reg * mean_var)
    Kx, Ky = _inv_sqrt(Cxx, "X"), _inv_sqrt(Cyy, "Y")
    u, s, vt = svd(Kx @ Cxy @ Ky, full_matrices=False)
    Wx, Wy = Kx @ u[:, :k], Ky @ vt[:k].T
    mags = np.abs(Wx)
    first = np.argmax(mags >= mags.max(axis=0) * (1.0 - SIGN_TIE_RTOL), axis=0)
    signs = np.where(Wx[first, np.arange(k)] < 0, -1.0, 1.0)
    Wx, Wy = Wx * signs, Wy * signs
    recipe = {
        "method": "cca",
        "n_components": k,
        "reg": reg,
        "ridge_x": ridges[0],
        "ridge_y": ridges[1],
        "n": int(n),
        "d_x": int(dx),
        "d_y": int(dy),
        "x_fingerprint": _fingerprint(X64),
        "y_fingerprint": _fingerprint(Y64),
        "numpy_version": np.__version__,
    }
    return CCAResult(_readonly(mx), _readonly(my), _readonly(Wx), _readonly(Wy), _readonly(s[:k]), recipe)
