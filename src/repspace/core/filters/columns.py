"""Syntax tree to numpy: a filter evaluated on columns, a whole space's matches in vectorised operations.

The SQL compiler (:func:`repspace.core.filters.sql.compile_sql`) is the reference:
it evaluates ``json_extract`` per item for every filter, so its cost grows with the
space whatever the filter. Here each field a filter names is read once
into a :class:`Column` (its JSON type and value per item, with the very SQL the
compiler's conditions are written on, :func:`repspace.core.filters.sql.field_sql`),
and a filter over columns is a handful of vectorised comparisons, so a cache of columns per space generation
makes every later filter cheap, new ones included.

The semantics are the compiler's, atom by atom (typed comparisons, missing and
``null`` fields, exact int/float comparison, code-point string order, ``like``
on whole strings); the tests compare the two on random expression trees over
hostile data. Numbers that float64 cannot hold exactly (integers beyond 2**53)
are compared one by one in Python, exactly as SQLite compares them.

Examples
--------
>>> from repspace.core.filters import parse
>>> col = Column.from_sql([("integer", 2021), (None, None), ("text", "2021"), ("real", 2019.5)])
>>> evaluate_columns(parse("year >= 2020"), {("year",): col}).tolist()
[True, False, False, False]
>>> evaluate_columns(parse("year is null or year = '2021'"), {("year",): col}).tolist()
[False, True, True, False]
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.filters.evaluator import like_match
from repspace.core.filters.nodes import And, Compare, Expr, In, IsNull, Like, Not, Or, Truthy

__all__ = ["Column", "evaluate_columns", "fields_of"]

#: Type codes of a column (0: the field is absent).
MISSING, NULL, TRUE, FALSE, INTEGER, REAL, TEXT, ARRAY, OBJECT = range(9)
#: SQLite's type names (``json_type``, ``typeof``) -> type codes.
TYPE_CODES = {"null": NULL, "true": TRUE, "false": FALSE, "integer": INTEGER, "real": REAL, "text": TEXT,
              "array": ARRAY, "object": OBJECT, "blob": MISSING}
_CODE = TYPE_CODES
#: Largest magnitude up to which every integer is a float64 (and compares exactly as one).
_EXACT = 2**53
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq}


@dataclass(frozen=True)
class Column:
    """One field over the items of a space, in row order.

    Attributes
    ----------
    kind : uint8 array
        The JSON type code of each item's value (``MISSING`` when absent).
    number : float64 array
        The value of ``integer``/``real`` items (NaN elsewhere).
    exact : bool array
        Whether ``number`` is the value exactly (false for integers beyond 2**53,
        which are kept in ``big``).
    strings : object array or None
        The distinct strings of the ``text`` items, in order of first appearance
        (None when there is none); a text comparison or ``like`` is evaluated once
        per distinct string (metadata strings are mostly a few categories: a
        million items of 3 languages compare 3 strings, not a million).
    codes : int32 array
        Each item's position in ``strings`` (-1 for items that are not text).
    empty : bool array
        ``text``/``array``/``object`` items that are empty (``''``, ``[]``, ``{}``).
    big : dict
        Position -> the exact Python value, for the numbers ``exact`` leaves out.
    """

    kind: np.ndarray
    number: np.ndarray
    exact: np.ndarray
    strings: np.ndarray | None
    codes: np.ndarray
    empty: np.ndarray
    big: Mapping[int, Any]

    def __len__(self) -> int:
        return len(self.kind)

    @property
    def text(self) -> np.ndarray:
        """Each item's string (None for items that are not text), as an object array."""
        out = np.full(len(self.kind), None, dtype=object)
        if self.strings is not None:
            at = self.codes >= 0
            out[at] = self.strings[self.codes[at]]
        return out

    @property
    def nbytes(self) -> int:
        """Approximate memory held (strings counted by their length)."""
        text = 0 if self.strings is None else sum(len(s) + 57 for s in self.strings)
        return (self.kind.nbytes + self.number.nbytes + self.exact.nbytes + self.codes.nbytes + self.empty.nbytes
                + text)

    @classmethod
    def from_sql(cls, pairs: Iterable[tuple[Any, Any]]) -> Column:
        """Build from ``(type, value)`` pairs as SQLite returns them for :func:`field_sql`'s two expressions.

        Types are ``json_type``'s names (or ``typeof``'s for the id and text
        columns); ``None`` means the field is absent.
        """
        pairs = list(pairs)
        types, values = zip(*pairs) if pairs else ((), ())
        return cls.from_arrays(types, values)

    @classmethod
    def from_arrays(cls, types: Sequence[Any], values: Sequence[Any]) -> Column:
        """Build from the two columns of :func:`field_sql`, converted with whole-array operations.

        Examples
        --------
        >>> col = Column.from_arrays(["text", "integer", "text", None], ["de", 7, "en", None])
        >>> col.strings.tolist(), col.codes.tolist(), col.number[1]
        (['de', 'en'], [0, -1, 1, -1], np.float64(7.0))
        """
        n = len(types)
        if isinstance(types, np.ndarray) and types.dtype == np.uint8:  # already codes (TYPE_CODES)
            kind = types
        else:
            code = _CODE.get
            kind = np.fromiter((code(t, MISSING) for t in types), dtype=np.uint8, count=n)
        vals = np.empty(n, dtype=object)
        vals[:] = values
        numeric = (kind == INTEGER) | (kind == REAL)
        number = np.full(n, np.nan)
        if numeric.any():
            number[numeric] = vals[numeric].astype(np.float64)
        exact = numeric.copy()
        big: dict[int, Any] = {}
        with np.errstate(invalid="ignore"):
            wide = np.flatnonzero((kind == INTEGER) & (np.abs(number) >= _EXACT))
        for pos in wide:  # integers float64 cannot hold (SQLite gives a float beyond 64 bits: exact already)
            if isinstance(vals[pos], int):
                big[int(pos)] = vals[pos]
                exact[pos] = False
        is_text = kind == TEXT
        strings, codes = None, np.full(n, -1, dtype=np.int32)
        if is_text.any():
            texts = vals[is_text].tolist()
            distinct = list(dict.fromkeys(texts))  # a hash table, not a sort: a million strings in ~0.1 s
            position = {t: i for i, t in enumerate(distinct)}
            codes[is_text] = np.fromiter(map(position.__getitem__, texts), dtype=np.int32, count=len(texts))
            strings = np.empty(len(distinct), dtype=object)
            strings[:] = distinct
        empty = np.zeros(n, dtype=bool)
        if strings is not None:
            empty[is_text] = (strings == "")[codes[is_text]]
        for k, blank in ((ARRAY, "[]"), (OBJECT, "{}")):
            at = kind == k
            if at.any():
                empty[at] = vals[at] == blank
        return cls(kind, number, exact, strings, codes, empty, big)


