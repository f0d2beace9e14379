"""What a filter's literals and keys may be: the limits, the checks and the shared lexical tables.

Every stage reads these: the parser refuses what they refuse at a source
position, the node constructors refuse it when a tree is built by hand, and the
SQL compiler and the evaluators rely on a tree having passed them.

Examples
--------
>>> value_problem(2**63), value_problem("ok"), compare_problem("<", True)
('integer out of the 64-bit range', None, "booleans cannot be compared with '<', only with '=' and '!='")
"""

from __future__ import annotations

import math
import re
from typing import Any, TypeAlias

__all__ = ["MAX_LENGTH", "MAX_DEPTH", "MAX_IN_VALUES", "Value"]

MAX_LENGTH: int = 10_000
"""Most characters a filter may have."""
MAX_DEPTH: int = 64
"""Deepest nesting of ``(`` and ``not``, and most keys in one field."""
MAX_IN_VALUES: int = 1_000
"""Most values in one ``in`` list."""

Value: TypeAlias = bool | int | float | str | None
"""A literal: ``bool``, ``int`` (64-bit), finite ``float``, ``str`` or ``None``."""

#: The range of an integer literal (SQLite's 64-bit integers).
INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
#: Words that are keywords in any case; a key spelled like one needs backquotes.
KEYWORDS = frozenset({"and", "or", "not", "in", "is", "null", "like", "true", "false"})
#: Fields that name a column rather than a metadata key, and the column they name.
SPECIAL = {"_id": "id", "_text": "text"}
#: A key that needs no backquotes (unless it is a keyword).
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Comparison operators as written -> as meant (``==`` is ``=``, ``<>`` is ``!=``).
OPS = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
#: The comparisons that order values (refused on booleans and null).
ORDER_OPS = frozenset({"<", "<=", ">", ">="})


def show(text: str, limit: int | None = None) -> str:
    """Return ``text`` on one printable line (non-printable characters escaped)."""
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    shown = "".join(out)
    if limit is not None and len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    return shown


def bad_text(text: str) -> str | None:
    """Why ``text`` cannot be a literal or key, or ``None`` when it can."""
    for ch in text:
        if ch == "\x00":
            return "a NUL character"
        if "\ud800" <= ch <= "\udfff":
            return f"a lone surrogate ({show(ch)})"
    return None


def value_problem(value: object) -> str | None:
    """Why ``value`` is not a valid literal, or ``None`` when it is."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            return "integer out of the 64-bit range"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "number is not finite"
    if isinstance(value, str):
        bad = bad_text(value)
        return f"string contains {bad}" if bad else None
    return f"not a literal: {type(value).__name__}"


def plain(value: Any) -> Any:
    """``value`` as its plain built-in type (``int`` for an ``IntEnum``, ...)."""
    if value is None or isinstance(value, bool):
        return value
    for kind in (int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


def compare_problem(op: str, value: Value) -> str | None:
    """Why ``<field> op value`` is not allowed, or ``None`` when it is."""
    if value is None:
        if op == "=":
            return "cannot compare with null using '='; use 'is null'"
        if op == "!=":
            return "cannot compare with null using '!='; use 'is not null'"
        return f"cannot compare with null using '{op}'; use 'is null' or 'is not null'"
    if isinstance(value, bool) and op in ORDER_OPS:
        return f"booleans cannot be compared with '{op}', only with '=' and '!='"
    return None
