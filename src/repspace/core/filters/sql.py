"""Syntax tree to SQL: a parameterized SQLite boolean expression with the filter's exact semantics.

The SQL text holds only fixed keywords, the caller's column names and ``?``;
every literal, pattern and key is a parameter (see the package documentation,
*Safety*). :func:`field_sql` exposes the type and value expressions each
condition is written on, which :mod:`.columns` reads once per field.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeAlias

from repspace.core.filters.nodes import (
    And,
    Compare,
    Expr,
    Field,
    In,
    IsNull,
    Like,
    Not,
    Or,
    Truthy,
    check_expr,
    check_field,
)
from repspace.core.filters.validate import Value

__all__ = ["compile_sql", "field_sql"]

_Frag: TypeAlias = tuple[str, list[Any]]
_COLUMN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?")
# Columns of json_each: an unqualified meta column with one of these names
# would be captured by the lookup subquery.
_JSON_EACH_COLUMNS = frozenset({"key", "value", "type", "atom", "id", "parent", "fullkey", "path", "json", "root"})
_NUMERIC = "IN ('integer', 'real')"


def _cat(*parts: str | _Frag) -> _Frag:
    text: list[str] = []
    params: list[Any] = []
    for part in parts:
        if isinstance(part, str):
            text.append(part)
        else:
            text.append(part[0])
            params.extend(part[1])
    return "".join(text), params


def _path_safe(key: str) -> bool:
    """Whether SQLite's JSON path ``$."key"`` finds ``key`` whatever the JSON escaping."""
    return all(" " <= ch <= "~" and ch not in '"\\' for ch in key)


class _Compiler:
    def __init__(self, meta_col: str, id_col: str, text_col: str) -> None:
        for name, col in (("meta_col", meta_col), ("id_col", id_col), ("text_col", text_col)):
            if not isinstance(col, str) or not _COLUMN.fullmatch(col):
                raise ValueError(f"{name} must be a column name like 'meta' or 'items.meta', got {col!r}")
        if "." not in meta_col and meta_col.lower() in _JSON_EACH_COLUMNS:
            raise ValueError(f"meta_col {meta_col!r} clashes with a json_each column; qualify it, e.g. 'items.{meta_col}'")
        self.meta = meta_col
        self.cols = {"id": id_col, "text": text_col}

    def atom(self, field: Field, cond: Callable[[_Frag, _Frag], _Frag], missing: int) -> _Frag:
        """``cond(T, V)`` for the field's JSON type T and value V, ``missing`` when it is absent."""
        t, v, walk = self._lookup(field)
        if walk is None:
            return _cat("COALESCE(", cond(t, v), f", {missing})")
        return _cat("COALESCE((SELECT ", cond(t, v), walk, f"), {missing})")

    def typed(self, field: Field) -> tuple[_Frag, _Frag]:
        """Two scalar SQL expressions: the field's JSON type T and its value V (both NULL when absent).

        They are the ``T`` and ``V`` every atom's condition is written on, so a reader of
        these two columns sees exactly what the compiled conditions see.
        """
        t, v, walk = self._lookup(field)
        if walk is None:
            return t, v
        return _cat("(SELECT ", t, walk, ")"), _cat("(SELECT ", v, walk, ")")

    def _lookup(self, field: Field) -> tuple[_Frag, _Frag, _Frag | None]:
        """The field's T and V, and for keys a JSON path cannot address the ``FROM ... WHERE``
        of the json_each walk they are read in (None when T and V stand on their own)."""
        column = field.column
        if column is not None:
            name = self.cols[column]
            return (f"typeof({name})", []), (f"({name} COLLATE BINARY)", []), None
        if all(_path_safe(k) for k in field.path):
            path = "$" + "".join(f'."{k}"' for k in field.path)
            return (f"json_type({self.meta}, ?)", [path]), (f"json_extract({self.meta}, ?)", [path]), None
        # json_each walk: one joined json_each per key, each matched by a parameter.
        sources = [f"json_each({self.meta}) AS _rsf1"]
        for n in range(2, len(field.path) + 1):
            p = f"_rsf{n - 1}"
            sources.append(f"json_each(CASE WHEN {p}.type = 'object' THEN {p}.value END) AS _rsf{n}")
        where = " AND ".join(f"_rsf{n}.key = ?" for n in range(1, len(field.path) + 1))
        last = f"_rsf{len(field.path)}"
        walk = _cat(f" FROM {', '.join(sources)} WHERE ", (where, list(field.path)))
        return (f"{last}.type", []), (f"{last}.value", []), walk

    def compile(self, expr: Expr) -> _Frag:
        if isinstance(expr, Compare):
            if expr.op == "!=":
                return _cat("(NOT ", self.compile(Compare(expr.field, "=", expr.value)), ")")
            value, op = expr.value, expr.op
            if isinstance(value, bool):
                return self.atom(expr.field, lambda t, v: _cat("(", t, " = ?)", ("", ["true" if value else "false"])), 0)
            kind = _NUMERIC if isinstance(value, (int, float)) else "= 'text'"
            return self.atom(expr.field, lambda t, v: _cat("(", t, f" {kind} AND ", v, f" {op} ?)", ("", [value])), 0)
        if isinstance(expr, In):
            groups: list[tuple[str, list[Value]]] = [
                ("num", [x for x in expr.values if isinstance(x, (int, float)) and not isinstance(x, bool)]),
                ("text", [x for x in expr.values if isinstance(x, str)]),
                ("bool", ["true" if x else "false" for x in expr.values if isinstance(x, bool)]),
            ]

            def cond(t: _Frag, v: _Frag) -> _Frag:
                parts: list[str | _Frag] = ["("]
                for kind, values in groups:
                    if not values:
                        continue
                    if len(parts) > 1:
                        parts.append(" OR ")
                    marks = (", ".join("?" * len(values)), list(values))
                    if kind == "bool":
                        parts += [t, " IN (", marks, ")"]
                    else:
                        type_test = _NUMERIC if kind == "num" else "= 'text'"
                        parts += ["(", t, f" {type_test} AND ", v, " IN (", marks, "))"]
                parts.append(")")
                return _cat(*parts)

            frag = self.atom(expr.field, cond, 0)
            return _cat("(NOT ", frag, ")") if expr.negated else frag
        if isinstance(expr, IsNull):
            frag = self.atom(expr.field, lambda t, v: _cat("(", t, " = 'null')"), 1)
            return _cat("(NOT ", frag, ")") if expr.negated else frag
        if isinstance(expr, Like):
            glob = _like_to_glob(expr.pattern)
            frag = self.atom(expr.field, lambda t, v: _cat("(", t, " = 'text' AND ", v, " GLOB ?)", ("", [glob])), 0)
            return _cat("(NOT ", frag, ")") if expr.negated else frag
        if isinstance(expr, Truthy):
            return self.atom(
                expr.field,
                lambda t, v: _cat(
                    "CASE ", t, " WHEN 'true' THEN 1",
                    " WHEN 'integer' THEN ", v, " <> 0",
                    " WHEN 'real' THEN ", v, " <> 0",
                    " WHEN 'text' THEN ", v, " <> ''",
                    " WHEN 'array' THEN ", v, " <> '[]'",
                    " WHEN 'object' THEN ", v, " <> '{}'",
                    " ELSE 0 END",
                ),
                0,
            )  # fmt: skip
        if isinstance(expr, Not):
            return _cat("(NOT ", self.compile(expr.expr), ")")
        if isinstance(expr, (And, Or)):
            word = " AND " if isinstance(expr, And) else " OR "
            return self.balanced(word, [self.compile(item) for item in expr.items])
        raise TypeError(f"expected a filter expression node, got {type(expr).__name__}")

    def balanced(self, word: str, frags: list[_Frag]) -> _Frag:
        """Join with AND/OR as a balanced tree (SQLite limits expression depth to 1000)."""
        if len(frags) == 1:
            return frags[0]
        mid = len(frags) // 2
        return _cat("(", self.balanced(word, frags[:mid]), word, self.balanced(word, frags[mid:]), ")")


