"""The estimator base of every transform: validation, blocking, state, provenance.

A transform follows scikit-learn's conventions (hyper-parameters stored unchanged
by ``__init__``, learning in ``fit`` returning ``self``, learned state in
attributes ending in ``_``), so it works inside :func:`sklearn.pipeline.make_pipeline`
and with :func:`sklearn.base.clone`. On top of that each one can say exactly what
it is (:meth:`Transform.to_provenance`) and hand over or take back its fitted
state as plain arrays (:meth:`Transform.state`, :meth:`Transform.from_state`), so a
derived space can be reproduced bit for bit.

Arithmetic is float64 throughout, in blocks of rows (memory is the float32 output
plus one block); outputs are float32.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from repspace.core.arrays import as_matrix, block64, row_slices
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.estimators import FittedState, NotFittedError
from repspace.core.linalg import svd

__all__ = ["NotFittedError", "Transform", "state_digest"]

#: Entries of a principal axis within this relative distance of its largest magnitude tie for it
#: (:func:`principal_axes`): far above the rounding of an eigenvector, far below a real difference.
SIGN_TIE_TOL = 1e-9


def mean_and_covariance(X: np.ndarray, ddof: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Column means and the covariance ``(X − μ)ᵀ(X − μ) / (n − ddof)``, two float64 passes in blocks."""
    n, d = X.shape
    total = np.zeros(d)
    for rows in row_slices(n, d):
        total += block64(X, rows).sum(axis=0)
    mean = total / n
    cov = np.zeros((d, d))
    for rows in row_slices(n, d):
        c = block64(X, rows) - mean
        cov += c.T @ c
    cov /= n - ddof
    return mean, (cov + cov.T) / 2.0


