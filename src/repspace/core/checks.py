"""Checks of scalar parameters shared by every layer, so that each bad value reads the same way."""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.errors import InputError

__all__ = ["positive_int"]


def positive_int(value: Any, name: str) -> int:
    """``value`` as an int when it is an integer ``>= 1`` (not a bool); else one :class:`InputError` line.

    Examples
    --------
    >>> positive_int(3, "k")
    3
    >>> positive_int(0, "k")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: k must be a positive integer, not 0
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, not {value!r}")
    return int(value)
