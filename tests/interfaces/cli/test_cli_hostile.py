"""Hostile input to the CLI: one error line, a non-zero exit, nothing stored changed, bounded work.

Each case is a finding of issue 15 (part 3) that failed before its fix.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _cli_process import run

from repspace import Store
from repspace.interfaces.cli import main
from repspace.workflows.search import dense as query


def one_error_line(code: int, out: str, err: str, *fragments: str) -> None:
    assert code != 0 and out == "", (code, out, err)
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    for f in fragments:
        assert f in err, (f, err)


@pytest.fixture()
def known(tmp_path: Path) -> str:
    """A store with 300 items of 8-d vectors (``k0`` ... ``k299``), with texts and metadata."""
    db = tmp_path / "s.db"
    store = Store(db)
    sp = store.create_space("known", dim=8, metric="cosine")
    x = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)
    sp.add([f"k{i}" for i in range(300)], x, texts=[f"doc {i}" for i in range(300)],
           metadata=[{"n": i} for i in range(300)])
    store.close()
    return str(db)


def _snapshot(db: str) -> tuple[list[str], np.ndarray]:
    store = Store(db, create=False)
    try:
        sp = store.space("known")
        return sp.ids(), sp.vectors()
    finally:
        store.close()


# 1. -k and --ef are bounded on every path -----------------------------------------------------

@pytest.mark.parametrize("method", [["--hnsw"], ["--exact"], []])
def test_a_huge_k_returns_every_item_at_once(capsys, known, monkeypatch, method):
    monkeypatch.setattr(query, "EXACT_MAX_ITEMS", 100)  # 300 items now count as large: HNSW by default
    code, out, err = run(capsys, "--store", known, "search", "known", "--id", "k1", "-k", "1000000000",
                         *method, "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert len(hits) == 299 and len({h["id"] for h in hits}) == 299  # every other item, once


def test_a_huge_ef_is_capped(capsys, known, monkeypatch):
    monkeypatch.setattr(query, "EXACT_MAX_ITEMS", 100)
    code, out, err = run(capsys, "--store", known, "search", "known", "--id", "k1", "-k", "3", "--ef", "1000000000",
                         "--explain", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert len(result["hits"]) == 3 and result["plan"]["method"] == "hnsw"
    assert result["plan"]["ef"] == query.MAX_EF


def test_a_huge_k_for_bm25_and_hybrid_is_bounded(capsys, known):
    code, out, err = run(capsys, "--store", known, "search", "known", "doc", "--bm25", "-k", "1000000000", "--json")
    assert code == 0, err
    assert len(json.loads(out)) == 300


# 2. The last-resort handler: one line for whatever the library did not name -------------------

def test_answering_no_at_a_prompt_aborts_with_one_line(capsys, known, monkeypatch):
    stdin = io.StringIO("n\n")
    stdin.isatty = lambda: True  # type: ignore[method-assign]  # a person at a terminal
    monkeypatch.setattr(sys, "stdin", stdin)
    code = main(["--store", known, "delete", "known"])
    captured = capsys.readouterr()
    assert code == 1 and captured.err.strip().splitlines()[-1] == "aborted"
    assert len(_snapshot(known)[0]) == 300  # nothing deleted


def test_jsonl_nested_a_thousand_levels_is_one_error_line(capsys, tmp_path):
    deep = "[" * 1000 + "]" * 1000
    f = tmp_path / "deep.jsonl"
    f.write_text(json.dumps({"id": "a", "vec": [1.0, 0.0]})[:-1] + f', "m": {deep}}}\n')
    code, out, err = run(capsys, "--store", str(tmp_path / "s.db"), "ingest", "deep", str(f), "--vector-col", "vec")
    one_error_line(code, out, err, "nested too deeply")


@pytest.mark.parametrize("exc, fragment", [(RuntimeError("boom"), "unexpected RuntimeError: boom"),
                                           (MemoryError(), "out of memory"),
                                           (RecursionError(), "nested too deeply"),
                                           (PermissionError(13, "Permission denied", "/x"), "Permission denied")])
def test_an_unexpected_exception_is_one_line(capsys, known, monkeypatch, exc, fragment):
    def fail(self):
        raise exc

    monkeypatch.setattr(Store, "spaces", fail)
    code, out, err = run(capsys, "--store", known, "spaces")
    one_error_line(code, out, err, fragment)
    monkeypatch.setenv("REPSPACE_TRACEBACK", "1")
    with pytest.raises(type(exc)):
        main(["--store", known, "spaces"])


def test_a_read_only_store_is_one_error_line_and_unchanged(capsys, known, tmp_path):
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed: no way to make a file read-only for root")
    before = _snapshot(known)
    vecs = tmp_path / "v.jsonl"
    vecs.write_text(json.dumps({"id": "new", "vec": [1.0] * 8}) + "\n")
    if subprocess.run(["chattr", "+i", known], capture_output=True).returncode != 0:
        pytest.skip("this file system does not support the immutable attribute")
    try:
        code, out, err = run(capsys, "--store", known, "ingest", "known", str(vecs), "--vector-col", "vec")
        one_error_line(code, out, err, "read-only")
        code, out, err = run(capsys, "--store", known, "search", "known", "--id", "k1", "-k", "2", "--json")
        assert code == 0 and len(json.loads(out)) == 2  # reading still works
    finally:
        subprocess.run(["chattr", "-i", known], check=True)
    after = _snapshot(known)
    assert after[0] == before[0] and np.array_equal(after[1], before[1])


# 3. A foreign SQLite file is refused before anything in it changes ------------------------------

@pytest.mark.parametrize("schema", ["CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",
                                    "CREATE TABLE items (x INTEGER)"])
@pytest.mark.parametrize("command", [["spaces"], ["info", "s"], ["ingest", "s", "{vecs}", "--vector-col", "vec"]])
def test_a_foreign_sqlite_database_is_refused_unchanged(capsys, tmp_path, schema, command):
    db = tmp_path / "someone-elses.db"
    with sqlite3.connect(db) as c:
        c.execute(schema)
        c.execute("PRAGMA user_version = 7")
    before = db.read_bytes()
    vecs = tmp_path / "v.jsonl"
    vecs.write_text(json.dumps({"id": "a", "vec": [1.0, 0.0]}) + "\n")
    args = [a.replace("{vecs}", str(vecs)) for a in command]
    code, out, err = run(capsys, "--store", str(db), *args)
    one_error_line(code, out, err, "not a repspace store", "left unchanged")
    assert db.read_bytes() == before
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert c.execute("PRAGMA user_version").fetchone()[0] == 7
    assert not Path(str(db) + "-wal").exists()


def test_a_command_that_reads_never_creates_a_store(capsys, tmp_path):
    missing = tmp_path / "typo" / "sub" / "x.db"
    for command in (["info", "s"], ["spaces"], ["search", "s", "--id", "a"], ["index", "list", "s"]):
        code, out, err = run(capsys, "--store", str(missing), *command)
        one_error_line(code, out, err, "no store at")
    assert not (tmp_path / "typo").exists()


def test_a_new_store_is_marked_and_an_old_one_still_opens(tmp_path):
    store = Store(tmp_path / "new.db")
    store.close()
    with sqlite3.connect(tmp_path / "new.db") as c:
        assert c.execute("PRAGMA application_id").fetchone()[0] == 0x52505350
        c.execute("PRAGMA application_id = 0")  # a store made before the mark: known by its tables
    Store(tmp_path / "new.db", create=False).close()


# 5. Extra query rows are refused, not dropped -------------------------------------------------

def test_two_query_rows_are_refused(capsys, known, tmp_path):
    two = tmp_path / "q.npy"
    np.save(two, np.ones((2, 8), np.float32))
    code, out, err = run(capsys, "--store", known, "search", "known", "--vector-file", str(two))
    one_error_line(code, out, err, "one query vector", "(2, 8)")
    code, out, err = run(capsys, "--store", known, "search", "known", "--vector", json.dumps([[1.0] * 8] * 2))
    one_error_line(code, out, err, "one query vector")


# 6. Smaller ones ----------------------------------------------------------------------------

@pytest.mark.parametrize("args, fragment", [(["search", "known", "--id", "k1", "-k", "0"], "-k"),
                                            (["search", "known", "--id", "k1", "--ef", "0"], "--ef"),
                                            (["--threads", "0", "spaces"], "--threads")])
def test_option_range_errors_are_one_line(capsys, known, args, fragment):
    code, out, err = run(capsys, "--store", known, *args)
    one_error_line(code, out, err, fragment)


def test_a_bad_fusion_is_refused_before_any_encoding(capsys, known, monkeypatch):
    import repspace.workflows.stored_transforms as st

    def never(*a, **k):
        raise AssertionError("the query was embedded before the options were checked")

    monkeypatch.setattr(st, "encoder_for_space", never)
    code, out, err = run(capsys, "--store", known, "search", "known", "some text", "--hybrid", "--fusion", "bogus")
    one_error_line(code, out, err, "fusion must be one of rrf, sum")
    code, out, err = run(capsys, "--store", known, "search", "known", "some text", "--hubness", "bogus")
    one_error_line(code, out, err, "unknown hubness reduction")


def test_lossy_or_overflowing_vectors_are_refused_without_warnings(capsys, tmp_path, known):
    ids = tmp_path / "ids.txt"
    ids.write_text("a\nb\n")
    big = tmp_path / "big.npy"
    np.save(big, np.array([[2**40 + 1, 0], [1, 2]], dtype=np.int64))
    code, out, err = run(capsys, "--store", str(tmp_path / "s.db"), "ingest", "v", str(big), "--ids", str(ids))
    one_error_line(code, out, err, "float32 cannot hold exactly")
    huge = tmp_path / "huge.npy"
    np.save(huge, np.array([[1e39, 0.0], [1.0, 2.0]]))
    code, out, err = run(capsys, "--store", str(tmp_path / "s.db"), "ingest", "v", str(huge), "--ids", str(ids))
    one_error_line(code, out, err, "beyond float32 range")  # and no RuntimeWarning lines
    exact = tmp_path / "exact.npy"
    np.save(exact, np.array([[2**40, 3], [1, 2]], dtype=np.int64))  # integers float32 holds exactly
    code, out, err = run(capsys, "--store", str(tmp_path / "s.db"), "ingest", "v", str(exact), "--ids", str(ids))
    assert code == 0, err
    q = tmp_path / "q.npy"
    np.save(q, np.full(8, 2**40 + 1, dtype=np.int64))
    code, out, err = run(capsys, "--store", known, "search", "known", "--vector-file", str(q))
    one_error_line(code, out, err, "float32 cannot hold exactly")
    code, out, err = run(capsys, "--store", known, "search", "known", "--vector", json.dumps([1e39] + [0.0] * 7))
    one_error_line(code, out, err, "beyond float32 range")


def test_listing_results_reads_only(capsys, known, tmp_path):
    code, out, err = run(capsys, "--store", known, "eval", "results", "nospace")
    one_error_line(code, out, err, "no space")
    code, out, err = run(capsys, "--store", str(tmp_path / "none.db"), "eval", "results")
    one_error_line(code, out, err, "no store at")
    assert not (tmp_path / "none.db").exists()