def fields_of(expr: Expr) -> set[tuple[str, ...]]:
    """The field paths a filter reads (``_id`` and ``_text`` as ``("_id",)``, ``("_text",)``).

    Examples
    --------
    >>> from repspace.core.filters import parse
    >>> sorted(fields_of(parse("a.b = 1 or not c or _id = 'x'")))
    [('_id',), ('a', 'b'), ('c',)]
    """
    if isinstance(expr, (Compare, In, IsNull, Like, Truthy)):
        return {expr.field.path}
    if isinstance(expr, Not):
        return fields_of(expr.expr)
    if isinstance(expr, (And, Or)):
        return set().union(*(fields_of(item) for item in expr.items))
    raise TypeError(f"expected a filter expression node, got {type(expr).__name__}")


def evaluate_columns(expr: Expr, columns: Mapping[tuple[str, ...], Column]) -> np.ndarray:
    """The boolean mask of the items a filter selects, from the columns of the fields it reads.

    Parameters
    ----------
    expr : Expr
        A syntax tree from :func:`repspace.core.filters.parse`.
    columns : mapping
        ``Field.path`` -> :class:`Column`, all over the same items (see :func:`fields_of`).

    Returns
    -------
    numpy.ndarray of bool
        True where the item matches; equal to the rows ``WHERE compile_sql(expr)`` selects.
    """
    if isinstance(expr, Compare):
        col = columns[expr.field.path]
        if expr.op == "!=":
            return ~_equal(col, expr.value)
        if expr.op == "=":
            return _equal(col, expr.value)
        return _order(col, expr.op, expr.value)
    if isinstance(expr, In):
        col = columns[expr.field.path]
        mask = np.zeros(len(col), dtype=bool)
        for value in expr.values:
            mask |= _equal(col, value)
        return ~mask if expr.negated else mask
    if isinstance(expr, IsNull):
        kind = columns[expr.field.path].kind
        mask = (kind == MISSING) | (kind == NULL)
        return ~mask if expr.negated else mask
    if isinstance(expr, Like):
        mask = _like(columns[expr.field.path], expr.pattern)
        return ~mask if expr.negated else mask
    if isinstance(expr, Truthy):
        return _truthy(columns[expr.field.path])
    if isinstance(expr, Not):
        return ~evaluate_columns(expr.expr, columns)
    if isinstance(expr, And):
        mask = evaluate_columns(expr.items[0], columns)
        for item in expr.items[1:]:
            mask &= evaluate_columns(item, columns)
        return mask
    if isinstance(expr, Or):
        mask = evaluate_columns(expr.items[0], columns)
        for item in expr.items[1:]:
            mask |= evaluate_columns(item, columns)
        return mask
    raise TypeError(f"expected a filter expression node, got {type(expr).__name__}")


