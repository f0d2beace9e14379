"""The :class:`Filter`: one parsed filter with its SQL and its Python matcher, built once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from repspace.core.filters.evaluator import evaluate
from repspace.core.filters.nodes import Expr, check_expr
from repspace.core.filters.parser import parse
from repspace.core.filters.sql import compile_sql

__all__ = ["Filter"]


class Filter:
    """A parsed filter with its SQL and its Python matcher.

    Parameters
    ----------
    expr : Expr
        The syntax tree.
    source : str, optional
        The text it came from; ``str(expr)`` when not given.
    meta_col, id_col, text_col : str
        Column names for the SQL, as in :func:`compile_sql`.

    Attributes
    ----------
    expr : Expr
        The syntax tree.
    source : str
        The filter text.
    sql : str
        The ``WHERE`` fragment from :func:`compile_sql`.
    params : list
        Its parameters (a fresh list on each access).

    Examples
    --------
    >>> f = Filter.parse("lang in ('en', 'de') and not draft")
    >>> f
    Filter("lang in ('en', 'de') and not draft")
    >>> f.matches("id1", None, {"lang": "en"}), f.matches("id2", None, {"lang": "en", "draft": 1})
    (True, False)
    >>> f.params[:4]
    ['$."lang"', '$."lang"', 'en', 'de']
    """

    __slots__ = ("expr", "source", "sql", "_params")

    expr: Expr
    source: str
    sql: str

    def __init__(
        self,
        expr: Expr,
        source: str | None = None,
        *,
        meta_col: str = "meta",
        id_col: str = "item_id",
        text_col: str = "text",
    ) -> None:
        check_expr(expr)
        self.expr = expr
        self.source = str(expr) if source is None else source
        self.sql, params = compile_sql(expr, meta_col=meta_col, id_col=id_col, text_col=text_col)
        self._params = tuple(params)

    @classmethod
    def parse(cls, text: str, *, meta_col: str = "meta", id_col: str = "item_id", text_col: str = "text") -> Filter:
        """Parse ``text`` (see :func:`parse`) and compile it.

        Examples
        --------
        >>> Filter.parse("_text like '%cat%'").matches("x", "a cat", {})
        True
        """
        return cls(parse(text), text, meta_col=meta_col, id_col=id_col, text_col=text_col)

    @property
    def params(self) -> list[Any]:
        """The SQL parameters, in order."""
        return list(self._params)

    def matches(self, item_id: str, text: str | None, meta: Mapping[str, Any] | None) -> bool:
        """Whether one item matches (see :func:`evaluate`).

        Examples
        --------
        >>> Filter.parse("score > 0.5").matches("x", None, {"score": 0.75})
        True
        """
        return evaluate(self.expr, item_id, text, meta)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"Filter({_repr_str(self.source)})"


def _repr_str(text: str) -> str:
    """Like ``repr`` but preferring double quotes, which filter texts rarely contain."""
    if '"' not in text and "\\" not in text and text.isprintable():
        return f'"{text}"'
    return repr(text)
