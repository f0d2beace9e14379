"""Shared cases of the filter tests: hostile rows in a real SQLite table, random expression trees.

Used by tests/core/test_filters.py (SQL against the Python evaluator) and
tests/core/test_filter_columns.py (columns against the SQL).
"""

from __future__ import annotations

import functools
import json
import random
import re
import sqlite3
from typing import Any

from hypothesis import strategies as st

from repspace.core.filters import (
    And,
    Compare,
    Field,
    In,
    IsNull,
    Like,
    Not,
    Or,
    Truthy,
    compile_sql,
    evaluate,
)

Row = tuple[str, "str | None", dict[str, Any]]

# --------------------------------------------------------------------------- data

TOP_KEYS = [
    "year", "lang", "draft", "score", "tags", "title", "n", "nested",
    "weird key", 'quo"te', "dot.key", "ünï", "emoji😀", "back\\slash",
    "tick`key", "", "and", "s'q", "_id", "_text",
]  # fmt: skip
NESTED_KEYS = ["a", "b", 'quo"te', "ünï", "deep", "dot.key"]
SCALARS: list[Any] = [
    None, True, False, 0, 1, -1, 2, 3, 2019, 2020, 2021, 2**53 + 1, 2**63 - 1, -(2**63), 2**64, 2**64 + 1,
    0.0, -0.0, 0.5, -1.5, 2.25, 2020.0, 1e3, 1e20, -7.75,
    "", "en", "de", "EN", "2021", "0", "a%b", "a_b", "x*y?[z]", "null", "true", "ünï",
    "😀", "it's", 'say "hi"', "back\\slash", "new\nline", "[]", "Zebra", "apple", "éa", "b",
]  # fmt: skip
CONTAINERS: list[Any] = [[], [1, 2], ["en"], {}, {"a": 1}, [None], {"": 0}]
STRINGS = [s for s in SCALARS if isinstance(s, str)]
NUMBERS = [x for x in SCALARS if isinstance(x, (int, float)) and not isinstance(x, bool) and abs(x) < 2**63]