def _like_to_glob(pattern: str) -> str:
    """Translate a LIKE pattern (``%``, ``_``) into an equivalent, case-sensitive GLOB pattern."""
    table = {"%": "*", "_": "?", "*": "[*]", "?": "[?]", "[": "[[]"}
    return "".join(table.get(ch, ch) for ch in pattern)


def compile_sql(
    expr: Expr, *, meta_col: str = "meta", id_col: str = "item_id", text_col: str = "text"
) -> tuple[str, list[Any]]:
    """Compile a filter into a parameterized SQLite boolean expression.

    Parameters
    ----------
    expr : Expr
        A syntax tree from :func:`parse` (or built from the node classes).
    meta_col, id_col, text_col : str
        The columns holding the JSON metadata, the item id and the text; plain
        or table-qualified names (``"items.meta"``). They are the only
        caller-given text in the SQL.

    Returns
    -------
    sql : str
        A fragment for ``WHERE <sql>`` that is exactly 0 or 1 for every row.
        It holds only fixed SQL, the column names and ``?``.
    params : list
        The parameters for the ``?`` in order: every literal, LIKE pattern and
        key (as a JSON path ``$."a"."b"`` or, for keys that a SQLite path cannot
        address, as the key itself).

    Raises
    ------
    TypeError
        If ``expr`` is not an expression node.
    ValueError
        If a column name is not a plain or qualified identifier.

    Examples
    --------
    >>> from repspace.core.filters import parse
    >>> sql, params = compile_sql(parse("year >= 2020"))
    >>> sql
    "COALESCE((json_type(meta, ?) IN ('integer', 'real') AND json_extract(meta, ?) >= ?), 0)"
    >>> params
    ['$."year"', '$."year"', 2020]
    >>> compile_sql(parse("_id = 'x'"))
    ("COALESCE((typeof(item_id) = 'text' AND (item_id COLLATE BINARY) = ?), 0)", ['x'])
    """
    check_expr(expr)
    return _Compiler(meta_col, id_col, text_col).compile(expr)


def field_sql(
    field: Field, *, meta_col: str = "meta", id_col: str = "item_id", text_col: str = "text"
) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """The SQL of a field's JSON type and value, as :func:`compile_sql` reads them.

    Returns ``((type_sql, params), (value_sql, params))``: scalar expressions that
    are NULL when the field is absent. Reading a field's column once with them
    and evaluating filters on the column in bulk
    (:mod:`repspace.core.filters.columns`) gives what the compiled SQL gives.

    Examples
    --------
    >>> from repspace.core.filters import parse
    >>> field_sql(parse("year > 1").field)
    (('json_type(meta, ?)', ['$."year"']), ('json_extract(meta, ?)', ['$."year"']))
    >>> field_sql(parse("_text is null").field)[0]
    ('typeof(text)', [])
    """
    check_field(field)
    return _Compiler(meta_col, id_col, text_col).typed(field)
