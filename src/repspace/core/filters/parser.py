"""Filter text to syntax tree: a small tokenizer and a recursive-descent parser.

Every syntax error and every limit (:mod:`.validate`) is one
:class:`~repspace.core.errors.FilterError` line naming what was expected and
the character position; :func:`parse` raises nothing else for any ``str``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from repspace.core.errors import FilterError
from repspace.core.filters.nodes import And, Compare, Expr, Field, In, IsNull, Like, Not, Or, Truthy
from repspace.core.filters.validate import (
    IDENT,
    INT_MAX,
    INT_MIN,
    KEYWORDS,
    MAX_DEPTH,
    MAX_IN_VALUES,
    MAX_LENGTH,
    OPS,
    SPECIAL,
    Value,
    bad_text,
    compare_problem,
    show,
)

__all__ = ["parse"]

NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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
        shown = show(source)
    else:
        start = max(0, min(pos - 40, len(source) - 80))
        end = start + 80
        shown = ("..." if start else "") + show(source[start:end]) + ("..." if end < len(source) else "")
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
            op = two if two in OPS else ch if ch in OPS else None
            if op is None:
                raise _error(source, i, "unexpected character '!' (did you mean '!='?)")
            tokens.append(_Token("op", op, OPS[op], i))
            i += len(op)
        elif ch == "-" or ch == "." or "0" <= ch <= "9":
            tokens.append(_number(source, i))
            i += len(tokens[-1].text)
        elif ch in "'\"`":
            i = _quoted(source, i, tokens)
        elif ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z"):
            m = IDENT.match(source, i)
            assert m is not None
            tokens.append(_Token("word", m.group(), m.group(), i))
            i = m.end()
        else:
            hint = " (write keys with other characters in backquotes)" if ch.isalpha() else ""
            raise _error(source, i, f"unexpected character '{show(ch)}'{hint}")
    tokens.append(_Token("eof", "", None, n))
    return tokens


def _number(source: str, i: int) -> _Token:
    m = NUMBER.match(source, i)
    if m is None:
        what = "expected a digit after '-'" if source[i] == "-" else "unexpected '.'"
        raise _error(source, i, what)
    text = m.group()
    if any(c in text for c in ".eE"):
        value: int | float = float(text)
        if not math.isfinite(value):
            raise _error(source, i, f"number {show(text, 30)} is out of range")
    else:
        digits = text.lstrip("-").lstrip("0")
        # int() of a long digit string is slow or refused, and out of range anyway
        value = int(digits or "0") * (-1 if text.startswith("-") else 1) if len(digits) <= 19 else INT_MAX + 1
        if not INT_MIN <= value <= INT_MAX:
            raise _error(source, i, f"integer {show(text, 30)} is out of the 64-bit range (write a float, e.g. 1e20)")
    return _Token("number", text, value, i)


def _quoted(source: str, start: int, tokens: list[_Token]) -> int:
    """Read the quoted token opening at ``start``; the index after it.

    A string (``'...'`` or ``"..."``, backslash escapes) or a backquoted key
    (a backquote written twice inside it).
    """
    quote = source[start]
    kind, noun, whole = ("qident", "key", "backquoted key") if quote == "`" else ("string", "string", "string")
    out: list[str] = []
    j, n = start + 1, len(source)
    while True:
        if j >= n:
            raise _error(source, start, f"unterminated {whole} starting")
        ch = source[j]
        if ch == quote:
            if kind == "qident" and source[j + 1 : j + 2] == "`":
                out.append("`")
                j += 2
                continue
            break
        if ch == "\\" and kind == "string":
            esc = source[j + 1] if j + 1 < n else ""
            if not esc:
                raise _error(source, start, "unterminated string starting")
            if esc not in ("\\", "'", '"'):
                raise _error(source, j, f"unknown escape '\\{show(esc)}' in a string (only \\\\, \\' and \\\" are allowed)")
            out.append(esc)
            j += 2
            continue
        bad = bad_text(ch)
        if bad:
            raise _error(source, j, f"a {noun} cannot contain {bad}")
        out.append(ch)
        j += 1
    tokens.append(_Token(kind, source[start : j + 1], "".join(out), start))
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
            what = f"{what} after '{show(prev.text, 30)}'"
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
        return self.parse_chain("or", self.parse_and, Or)

    def parse_and(self) -> Expr:
        return self.parse_chain("and", self.parse_not, And)

    def parse_chain(self, word: str, operand: Callable[[], Expr], node: type[And] | type[Or]) -> Expr:
        """``operand (word operand)*``: one operand as is, several under one ``node``."""
        items = [operand()]
        while self.is_kw(self.peek(), word):
            self.advance()
            items.append(operand())
        return items[0] if len(items) == 1 else node(tuple(items))

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
        return tok.kind == "qident" or (tok.kind == "word" and tok.text.lower() not in KEYWORDS)

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
            problem = compare_problem(tok.value, value)
            if problem:
                raise _error(self.source, value_tok.pos, problem)
            return Compare(field, tok.value, value)
        negated = self.is_kw(tok, "not")  # field not in (...), field not like '...'
        if negated:
            self.advance()
            tok = self.peek()
        for word, parse in (("in", self.parse_in), ("like", self.parse_like)):
            if self.is_kw(tok, word):
                self.advance()
                return parse(field, negated=negated)
        if negated:
            raise self.fail(tok, "expected 'in' or 'like'")
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
        what = f"expected a comparison operator, 'in', 'is', 'like', {ends} after '{show(field_text, 30)}'"
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
            if keys[0] in SPECIAL:
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
