"""The filter evaluated in pure Python on one item, with exactly the SQL compiler's semantics.

It is the readable statement of the semantics (typed comparisons, missing and
``null`` fields, ``like`` on whole strings); the tests compare it with the
SQL and the column evaluators on random trees over hostile data.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from repspace.core.filters.nodes import And, Compare, Expr, Field, In, IsNull, Like, Not, Or, Truthy
from repspace.core.filters.validate import INT_MAX, INT_MIN, Value

__all__ = ["evaluate"]

_MISSING: Any = object()


def _typed(value: object) -> tuple[str, Any]:
    """The JSON type name (as SQLite's ``json_type``) and comparable value of ``value``."""
    if value is None:
        return "null", None
    if value is True:
        return "true", True
    if value is False:
        return "false", False
    if isinstance(value, str):
        return "text", value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        number = int(value)
        if INT_MIN <= number <= INT_MAX:
            return "integer", number
        try:  # SQLite reads integers beyond 64 bits as floats
            return "integer", float(number)
        except OverflowError:
            return "integer", math.inf if number > 0 else -math.inf
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return "real", float(value)
    if isinstance(value, (list, tuple)):
        return "array", value
    if isinstance(value, Mapping):
        return "object", value
    return "other", value


def _lookup(field: Field, item_id: str, text: str | None, meta: Mapping[str, Any] | None) -> Any:
    column = field.column
    if column == "id":
        return item_id
    if column == "text":
        return text
    current: Any = meta
    for key in field.path:
        if not isinstance(current, Mapping) or key not in current:
            return _MISSING
        current = current[key]
    return current


def _equal(kind: str, value: Any, literal: Value) -> bool:
    if isinstance(literal, bool):
        return kind == ("true" if literal else "false")
    if isinstance(literal, (int, float)):
        return kind in ("integer", "real") and value == literal
    return kind == "text" and value == literal


def _order(kind: str, value: Any, op: str, literal: Value) -> bool:
    if isinstance(literal, str):
        if kind != "text":
            return False
    elif kind not in ("integer", "real"):
        return False
    if op == "<":
        return bool(value < literal)
    if op == "<=":
        return bool(value <= literal)
    if op == ">":
        return bool(value > literal)
    return bool(value >= literal)


def like_match(pattern: str, text: str) -> bool:
    """LIKE with ``%`` and ``_``, case-sensitive, in O(len(pattern) * len(text)) without backtracking blow-up."""
    p = s = 0
    star = -1
    mark = 0
    while s < len(text):
        if p < len(pattern) and pattern[p] == "%":
            star, mark = p, s
            p += 1
        elif p < len(pattern) and (pattern[p] == "_" or pattern[p] == text[s]):
            p += 1
            s += 1
        elif star >= 0:
            p = star + 1
            mark += 1
            s = mark
        else:
            return False
    while p < len(pattern) and pattern[p] == "%":
        p += 1
    return p == len(pattern)


def _truthy(kind: str, value: Any) -> bool:
    if kind == "true":
        return True
    if kind in ("integer", "real"):
        return bool(value != 0)
    if kind in ("text", "array", "object"):
        return len(value) > 0
    return False


def evaluate(expr: Expr, item_id: str, text: str | None, meta: Mapping[str, Any] | None) -> bool:
    """Evaluate a filter on one item in Python, with exactly the SQL semantics.

    Parameters
    ----------
    expr : Expr
        A syntax tree from :func:`parse`.
    item_id : str
        The item's id (the ``_id`` field).
    text : str or None
        The item's text (the ``_text`` field).
    meta : Mapping or None
        The item's metadata as :func:`json.loads` returns it (``None`` is
        treated like a missing object: every key is missing).

    Returns
    -------
    bool
        Whether the item matches; equal to whether
        ``SELECT ... WHERE <compile_sql(expr)>`` selects its row.

    Examples
    --------
    >>> from repspace.core.filters import parse
    >>> e = parse("year > 2020 and x != 5 and tags and not draft")
    >>> evaluate(e, "a", None, {"year": 2021, "tags": ["t"], "draft": False})
    True
    >>> evaluate(e, "a", None, {"year": "2021", "tags": ["t"]})
    False
    >>> evaluate(parse("lang is null"), "a", "some text", {"lang": None})
    True
    """
    if isinstance(expr, Compare):
        if expr.op == "!=":
            return not _equal(*_typed_at(expr.field, item_id, text, meta), expr.value)
        kind, value = _typed_at(expr.field, item_id, text, meta)
        if expr.op == "=":
            return _equal(kind, value, expr.value)
        return _order(kind, value, expr.op, expr.value)
    if isinstance(expr, In):
        kind, value = _typed_at(expr.field, item_id, text, meta)
        return any(_equal(kind, value, lit) for lit in expr.values) != expr.negated
    if isinstance(expr, IsNull):
        kind, _ = _typed_at(expr.field, item_id, text, meta)
        return (kind in ("missing", "null")) != expr.negated
    if isinstance(expr, Like):
        kind, value = _typed_at(expr.field, item_id, text, meta)
        return (kind == "text" and like_match(expr.pattern, value)) != expr.negated
    if isinstance(expr, Truthy):
        return _truthy(*_typed_at(expr.field, item_id, text, meta))
    if isinstance(expr, Not):
        return not evaluate(expr.expr, item_id, text, meta)
    if isinstance(expr, And):
        return all(evaluate(item, item_id, text, meta) for item in expr.items)
    if isinstance(expr, Or):
        return any(evaluate(item, item_id, text, meta) for item in expr.items)
    raise TypeError(f"expected a filter expression node, got {type(expr).__name__}")


def _typed_at(field: Field, item_id: str, text: str | None, meta: Mapping[str, Any] | None) -> tuple[str, Any]:
    value = _lookup(field, item_id, text, meta)
    return ("missing", None) if value is _MISSING else _typed(value)


# --------------------------------------------------------------------------- Filter
