"""Filters evaluated on columns select exactly what the SQL compiler selects (the reference).

The data and the random expression trees are those of test_filters.py: hostile keys,
every JSON type, integers beyond 2**53 and 2**64, strings out of ASCII, and the trees
hypothesis draws from every atom of the language.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

import numpy as np
import pytest
from _filter_cases import FIELDS, _db, exprs, sql_selected
from hypothesis import HealthCheck, given, settings

from repspace.core.filters.columns import Column, evaluate_columns, fields_of
from repspace.core.filters import Field, field_sql, parse


def _column(conn: sqlite3.Connection, path: tuple[str, ...]) -> Column:
    (t, tp), (v, vp) = field_sql(Field(path))
    return Column.from_sql(conn.execute(f"SELECT {t}, {v} FROM items ORDER BY rowid", [*tp, *vp]))


@functools.cache
def _ids() -> list[str]:
    conn, _ = _db()
    return [r[0] for r in conn.execute("SELECT item_id FROM items ORDER BY rowid")]


@functools.cache
def _columns() -> dict[tuple[str, ...], Column]:
    conn, _ = _db()
    paths = {tuple(p) for p in FIELDS} | {("_id",), ("_text",)}
    return {p: _column(conn, p) for p in paths}


def columns_selected(expr: Any) -> set[str]:
    cols = _columns()
    assert fields_of(expr) <= cols.keys()
    mask = evaluate_columns(expr, cols)
    assert mask.dtype == bool and mask.shape == (len(_ids()),)
    return {i for i, keep in zip(_ids(), mask) if keep}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs)
def test_random_trees_columns_match_sqlite(expr: Any) -> None:
    conn, _ = _db()
    assert columns_selected(expr) == sql_selected(conn, expr), str(expr)


@pytest.mark.parametrize("text", [
    "n = 9007199254740993", "n > 9007199254740992", "n < 9007199254740993.0", "n = 1.8446744073709552e19", "n > 9223372036854775807",
    "n >= -9223372036854775808", "n = 1", "n = 1.0", "n != 0", "score > -1.5", "n in (2, 2.25, '2', true)",
    "year", "not tags", "tags and nested", "nested.deep.c is not null", "`weird key` like '%'",
    "lang < 'de'", "lang >= 'EN'", "_id like 'id00%'", "_text like '%cat%'", "_text is null", "not _text",
    "`quo\"te` = 'en' or `ünï` = 'ünï'", "`emoji😀` like '%😀%'", "nested.`dot.key`", "`` = 0",
])
def test_hand_picked_filters_match_sqlite(text: str) -> None:
    conn, _ = _db()
    expr = parse(text)
    want = sql_selected(conn, expr)
    assert columns_selected(expr) == want


def test_selection_is_not_trivial_and_big_numbers_are_exact() -> None:
    """Integers beyond 2**53 differ from their float64 neighbours; the column keeps them apart."""
    col = Column.from_sql([("integer", 2**53 + 1), ("real", float(2**53)), ("integer", 2**53), (None, None)])
    path = ("n",)
    assert evaluate_columns(parse("n = 9007199254740993"), {path: col}).tolist() == [True, False, False, False]
    assert evaluate_columns(parse("n = 9007199254740992.0"), {path: col}).tolist() == [False, True, True, False]
    assert evaluate_columns(parse("n > 9007199254740992"), {path: col}).tolist() == [True, False, False, False]
    assert evaluate_columns(parse("n != 1"), {path: col}).tolist() == [True, True, True, True]
    sizes = [len(columns_selected(parse(t))) for t in ("year", "lang = 'en'", "not draft", "_id like 'id0%'")]
    assert all(0 < s < len(_ids()) for s in sizes), sizes
    assert np.asarray(_columns()[("year",)].kind).max() > 0
