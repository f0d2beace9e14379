"""Checks of the options that encoder constructors take (``pooling``, ``max_length``, ...)."""

from __future__ import annotations

from typing import Any

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["opt_bool", "opt_int", "opt_str"]


def opt_int(name: str, value: Any, *, minimum: int = 1) -> int | None:
    """``None`` or an ``int >= minimum`` (strings of digits accepted), else :class:`InputError`."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InputError(f"option {name} must be an integer, got {value!r}") from None
    return check_scalar(value, f"option {name}", int, low=minimum)


def opt_bool(name: str, value: Any) -> bool | None:
    """``None`` or a ``bool`` (``"true"``/``"false"``/``"1"``/``"0"`` accepted), else :class:`InputError`."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "1", "yes", "false", "0", "no"}:
        return value.strip().lower() in {"true", "1", "yes"}
    raise InputError(f"option {name} must be true or false, got {value!r}")


def opt_str(name: str, value: Any) -> str | None:
    """``None`` or a ``str``, else :class:`InputError`."""
    if value is None or isinstance(value, str):
        return value
    raise InputError(f"option {name} must be a string, got {value!r}")
