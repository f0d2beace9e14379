"""Tests of repspace.core.filters: parser, SQL compiler and the Python evaluator.

The key property: for random expression trees, the rows a real SQLite database
selects with ``compile_sql`` are exactly those for which ``evaluate`` is true;
``evaluate`` itself is pinned down by hand-written expectations.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

import pytest
from _filter_cases import (
    Row,
    _db,
    _new_db,
    assert_sql_safe,
    check_agrees,
    exprs,
    patterns,
    sql_selected,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repspace.core.errors import FilterError, InputError
from repspace.core.filters import (
    MAX_DEPTH,
    MAX_IN_VALUES,
    MAX_LENGTH,
    And,
    Compare,
    Field,
    Filter,
    In,
    IsNull,
    Like,
    Not,
    Or,
    Truthy,
    compile_sql,
    evaluate,
    parse,
)


def walk(expr: Any) -> list[Any]:
    out = [expr]
    for child in getattr(expr, "items", ()) + ((expr.expr,) if isinstance(expr, Not) else ()):
        out += walk(child)
    return out


def f(*path: str) -> Field:
    return Field(path)


# --------------------------------------------------------------------------- parsing


def test_precedence_not_and_or() -> None:
    a, b, c = Truthy(f("a")), Truthy(f("b")), Truthy(f("c"))
    assert parse("not a and b or c") == Or((And((Not(a), b)), c))
    assert parse("a or b and c") == Or((a, And((b, c))))
    assert parse("not (a or b)") == Not(Or((a, b)))
    assert parse("(a or b) and c") == And((Or((a, b)), c))
    assert parse("a and b and c") == And((a, b, c))
    assert parse("(a and b) and c") == And((And((a, b)), c))
    assert parse("not not a") == Not(Not(a))
    assert parse("((a))") == a


def test_atoms() -> None:
    assert parse("year >= 2020") == Compare(f("year"), ">=", 2020)
    assert parse("year==2020") == Compare(f("year"), "=", 2020)
    assert parse("x <> 'a'") == Compare(f("x"), "!=", "a")
    assert parse("x=-5") == Compare(f("x"), "=", -5)
    assert parse("x < -1.5e3") == Compare(f("x"), "<", -1500.0)
    assert parse("x > .5") == Compare(f("x"), ">", 0.5)
    assert parse("x = 1e3").value == 1000.0 and isinstance(parse("x = 1e3").value, float)
    assert parse("x = TRUE") == Compare(f("x"), "=", True)
    assert parse("x != false") == Compare(f("x"), "!=", False)
    assert parse("lang IN ('en', \"de\",)") == In(f("lang"), ("en", "de"))
    assert parse("lang Not In (1, 2.5, true)") == In(f("lang"), (1, 2.5, True), negated=True)
    assert parse("a.b IS NULL") == IsNull(f("a", "b"))
    assert parse("a is not null") == IsNull(f("a"), negated=True)
    assert parse("t like 'a%'") == Like(f("t"), "a%")
    assert parse("t NOT LIKE '_b'") == Like(f("t"), "_b", negated=True)
    assert parse("`weird key`.`a.b`.c") == Truthy(f("weird key", "a.b", "c"))
    assert parse("`tick``key` = 1") == Compare(f("tick`key"), "=", 1)
    assert parse("`and` = 1") == Compare(f("and"), "=", 1)
    assert parse("a.not") == Truthy(f("a", "not"))
    assert parse("``") == Truthy(f(""))
    assert parse(r"x = 'it\'s \\ \"q\"'") == Compare(f("x"), "=", "it's \\ \"q\"")
    assert parse('x = "say \\"hi\\""') == Compare(f("x"), "=", 'say "hi"')
    assert parse("_id = 'a'").field.column == "id"
    assert parse("_text").field.column == "text"
    assert parse("year").field.column is None


def test_literal_types_are_part_of_equality() -> None:
    assert parse("x = 1") != parse("x = true")
    assert parse("x = 1") != parse("x = 1.0")
    assert parse("x = 0.0") != parse("x = -0.0")
    assert parse("x in (1)") != parse("x in (true)")
    assert hash(parse("x = 1")) == hash(parse("x  =  1"))
    assert len({parse("x = 1"), parse("x = 1"), parse("x = true")}) == 2


@pytest.mark.parametrize(
    "text",
    [
        "year >= 2020 and lang in ('en', 'de') and not draft",
        "not a and b or c",
        "not (a and b) or not (c or d)",
        "(a and b) and c or (d or e)",
        "a and (b and (c or d)) or not not e",
        "((a or b) and (c or d)) or e",
        "x = 'it\\'s' and y != \"a\\\\b\"",
        "`weird key`.`a``b` like '%_x'",
        "a.b.c is not null or _id in ('x', 'y') and _text not like '%'",
        "x = -0.0 or x = 1e20 or x = -9223372036854775808 or x < 1e-05",
        "`true` = true and `null` is null and `not` not in (1, 'a', false)",
    ],
)
def test_round_trip(text: str) -> None:
    expr = parse(text)
    assert parse(str(expr)) == expr
    assert str(parse(str(expr))) == str(expr)


def test_node_validation() -> None:
    with pytest.raises(FilterError, match="is null"):
        Compare(f("x"), "=", None)
    with pytest.raises(FilterError, match="booleans"):
        Compare(f("x"), "<", True)
    with pytest.raises(FilterError):
        Compare(f("x"), "~", 1)
    with pytest.raises(FilterError):
        Compare(f("x"), "=", float("nan"))
    with pytest.raises(FilterError):
        Compare(f("x"), "=", 2**64)
    with pytest.raises(FilterError):
        In(f("x"), ())
    with pytest.raises(FilterError):
        In(f("x"), (1, None))
    with pytest.raises(FilterError):
        And((Truthy(f("a")),))
    with pytest.raises(FilterError):
        Field(())
    with pytest.raises(FilterError):
        Field(("_id", "x"))
    with pytest.raises(FilterError):
        Field(("a\x00b",))
    with pytest.raises(TypeError):
        Not("a")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compile_sql("a")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse(b"a")  # type: ignore[arg-type]
    assert issubclass(FilterError, InputError)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "needle", "position"),
    [
        ("year >= and", "expected a value after '>='", 9),
        ("a and", "expected a field", 6),
        ("(a", "expected 'and', 'or' or ')'", 3),
        ("x in 1", "expected '('", 6),
        ("x = null", "is null", 5),
        ("x != null", "is not null", 6),
        ("x is 5", "expected 'null'", 6),
        ("x = 'abc", "unterminated string", 5),
        ("x = 1 ;", "unexpected character ';'", 7),
        ("x like 5", "expected a string", 8),
        ("x = '\\n'", "unknown escape", 6),
        ("a b", "expected a comparison operator", 3),
        ("a\n=\n", "expected a value after '='", 5),
        ("a)", "unmatched ')'", 2),
        ("x in (1 2)", "expected ',' or ')'", 9),
        ("x in (1, null)", "null cannot be in an 'in' list", 10),
        ("x < true", "booleans cannot be compared", 5),
        ("_id.x = 1", "'_id' has no keys", 1),
        ("é = 1", "backquotes", 1),
        ("x = 99999999999999999999", "64-bit", 5),
        ("x = 1e400", "out of range", 5),
        ("`abc", "unterminated backquoted key", 1),
        ("", "empty", 1),
        ("  \t ", "empty", 1),
        ("a.", "expected a key after '.'", 3),
        ("x ! 1", "'!='", 3),
        ("x = '\x00'", "NUL", 6),
        ("x\u2028= 1 and", "expected a field", 10),
    ],
)
def test_error_messages(text: str, needle: str, position: int) -> None:
    with pytest.raises(FilterError) as info:
        parse(text)
    msg = str(info.value)
    assert needle in msg
    assert f"at position {position}" in msg
    assert msg.startswith("filter: ")
    assert len(msg.splitlines()) == 1 and "\n" not in msg
    assert info.value.position == position  # type: ignore[attr-defined]


def test_error_message_exact_and_truncated() -> None:
    with pytest.raises(FilterError) as info:
        parse("year >= and")
    assert str(info.value) == "filter: expected a value after '>=' at position 9: \"year >= and\""
    long = "a and " * 500 + "b = "
    with pytest.raises(FilterError) as info:
        parse(long)
    msg = str(info.value)
    assert f"at position {len(long) + 1}" in msg and len(msg) < 250


# --------------------------------------------------------------------------- limits


def test_limits() -> None:
    parse("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH)
    parse("not " * MAX_DEPTH + "a")
    parse("not (" * (MAX_DEPTH // 2) + "a" + ")" * (MAX_DEPTH // 2))
    for text in (
        "(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1),
        "not " * (MAX_DEPTH + 1) + "a",
        "not (" * (MAX_DEPTH // 2 + 1) + "a" + ")" * (MAX_DEPTH // 2 + 1),
        "(" * MAX_LENGTH,
        "not " * (MAX_LENGTH // 4),
        "a." * MAX_DEPTH + "a",
    ):
        with pytest.raises(FilterError, match="deeper|more than"):
            parse(text)
    parse("a" + ".a" * (MAX_DEPTH - 1))
    ok = "x in (" + ",".join(["1"] * MAX_IN_VALUES) + ")"
    assert len(parse(ok).values) == MAX_IN_VALUES
    with pytest.raises(FilterError, match=f"more than {MAX_IN_VALUES}"):
        parse("x in (" + ",".join(["1"] * (MAX_IN_VALUES + 1)) + ")")
    text = "a" + " " * (MAX_LENGTH - 1)
    parse(text)
    with pytest.raises(FilterError, match="more than"):
        parse(text + " ")
    with pytest.raises(FilterError):
        parse("x = " + "1" * 5000)  # would trip int()'s digit limit if converted
    assert parse("x = " + "0" * 5000 + "7") == Compare(f("x"), "=", 7)


def test_extreme_filters_run_in_sqlite() -> None:
    conn, _ = _db()
    # many terms: SQLite's expression depth limit (1000) must not be hit
    wide = " or ".join(["x"] * 2000)
    assert len(wide) <= MAX_LENGTH
    assert sql_selected(conn, parse(wide)) == set()
    wide = " and ".join(f"x!={i}" for i in range(800))
    assert len(wide) <= MAX_LENGTH
    check_agrees(parse(wide))
    deep = "not (" * (MAX_DEPTH // 2) + "year = 2021 or a" + ")" * (MAX_DEPTH // 2)
    check_agrees(parse(deep))
    # 64 keys, routed through json_each (64 joined tables)
    keys = ".".join(["`é`"] * MAX_DEPTH)
    assert sql_selected(conn, parse(f"{keys} is null")) == {r[0] for r in _db()[1]}
    big_in = parse("score in (" + ", ".join(str(i) for i in range(MAX_IN_VALUES)) + ")")
    check_agrees(big_in)


# --------------------------------------------------------------------------- semantics (hand-checked)

SMALL: list[Row] = [
    ("a", "A cat", {"year": 2021, "lang": "en", "draft": False, "score": 0.5, "tags": ["x"], "n": {"k": 1}}),
    ("b", "", {"year": "2021", "lang": "de", "draft": True, "score": 0, "tags": [], "n": {"k": "1"}}),
    ("c", None, {"year": 2019.0, "lang": None, "n": {"k": None}, "s": "", "o": {"z": 0}}),
    ("d", "dog", {}),
    ("e", "a cat", {"year": True, "lang": "EN", "draft": 0, "tags": {}, "n": "k", "é": "x", 'q"': 1.0}),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("year > 2020", "a"),
        ("year = 2021", "a"),
        ("year = 2021.0", "a"),
        ("year = '2021'", "b"),
        ("year = true", "e"),
        ("year = 1", ""),
        ("year != 2021", "bcde"),
        ("year <> 2021", "bcde"),
        ("year >= 2019", "ac"),
        ("year < 'a'", "b"),
        ("year is null", "d"),
        ("lang is null", "cd"),
        ("lang is not null", "abe"),
        ("lang in ('en', 'de')", "ab"),
        ("lang not in ('en', 'de')", "cde"),
        ("lang in ('EN', 2021, true)", "e"),
        ("year in (2021, true)", "ae"),
        ("draft in (false)", "a"),
        ("draft not in (true, 'x')", "acde"),
        ("lang like 'e%'", "a"),
        ("lang like 'E_'", "e"),
        ("lang not like 'e%'", "bcde"),
        ("lang like '%'", "abe"),
        ("draft", "b"),
        ("not draft", "acde"),
        ("draft = false", "a"),
        ("draft = 0", "e"),
        ("score", "a"),
        ("tags", "a"),
        ("n", "abce"),
        ("o", "c"),
        ("s", ""),
        ("n.k = 1", "a"),
        ("n.k = '1'", "b"),
        ("n.k is null", "cde"),
        ("n.k.deeper is null", "abcde"),
        ("`é` = 'x'", "e"),
        ("`q\"` = 1", "e"),
        ("_id in ('a', 'b')", "ab"),
        ("_id >= 'c'", "cde"),
        ("_id = 1", ""),
        ("_text", "ade"),
        ("_text is null", "c"),
        ("_text like '%cat'", "ae"),
        ("_text like 'a%'", "e"),
        ("_text != 'dog'", "abce"),
        ("not draft and lang or score", "ae"),  # ((not draft) and lang) or score
        ("year = 2021 or lang = 'de' and not draft", "a"),
        ("(year = 2021 or lang = 'de') and not draft", "a"),
    ],
)
def test_semantics_hand_checked(text: str, expected: str) -> None:
    expr = parse(text)
    want = set(expected)
    assert {i for i, t, m in SMALL if evaluate(expr, i, t, m)} == want
    conn = _new_db(SMALL)
    assert sql_selected(conn, expr) == want
    filt = Filter.parse(text)
    got = {r[0] for r in conn.execute(f"SELECT item_id FROM items WHERE {filt.sql}", filt.params)}
    assert got == want
    assert {i for i, t, m in SMALL if filt.matches(i, t, m)} == want


def test_evaluate_edge_cases() -> None:
    assert evaluate(parse("x is null and not x and x != 1"), "i", None, None)
    # integers beyond 64 bits are floats in SQLite, so they are in evaluate too
    assert evaluate(parse("x = 18446744073709551616.0"), "i", None, {"x": 2**64 + 1})
    assert evaluate(parse("x > 1.7e308"), "i", None, {"x": 10**400}) is True
    assert not evaluate(parse("x = 9007199254740992"), "i", None, {"x": 2**53 + 1})
    assert evaluate(parse("x < 9007199254740994.0"), "i", None, {"x": 2**53 + 1})
    assert not evaluate(parse("x = 1"), "i", None, {"x": [1]})
    assert not evaluate(parse("x.y"), "i", None, {"x": [{"y": 1}]})
    assert evaluate(parse("x like '%%a%_%'"), "i", None, {"x": "bbab"})
    assert not evaluate(parse("x like '" + "%a" * 30 + "%b'"), "i", None, {"x": "a" * 2000})  # no blow-up


# --------------------------------------------------------------------------- real SQLite, fixed expressions

FIXED = [
    "year >= 2020", "year < 2020.5", "year = '2021'", "year != 2021", "year > 'a'",
    "lang in ('en', 'de', 'EN')", "lang not in ('en')", "lang like '%n%'", "lang not like '_'",
    "draft", "not draft", "draft = true", "draft != false", "draft is null", "draft is not null",
    "score > 0 and score <= 3", "score = 0", "score = -0.0", "score >= 1e20", "score < -1",
    "tags", "not tags", "tags is null", "title = 'null'", "title = 'true'", "title like 'x*y?[z]'",
    "title like '%[%'", "title like 'a\\\\%'", "n = 9007199254740993", "n = 9223372036854775807",
    "n <= -9223372036854775808", "n = 18446744073709551616.0", "n > 1e19",
    "nested", "nested.a = 1", "nested.b is null", "nested.deep.c", "nested.deep.`ünï` = 'ünï'",
    "nested.`quo\"te` >= 0", "nested.`ünï` like '%'", "nested.`dot.key` is not null",
    "nested.a.b is null", "nested.missing != 3",
    "`weird key` = 'en'", "`quo\"te` in (1, 2, 'a_b')", "`dot.key` is null", "dot.key is null",
    "`ünï` > 'a'", "`emoji😀` = '😀'", "`back\\slash` like '%\\\\%'", "`tick``key`", "`` = 0",
    "`and` or `s'q`", "`_id` = 'x'", "_id like 'id00%'", "_id = 'it\\'s'", "_text like '%cat%'",
    "_text = 'A CAT'", "_text is null", "_text", "missing", "missing is null", "missing != 1",
    "not missing.x", "title = 'new\nline'", "title = 'say \"hi\"'", "title < 'Zebra'",
    "title >= '😀'", "score in (0.5, 2.25, true, 'b')", "year in (2019, 2020.0, 2021)",
]  # fmt: skip


@pytest.mark.parametrize("text", FIXED)
def test_sqlite_matches_evaluate_fixed(text: str) -> None:
    expr = parse(text)
    assert parse(str(expr)) == expr
    check_agrees(expr)


def test_fixed_expressions_are_not_trivial() -> None:
    # Guards against a data set on which everything is empty or everything matches.
    _, rows = _db()
    sizes = [check_agrees(parse(t)) for t in FIXED]
    nontrivial = [s for s in sizes if 0 < len(s) < len(rows)]
    assert len(nontrivial) > len(FIXED) * 0.6


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs)
def test_random_trees_sqlite_matches_evaluate(expr: Any) -> None:
    text = str(expr)
    assert parse(text) == expr
    assert str(parse(text)) == text
    check_agrees(expr)


@settings(max_examples=100, deadline=None)
@given(exprs)
def test_filter_object_agrees(expr: Any) -> None:
    filt = Filter.parse(str(expr))
    assert filt.expr == expr
    conn, rows = _db()
    got = {r[0] for r in conn.execute(f"SELECT item_id FROM items WHERE {filt.sql}", filt.params)}
    assert got == {i for i, t, m in rows if filt.matches(i, t, m)}


@settings(max_examples=200, deadline=None)
@given(patterns, st.lists(st.text(st.sampled_from("ab%_*?[]\\éE"), max_size=8), min_size=1, max_size=8))
def test_like_matches_sqlite(pattern: str, strings: list[str]) -> None:
    rows: list[Row] = [(str(i), s, {"s": s}) for i, s in enumerate(strings)]
    conn = _new_db(rows)
    for expr in (Like(f("s"), pattern), Like(f("_text"), pattern, negated=True)):
        assert parse(str(expr)) == expr
        want = {i for i, t, m in rows if evaluate(expr, i, t, m)}
        assert sql_selected(conn, expr) == want


# --------------------------------------------------------------------------- hypothesis: arbitrary text

GRAMMAR_TOKENS = [
    "(", ")", ",", ".", "and", "or", "not", "in", "is", "null", "like", "true", "false", "AND", "Not",
    "=", "==", "!=", "<>", "<", "<=", ">", ">=", "!", "-", "x", "year", "a.b", "_id", "_text", "_id.x",
    "`k`", "`", "``", "`a``b`", "'s'", "'", '"', '"d"', "\\", "'\\n'", "'\\''", "1", "-1", "1.5", ".5",
    "1e3", "1e999", "99999999999999999999", "0x1", "é", "\x00", ";", "--", "/*", "'%'", " ",
]  # fmt: skip


def _parse_or_filter_error(text: str) -> None:
    try:
        expr = parse(text)
    except FilterError as exc:
        msg = str(exc)
        assert msg.startswith("filter: ") and len(msg.splitlines()) == 1
        return
    assert parse(str(expr)) == expr
    check_agrees(expr)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_text_never_crashes(text: str) -> None:
    _parse_or_filter_error(text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(GRAMMAR_TOKENS), max_size=14), st.sampled_from([" ", ""]))
def test_token_soup_never_crashes(tokens: list[str], sep: str) -> None:
    _parse_or_filter_error(sep.join(tokens))


# --------------------------------------------------------------------------- injection

HOSTILE = [
    "x = '1'; DROP TABLE items; --'",
    "x = 1 or 1=1",
    '"a\\") OR 1=1 --"',
    "_id = '' OR ''=''",
    "_id = '' or _id = ''",
    "_id = 'x'' OR ''1''=''1'",
    "`a\"); DROP TABLE items; --` = 1",
    "`a'); DROP TABLE items; --` = 'x'",
    "`\"` = 1 or `'` = 2",
    "title = '\\'); DROP TABLE items; --'",
    "title = \"') OR 1=1 --\"",
    "title like '%'' OR 1=1 --'",
    "title like \"%' OR 1=1; DROP TABLE items; --\"",
    "`$.a` = 1 or `[0]` = 2 or `a.b]` is null",
    "x = 1 /* comment */",
    "x = 1 -- comment",
    "`x` = `y`",
    "json_extract(meta, '$.x') = 1",
    "x in (select item_id from items)",
    "_id = 'a' union select 1",
    "`meta` = 1 and `item_id` is null and `COALESCE` = 'x'",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_injection(text: str) -> None:
    conn, rows = _db()
    before = conn.execute("SELECT count(*) FROM items").fetchone()[0]
    try:
        expr = parse(text)
    except FilterError:
        expr = None
    if expr is not None:
        check_agrees(expr)
        sql, params = compile_sql(expr)
        for node in walk(expr):
            values = [node.pattern] if isinstance(node, Like) else []
            values += list(getattr(node, "values", ())) + [getattr(node, "value", None)]
            values += list(node.field.path) if hasattr(node, "field") else []
            for v in values:
                if isinstance(v, str) and len(v) >= 2 and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
                    assert v not in sql, (v, sql)
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == before == len(rows)
    assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall() == [("items",)]


def test_hostile_keys_and_values_are_parameters() -> None:
    expr = parse("`a\"); DROP TABLE items; --`.`é` = 'x\\' OR 1=1' or `it's` like '%--%'")
    sql, params = compile_sql(expr)
    assert "DROP" not in sql and "OR 1=1" not in sql and "it's" not in sql and "--" not in sql
    assert 'a"); DROP TABLE items; --' in params and "é" in params and '$."it\'s"' in params
    assert_sql_safe(sql, params)


# --------------------------------------------------------------------------- Filter and columns


def test_filter_api() -> None:
    filt = Filter.parse("year >= 2020 and not draft")
    assert filt.source == "year >= 2020 and not draft"
    assert repr(filt) == 'Filter("year >= 2020 and not draft")'
    assert str(filt) == filt.source
    assert filt.expr == parse(filt.source)
    assert (filt.sql, filt.params) == compile_sql(filt.expr)
    filt.params.append("junk")
    assert "junk" not in filt.params
    assert filt.matches("i", None, {"year": 2021}) and not filt.matches("i", None, {"year": 2021, "draft": True})
    built = Filter(And((Compare(f("a"), "=", 1), Truthy(f("b")))))
    assert built.source == "a = 1 and b"
    assert repr(Filter.parse("x = 'a\"b'")) == "Filter('x = \\'a\"b\\'')"


def test_columns_compare_binary_even_with_nocase_collation() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (item_id TEXT COLLATE NOCASE, text TEXT COLLATE NOCASE, meta TEXT)")
    rows: list[Row] = [("a", "A CAT", {}), ("A", "a cat", {}), ("b", None, {})]
    conn.executemany("INSERT INTO items VALUES (?, ?, ?)", [(i, t, "{}") for i, t, _ in rows])
    for text in ("_text = 'a cat'", "_id = 'a'", "_id in ('A')", "_text > 'B'", "_id < 'B'"):
        expr = parse(text)
        want = {i for i, t, m in rows if evaluate(expr, i, t, m)}
        assert sql_selected(conn, expr) == want and len(want) == 1, text


def test_custom_and_qualified_columns() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE docs (id TEXT, body TEXT, m TEXT, value TEXT)")
    conn.executemany(
        "INSERT INTO docs VALUES (?, ?, ?, ?)",
        [("1", "hello", json.dumps({"é": 1, "k": "v"}), "{}"), ("2", "bye", json.dumps({"k": "w"}), "{}")],
    )
    text = "`é` = 1 or _text = 'bye' and k = 'w' and _id = '2'"
    for cols in ({"meta_col": "m", "id_col": "id", "text_col": "body"},
                 {"meta_col": "docs.m", "id_col": "docs.id", "text_col": "docs.body"}):  # fmt: skip
        filt = Filter.parse(text, **cols)
        assert_sql_safe(filt.sql, filt.params, tuple(cols.values()))
        got = [r[0] for r in conn.execute(f"SELECT id FROM docs WHERE {filt.sql} ORDER BY id", filt.params)]
        assert got == ["1", "2"]
    filt = Filter.parse("`é` = 1", meta_col="docs.value")
    assert conn.execute(f"SELECT count(*) FROM docs WHERE {filt.sql}", filt.params).fetchone()[0] == 0
    for bad in ("meta; DROP TABLE docs", "m)", "", "a.b.c", "value", "key"):
        with pytest.raises(ValueError):
            compile_sql(parse("a"), meta_col=bad)
    with pytest.raises(ValueError):
        compile_sql(parse("a"), id_col="id --")
