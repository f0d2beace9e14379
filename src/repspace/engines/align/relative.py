"""Relative representations (Moschella et al. 2023): each item as its cosines to a set of anchors.

Not a map from one space into the other: two spaces that share anchor items
(row ``k`` of the source anchors and row ``k`` of the target anchors are the
same item) are both carried into one ``K``-dimensional space, coordinate ``k``
being the cosine to anchor ``k``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from sklearn.base import BaseEstimator

from repspace.core.arrays import as_matrix, block64, row_slices, unit_rows
from repspace.core.errors import InputError
from repspace.core.estimators import NotFittedError, export_state, restore_state
from repspace.engines.align._base import check_pairs

__all__ = ["Relative", "relative_representation"]


def _relative(X: np.ndarray, unit_anchors: np.ndarray, what: str, center: bool = False) -> np.ndarray:
    out = np.empty((X.shape[0], unit_anchors.shape[0]), np.float32)
    for rows in row_slices(*X.shape):
        r = np.clip(unit_rows(block64(X, rows, what)) @ unit_anchors.T, -1.0, 1.0)
        out[rows] = r - r.mean(axis=1, keepdims=True) if center else r
    return out


def relative_representation(X: Any, anchors: Any) -> np.ndarray:
    """``r(x) = [cos(x, a₁), …, cos(x, a_K)]`` for every row ``x`` of ``X``; float32 ``(n, K)``.

    A zero row (of ``X`` or of the anchors) has cosine 0 with everything, so
    the result never holds NaN.

    Parameters
    ----------
    X : (n, d) array
    anchors : (K, d) array
        The anchor items, in the same space as ``X``.

    Examples
    --------
    >>> relative_representation([[1.0, 0.0], [0.0, 0.0]], [[2.0, 0.0], [1.0, 1.0]]).astype(float).round(4).tolist()
    [[1.0, 0.7071], [0.0, 0.0]]
    """
    arr, anc = as_matrix(X, "X", min_rows=0, scan=False), as_matrix(anchors, "anchors", min_rows=0, scan=False)
    if anc.shape[0] < 1:
        raise InputError("relative_representation needs at least one anchor")
    if arr.shape[1] != anc.shape[1]:
        raise InputError(f"X has {arr.shape[1]} dimensions and the anchors {anc.shape[1]}; "
                         "anchors must live in the space of X")
    return _relative(arr, unit_rows(block64(anc, slice(None), "anchors")), "X")


class Relative(BaseEstimator):
    """A shared space for two spaces from paired anchors: ``transform_source`` and ``transform_target``.

    ``fit(anchors_X, anchors_Y)`` takes the same ``K`` anchor items in the source
    and the target space, row for row; afterwards ``transform_source(X)`` and
    ``transform_target(Y)`` are :func:`relative_representation` against each
    side's anchors, so both land in the same ``K``-dimensional space and can be
    compared directly (e.g. by :func:`repspace.engines.align.score_map`).

    Parameters
    ----------
    center : bool
        Subtract from each relative vector its own mean cosine, so that two
        vectors compare by the *shape* of their profiles (cosine of centred
        profiles = Pearson correlation) and not by how high one model's cosines
        run overall. Off by default, as in Moschella et al. (2023); it helps
        most when the two models' cosines run at different heights
        (BENCHMARKS.md, "Figures behind the defaults").

    Attributes
    ----------
    anchors_x_ : (K, d_x) float64
        The source anchors scaled to unit length (zero rows stay zero).
    anchors_y_ : (K, d_y) float64
        The target anchors scaled to unit length.
    n_features_in_ : int
        ``d_x``.

    Examples
    --------
    A rotation leaves cosines unchanged, so relative representations agree:

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 3))
    >>> R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    >>> rel = Relative().fit(X[:5], X[:5] @ R)
    >>> bool(np.allclose(rel.transform_source(X), rel.transform_target(X @ R), atol=1e-6))
    True
    >>> rel.transform_source(X).shape
    (20, 5)
    """

    _state_attrs = ("anchors_x_", "anchors_y_")

    def __init__(self, center: bool = False) -> None:
        self.center = center

    def fit(self, anchors_X: Any, anchors_Y: Any) -> Self:
        """Store the paired anchors (row ``k`` of each is the same item); returns ``self``."""
        ax, ay = check_pairs(anchors_X, anchors_Y, min_rows=1, owner="Relative")
        self.anchors_x_ = unit_rows(block64(ax, slice(None), "anchors_X"))
        self.anchors_y_ = unit_rows(block64(ay, slice(None), "anchors_Y"))
        self.n_features_in_ = int(ax.shape[1])
        return self

    def transform_source(self, X: Any) -> np.ndarray:
        """Source rows as cosines to the source anchors; float32 ``(n, K)``."""
        return self._apply(X, self.anchors_x_ if self.__sklearn_is_fitted__() else None, "X")

    def transform_target(self, Y: Any) -> np.ndarray:
        """Target rows as cosines to the target anchors; float32 ``(n, K)``."""
        return self._apply(Y, self.anchors_y_ if self.__sklearn_is_fitted__() else None, "Y")

    transform = transform_source

    def _apply(self, A: Any, anchors: np.ndarray | None, what: str) -> np.ndarray:
        if anchors is None:
            raise NotFittedError("Relative is not fitted; call fit(anchors_X, anchors_Y) first")
        arr = as_matrix(A, what, min_rows=0, scan=False)
        if arr.shape[1] != anchors.shape[1]:
            side = "source" if what == "X" else "target"
            raise InputError(f"Relative was fitted on {anchors.shape[1]} {side} dimensions; "
                             f"{what} has {arr.shape[1]}")
        return _relative(arr, anchors, what, bool(self.center))

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    @property
    def n_features_out(self) -> int:
        """``K``, the number of anchors."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("Relative is not fitted; call fit(anchors_X, anchors_Y) first")
        return int(self.anchors_x_.shape[0])

    def state(self) -> dict[str, np.ndarray]:
        """The fitted state as arrays, for ``np.savez``."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("Relative is not fitted; call fit(anchors_X, anchors_Y) first")
        return export_state(self, self._state_attrs)

    @classmethod
    def from_state(cls, params: Mapping[str, Any], state: Mapping[str, Any]) -> Self:
        """A fitted :class:`Relative` from ``get_params()`` and :meth:`state`."""
        obj = restore_state(cls, params, state, cls._state_attrs)
        ax, ay = obj.anchors_x_, obj.anchors_y_
        if not (ax.ndim == 2 and ay.ndim == 2 and ax.shape[0] == ay.shape[0] >= 1
                and ax.shape[1] == obj.n_features_in_ and ay.shape[1] >= 1):
            raise InputError("state of Relative: anchors_x_ (K, n_features_in_) and anchors_y_ (K, d_y) "
                             "must be finite float matrices with the same K ≥ 1")
        return obj
