"""`repspace export` end to end: file modes under the umask, the metric, --flatten, folders, one-line errors."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _cli_process import run


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture()
def db(capsys, tmp_path: Path) -> str:
    rows = [
        {"id": "a", "vec": [1, 0, 0], "year": 2020, "text": "x", "kind": 1},
        {"id": "b", "vec": [0, 1, 0], "year": 2021, "kind": "one"},
    ]
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = str(tmp_path / "s.db")
    code, _, err = run(capsys, "--store", path, "ingest", "toy", str(tmp_path / "v.jsonl"), "--vector-col", "vec",
                       "--metric", "ip", "--json")
    assert code == 0, err
    return path


@pytest.mark.parametrize("umask", [0o022, 0o077], ids=oct)
def test_console_script_honours_the_umask(tmp_path, db, umask):
    exe = Path(sys.executable).with_name("repspace")
    target = tmp_path / "out" / "toy.parquet"
    done = subprocess.run([str(exe), "--store", db, "export", "toy", str(target), "--json"], capture_output=True,
                          text=True, timeout=120, preexec_fn=lambda: os.umask(umask))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # 0o644 and 0o600
    assert json.loads(done.stdout)["rows"] == 2


def test_export_json_names_the_metric_and_flattens_by_default(capsys, tmp_path, db):
    target = tmp_path / "toy.parquet"
    code, out, err = run(capsys, "--store", db, "export", "toy", str(target), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["metric"] == "ip" and result["rows"] == 2
    table = pq.read_table(target)
    assert result["columns"] == table.column_names == ["id", "text", "vector", "kind", "year", "metadata"]
    assert table.schema.field("vector").metadata == {b"metric": b"ip", b"distance_type": b"dot"}
    assert table.column("kind").to_pylist() == ["1", '"one"']  # mixed types: JSON text
    assert table.column("year").to_pylist() == [2020, 2021] and table.column("text").to_pylist() == ["x", None]


def test_no_flatten_and_the_plain_note(capsys, tmp_path, db):
    target = tmp_path / "toy.parquet"
    code, _, err = run(capsys, "--store", db, "export", "toy", str(target), "--no-flatten")
    assert code == 0 and "wrote 2 rows" in err and "metric ip" in err
    assert pq.read_table(target).column_names == ["id", "text", "vector", "metadata"]


def test_missing_folders_are_created(capsys, tmp_path, db):
    target = tmp_path / "new" / "folder" / "toy.parquet"
    code, _, err = run(capsys, "--store", db, "export", "toy", str(target))
    assert code == 0, err
    assert pq.read_table(target).num_rows == 2


@pytest.mark.parametrize("where, message", [
    ("afile/toy.parquet", "cannot create the folder"),
    ("adir.parquet", "is a folder"),
    ("toy.csv", "Parquet"),
])
def test_places_that_cannot_be_written_are_one_error_line(capsys, tmp_path, db, where, message):
    (tmp_path / "afile").write_text("not a folder")
    (tmp_path / "adir.parquet").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run(capsys, "--store", db, "export", "toy", str(tmp_path / where))
    assert code == 2 and message in _one_error_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("levels", [33, 99, 500])
def test_ingest_refuses_metadata_nested_too_deeply_and_writes_nothing(capsys, tmp_path, db, levels):
    value: object = 1
    for _ in range(levels - 1):
        value = {"k": value}
    rows = [{"id": "c", "vec": [0, 0, 1], "ok": 1}, {"id": "deep one", "vec": [1, 1, 0], "m": value}]
    (tmp_path / "deep.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = run(capsys, "--store", db, "info", "toy", "--json")[1]
    code, _, err = run(capsys, "--store", db, "ingest", "toy", str(tmp_path / "deep.jsonl"), "--vector-col", "vec")
    line = _one_error_line(err)
    assert code == 2 and "'deep one'" in line and "32 levels" in line
    assert run(capsys, "--store", db, "info", "toy", "--json")[1] == before
