"""A small, safe metadata filter language compiled to parameterized SQLite.

A filter such as ``year >= 2020 and lang in ('en', 'de') and not draft`` is
parsed into a tree of frozen dataclasses (:func:`parse`), compiled into a
boolean SQLite expression with ``?`` parameters (:func:`compile_sql`), or
evaluated in pure Python with exactly the same semantics (:func:`evaluate`).
:class:`Filter` bundles the three.

Items live in a table with the columns ``item_id TEXT``, ``text TEXT`` and
``meta TEXT`` (a JSON object); the column names can be changed.

Grammar
-------
Keywords (``and or not in is null like true false``) are case-insensitive::

    expr    := or
    or      := and ('or' and)*
    and     := not ('and' not)*
    not     := 'not' not | atom
    atom    := '(' expr ')'
             | field op literal                  op: = == != <> < <= > >=
             | field ['not'] 'in' '(' literal (',' literal)* [','] ')'
             | field 'is' ['not'] 'null'
             | field ['not'] 'like' string
             | field                             truthiness test
    field   := key ('.' key)*
    key     := [A-Za-z_][A-Za-z0-9_]*  |  `any key`   (write ` twice inside)
    literal := number | string | true | false | null
    number  := -?(digits[.digits] | .digits)([eE][+-]?digits)?
    string  := 'single' | "double"      (escapes: \\\\  \\'  \\" and nothing else)

``not`` binds tighter than ``and``, which binds tighter than ``or``:
``not a and b or c`` means ``((not a) and b) or c``. A key that is a keyword,
or that has characters outside ``[A-Za-z0-9_]``, must be written in
backquotes, e.g. ```my key`.`a.b` = 1``; ``a.b`` is the key ``b`` inside the
object at key ``a``. An integer literal is a 64-bit integer, a literal with a
``.`` or an exponent is a float (``1e3`` is the float 1000.0).

Fields
------
``_id`` is the item's id column and ``_text`` its text column; they have no
sub-keys. Every other field is a path of keys into the ``meta`` JSON object.
A top-level meta key literally named ``_id`` or ``_text`` cannot be reached
(backquoting does not change that).

Semantics
---------
Every atom is exactly true or false (there is no SQL ``NULL`` three-valued
logic), so ``not``, ``and`` and ``or`` behave like Python's. Comparisons are
typed; SQLite's cross-type ordering and type affinity never take part:

* a number literal only matches JSON numbers (integer or real; booleans are
  *not* numbers); ints and floats compare exactly, ``1 = 1.0`` is true;
* a string literal only matches JSON strings (and the text columns); strings
  compare by Unicode code point (SQLite's ``BINARY`` collation), so ``'2021'``
  never equals ``2021`` and ``'B' < 'a'``;
* ``true``/``false`` only match JSON booleans and only with ``=``/``!=``
  (ordering booleans is an error);
* ``null`` cannot be compared with ``=``, ``!=``, ``in`` or an ordering: it is
  an error that suggests ``is null``/``is not null``.

``x = v`` and ``x < v`` (``<=``, ``>``, ``>=``), ``x in (...)`` and
``x like p`` are false when ``x`` is missing, JSON ``null`` or of another type
than the literal. ``x != v`` (also ``<>``) is defined as ``not (x = v)``, so a
missing field matches ``x != 5``; likewise ``x not in (...)`` is
``not (x in (...))`` and ``x not like p`` is ``not (x like p)``. ``x is null``
is true when the key is missing or holds JSON ``null`` (and for a ``NULL``
column); ``x is not null`` is its negation. ``x`` alone (truthiness) is true
iff the value exists and is not ``null``, ``false``, ``0``, ``0.0``, ``""``,
``[]`` or ``{}``.

JSON arrays and objects are values of their own type: ``=``, ``in``, ``<`` and
``like`` are always false on them (there is no array-contains semantics in
this version), ``is null`` is false and truthiness tests emptiness. A path
that runs through a non-object (``a.b`` where ``a`` is a string or an array)
is a missing field; array elements cannot be addressed.

``like`` matches a whole string against a pattern in which ``%`` stands for
any run of characters and ``_`` for exactly one character; every other
character, including ``*``, ``?``, ``[`` and ``\\``, stands for itself and
there is no escape character. It is **case-sensitive** (compiled to SQLite's
``GLOB`` on a translated pattern, so ``PRAGMA case_sensitive_like`` and the
ICU extension cannot change it).

Integers in the JSON beyond the 64-bit range are read by SQLite as floats;
:func:`evaluate` does the same. Out of scope: JSON objects with duplicate keys
(SQLite takes the first, Python's :mod:`json` the last), strings containing NUL
characters (SQLite's JSON functions cut them there) and ``meta`` text that is
not valid JSON (SQLite raises "malformed JSON" for the rows it reaches).

Limits
------
A filter has at most 10,000 characters, nests ``(`` and ``not`` at most 64
deep, has fields of at most 64 keys and at most 1,000 values in one ``in``
list. Literals and keys must not contain NUL characters or lone surrogates.
Every violation, and every syntax error, raises
:class:`~repspace.core.errors.FilterError` with one line that says what was
expected and at which character position (counting from 1). :func:`parse`
raises nothing else for any ``str``.

Safety
------
User text never reaches SQL as code. The SQL text contains only fixed
keywords, functions, operators and type names, the column names given by the
caller, internal table aliases and ``?``; every literal, every LIKE pattern and
every key is a parameter. Keys of printable ASCII other than ``"`` and ``\\``
are passed as a JSON path parameter ``$."a"."b"``. Other keys are looked up
with ``json_each`` and a ``key = ?`` parameter because SQLite's path syntax
(3.40) cannot spell a ``"`` inside a key and compares keys with their raw,
still escaped, JSON text (so ``$."é"`` misses ``{"\\u00e9": 1}``, which is what
:func:`json.dumps` writes by default).

No maintained library parses a small language like this into SQL with every
literal and key as a bound parameter and a matching Python evaluator, so the
parser is a hand-written recursive descent over a small tokenizer.

Examples
--------
>>> import json, sqlite3
>>> db = sqlite3.connect(":memory:")
>>> _ = db.execute("CREATE TABLE items (item_id TEXT, text TEXT, meta TEXT)")
>>> rows = [
...     ("a", "first", {"year": 2021, "lang": "en"}),
...     ("b", "second", {"year": "2021", "lang": "de", "draft": True}),
...     ("c", None, {"year": 2019}),
... ]
>>> _ = db.executemany(
...     "INSERT INTO items VALUES (?, ?, ?)",
...     [(i, t, json.dumps(m)) for i, t, m in rows],
... )
>>> f = Filter.parse("year >= 2020 or lang in ('de',) and not draft")
>>> sorted(r[0] for r in db.execute(f"SELECT item_id FROM items WHERE {f.sql}", f.params))
['a']
>>> [i for i, t, m in rows if f.matches(i, t, m)]
['a']
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from repspace.core.errors import FilterError

__all__ = [
    "MAX_LENGTH",
    "MAX_DEPTH",
    "MAX_IN_VALUES",
    "Value",
    "Node",
    "Field",
    "Compare",
    "In",
    "IsNull",
    "Like",
    "Truthy",
    "Not",
    "And",
    "Or",
    "Expr",
    "parse",
    "compile_sql",
    "field_sql",
    "evaluate",
    "Filter",
]

MAX_LENGTH: int = 10_000
"""Most characters a filter may have."""
MAX_DEPTH: int = 64
"""Deepest nesting of ``(`` and ``not``, and most keys in one field."""
MAX_IN_VALUES: int = 1_000
"""Most values in one ``in`` list."""

Value: TypeAlias = bool | int | float | str | None
"""A literal: ``bool``, ``int`` (64-bit), finite ``float``, ``str`` or ``None``."""

_INT_MIN = -(2**63)
_INT_MAX = 2**63 - 1
_KEYWORDS = frozenset({"and", "or", "not", "in", "is", "null", "like", "true", "false"})
_SPECIAL = {"_id": "id", "_text": "text"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_OPS = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ORDER_OPS = frozenset({"<", "<=", ">", ">="})


# --------------------------------------------------------------------------- helpers


def _show(text: str, limit: int | None = None) -> str:
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


def _bad_text(text: str) -> str | None:
    """Why ``text`` cannot be a literal or key, or ``None`` when it can."""
    for ch in text:
        if ch == "\x00":
            return "a NUL character"
        if "\ud800" <= ch <= "\udfff":
            return f"a lone surrogate ({_show(ch)})"
    return None


def _value_problem(value: object) -> str | None:
    """Why ``value`` is not a valid literal, or ``None`` when it is."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            return "integer out of the 64-bit range"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "number is not finite"
    if isinstance(value, str):
        bad = _bad_text(value)
        return f"string contains {bad}" if bad else None
    return f"not a literal: {type(value).__name__}"


def _plain(value: Any) -> Any:
    """``value`` as its plain built-in type (``int`` for an ``IntEnum``, ...)."""
    if value is None or isinstance(value, bool):
        return value
    for kind in (int, float, str):
        if isinstance(value, kind):
            return kind(value)
    return value


def _compare_problem(op: str, value: Value) -> str | None:
    """Why ``<field> op value`` is not allowed, or ``None`` when it is."""
    if value is None:
        if op == "=":
            return "cannot compare with null using '='; use 'is null'"
        if op == "!=":
            return "cannot compare with null using '!='; use 'is not null'"
        return f"cannot compare with null using '{op}'; use 'is null' or 'is not null'"
    if isinstance(value, bool) and op in _ORDER_OPS:
        return f"booleans cannot be compared with '{op}', only with '=' and '!='"
    return None


def _render_key(key: str) -> str:
    if _IDENT.fullmatch(key) and key.lower() not in _KEYWORDS:
        return key
    return "`" + key.replace("`", "``") + "`"


def _render_value(value: Value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(float(value))
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _value_key(value: Value) -> tuple[str, object]:
    """Equality key of a literal that tells ``True``, ``1`` and ``1.0`` apart."""
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


# --------------------------------------------------------------------------- nodes


class Node:
    """Base class of the syntax tree nodes.

    Nodes compare by structure and by the *type* of their literals, so
    ``parse("x = 1") != parse("x = true")`` and ``parse("x = 1") != parse("x = 1.0")``.
    """

    __slots__ = ()

    def _key(self) -> tuple[object, ...]:  # pragma: no cover - overridden
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))


