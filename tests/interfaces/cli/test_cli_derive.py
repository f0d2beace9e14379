"""``repspace derive bm25|sae-codes`` through the CLI: the space searched by text equals BM25; bad input one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run, store_dump

from repspace.engines.search.lexical import LexicalIndex

TEXTS = ["flow over a swept wing", "boundary layer of a flat plate", "heat transfer at hypersonic speed",
         "swept wing flutter", "laminar boundary layer transition", "shock wave and boundary layer"]


@pytest.fixture()
def db(tmp_path: Path, capsys) -> str:
    path = str(tmp_path / "s.db")
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": f"d{i}", "text": t, "vec": [float(i), 1.0, 0.5 * i]}) + "\n"
                           for i, t in enumerate(TEXTS)), encoding="utf-8")
    code, _, err = run(capsys, "--store", path, "ingest", "docs", str(src), "--vector-col", "vec")
    assert code == 0, err
    return path


def test_bm25_space_searched_by_text_equals_bm25(capsys, db):
    code, out, err = run(capsys, "--store", db, "derive", "bm25", "docs", "--out", "lex", "--json")
    assert code == 0, err
    assert json.loads(out)["count"] == len(TEXTS)
    code, out, err = run(capsys, "--store", db, "search", "lex", "boundary layer", "-k", "3", "--json")
    assert code == 0, err
    hits = json.loads(out)
    s, r = LexicalIndex.build(TEXTS, np.arange(len(TEXTS))).search(["boundary layer"], k=3)
    assert [h["id"] for h in hits] == [f"d{i}" for i in r[0]]
    np.testing.assert_allclose([h["score"] for h in hits], s[0], rtol=1e-5)


def test_bad_input_is_one_line_and_changes_nothing(capsys, db):
    assert run(capsys, "--store", db, "derive", "bm25", "docs", "--out", "lex").code == 0
    before = store_dump(db)
    one_error_line(run(capsys, "--store", db, "derive", "bm25", "docs", "--out", "lex"), 2, "exists")
    one_error_line(run(capsys, "--store", db, "derive", "bm25", "docs", "--out", "x", "--method", "bm25l"), 2,
                   "method")
    one_error_line(run(capsys, "--store", db, "derive", "sae-codes", "docs", "--dictionary", "sae-8-k2-s0",
                       "--out", "x"), 3, "no dictionary")  # not found: exit 3, as everywhere
    one_error_line(run(capsys, "--store", db, "derive", "sae-codes", "docs", "--dictionary", "sae-8-k2-s0",
                       "--out", "x", "--metric", "l2"), 2, "metric")
    one_error_line(run(capsys, "--store", db, "derive", "sae-codes", "docs", "--dictionary", "sae-8-k2-s0",
                       "--out", "x", "--dictionary-space", "nowhere"), 3, "nowhere")
    one_error_line(run(capsys, "--store", db, "search", "lex", "zzzqqq"), 2, "no term of the query")
    assert store_dump(db) == before
