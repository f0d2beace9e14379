"""The estimator base of every map: paired-input checks, blocked float64 passes, state.

A map follows scikit-learn's conventions (hyper-parameters stored unchanged by
``__init__``, learning in ``fit(X, Y)`` returning ``self``, learned state in
attributes ending in ``_``) and, like :mod:`repspace.engines.transforms`, hands over and
takes back its fitted state as plain arrays (:meth:`Map.state`,
:meth:`Map.from_state`), so a workflow can store a fitted map without pickle.
Arithmetic is float64; outputs are float32.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator

from repspace.core.arrays import as_matrix, block64, check_pair, row_slices
from repspace.core.errors import InputError
from repspace.core.estimators import FittedState
from repspace.core.moments import moments

__all__ = ["Map", "check_pairs", "pair_moments"]


def check_pairs(X: Any, Y: Any, *, min_rows: int, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`repspace.core.arrays.check_pair` for the pairs a map is fitted on (values are scanned by the fit).

    Examples
    --------
    >>> check_pairs(np.zeros((3, 2)), np.zeros((4, 2)), min_rows=2, owner="Procrustes")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: X has 3 rows and Y has 4: the two spaces must hold the same items, row for row
    """
    return check_pair(X, Y, min_rows=min_rows, scan=False, measure=owner, unit="pairs")


def pair_moments(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """Means, the centred cross product ``(X − x̄)ᵀ(Y − ȳ)`` and the two centred squared norms; float64.

    One streamed pass of :func:`repspace.core.moments.moments` (the pass behind
    CKA and the Procrustes distance: shifted by the first row, scaled by a power
    of two, so that large means or extreme magnitudes lose nothing); raises
    :class:`InputError` on NaN / inf.
    """
    m = moments(X, Y, grams=False, precision="float64")
    cross, tx, ty = m.cross()
    return m.mean_x, m.mean_y, cross, tx, ty


class Map(FittedState, BaseEstimator):
    """Base class of the linear maps ``y ≈ (x − mean_x_) W_ + mean_y_``.

    Subclasses implement ``_fit(X, Y)`` setting ``mean_x_``, ``mean_y_`` and
    ``W_``; :meth:`transform`, :meth:`state` and :meth:`from_state` come from here.
    """

    #: Fitted arrays that :meth:`state` hands over (all float64).
    _state_attrs: ClassVar[tuple[str, ...]] = ("mean_x_", "mean_y_", "W_")
    _fit_call: ClassVar[str] = "fit(X, Y)"
    #: Pairs needed by ``fit``.
    _min_rows: ClassVar[int] = 2

    def fit(self, X: Any, Y: Any) -> Self:
        """Learn the map from paired rows (row ``i`` of ``X`` ↔ row ``i`` of ``Y``); returns ``self``."""
        X, Y = check_pairs(X, Y, min_rows=self._min_rows, owner=type(self).__name__)
        self._fit(X, Y)
        self.n_features_in_ = int(X.shape[1])
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Map source rows into the target space: float32 ``(n, d_target)``."""
        self.check_fitted()
        arr = as_matrix(X, "X", min_rows=0, scan=False)
        if arr.shape[1] != self.n_features_in_:
            raise InputError(f"{type(self).__name__} was fitted on {self.n_features_in_} source dimensions; "
                             f"X has {arr.shape[1]}")
        out = np.empty((arr.shape[0], self.W_.shape[1]), np.float32)
        for rows in row_slices(*arr.shape):
            out[rows] = (block64(arr, rows, "X") - self.mean_x_) @ self.W_ + self.mean_y_
        return out

    @property
    def n_features_out(self) -> int:
        """Dimensions of the target space."""
        self.check_fitted()
        return int(self.W_.shape[1])

    def _restored(self) -> None:
        dx, dy = self.n_features_in_, self.mean_y_.shape[0] if self.mean_y_.ndim == 1 else -1
        if self.mean_x_.shape != (dx,) or dy < 1 or self.W_.shape != (dx, dy):
            raise InputError(f"state of {type(self).__name__}: shapes do not agree "
                             f"(mean_x_ {self.mean_x_.shape}, mean_y_ {self.mean_y_.shape}, W_ {self.W_.shape}, "
                             f"n_features_in_ {dx})")

    def _fit(self, X: np.ndarray, Y: np.ndarray) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError
