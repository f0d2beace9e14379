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


def test_query_k_round_trip_and_bad_values(capsys, tmp_path, shared_data):
    """``--query-k all``: recorded in the recipe, and a text query coded with more latents than the items."""
    from repspace.store import Store
    from repspace.workflows.dictionary import load_dictionary
    from repspace.workflows.ingest.derived import derived_text_query

    folder = shared_data / "cranfield-beir"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")][:200]
    src = tmp_path / "cran.jsonl"
    src.write_text("".join(json.dumps({"id": d["_id"], "text": f"{d['title']} {d['text']}"}) + "\n" for d in docs),
                   encoding="utf-8")
    db = str(tmp_path / "s.db")
    assert run(capsys, "--store", db, "ingest", "docs", str(src), "--encoder", "static").code == 0
    code, _, err = run(capsys, "-q", "--store", db, "interpret", "sae", "docs", "--latents", "32", "-k", "4",
                       "--epochs", "2")
    assert code == 0, err
    code, out, err = run(capsys, "--store", db, "derive", "sae-codes", "docs", "--dictionary", "sae-32-k4-s0",
                         "--out", "codes", "--query-k", "all", "--json")
    assert code == 0, err
    assert (json.loads(out)["recipe"]["k"], json.loads(out)["recipe"]["query_k"]) == (4, 0)
    code, out, err = run(capsys, "--store", db, "search", "codes", "supersonic flow over a wing", "-k", "5",
                         "--json")
    assert code == 0, err
    store = Store(db)
    q = derived_text_query(store.space("codes"), "supersonic flow over a wing")
    assert len(q) > 4  # every positive latent, where the items keep 4
    _, rows = store.space("codes").sparse_rows()
    dense_rows = rows.to_scipy().toarray().astype(np.float64)
    qv = np.zeros(32)
    qv[[int(j) for j in q]] = list(q.values())
    np.testing.assert_allclose([h["score"] for h in json.loads(out)], np.sort(dense_rows @ qv)[::-1][:5],
                               rtol=0, atol=1e-5)
    assert load_dictionary(store.space("docs"), "sae-32-k4-s0").model.k == 4
    code, out, err = run(capsys, "--store", db, "derive", "sae-codes", "docs", "--dictionary", "sae-32-k4-s0",
                         "--out", "codes-dec", "--query-code", "decoder", "--query-k", "8", "--json")
    assert code == 0, err
    assert {k: json.loads(out)["recipe"][k] for k in ("query_code", "query_k")} == {"query_code": "decoder",
                                                                                   "query_k": 8}
    assert 0 < len(derived_text_query(store.space("codes-dec"), "supersonic flow over a wing")) <= 8
    before = store_dump(db)
    base = ("--store", db, "derive", "sae-codes", "docs", "--dictionary", "sae-32-k4-s0", "--out", "x")
    one_error_line(run(capsys, *base, "--query-k", "-1"), 2, "query_k")
    one_error_line(run(capsys, *base, "--query-k", "33"), 2, "query_k")
    one_error_line(run(capsys, *base, "--query-k", "some"), 2, "query_k")
    one_error_line(run(capsys, *base, "--query-code", "dense"), 2, "query coding")
    assert store_dump(db) == before