def _numbers(col: Column, op: str, literal: int | float) -> np.ndarray:
    """``value op literal`` on the numeric items, exactly as SQLite compares an integer or real with it."""
    fn = _OPS[op]
    numeric = (col.kind == INTEGER) | (col.kind == REAL)
    mask = np.zeros(len(col), dtype=bool)
    if isinstance(literal, int) and abs(literal) > _EXACT:
        # float64 cannot hold the literal: every numeric item compared exactly, one by one.
        for pos in np.flatnonzero(numeric):
            value = col.big.get(int(pos), col.number[pos])
            mask[pos] = fn(value if isinstance(value, int) else float(value), literal)
        return mask
    sure = numeric & col.exact
    with np.errstate(invalid="ignore"):
        mask[sure] = fn(col.number[sure], float(literal))
    for pos, value in col.big.items():
        mask[pos] = fn(value, literal)
    return mask


def _equal(col: Column, literal: Any) -> np.ndarray:
    if isinstance(literal, bool):
        return col.kind == (TRUE if literal else FALSE)
    if isinstance(literal, (int, float)):
        return _numbers(col, "=", literal)
    return _texts(col, operator.eq, literal)


def _order(col: Column, op: str, literal: Any) -> np.ndarray:
    if isinstance(literal, str):
        return _texts(col, _OPS[op], literal)
    return _numbers(col, op, literal)


def _texts(col: Column, fn: Any, literal: str) -> np.ndarray:
    """``fn(text, literal)`` on the text items (Python string order: code points, as SQLite's BINARY)."""
    if col.strings is None:
        return np.zeros(len(col), dtype=bool)
    return _per_string(col, np.asarray(fn(col.strings, literal), dtype=bool))


def _like(col: Column, pattern: str) -> np.ndarray:
    """``like`` on the text items, each distinct string matched once."""
    if col.strings is None:
        return np.zeros(len(col), dtype=bool)
    hits = np.fromiter((like_match(pattern, s) for s in col.strings), dtype=bool, count=len(col.strings))
    return _per_string(col, hits)


def _per_string(col: Column, hits: np.ndarray) -> np.ndarray:
    """Spread a result over the distinct strings to the items (False for items that are not text)."""
    return np.append(hits, False)[col.codes]  # code -1 reads the appended False


def _truthy(col: Column) -> np.ndarray:
    kind = col.kind
    numeric = (kind == INTEGER) | (kind == REAL)
    with np.errstate(invalid="ignore"):
        nonzero = numeric & (col.number != 0)
    sized = (kind == TEXT) | (kind == ARRAY) | (kind == OBJECT)
    return (kind == TRUE) | nonzero | (sized & ~col.empty)
