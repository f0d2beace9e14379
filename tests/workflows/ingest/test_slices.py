"""Slices of an input file (the unit of a distributed ingest): together they are the file, cut the same way twice."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from repspace.core.errors import InputError
from repspace.workflows.ingest.readers import input_files, plan_slices, read_records, read_slice


def _joined(path: Path, step: int, **columns):
    pieces = plan_slices(path, step)
    records = [read_slice(p, **columns) for p in pieces]
    return pieces, [i for r in records for i in r.ids], [t for r in records for t in r.texts], \
        [m for r in records for m in r.metadata]


def test_jsonl_slices_are_the_file_with_blank_lines_and_a_bom(tmp_path, shared_data):
    lines = (shared_data / "cranfield-beir" / "corpus.jsonl").read_text().splitlines()[:103]
    path = tmp_path / "c.jsonl"
    # A byte-order mark, blank lines between records and no newline at the end.
    path.write_bytes(("\ufeff" + "\n\n".join(lines[:50]) + "\n\n\n" + "\n".join(lines[50:])).encode())
    whole = read_records(path, id_col="_id")
    for step in (1, 7, 50, 103, 1000):
        pieces, ids, texts, metas = _joined(path, step, id_col="_id")
        assert (ids, texts, metas) == (whole.ids, whole.texts, whole.metadata)
        assert [p.hi - p.lo for p in pieces][:-1] == [step] * (len(pieces) - 1)
        assert pieces == plan_slices(path, step)  # the same cut every time


def test_jsonl_errors_name_the_line_of_the_file(tmp_path):
    rows = [json.dumps({"id": str(i), "text": f"t{i}"}) for i in range(10)]
    rows[7] = '{"id": "7", "text": '
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(rows[:3]) + "\n\n" + "\n".join(rows[3:]) + "\n")
    pieces = plan_slices(path, 4)
    read_slice(pieces[0])
    with pytest.raises(InputError, match=r"bad.jsonl:9: invalid JSON"):
        read_slice(pieces[1])


def test_csv_with_quoted_newlines_and_parquet_row_groups(tmp_path, shared_data):
    rows = (shared_data / "stsb" / "stsb-en-dev.csv").read_text().splitlines()[:120]
    texts = [r.split(",")[0] + "\nsecond line" for r in rows]
    csv = tmp_path / "s.csv"
    csv.write_text("id,text,n\n" + "".join(f'{i},"{t.replace(chr(34), chr(34) * 2)}",{i}\n'
                                              for i, t in enumerate(texts)))
    table = pa.table({"id": [str(i) for i in range(120)], "text": texts, "n": list(range(120))})
    parquet = tmp_path / "s.parquet"
    pq.write_table(table, parquet, row_group_size=17)
    for path in (csv, parquet):
        whole = read_records(path)
        _, ids, got, metas = _joined(path, 25, table_cache={})
        assert (ids, got, metas) == (whole.ids, whole.texts, whole.metadata) and got == texts


def test_a_changed_file_is_refused_and_a_folder_lists_its_tables(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": "x"}) + "\n" for i in range(6)))
    pieces = plan_slices(path, 4)
    path.write_text("".join(json.dumps({"id": str(i), "text": "x"}) + "\n" for i in range(3)))
    with pytest.raises(InputError, match="changed since the job was planned"):
        read_slice(pieces[0])
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.parquet").write_bytes(b"")
    (tmp_path / "notes.md").write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in input_files(tmp_path)] == ["a.jsonl", "sub/b.parquet"]
    with pytest.raises(InputError, match="no JSONL, CSV or Parquet"):
        input_files(_empty(tmp_path))
    with pytest.raises(InputError, match="rows per shard"):
        plan_slices(path, 0)


def _empty(tmp_path: Path) -> Path:
    d = tmp_path / "empty"
    d.mkdir()
    return d
