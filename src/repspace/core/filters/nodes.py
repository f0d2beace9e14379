"""The filter syntax tree: frozen, validated node classes that print back as filter text.

A tree comes from :func:`repspace.core.filters.parse` or is built from these
classes; each constructor checks its literals and keys (:mod:`.validate`), so
every tree the later stages (SQL, columns, Python) see is a valid one, and
``str(node)`` is filter text that parses back to an equal tree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from repspace.core.errors import FilterError
from repspace.core.filters.validate import (
    IDENT,
    KEYWORDS,
    MAX_DEPTH,
    MAX_IN_VALUES,
    OPS,
    SPECIAL,
    Value,
    bad_text,
    compare_problem,
    plain,
    show,
    value_problem,
)

__all__ = ["Node", "Field", "Compare", "In", "IsNull", "Like", "Truthy", "Not", "And", "Or", "Expr"]


def render_key(key: str) -> str:
    if IDENT.fullmatch(key) and key.lower() not in KEYWORDS:
        return key
    return "`" + key.replace("`", "``") + "`"


def render_value(value: Value) -> str:
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


def check_field(field: object) -> Field:
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
            bad = bad_text(key)
            if bad:
                raise FilterError(f"filter: key {show(key, 40)!r} contains {bad}")
        if len(path) > 1 and path[0] in SPECIAL:
            raise FilterError(f"filter: '{path[0]}' has no keys inside it")
        object.__setattr__(self, "path", path)

    @property
    def column(self) -> str | None:
        """``"id"`` for ``_id``, ``"text"`` for ``_text``, ``None`` for meta paths."""
        return SPECIAL.get(self.path[0]) if len(self.path) == 1 else None

    def _key(self) -> tuple[object, ...]:
        return self.path

    def __str__(self) -> str:
        return ".".join(render_key(k) for k in self.path)


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
        object.__setattr__(self, "field", check_field(self.field))
        if self.op not in OPS:
            raise FilterError(f"filter: unknown comparison operator {self.op!r}")
        op = OPS[self.op]
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "value", plain(self.value))
        problem = value_problem(self.value) or compare_problem(op, self.value)
        if problem:
            raise FilterError(f"filter: {problem}")

    def _key(self) -> tuple[object, ...]:
        return (self.field, self.op, _value_key(self.value))

    def __str__(self) -> str:
        return f"{self.field} {self.op} {render_value(self.value)}"


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
        object.__setattr__(self, "field", check_field(self.field))
        _check_bool("negated", self.negated)
        if isinstance(self.values, (str, bytes)) or not isinstance(self.values, Iterable):
            raise TypeError("In.values must be a tuple of literals")
        values = tuple(plain(v) for v in self.values)
        if not values:
            raise FilterError("filter: an 'in' list needs at least one value")
        if len(values) > MAX_IN_VALUES:
            raise FilterError(f"filter: more than {MAX_IN_VALUES} values in an 'in' list")
        for value in values:
            problem = value_problem(value)
            if problem is None and value is None:
                problem = "null cannot be in an 'in' list; use 'is null'"
            if problem:
                raise FilterError(f"filter: {problem}")
        object.__setattr__(self, "values", values)

    def _key(self) -> tuple[object, ...]:
        return (self.field, tuple(_value_key(v) for v in self.values), self.negated)

    def __str__(self) -> str:
        values = ", ".join(render_value(v) for v in self.values)
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
        object.__setattr__(self, "field", check_field(self.field))
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
        object.__setattr__(self, "field", check_field(self.field))
        _check_bool("negated", self.negated)
        if not isinstance(self.pattern, str):
            raise TypeError("Like.pattern must be a str")
        object.__setattr__(self, "pattern", str(self.pattern))
        problem = value_problem(self.pattern)
        if problem:
            raise FilterError(f"filter: {problem}")

    def _key(self) -> tuple[object, ...]:
        return (self.field, self.pattern, self.negated)

    def __str__(self) -> str:
        return f"{self.field} {'not like' if self.negated else 'like'} {render_value(self.pattern)}"


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
        object.__setattr__(self, "field", check_field(self.field))

    def _key(self) -> tuple[object, ...]:
        return (self.field,)

    def __str__(self) -> str:
        return str(self.field)


def check_expr(value: object) -> None:
    if not isinstance(value, EXPR_TYPES):
        raise TypeError(f"expected a filter expression node, got {type(value).__name__}")


def _check_items(items: object, name: str) -> tuple[Expr, ...]:
    if not isinstance(items, Iterable):
        raise TypeError(f"{name}.items must be a tuple of expressions")
    items = tuple(items)
    if len(items) < 2:
        raise FilterError(f"filter: '{name.lower()}' needs at least two operands")
    for item in items:
        check_expr(item)
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
        check_expr(self.expr)

    def _key(self) -> tuple[object, ...]:
        return (self.expr,)

    def __str__(self) -> str:
        return "not " + _wrap(self.expr, Not)


@dataclass(frozen=True, eq=False, slots=True)
class _Chain(Node):
    """Two or more operands joined by one word: the base of :class:`And` and :class:`Or`."""

    items: tuple[Expr, ...]
    word: ClassVar[str] = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _check_items(self.items, type(self).__name__))

    def _key(self) -> tuple[object, ...]:
        return self.items

    def __str__(self) -> str:
        return f" {self.word} ".join(_wrap(item, type(self)) for item in self.items)


@dataclass(frozen=True, eq=False, slots=True)
class And(_Chain):
    """``a and b and ...`` with at least two operands.

    Examples
    --------
    >>> a, b, c = (Truthy(Field((k,))) for k in "abc")
    >>> str(And((Or((a, b)), c)))
    '(a or b) and c'
    """

    word: ClassVar[str] = "and"


@dataclass(frozen=True, eq=False, slots=True)
class Or(_Chain):
    """``a or b or ...`` with at least two operands.

    Examples
    --------
    ``and`` binds tighter, so an :class:`And` operand needs no parentheses:

    >>> expr = Or((And((Truthy(Field(("a",))), Truthy(Field(("b",))))), Truthy(Field(("c",)))))
    >>> str(expr), len(expr.items)
    ('a and b or c', 2)
    """

    word: ClassVar[str] = "or"


Expr: TypeAlias = Compare | In | IsNull | Like | Truthy | Not | And | Or
"""Any filter expression node."""

EXPR_TYPES = (Compare, In, IsNull, Like, Truthy, Not, And, Or)
