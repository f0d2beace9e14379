"""What transforms and maps share as scikit-learn-style estimators: the not-fitted error and plain-array state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

from repspace.core.errors import InputError

__all__ = ["FittedState", "NotFittedError", "export_state", "restore_state"]


class NotFittedError(InputError, _SklearnNotFittedError):
    """``transform`` before ``fit``: a repspace :class:`~repspace.core.errors.InputError` and
    scikit-learn's ``NotFittedError`` at once, so either kind of caller can catch it.

    Examples
    --------
    >>> from repspace.engines.transforms import Center
    >>> try:
    ...     Center().transform([[1.0, 2.0]])
    ... except NotFittedError as e:
    ...     print(e)
    Center is not fitted; call fit(X) first
    """


def export_state(obj: Any, attrs: tuple[str, ...]) -> dict[str, np.ndarray]:
    """A fitted estimator's state as plain arrays: ``n_features_in_`` (0-d int64) and ``attrs``."""
    out = {"n_features_in_": np.asarray(obj.n_features_in_, dtype=np.int64)}
    for attr in attrs:
        out[attr] = np.asarray(getattr(obj, attr))
    return out


def restore_state(cls: Any, params: Mapping[str, Any], state: Mapping[str, Any], attrs: tuple[str, ...]) -> Any:
    """``cls(**params)`` with the state of :func:`export_state` set back, checked (names, finite floats).

    Shared by transforms and maps (:mod:`repspace.engines.align`); shapes are each class's own check.
    """
    try:
        obj = cls(**dict(params))
    except TypeError as e:
        raise InputError(f"bad parameters for {cls.__name__}: {e}") from None
    want = {"n_features_in_", *attrs}
    got = set(state)
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise InputError(f"state of {cls.__name__} does not fit: missing {missing}, unknown {extra}")
    d = np.asarray(state["n_features_in_"])
    if d.shape != () or d.dtype.kind not in "iu" or int(d) < 1:
        raise InputError(f"state of {cls.__name__}: n_features_in_ must be a positive integer")
    for attr in attrs:
        arr = np.asarray(state[attr])
        if arr.dtype.kind != "f" or not np.isfinite(arr).all():
            raise InputError(f"state of {cls.__name__}: {attr} must be finite floats")
        setattr(obj, attr, np.array(arr, dtype=np.float64))
    obj.n_features_in_ = int(d)
    return obj


class FittedState:
    """What transforms and maps share once fitted: the fitted check and the plain-array state.

    Subclasses set ``_state_attrs`` (the fitted arrays besides ``n_features_in_``),
    ``_fit_call`` (how the not-fitted error tells the caller to fit) and may
    override ``_restored`` to check shapes after :meth:`from_state`.

    Examples
    --------
    >>> from repspace.engines.transforms import Center
    >>> c = Center().fit([[1.0, 2.0], [3.0, 6.0]])
    >>> Center.from_state(c.get_params(), c.state()).mean_.tolist()
    [2.0, 4.0]
    """

    #: Fitted arrays besides ``n_features_in_`` that :meth:`state` hands over (all float64).
    _state_attrs: ClassVar[tuple[str, ...]] = ()
    #: The call named by the not-fitted error.
    _fit_call: ClassVar[str] = "fit(X)"

    def check_fitted(self) -> None:
        """Raise :class:`NotFittedError` unless :meth:`fit` (or :meth:`from_state`) ran.

        Examples
        --------
        >>> from repspace.engines.align import Procrustes
        >>> Procrustes().check_fitted()
        Traceback (most recent call last):
        ...
        repspace.core.estimators.NotFittedError: Procrustes is not fitted; call fit(X, Y) first
        """
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"{type(self).__name__} is not fitted; call {self._fit_call} first")

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    def state(self) -> dict[str, np.ndarray]:
        """The fitted state as arrays (``n_features_in_`` as a 0-d int64 array), for ``np.savez``.

        Examples
        --------
        >>> from repspace.engines.transforms import Center
        >>> sorted(Center().fit([[1.0, 2.0], [3.0, 6.0]]).state())
        ['mean_', 'n_features_in_']
        """
        self.check_fitted()
        return export_state(self, self._state_attrs)

    @classmethod
    def from_state(cls, params: Mapping[str, Any], state: Mapping[str, Any]) -> Self:
        """A fitted estimator from ``get_params()`` and :meth:`state`; it transforms exactly as the original.

        Examples
        --------
        >>> from repspace.engines.align import Procrustes
        >>> m = Procrustes().fit([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[0.0, 1.0], [-1.0, 0.0], [-1.0, 1.0]])
        >>> r = Procrustes.from_state(m.get_params(), m.state())
        >>> bool((r.transform([[2.0, 0.0]]) == m.transform([[2.0, 0.0]])).all())
        True
        """
        obj = restore_state(cls, params, state, cls._state_attrs)
        obj._restored()
        return obj

    def _restored(self) -> None:
        """Hook: derive scalar attributes and check shapes after :meth:`from_state`."""