def _check_field(field: object) -> Field:
    if isinstance(field, Field):
        return field
    if isinstance(field, (tuple, list)):
        return Field(tuple(field))
    raise TypeError(f"expected a Field, got {type(field).__name__}")


def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return value


@dataclass(frozen=True, eq=False, slots=True)
class Field(Node):
    """A field: ``("_id",)``, ``("_text",)`` or a path of keys into ``meta``.

    Parameters
    ----------
    path : tuple of str
        One to :data:`MAX_DEPTH` keys. ``_id`` and ``_text`` are only special
        as the whole path.

    Examples
    --------
    >>> str(Field(("nested", "my key", "not")))
    'nested.`my key`.`not`'
    """

    path: tuple[str, ...]

    def __post_init__(self) -> None:
        path = self.path
        if isinstance(path, str) or not isinstance(path, (tuple, list)):
            raise TypeError("Field.path must be a tuple of str")
        path = tuple(path)
        if not path:
            raise FilterError("filter: a field needs at least one key")
        if len(path) > MAX_DEPTH:
            raise FilterError(f"filter: a field has more than {MAX_DEPTH} keys")
        for key in path:
            if not isinstance(key, str):
                raise TypeError("Field.path must be a tuple of str")
            bad = _bad_text(key)
            if bad:
                raise FilterError(f"filter: key {_show(key, 40)!r} contains {bad}")
        if len(path) > 1 and path[0] in _SPECIAL:
            raise FilterError(f"filter: '{path[0]}' has no keys inside it")
        object.__setattr__(self, "path", path)

    @property
    def column(self) -> str | None:
        """``"id"`` for ``_id``, ``"text"`` for ``_text``, ``None`` for meta paths."""
        return _SPECIAL.get(self.path[0]) if len(self.path) == 1 else None

    def _key(self) -> tuple[object, ...]:
        return self.path

    def __str__(self) -> str:
        return ".".join(_render_key(k) for k in self.path)


