"""Ids are data (issue 29, part 2): control characters are refused at every door; any other character round-trips.

An id with a control character (C0, DEL, C1) is refused with one error line naming its position, exit 2, and
nothing written, whichever route brought it: the CLI's ingest of each file format, ``Space.add`` (both paths of
``check_ids``) and the service's write (``add_items``). Every other character, U+2028, emoji, right-to-left marks,
``/`` and quotes included, comes back exactly through ingest, search ``--json`` and the Parquet export.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _cli_process import cli, one_error_line, run_quiet, store_dump

from repspace import Store
from repspace.core.errors import InputError, NotFoundError
from repspace.workflows.ingest import add_items

DIM = 3
#: Control characters of each kind: C0 (NUL, ESC, CR, TAB, LF), DEL, C1 (NEL, the one-byte CSI).
CONTROLS = ["\x00", "\x1b", "\r", "\t", "\n", "\x7f", "\x85", "\x9b"]
#: Ids that are not controls and must come back exactly.
ODD_IDS = ["line\u2028sep", "para\u2029graph", "emoji😀", "rtl\u200fmark", "\u202eoverride", "a/b/../c",
           "quote'\"`", "[bold]", "[/bold]", "zero\u200bwidth", "bom\ufeffinside", "ünï 中文 𝄞", "x" * 1024,
           " padded ", "%_like", "-starts-with-dash"]


def _vectors(n: int) -> np.ndarray:
    return np.random.default_rng(n).standard_normal((n, DIM)).astype(np.float32) + 2.0


def write_items(fmt: str, folder: Path, ids: list[str], vectors: np.ndarray) -> list[str]:
    """The items as a file of ``fmt`` in ``folder``; returns the ingest arguments after the space."""
    if fmt == "jsonl":
        path = folder / "items.jsonl"
        path.write_text("".join(json.dumps({"id": i, "vec": v.tolist()}) + "\n" for i, v in zip(ids, vectors)),
                        encoding="utf-8")
        return [str(path), "--vector-col", "vec"]
    if fmt == "csv":
        path = folder / "items.csv"
        with path.open("w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, quoting=csv.QUOTE_ALL)
            w.writerow(["id", "vec"])
            w.writerows([i, json.dumps(v.tolist())] for i, v in zip(ids, vectors))
        return [str(path), "--vector-col", "vec"]
    if fmt == "parquet":
        path = folder / "items.parquet"
        pq.write_table(pa.table({"id": ids, "vec": [v.tolist() for v in vectors]}), path)
        return [str(path), "--vector-col", "vec"]
    assert fmt == "npy"
    np.save(folder / "items.npy", vectors)
    (folder / "ids.txt").write_bytes("".join(i + "\n" for i in ids).encode("utf-8"))
    return [str(folder / "items.npy"), "--ids", str(folder / "ids.txt")]


@pytest.fixture()
def db(tmp_path: Path) -> str:
    """A store with a space ``s`` of two items (``a``, ``b``)."""
    path = tmp_path / "s.db"
    store = Store(path)
    store.create_space("s", dim=DIM).add(["a", "b"], _vectors(2), texts=["first", "second"])
    store.close()
    return str(path)


# 1. Refused at the door, whichever door -------------------------------------------------------------------------

def test_a_nul_in_an_id_is_refused_by_the_real_cli_and_nothing_is_written(db, tmp_path):
    before = store_dump(db)
    args = write_items("jsonl", tmp_path, ["ok", "bad\x00id", "fine"], _vectors(3))
    for space in ("s", "new"):
        r = cli("--store", db, "ingest", space, *args)
        one_error_line(r, 2, "id at position 1 has a control character (\\x00 at character 3)")
    assert store_dump(db) == before  # not a row, not an empty space "new"


@pytest.mark.parametrize("fmt, control", [(f, c) for f in ("jsonl", "csv", "parquet", "npy") for c in CONTROLS
                                          if (f, c) != ("npy", "\n")],  # a newline ends a line of an --ids file
                         ids=lambda v: v if v.isalpha() else repr(v))
def test_a_control_character_in_an_id_is_refused_from_every_file_format(capsys, db, tmp_path, fmt, control):
    before = store_dump(db)
    args = write_items(fmt, tmp_path, ["ok", "also ok", f"x{control}y"], _vectors(3))
    r = run_quiet(capsys, "--store", db, "ingest", "s", *args)
    one_error_line(r, 2, "id at position 2 has a control character", "at character 1)")
    assert "\x1b" not in r.err and control not in r.err.rstrip("\n")
    assert store_dump(db) == before


@pytest.mark.parametrize("ids", [["ok", "es\x1bc"], ["ok", 7, "es\x1bc"]], ids=["all-strings", "mixed"])
def test_the_library_refuses_control_characters_on_both_paths_of_check_ids(db, ids):
    store = Store(db)
    sp = store.space("s")
    for _ in range(2):  # refused again, not an IntegrityError the second time
        with pytest.raises(InputError, match=r"id at position \d has a control character \(\\x1b at character 2\)"):
            sp.add(ids, _vectors(len(ids)))
    with pytest.raises(InputError, match="control character"):  # the service's write route
        add_items(store, "s", [{"id": i, "vector": v.tolist()} for i, v in zip(ids, _vectors(len(ids)))])
    assert sp.ids() == ["a", "b"]
    store.close()


def test_an_id_with_nul_is_refused_instead_of_stored_unreachable(db):
    store = Store(db)
    sp = store.space("s")
    with pytest.raises(InputError, match="control character"):
        sp.add(["nul\x00id"], _vectors(1))
    with pytest.raises(InputError, match="control character"):
        sp.add(["nul\x00id"], _vectors(1) * 2)  # the re-add that was an IntegrityError (a 500 over HTTP)
    store.close()


# 2. A store written before the rule: its control-character ids are answered "no such item", never a crash -------

def _legacy(db: str) -> None:
    """Rename item ``b`` to ``b<NUL>x`` behind the library's back, as a store written before the rule holds it."""
    with sqlite3.connect(db) as c:
        c.execute("UPDATE items SET item_id = 'b' || char(0) || 'x' WHERE item_id = 'b'")


