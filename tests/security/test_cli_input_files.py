"""Input files mean what they say (issue 29, part 2).

The ``--ids`` file of a ``.npy`` ingest has one id per line: lines end at ``\\n`` or ``\\r\\n`` only (not at
U+2028, U+0085, a form feed or ``\\x1c``, as ``str.splitlines`` would cut, shifting every later id onto the wrong
vector), one UTF-8 byte-order mark is skipped, and the count is checked against the vectors. The other readers
whose lines are ids or rows (``core.files.text_lines``, ``read_texts``) follow the same rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import cli, one_error_line, run_quiet

from repspace import Store
from repspace.core.files import text_lines
from repspace.workflows.ingest import read_texts


def _npy(folder: Path, n: int) -> Path:
    path = folder / "v.npy"
    np.save(path, np.arange(1, 3 * n + 1, dtype=np.float32).reshape(n, 3))
    return path


def _stored(db: Path, space: str) -> dict[str, list[float]]:
    store = Store(db, create=False)
    try:
        snap = store.space(space).snapshot()
        return {i: v.tolist() for i, v in zip(snap.ids, snap.vectors)}
    finally:
        store.close()


def test_a_line_separator_inside_an_id_no_longer_shifts_the_ids_silently(tmp_path):
    vectors = _npy(tmp_path, 3)
    ids = tmp_path / "ids.txt"
    ids.write_text("p\u2028q\nr\n", encoding="utf-8")  # two ids; splitlines made it three, one per vector
    r = cli("--store", str(tmp_path / "s.db"), "ingest", "v", str(vectors), "--ids", str(ids))
    one_error_line(r, 2, "has 2 ids for 3 vectors")
    assert _spaces(tmp_path / "s.db") == []  # nothing written


def _spaces(db: Path) -> list[str]:
    if not db.exists():
        return []
    store = Store(db, create=False)
    try:
        return [s.name for s in store.spaces()]
    finally:
        store.close()


@pytest.mark.parametrize("ending", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_ids_keep_every_character_but_the_line_ending_and_one_bom(capsys, tmp_path, ending):
    ids = ["\ufeffstill-bom", "p\u2028q", "para\u2029", "nbsp\u00a0", "🙂/x", "last"]
    (tmp_path / "ids.txt").write_bytes(("\ufeff" + ending.join(ids) + ending).encode("utf-8"))
    vectors = _npy(tmp_path, len(ids))
    r = run_quiet(capsys, "--store", str(tmp_path / "s.db"), "ingest", "v", str(vectors), "--ids",
                  str(tmp_path / "ids.txt"))
    assert r.code == 0, r.err
    stored = _stored(tmp_path / "s.db", "v")
    assert list(stored) == ids  # one BOM skipped, the second kept: it is part of the id
    assert stored["p\u2028q"] == [4.0, 5.0, 6.0] and stored["last"] == [16.0, 17.0, 18.0]  # each on its own row


@pytest.mark.parametrize("inside", ["\x85", "\x0c", "\x1c", "\x1e", "\x0b", "\r"], ids=repr)
def test_a_control_character_that_splitlines_cuts_at_is_refused_where_it_is(capsys, tmp_path, inside):
    (tmp_path / "ids.txt").write_text(f"a\nb{inside}c\nd\n", encoding="utf-8", newline="")
    vectors = _npy(tmp_path, 3)
    r = run_quiet(capsys, "--store", str(tmp_path / "s.db"), "ingest", "v", str(vectors), "--ids",
                  str(tmp_path / "ids.txt"))
    one_error_line(r, 2, "id at position 1 has a control character", "at character 1)")
    assert _spaces(tmp_path / "s.db") == []


def test_the_count_of_ids_is_checked_against_the_vectors(capsys, tmp_path):
    vectors = _npy(tmp_path, 3)
    for text, count in (("a\nb\nc\nd\n", 4), ("a\nb\n", 2), ("a\nb\nc\n\n", 4)):  # a blank line is an (empty) id
        (tmp_path / "ids.txt").write_text(text, encoding="utf-8")
        r = run_quiet(capsys, "--store", str(tmp_path / "s.db"), "ingest", "v", str(vectors), "--ids",
                      str(tmp_path / "ids.txt"))
        one_error_line(r, 2, f"has {count} ids for 3 vectors")


def test_text_lines_end_at_newline_only_and_remove_one_ending(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_bytes("\ufeffone\u2028two\r\nthree\x0cfour\x1cfive\x85six\r\r\nlast".encode("utf-8"))
    assert [line for _, line in text_lines(path, "test file")] == [
        "one\u2028two", "three\x0cfour\x1cfive\x85six\r", "last"]


def test_a_text_file_of_texts_is_cut_at_newlines_only(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("\ufefffirst text\u2028still the first\n\nsecond\x85text\n", encoding="utf-8")
    assert read_texts(path) == ["first text\u2028still the first", "second\x85text"]


def test_a_jsonl_line_holding_a_line_separator_stays_one_record(capsys, tmp_path):
    path = tmp_path / "items.jsonl"
    rows = [{"id": "a\u2028b", "vec": [1.0, 2.0], "note": "x\u0085y"}, {"id": "c", "vec": [3.0, 4.0]}]
    path.write_text("\ufeff" + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    r = run_quiet(capsys, "--store", str(tmp_path / "s.db"), "ingest", "j", str(path), "--vector-col", "vec", "--json")
    assert r.code == 0, r.err
    assert _stored(tmp_path / "s.db", "j") == {"a\u2028b": [1.0, 2.0], "c": [3.0, 4.0]}