@dataclass(frozen=True, eq=False, slots=True)
class Compare(Node):
    """``field op value``; ``op`` is one of ``= != < <= > >=`` (``==`` and ``<>`` are accepted).

    Examples
    --------
    >>> str(Compare(Field(("year",)), "==", 2020))
    'year = 2020'
    """

    field: Field
    op: str
    value: Value

    def __post_init__(self) -> None:
        object.__setattr__(self, "field", _check_field(self.field))
        if self.op not in _OPS:
            raise FilterError(f"filter: unknown comparison operator {self.op!r}")
        op = _OPS[self.op]
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "value", _plain(self.value))
        problem = _value_problem(self.value) or _compare_problem(op, self.value)
        if problem:
            raise FilterError(f"filter: {problem}")

    def _key(self) -> tuple[object, ...]:
        return (self.field, self.op, _value_key(self.value))

    def __str__(self) -> str:
        return f"{self.field} {self.op} {_render_value(self.value)}"


@dataclass(frozen=True, eq=False, slots=True)
class In(Node):
    """``field [not] in (v1, v2, ...)`` with 1 to :data:`MAX_IN_VALUES` non-null values.

    Examples
    --------
    >>> str(In(Field(("lang",)), ("en", "de"), negated=True))
    "lang not in ('en', 'de')"
    """

    field: Field
    values: tuple[Value, ...]
    negated: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "field", _check_field(self.field))
        _check_bool("negated", self.negated)
        if isinstance(self.values, (str, bytes)) or not isinstance(self.values, Iterable):
            raise TypeError("In.values must be a tuple of literals")
        values = tuple(_plain(v) for v in self.values)
        if not values:
            raise FilterError("filter: an 'in' list needs at least one value")
        if len(values) > MAX_IN_VALUES:
            raise FilterError(f"filter: more than {MAX_IN_VALUES} values in an 'in' list")
        for value in values:
            problem = _value_problem(value)
            if problem is None and value is None:
                problem = "null cannot be in an 'in' list; use 'is null'"
            if problem:
                raise FilterError(f"filter: {problem}")
        object.__setattr__(self, "values", values)

    def _key(self) -> tuple[object, ...]:
        return (self.field, tuple(_value_key(v) for v in self.values), self.negated)

    def __str__(self) -> str:
        values = ", ".join(_render_value(v) for v in self.values)
        return f"{self.field} {'not in' if self.negated else 'in'} ({values})"