def _value(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if r < 0.75:
        return rng.choice(SCALARS)
    if r < 0.9 or depth > 1:
        return rng.choice(CONTAINERS)
    return {k: _value(rng, depth + 1) for k in rng.sample(NESTED_KEYS, rng.randint(0, 4))}


def _make_rows() -> list[Row]:
    rng = random.Random(20240601)
    rows: list[Row] = []
    odd_ids = ["it's", "2021", "", "ünï", 'a"b', "0", "x' OR '1'='1"]
    for i in range(320):
        item_id = odd_ids[i] if i < len(odd_ids) else f"id{i:04d}"
        text = rng.choice([None, "", "a cat", "A CAT", "2021", "dog%", "ünï text", "x*y?[z]"])
        meta: dict[str, Any] = {}
        for key in TOP_KEYS:
            if rng.random() < 0.45:
                meta[key] = _value(rng)
        if rng.random() < 0.5:
            nested = {k: _value(rng) for k in rng.sample(NESTED_KEYS, rng.randint(0, 5))}
            if rng.random() < 0.6:
                nested["deep"] = {"c": rng.choice(SCALARS), "ünï": rng.choice(SCALARS)}
            meta["nested"] = nested
        rows.append((item_id, text, meta))
    return rows


def _dump(i: int, meta: dict[str, Any]) -> str:
    # Three spellings of the same JSON: ASCII-escaped (json's default), raw
    # UTF-8, and indented; the SQL must not care.
    if i % 3 == 0:
        return json.dumps(meta)
    if i % 3 == 1:
        return json.dumps(meta, ensure_ascii=False)
    return json.dumps(meta, ensure_ascii=False, indent=1)


def _new_db(rows: list[Row]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("CREATE TABLE items (item_id TEXT PRIMARY KEY, text TEXT, meta TEXT)")
    conn.executemany(
        "INSERT INTO items VALUES (?, ?, ?)", [(i, t, _dump(n, m)) for n, (i, t, m) in enumerate(rows)]
    )
    conn.commit()
    return conn


@functools.cache
def _db() -> tuple[sqlite3.Connection, list[Row]]:
    rows = _make_rows()
    return _new_db(rows), rows


# --------------------------------------------------------------------------- helpers

_SQL_TOKEN = re.compile(
    r"\s+|\?|''|'(?:integer|real|text|null|true|object|array|\[\]|\{\})'"
    r"|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|<>|<=|>=|[=<>(),.]"
)
_SQL_WORDS = {
    "COALESCE", "json_type", "json_extract", "json_each", "typeof", "IN", "AND", "OR", "NOT",
    "CASE", "WHEN", "THEN", "ELSE", "END", "GLOB", "SELECT", "FROM", "WHERE", "AS",
    "COLLATE", "BINARY", "type", "value", "key",
}  # fmt: skip


def assert_sql_safe(sql: str, params: list[Any], columns: tuple[str, ...] = ("meta", "item_id", "text")) -> None:
    """The SQL consists only of fixed vocabulary, the column names and ``?``."""
    allowed = _SQL_WORDS | {part for col in columns for part in col.split(".")}
    pos = 0
    while pos < len(sql):
        m = _SQL_TOKEN.match(sql, pos)
        assert m is not None, f"unexpected SQL text {sql[pos:pos + 30]!r}"
        tok = m.group()
        if tok[0].isalpha() or tok[0] == "_":
            assert tok in allowed or re.fullmatch(r"_rsf[0-9]+", tok), tok
        elif tok[0].isdigit():
            assert tok in ("0", "1"), tok
        pos = m.end()
    assert sql.count("?") == len(params)


def sql_selected(conn: sqlite3.Connection, expr: Any) -> set[str]:
    sql, params = compile_sql(expr)
    assert_sql_safe(sql, params)
    result = conn.execute(f"SELECT item_id, {sql} FROM items", params).fetchall()
    assert {v for _, v in result} <= {0, 1}, "every row must be exactly 0 or 1"
    return {i for i, v in result if v == 1}


def check_agrees(expr: Any) -> set[str]:
    conn, rows = _db()
    got = sql_selected(conn, expr)
    want = {i for i, t, m in rows if evaluate(expr, i, t, m)}
    assert got == want, (str(expr), sorted(got ^ want)[:5])
    # the WHERE form selects the same rows
    sql, params = compile_sql(expr)
    assert {r[0] for r in conn.execute(f"SELECT item_id FROM items WHERE {sql}", params)} == want
    return want


# --------------------------------------------------------------------------- hypothesis: random trees

FIELDS: list[tuple[str, ...]] = (
    [(k,) for k in TOP_KEYS]
    + [("nested", k) for k in NESTED_KEYS]
    + [("nested", "deep", "c"), ("nested", "deep", "ünï"), ("nested", "deep", "missing")]
    + [("missing",), ("nested", "missing"), ("tags", "0"), ("lang", "x"), ("`",), ("dot", "key")]
)
_text_chars = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")
num_literals = st.one_of(
    st.sampled_from(NUMBERS),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)
str_literals = st.one_of(st.sampled_from(STRINGS), st.text(_text_chars, max_size=6))
eq_literals = st.one_of(num_literals, str_literals, st.booleans())
ord_literals = st.one_of(num_literals, str_literals)
patterns = st.one_of(
    st.sampled_from(["%", "", "e%", "%n", "_n", "a%b", "a_b", "%*%", "%?%", "%[%", "x*y?[z]", "%\\%", "2_2%", "%ï"]),
    st.text(st.sampled_from("ab%_*?[]\\éE"), max_size=6),
)
fields = st.sampled_from(FIELDS).map(Field)
atoms = st.one_of(
    st.builds(Compare, fields, st.sampled_from(["=", "==", "!=", "<>"]), eq_literals),
    st.builds(Compare, fields, st.sampled_from(["<", "<=", ">", ">="]), ord_literals),
    st.builds(In, fields, st.lists(eq_literals, min_size=1, max_size=4).map(tuple), st.booleans()),
    st.builds(IsNull, fields, st.booleans()),
    st.builds(Like, fields, patterns, st.booleans()),
    st.builds(Truthy, fields),
)
exprs = st.recursive(
    atoms,
    lambda children: st.one_of(
        children.map(Not),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: And(tuple(xs))),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: Or(tuple(xs))),
    ),
    max_leaves=10,
)