def principal_axes(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and unit eigenvectors (as rows) of a covariance matrix.

    Each vector's sign is fixed so that its largest-magnitude entry is positive
    (scikit-learn's ``svd_flip`` convention), which makes the signs independent
    of the LAPACK build and the CPU. Entries within :data:`SIGN_TIE_TOL` of the
    largest magnitude tie, and the first of them decides: data with a symmetry
    (columns that can be swapped) has axes like ``(1, −1)/√2`` whose two
    largest entries are equal, and which of them rounds larger depends on the
    BLAS kernel (the sign then flipped between AVX2 and AVX-512 machines).
    """
    u, s, _ = svd(cov)  # as Su et al. (2021) do; s descending
    axes = u.T.copy()
    magnitude = np.abs(axes)
    tied = magnitude >= magnitude.max(axis=1, keepdims=True) * (1.0 - SIGN_TIE_TOL)
    pivot = np.argmax(tied, axis=1)  # the first of the largest entries
    axes *= np.sign(axes[np.arange(len(axes)), pivot])[:, None]
    return s, axes


def state_digest(state: Mapping[str, np.ndarray]) -> str:
    """sha256 over the names, dtypes, shapes and little-endian bytes of a state's arrays.

    Examples
    --------
    >>> a = state_digest({"mean_": np.zeros(3)})
    >>> a == state_digest({"mean_": np.zeros(3)}), a == state_digest({"mean_": np.ones(3)})
    (True, False)
    """
    h = hashlib.sha256()
    for name in sorted(state):
        arr = np.asarray(state[name])
        arr = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<")))
        h.update(f"{name}|{arr.dtype.str}|{arr.shape}|".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def _int_param(value: Any, name: str, owner: str, minimum: int = 1) -> int:
    return check_scalar(value, f"{owner}: {name}", int, low=minimum)


class Transform(FittedState, TransformerMixin, BaseEstimator):
    """Base class: validation, float64 blocks, float32 output, state and provenance.

    Subclasses set :attr:`name` (the spec token), :attr:`_state_attrs` (the fitted
    arrays) and implement ``_fit(X)`` and ``_transform(block64)``.

    Examples
    --------
    >>> from repspace.engines.transforms import Center
    >>> Center().fit([[1.0, 2.0], [3.0, 6.0]]).to_provenance()["state_sha256"][:12]
    'faa68a6fa0f6'
    """

    #: The spec token (``center``, ``whiten``, ...).
    name: ClassVar[str] = ""
    #: Fitted arrays besides ``n_features_in_`` that :meth:`state` hands over.
    _state_attrs: ClassVar[tuple[str, ...]] = ()
    #: Rows needed by ``fit``.
    _min_rows: ClassVar[int] = 1

    # -- the estimator API ------------------------------------------------------------------

    def fit(self, X: Any, y: Any = None) -> Self:
        """Learn the transform from the rows of ``X``; returns ``self``."""
        arr = as_matrix(X, min_rows=0, scan=False)
        if arr.shape[0] < self._min_rows:
            raise InputError(f"{type(self).__name__} needs at least {self._min_rows} row(s) to fit, "
                             f"got {arr.shape[0]}")
        if arr.shape[1] < 1:
            raise InputError(f"{type(self).__name__} needs at least one dimension")
        self._fit(arr)
        self.n_features_in_ = int(arr.shape[1])
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Apply the fitted transform; float32 ``(n, n_features_out)``."""
        arr = self._check_input(X)
        out = np.empty((arr.shape[0], self.n_features_out), np.float32)
        for rows in row_slices(*arr.shape):
            out[rows] = self._transform(block64(arr, rows))
        return out

    def _check_input(self, X: Any, d: int | None = None) -> np.ndarray:
        self.check_fitted()
        arr = as_matrix(X, min_rows=0, scan=False)
        want = self.n_features_in_ if d is None else d
        if arr.shape[1] != want:
            raise InputError(f"{type(self).__name__} was fitted on {want} dimensions; X has {arr.shape[1]}")
        return arr

    def inverse_rows(self, Z: Any, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``fn`` on float64 blocks of ``Z`` (checked to have ``n_features_out`` columns); float32 out.

        The shared body of the subclasses' ``inverse_transform``: ``fn`` maps one
        block of output rows back to input rows.

        Examples
        --------
        >>> from repspace.engines.transforms import Center
        >>> Center().fit([[1.0, 2.0], [3.0, 6.0]]).inverse_rows([[0.0, 0.0]], lambda z: z + 1).tolist()
        [[1.0, 1.0]]
        """
        arr = self._check_input(Z, self.n_features_out)
        out = np.empty((arr.shape[0], self.n_features_in_), np.float32)
        for rows in row_slices(*arr.shape):
            out[rows] = fn(block64(arr, rows, "Z"))
        return out

    @property
    def n_features_out(self) -> int:
        """Dimensions of the output (the input's unless the transform reduces)."""
        self.check_fitted()
        return self.n_features_in_

    # -- what it is and how to rebuild it --------------------------------------------------

    def to_spec(self) -> str:
        """The compact spec token (``whiten128``); :func:`parse_transforms` reads it back."""
        return self.name

    def to_provenance(self) -> dict[str, Any]:
        """A JSON-able record of exactly what this transform is and, once fitted, what it learned.

        Keys: ``name``, ``spec``, ``class``, ``params`` (``get_params()``), ``fitted``, and
        when fitted ``n_features_in``, ``n_features_out`` and ``state_sha256``
        (:func:`state_digest` of :meth:`state`).
        """
        rec: dict[str, Any] = {
            "name": self.name,
            "spec": self.to_spec(),
            "class": f"repspace.engines.transforms.{type(self).__name__}",
            "params": {k: _jsonable(v) for k, v in self.get_params().items()},
            "fitted": self.__sklearn_is_fitted__(),
        }
        if rec["fitted"]:
            rec["n_features_in"] = self.n_features_in_
            rec["n_features_out"] = self.n_features_out
            rec["state_sha256"] = state_digest(self.state())
        return rec

    # -- subclass hooks ----------------------------------------------------------------------

    def _fit(self, X: np.ndarray) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def _transform(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - every subclass overrides
        raise NotImplementedError


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v