@dataclass(frozen=True, eq=False, slots=True)
class IsNull(Node):
    """``field is [not] null``: true when the field is missing or JSON null (or a NULL column).

    Examples
    --------
    >>> str(IsNull(Field(("a", "b")), negated=True))
    'a.b is not null'
    """

    field: Field
    negated: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "field", _check_field(self.field))
        _check_bool("negated", self.negated)

    def _key(self) -> tuple[object, ...]:
        return (self.field, self.negated)

    def __str__(self) -> str:
        return f"{self.field} is {'not null' if self.negated else 'null'}"


@dataclass(frozen=True, eq=False, slots=True)
class Like(Node):
    """``field [not] like 'pattern'``: case-sensitive, ``%`` any run, ``_`` one character.

    Examples
    --------
    >>> str(Like(Field(("_text",)), "%it's%"))
    "_text like '%it\\\\'s%'"
    """

    field: Field
    pattern: str
    negated: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "field", _check_field(self.field))
        _check_bool("negated", self.negated)
        if not isinstance(self.pattern, str):
            raise TypeError("Like.pattern must be a str")
        object.__setattr__(self, "pattern", str(self.pattern))
        problem = _value_problem(self.pattern)
        if problem:
            raise FilterError(f"filter: {problem}")

    def _key(self) -> tuple[object, ...]:
        return (self.field, self.pattern, self.negated)

    def __str__(self) -> str:
        return f"{self.field} {'not like' if self.negated else 'like'} {_render_value(self.pattern)}"


@dataclass(frozen=True, eq=False, slots=True)
class Truthy(Node):
    """``field`` alone: exists and is not null, false, 0, 0.0, ``""``, ``[]`` or ``{}``.

    Examples
    --------
    >>> str(Truthy(Field(("draft",))))
    'draft'
    """

    field: Field

    def __post_init__(self) -> None:
        object.__setattr__(self, "field", _check_field(self.field))

    def _key(self) -> tuple[object, ...]:
        return (self.field,)

    def __str__(self) -> str:
        return str(self.field)


def _check_expr(value: object) -> None:
    if not isinstance(value, _EXPR_TYPES):
        raise TypeError(f"expected a filter expression node, got {type(value).__name__}")