def test_lookups_of_an_id_with_a_control_character_answer_no_such_item(capsys, db):
    _legacy(db)
    for args in (["search", "s", "--id", "b\x00x"], ["delete", "s", "b\x00x"], ["search", "s", "--id=\x1b[2Jx"]):
        r = run_quiet(capsys, "--store", db, *args)
        one_error_line(r, 3, "not in space 's'")
        assert "\x00" not in r.err and "\x1b" not in r.err
    store = Store(db)
    with pytest.raises(NotFoundError):
        store.space("s").get(["b\x00x"])
    store.close()
    r = cli("--store", db, "search", "s", "--id=b\x1bx")  # the real command: argv cannot hold a NUL
    one_error_line(r, 3, "id 'b\\x1bx' is not in space 's'")
    r = run_quiet(capsys, "--store", db, "search", "s", "--vector", json.dumps([1.0] * DIM), "--json")
    assert r.code == 0 and sorted(h["id"] for h in json.loads(r.out)) == ["a", "b\x00x"]  # still listed, exactly
    r = run_quiet(capsys, "--store", db, "search", "s", "--vector", json.dumps([1.0] * DIM))
    assert r.code == 0 and "b\\x00x" in r.out and "\x00" not in r.out


# 3. Every other character round-trips -------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet", "npy"])
def test_odd_unicode_ids_round_trip_through_ingest_search_and_export(capsys, tmp_path, fmt):
    db = str(tmp_path / "odd.db")
    x = _vectors(len(ODD_IDS))
    r = run_quiet(capsys, "--store", db, "ingest", "odd", *write_items(fmt, tmp_path, ODD_IDS, x), "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["added"] == len(ODD_IDS)
    r = run_quiet(capsys, "--store", db, "search", "odd", "--vector", json.dumps([1.0] * DIM), "-k", "100", "--exact",
                  "--json")
    assert r.code == 0, r.err
    assert sorted(h["id"] for h in json.loads(r.out)) == sorted(ODD_IDS)
    for item_id in ("line\u2028sep", "-starts-with-dash", "[/bold]"):
        r = run_quiet(capsys, "--store", db, "search", "odd", f"--id={item_id}", "-k", "100", "--json")
        assert r.code == 0, r.err
        assert sorted(h["id"] for h in json.loads(r.out)) == sorted(set(ODD_IDS) - {item_id})
    r = run_quiet(capsys, "--store", db, "export", "odd", str(tmp_path / "out.parquet"), "--json")
    assert r.code == 0, r.err
    table = pq.read_table(tmp_path / "out.parquet")
    exported = dict(zip(table.column("id").to_pylist(), table.column("vector").to_pylist()))
    assert sorted(exported) == sorted(ODD_IDS)
    assert all(np.array_equal(np.float32(exported[i]), v) for i, v in zip(ODD_IDS, x))  # each id on its own vector
