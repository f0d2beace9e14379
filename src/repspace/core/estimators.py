"""What transforms and maps share as scikit-learn-style estimators: the not-fitted error and plain-array state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

from repspace.core.errors import InputError

__all__ = ["NotFittedError", "export_state", "restore_state"]


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