def _check_items(items: object, name: str) -> tuple[Expr, ...]:
    if not isinstance(items, Iterable):
        raise TypeError(f"{name}.items must be a tuple of expressions")
    items = tuple(items)
    if len(items) < 2:
        raise FilterError(f"filter: '{name.lower()}' needs at least two operands")
    for item in items:
        _check_expr(item)
    return items


def _wrap(expr: Expr, parent: type) -> str:
    """Render a child, in parentheses where needed to keep the tree's shape."""
    if isinstance(expr, (And, Or)) and (parent is Not or isinstance(expr, parent) or isinstance(expr, Or)):
        return f"({expr})"
    return str(expr)


@dataclass(frozen=True, eq=False, slots=True)
class Not(Node):
    """``not expr``.

    Examples
    --------
    >>> str(Not(Truthy(Field(("draft",)))))
    'not draft'
    """

    expr: Expr

    def __post_init__(self) -> None:
        _check_expr(self.expr)

    def _key(self) -> tuple[object, ...]:
        return (self.expr,)

    def __str__(self) -> str:
        return "not " + _wrap(self.expr, Not)


@dataclass(frozen=True, eq=False, slots=True)
class And(Node):
    """``a and b and ...`` with at least two operands.

    Examples
    --------
    >>> a, b, c = (Truthy(Field((k,))) for k in "abc")
    >>> str(And((Or((a, b)), c)))
    '(a or b) and c'
    """

    items: tuple[Expr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _check_items(self.items, "And"))

    def _key(self) -> tuple[object, ...]:
        return self.items

    def __str__(self) -> str:
        return " and ".join(_wrap(item, And) for item in self.items)


@dataclass(frozen=True, eq=False, slots=True)
class Or(Node):
    """``a or b or ...`` with at least two operands.

    Examples
    --------
    >>> a, b, c = (Truthy(Field((k,))) for k in "abc")
    >>> str(Or((And((a, b)), c)))
    'a and b or c'
    """

    items: tuple[Expr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _check_items(self.items, "Or"))

    def _key(self) -> tuple[object, ...]:
        return self.items

    def __str__(self) -> str:
        return " or ".join(_wrap(item, Or) for item in self.items)


Expr: TypeAlias = Compare | In | IsNull | Like | Truthy | Not | And | Or
"""Any filter expression node."""

_EXPR_TYPES = (Compare, In, IsNull, Like, Truthy, Not, And, Or)


# --------------------------------------------------------------------------- tokenizer


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # word qident number string op ( ) , . eof
    text: str  # the source text of the token
    value: Any  # decoded value (str for words/keys/strings, number, op)
    pos: int  # 0-based index into the source


def _error(source: str, pos: int, what: str, note: str = "") -> FilterError:
    """A one-line FilterError for ``what`` at 0-based ``pos`` of ``source``."""
    if len(source) <= 80:
        shown = _show(source)
    else:
        start = max(0, min(pos - 40, len(source) - 80))
        end = start + 80
        shown = ("..." if start else "") + _show(source[start:end]) + ("..." if end < len(source) else "")
    err = FilterError(f'filter: {what} at position {pos + 1}{note}: "{shown}"')
    err.position = pos + 1  # type: ignore[attr-defined]
    return err


