"""Checks of scalar parameters shared by every layer, so that each bad value reads the same way.

:func:`check_scalar` follows scikit-learn's ``check_scalar``: one call states
the type and the bounds of a parameter, and a bad value gets one
:class:`~repspace.core.errors.InputError` line, ``<name> must be <what>, not
<value>``, whose ``<what>`` is written from those bounds ("a positive
integer", "an integer in [1, 4096]", "a number in [0, 1]"). Booleans are never
numbers here (``True`` is not ``k=1``), nor are NaN or infinities.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal, TypeVar

import numpy as np

from repspace.core.errors import InputError

__all__ = ["check_choice", "check_scalar", "check_strings", "positive_int"]

T = TypeVar("T")
Bounds = Literal["both", "left", "right", "neither"]


def _bound(kind: type, value: float) -> str:
    # An integer's bounds print in full (2**32 - 1, not 4.29497e+09); a number's in %g.
    return f"{int(value)}" if kind is int and float(value).is_integer() else f"{value:g}"


def _what(kind: type, low: float | None, high: float | None, include: Bounds) -> str:
    noun = ("integer", "an integer") if kind is int else ("number", "a number")
    closed_low, closed_high = include in ("both", "left"), include in ("both", "right")
    if low is not None and high is not None:
        left, right = "[" if closed_low else "(", "]" if closed_high else ")"
        return f"{noun[1]} in {left}{_bound(kind, low)}, {_bound(kind, high)}{right}"
    if low is not None and high is None:
        if low == 0:
            return f"a non-negative {noun[0]}" if closed_low else f"a positive {noun[0]}"
        if low == 1 and kind is int and closed_low:
            return "a positive integer"
        return f"{noun[1]} {'>=' if closed_low else '>'} {_bound(kind, low)}"
    if high is not None:
        return f"{noun[1]} {'<=' if closed_high else '<'} {_bound(kind, high)}"
    return noun[1]


def check_scalar(value: Any, name: str, kind: type[int] | type[float] = int, *, low: float | None = None,
                 high: float | None = None, include: Bounds = "both", none: bool = False) -> Any:
    """``value`` as a Python ``int`` or ``float`` within its bounds, or one :class:`InputError` line.

    Parameters
    ----------
    value : Any
        What the caller gave.
    name : str
        The parameter as the user knows it (``"k"``, ``"the MMR lambda"``).
    kind : int or float
        ``int`` accepts Python and numpy integers; ``float`` accepts any real
        number (integers included) and returns a ``float``.
    low, high : float, optional
        The bounds; ``include`` says which of them are allowed.
    include : ``both``, ``left``, ``right`` or ``neither``
    none : bool
        Whether ``None`` is allowed (and returned as is: "use the default").

    Returns
    -------
    int, float or None

    Examples
    --------
    >>> check_scalar(64, "ef", int, low=1, high=4096)
    64
    >>> check_scalar(0.5, "the MMR lambda", float, low=0, high=1)
    0.5
    >>> check_scalar(2**32, "seed", int, low=0, high=2**32, include="left")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: seed must be an integer in [0, 4294967296), not 4294967296
    >>> check_scalar(True, "k", int, low=1)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: k must be a positive integer, not True
    >>> check_scalar(float("nan"), "alpha", float, low=0, include="neither")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: alpha must be a positive number, not nan
    """
    if value is None and none:
        return None
    ok_type = (int, np.integer) if kind is int else (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, ok_type):
        raise _refused(value, name, kind, low, high, include)
    number = int(value) if kind is int else float(value)
    if kind is float and not math.isfinite(number):
        raise _refused(value, name, kind, low, high, include)
    closed_low, closed_high = include in ("both", "left"), include in ("both", "right")
    if low is not None and (number < low or (number == low and not closed_low)):
        raise _refused(value, name, kind, low, high, include)
    if high is not None and (number > high or (number == high and not closed_high)):
        raise _refused(value, name, kind, low, high, include)
    return number


def _refused(value: Any, name: str, kind: type, low: float | None, high: float | None,
             include: Bounds) -> InputError:
    # The message is only built for a refused value: check_scalar runs on every search.
    return InputError(f"{name} must be {_what(kind, low, high, include)}, not {value!r}")


def check_choice(value: Any, name: str, choices: Iterable[T]) -> T:
    """``value`` when it is one of ``choices``, else one :class:`InputError` line naming them.

    Examples
    --------
    >>> check_choice("rrf", "fusion", ("rrf", "sum"))
    'rrf'
    >>> check_choice("max", "fusion", ("rrf", "sum"))
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: fusion must be one of rrf, sum, not 'max'
    """
    options = tuple(choices)
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or value not in options:
        raise InputError(f"{name} must be one of {', '.join(map(str, options))}, not {value!r}")
    return value


def check_strings(values: Iterable[Any], name: str, item: str) -> list[str]:
    """``values`` as a list of ``str``; else one :class:`InputError` line (one string, or which item is not one).

    ``name`` is the parameter (``"texts"``), ``item`` what one element is called (``"text"``).

    Examples
    --------
    >>> check_strings(("a cat", "a dog"), "texts", "text")
    ['a cat', 'a dog']
    >>> check_strings("a cat", "texts", "text")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: texts must be a list of strings, not one string
    >>> check_strings(["a cat", 3], "texts", "text")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: text 1 is int, not a string
    """
    if isinstance(values, str):
        raise InputError(f"{name} must be a list of strings, not one string")
    out = list(values)
    for i, value in enumerate(out):
        if not isinstance(value, str):
            raise InputError(f"{item} {i} is {type(value).__name__}, not a string")
    return out


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
    return check_scalar(value, name, int, low=1)
