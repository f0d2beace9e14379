"""Inputs and fitted-state plumbing shared by the concept-erasure maps and their scores.

Owns the checks of class-id labels, of the rows a fitted map is applied to,
the output dtype rule (float32 in, float32 out; else float64), and the
behaviour both maps share once fitted (fitted test, kept dimension, state
export).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, block64, row_slices
from repspace.core.errors import InputError
from repspace.core.estimators import NotFittedError, export_state
from repspace.engines.interpret._labels import label_codes, labels_per_row


def _out_dtype(arr: np.ndarray) -> type:
    return np.float32 if arr.dtype == np.float32 else np.float64


def _class_ids(labels: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, codes)`` of 1-d class ids, checked: one per row, finite, at least two classes."""
    lab = labels_per_row(labels, n, "labels")
    if lab.dtype.kind == "c":
        raise InputError("labels are complex numbers; class ids must be integers, strings or booleans")
    if lab.dtype.kind == "f" and np.isfinite(lab).all() and not np.array_equal(lab, np.round(lab)):
        raise InputError("1-d labels are class ids, and these are non-integer numbers; pass a numeric "
                         "concept as an (n, m) matrix, e.g. labels.reshape(-1, 1)")
    classes, codes, _ = label_codes(lab, "labels")  # NaN labels are refused here
    if classes.shape[0] < 2:
        what = f" ({classes[0]!r})" if classes.shape[0] else ""
        raise InputError(f"labels have a single class{what}: there is no concept to erase")
    return classes, codes


def _fitted_input(obj: Any, X: Any, owner: str) -> np.ndarray:
    if not obj.__sklearn_is_fitted__():
        raise NotFittedError(f"{owner} is not fitted; call fit first")
    arr = as_matrix(X, "X", min_rows=0, scan=False)
    if arr.shape[1] != obj.n_features_in_:
        raise InputError(f"{owner} was fitted on {obj.n_features_in_} dimensions; X has {arr.shape[1]}")
    return arr



class _DimensionKeepingMap:
    """What both fitted maps share: the fitted test, the kept dimension, the state as arrays.

    A subclass names ``_state_attrs`` (the fitted arrays :meth:`state` exports)
    and ``_fit_call`` (how to fit it, for the not-fitted message).
    """

    _state_attrs: tuple[str, ...] = ()
    _fit_call = "fit"

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    def _require_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"{type(self).__name__} is not fitted; call {self._fit_call} first")

    @property
    def n_features_out(self) -> int:
        """``d``: the map keeps the dimension."""
        self._require_fitted()
        return int(self.n_features_in_)  # type: ignore[attr-defined]

    def map_blocks(self, X: Any, step: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``step`` applied to float64 blocks of the rows ``X``, written out in ``X``'s output dtype."""
        arr = _fitted_input(self, X, type(self).__name__)
        out = np.empty(arr.shape, _out_dtype(arr))
        for rows in row_slices(*arr.shape):
            out[rows] = step(block64(arr, rows, "X"))
        return out

    def state(self) -> dict[str, np.ndarray]:
        """The fitted state as arrays (``n_features_in_`` as a 0-d int64 array), for ``np.savez``."""
        self._require_fitted()
        return export_state(self, self._state_attrs)