def _tokenize(source: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch.isspace():
            i += 1
        elif ch in "(),":
            tokens.append(_Token(ch, ch, ch, i))
            i += 1
        elif ch == "." and tokens and tokens[-1].kind in ("word", "qident"):
            tokens.append(_Token(".", ".", ".", i))
            i += 1
        elif ch in "=<>!":
            two = source[i : i + 2]
            op = two if two in _OPS else ch if ch in _OPS else None
            if op is None:
                raise _error(source, i, "unexpected character '!' (did you mean '!='?)")
            tokens.append(_Token("op", op, _OPS[op], i))
            i += len(op)
        elif ch == "-" or ch == "." or "0" <= ch <= "9":
            tokens.append(_number(source, i))
            i += len(tokens[-1].text)
        elif ch in "'\"":
            i = _string(source, i, tokens)
        elif ch == "`":
            i = _qident(source, i, tokens)
        elif ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z"):
            m = _IDENT.match(source, i)
            assert m is not None
            tokens.append(_Token("word", m.group(), m.group(), i))
            i = m.end()
        else:
            hint = " (write keys with other characters in backquotes)" if ch.isalpha() else ""
            raise _error(source, i, f"unexpected character '{_show(ch)}'{hint}")
    tokens.append(_Token("eof", "", None, n))
    return tokens


def _number(source: str, i: int) -> _Token:
    m = _NUMBER.match(source, i)
    if m is None:
        what = "expected a digit after '-'" if source[i] == "-" else "unexpected '.'"
        raise _error(source, i, what)
    text = m.group()
    if any(c in text for c in ".eE"):
        value: int | float = float(text)
        if not math.isfinite(value):
            raise _error(source, i, f"number {_show(text, 30)} is out of range")
    else:
        digits = text.lstrip("-").lstrip("0")
        # int() of a long digit string is slow or refused, and out of range anyway
        value = int(digits or "0") * (-1 if text.startswith("-") else 1) if len(digits) <= 19 else _INT_MAX + 1
        if not _INT_MIN <= value <= _INT_MAX:
            raise _error(source, i, f"integer {_show(text, 30)} is out of the 64-bit range (write a float, e.g. 1e20)")
    return _Token("number", text, value, i)


def _string(source: str, start: int, tokens: list[_Token]) -> int:
    quote = source[start]
    out: list[str] = []
    j, n = start + 1, len(source)
    while True:
        if j >= n:
            raise _error(source, start, "unterminated string starting")
        ch = source[j]
        if ch == quote:
            break
        if ch == "\\":
            esc = source[j + 1] if j + 1 < n else ""
            if not esc:
                raise _error(source, start, "unterminated string starting")
            if esc not in ("\\", "'", '"'):
                raise _error(source, j, f"unknown escape '\\{_show(esc)}' in a string (only \\\\, \\' and \\\" are allowed)")
            out.append(esc)
            j += 2
            continue
        bad = _bad_text(ch)
        if bad:
            raise _error(source, j, f"a string cannot contain {bad}")
        out.append(ch)
        j += 1
    tokens.append(_Token("string", source[start : j + 1], "".join(out), start))
    return j + 1


def _qident(source: str, start: int, tokens: list[_Token]) -> int:
    out: list[str] = []
    j, n = start + 1, len(source)
    while True:
        if j >= n:
            raise _error(source, start, "unterminated backquoted key starting")
        ch = source[j]
        if ch == "`":
            if source[j + 1 : j + 2] == "`":
                out.append("`")
                j += 2
                continue
            break
        bad = _bad_text(ch)
        if bad:
            raise _error(source, j, f"a key cannot contain {bad}")
        out.append(ch)
        j += 1
    tokens.append(_Token("qident", source[start : j + 1], "".join(out), start))
    return j + 1


# --------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, source: str, tokens: list[_Token]) -> None:
        self.source = source
        self.tokens = tokens
        self.i = 0
        self.depth = 0  # open '(' and 'not'
        self.parens = 0  # open '('

    # token helpers
    def peek(self) -> _Token:
        return self.tokens[self.i]

    def advance(self) -> _Token:
        tok = self.tokens[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def prev(self) -> _Token | None:
        return self.tokens[self.i - 1] if self.i > 0 else None

    @staticmethod
    def is_kw(tok: _Token, word: str) -> bool:
        return tok.kind == "word" and tok.text.lower() == word

    def fail(self, tok: _Token, what: str, after: bool = True) -> FilterError:
        prev = self.prev()
        if after and prev is not None:
            what = f"{what} after '{_show(prev.text, 30)}'"
        return _error(self.source, tok.pos, what)

    def enter(self, tok: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _error(self.source, tok.pos, f"nesting deeper than {MAX_DEPTH} ('(' and 'not')")

    # grammar
    def parse(self) -> Expr:
        expr = self.parse_or()
        tok = self.peek()
        if tok.kind != "eof":
            if tok.kind == ")":
                raise _error(self.source, tok.pos, "unmatched ')'")
            raise _error(self.source, tok.pos, "expected 'and', 'or' or the end of the expression")
        return expr

    def parse_or(self) -> Expr:
        items = [self.parse_and()]
        while self.is_kw(self.peek(), "or"):
            self.advance()
            items.append(self.parse_and())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def parse_and(self) -> Expr:
        items = [self.parse_not()]
        while self.is_kw(self.peek(), "and"):
            self.advance()
            items.append(self.parse_not())
        return items[0] if len(items) == 1 else And(tuple(items))

    def parse_not(self) -> Expr:
        count = 0
        while self.is_kw(self.peek(), "not"):
            self.enter(self.advance())
            count += 1
        expr = self.parse_atom()
        self.depth -= count
        for _ in range(count):
            expr = Not(expr)
        return expr

    def is_field_start(self, tok: _Token) -> bool:
        return tok.kind == "qident" or (tok.kind == "word" and tok.text.lower() not in _KEYWORDS)

    def parse_atom(self) -> Expr:
        tok = self.peek()
        if tok.kind == "(":
            self.advance()
            self.enter(tok)
            self.parens += 1
            expr = self.parse_or()
            close = self.peek()
            if close.kind != ")":
                note = f" (to close the '(' at position {tok.pos + 1})"
                raise _error(self.source, close.pos, "expected 'and', 'or' or ')'", note)
            self.advance()
            self.depth -= 1
            self.parens -= 1
            return expr
        if not self.is_field_start(tok):
            raise self.fail(tok, "expected a field, 'not' or '('")
        field_start = tok.pos
        field = self.parse_field()
        field_text = self.source[field_start : self.prev().pos + len(self.prev().text)]  # type: ignore[union-attr]
        tok = self.peek()
        if tok.kind == "op":
            self.advance()
            value_tok = self.peek()
            value = self.parse_value("expected a value")
            problem = _compare_problem(tok.value, value)
            if problem:
                raise _error(self.source, value_tok.pos, problem)
            return Compare(field, tok.value, value)
        if self.is_kw(tok, "in"):
            self.advance()
            return self.parse_in(field, negated=False)
        if self.is_kw(tok, "like"):
            self.advance()
            return self.parse_like(field, negated=False)
        if self.is_kw(tok, "not"):
            self.advance()
            nxt = self.peek()
            if self.is_kw(nxt, "in"):
                self.advance()
                return self.parse_in(field, negated=True)
            if self.is_kw(nxt, "like"):
                self.advance()
                return self.parse_like(field, negated=True)
            raise self.fail(nxt, "expected 'in' or 'like'")
        if self.is_kw(tok, "is"):
            self.advance()
            negated = self.is_kw(self.peek(), "not")
            if negated:
                self.advance()
            nxt = self.peek()
            if not self.is_kw(nxt, "null"):
                raise self.fail(nxt, "expected 'null'" if negated else "expected 'null' or 'not null'")
            self.advance()
            return IsNull(field, negated)
        if tok.kind in ("eof", ")") or self.is_kw(tok, "and") or self.is_kw(tok, "or"):
            return Truthy(field)
        ends = "'and', 'or' or ')'" if self.parens else "'and' or 'or'"
        what = f"expected a comparison operator, 'in', 'is', 'like', {ends} after '{_show(field_text, 30)}'"
        raise _error(self.source, tok.pos, what)

    def parse_field(self) -> Field:
        keys: list[str] = []
        start = self.peek()
        while True:
            tok = self.advance()  # a word or a qident, checked by the caller or below
            keys.append(tok.value)
            if len(keys) > MAX_DEPTH:
                raise _error(self.source, tok.pos, f"a field has more than {MAX_DEPTH} keys")
            if self.peek().kind != ".":
                break
            self.advance()
            nxt = self.peek()
            if nxt.kind not in ("word", "qident"):
                raise self.fail(nxt, "expected a key")
            if keys[0] in _SPECIAL:
                raise _error(self.source, start.pos, f"'{keys[0]}' has no keys inside it")
        return Field(tuple(keys))

    def parse_value(self, what: str) -> Value:
        tok = self.peek()
        if tok.kind in ("number", "string"):
            self.advance()
            return tok.value  # type: ignore[no-any-return]
        if tok.kind == "word":
            word = tok.text.lower()
            if word in ("true", "false", "null"):
                self.advance()
                return {"true": True, "false": False, "null": None}[word]
        raise self.fail(tok, what)

    def parse_in(self, field: Field, negated: bool) -> In:
        tok = self.peek()
        if tok.kind != "(":
            raise self.fail(tok, "expected '('")
        self.advance()
        values: list[Value] = []
        while True:
            tok = self.peek()
            if values and tok.kind == ")":  # trailing comma
                break
            value = self.parse_value("expected a value")
            if value is None:
                raise _error(self.source, tok.pos, "null cannot be in an 'in' list; use 'is null'")
            if len(values) >= MAX_IN_VALUES:
                raise _error(self.source, tok.pos, f"more than {MAX_IN_VALUES} values in an 'in' list")
            values.append(value)
            tok = self.peek()
            if tok.kind == ",":
                self.advance()
                continue
            if tok.kind == ")":
                break
            raise self.fail(tok, "expected ',' or ')'")
        self.advance()
        return In(field, tuple(values), negated)

    def parse_like(self, field: Field, negated: bool) -> Like:
        tok = self.peek()
        if tok.kind != "string":
            raise self.fail(tok, "expected a string pattern")
        self.advance()
        return Like(field, tok.value, negated)


def parse(text: str) -> Expr:
    """Parse a filter expression into its syntax tree.

    Parameters
    ----------
    text : str
        The filter, e.g. ``"year >= 2020 and not draft"`` (see the module
        documentation for the grammar).

    Returns
    -------
    Expr
        The syntax tree; ``parse(str(e)) == e`` for every tree ``e`` it returns.

    Raises
    ------
    FilterError
        One line saying what was expected and at which position (from 1); also
        for empty text, more than :data:`MAX_LENGTH` characters, nesting deeper
        than :data:`MAX_DEPTH` and more than :data:`MAX_IN_VALUES` values in an
        ``in`` list. Nothing else is raised for a ``str``.
    TypeError
        If ``text`` is not a ``str``.

    Examples
    --------
    >>> parse("not a and b or c")
    Or(items=(And(items=(Not(expr=Truthy(field=Field(path=('a',)))), Truthy(field=Field(path=('b',))))), Truthy(field=Field(path=('c',)))))
    >>> str(parse("YEAR >= 2020 AND lang IN ('en', \\"de\\")"))
    "YEAR >= 2020 and lang in ('en', 'de')"
    >>> parse("year >= and")
    Traceback (most recent call last):
    ...
    repspace.core.errors.FilterError: filter: expected a value after '>=' at position 9: "year >= and"
    """
    if not isinstance(text, str):
        raise TypeError(f"a filter must be a str, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise FilterError(f"filter: the expression has {len(text)} characters, more than {MAX_LENGTH}")
    tokens = _tokenize(text)
    if tokens[0].kind == "eof":
        raise _error(text, 0, "the expression is empty: expected a field, 'not' or '('")
    return _Parser(text, tokens).parse()


# --------------------------------------------------------------------------- SQL

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
    >>> sql, params = compile_sql(parse("year >= 2020"))
    >>> sql
    "COALESCE((json_type(meta, ?) IN ('integer', 'real') AND json_extract(meta, ?) >= ?), 0)"
    >>> params
    ['$."year"', '$."year"', 2020]
    >>> compile_sql(parse("_id = 'x'"))
    ("COALESCE((typeof(item_id) = 'text' AND (item_id COLLATE BINARY) = ?), 0)", ['x'])
    """
    _check_expr(expr)
    return _Compiler(meta_col, id_col, text_col).compile(expr)


def field_sql(
    field: Field, *, meta_col: str = "meta", id_col: str = "item_id", text_col: str = "text"
) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """The SQL of a field's JSON type and value, as :func:`compile_sql` reads them.

    Returns ``((type_sql, params), (value_sql, params))``: scalar expressions that
    are NULL when the field is absent. Reading a field's column once with them
    and evaluating filters on the column in bulk
    (:mod:`repspace.core.filter_columns`) gives what the compiled SQL gives.

    Examples
    --------
    >>> field_sql(parse("year > 1").field)
    (('json_type(meta, ?)', ['$."year"']), ('json_extract(meta, ?)', ['$."year"']))
    >>> field_sql(parse("_text is null").field)[0]
    ('typeof(text)', [])
    """
    _check_field(field)
    return _Compiler(meta_col, id_col, text_col).typed(field)


# --------------------------------------------------------------------------- evaluation

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
        if _INT_MIN <= number <= _INT_MAX:
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


def _like_match(pattern: str, text: str) -> bool:
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
        return (kind == "text" and _like_match(expr.pattern, value)) != expr.negated
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
        _check_expr(expr)
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
