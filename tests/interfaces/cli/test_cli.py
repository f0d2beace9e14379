"""The CLI end to end: real store, real files, JSON output, one-line errors and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from _cli_process import run


@pytest.fixture()
def vec_file(tmp_path: Path) -> Path:
    rows = [
        {"id": "a", "vec": [1, 0, 0], "year": 2020, "lang": "en"},
        {"id": "b", "vec": [0, 1, 0], "year": 2021, "lang": "de", "draft": True},
        {"id": "c", "vec": [0.7, 0.7, 0], "year": 2019, "lang": "en"},
        {"id": "d", "vec": [0.9, 0.1, 0.1], "year": 2023, "lang": "fr"},
    ]
    p = tmp_path / "v.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_ingest_info_search_export_delete(capsys, tmp_path, vec_file):
    db = str(tmp_path / "s.db")
    code, out, _ = run(capsys, "--store", db, "ingest", "toy", str(vec_file), "--vector-col", "vec", "--json")
    assert code == 0 and json.loads(out)["added"] == 4

    code, out, _ = run(capsys, "--store", db, "info", "toy", "--json")
    info = json.loads(out)
    assert (info["name"], info["count"], info["dim"], info["metric"]) == ("toy", 4, 3, "cosine")
    assert info["provenance"]["encoder"] == "precomputed"

    code, out, _ = run(capsys, "--store", db, "search", "toy", "--vector", "[1, 0, 0]", "-k", "2", "--json")
    hits = json.loads(out)
    assert [h["id"] for h in hits] == ["a", "d"]
    assert set(hits[0]) == {"id", "score", "text", "metadata"}
    assert hits[0]["metadata"] == {"year": 2020, "lang": "en"}

    code, out, _ = run(capsys, "--store", db, "search", "toy", "--id", "a", "--where",
                       "year >= 2020 and lang in ('en', 'de') and not draft", "--json")
    assert code == 0 and json.loads(out) == []  # a itself is excluded; b is a draft
    code, out, _ = run(capsys, "--store", db, "search", "toy", "--id", "a", "--where", "not draft", "--json")
    assert [h["id"] for h in json.loads(out)] == ["d", "c"]

    code, out, _ = run(capsys, "--store", db, "spaces", "--json")
    assert [s["name"] for s in json.loads(out)] == ["toy"]

    target = tmp_path / "toy.parquet"
    code, out, _ = run(capsys, "--store", db, "export", "toy", str(target), "--json")
    table = pq.read_table(target)
    assert table.column("id").to_pylist() == ["a", "b", "c", "d"]
    assert table.column("year").to_pylist() == [2020, 2021, 2019, 2023]
    np.testing.assert_allclose(np.array(table.column("vector").to_pylist()), [[1, 0, 0], [0, 1, 0], [0.7, 0.7, 0],
                                                                              [0.9, 0.1, 0.1]], rtol=1e-6)
    assert json.loads(table.schema.metadata[b"repspace"])["name"] == "toy"

    code, out, _ = run(capsys, "--store", db, "delete", "toy", "b", "--json")
    assert json.loads(out)["deleted"] == 1
    code, out, _ = run(capsys, "--store", db, "delete", "toy", "--yes", "--json")
    assert json.loads(out)["deleted_space"] is True
    code, out, _ = run(capsys, "--store", db, "spaces", "--json")
    assert json.loads(out) == []


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["search", "nope", "--vector", "[1,0,0]"], 3, "no space 'nope'"),
        (["search", "toy", "--vector", "[1,0]"], 2, "dimension 3"),
        (["search", "toy", "--vector", "[1,0,0]", "--where", "year >= "], 2, "filter"),
        (["search", "toy", "--vector", "[1,0,0]", "--where", "x = 1; DROP TABLE items"], 2, "filter"),
        (["search", "toy"], 2, "exactly one of"),
        (["search", "toy", "--vector", "[1,0,0]", "--exact", "--hnsw"], 2, "choose one of"),
        (["delete", "toy", "zz"], 3, "not in space"),
        (["delete", "toy"], 2, "without --yes"),
        (["ingest", "toy", "missing.jsonl"], 3, "no such file"),
        (["ingest", "bad name!", "{vec}", "--vector-col", "vec"], 2, "invalid space name"),
        (["ingest", "toy2", "{vec}", "--text-col", "lang", "--encoder", "nonexistent-encoder"], 3, "encoder"),
        (["export", "toy", "out.csv"], 2, "Parquet"),
    ],
)
def test_errors_are_one_line_and_leave_the_store_alone(capsys, tmp_path, vec_file, args, code, message):
    db = str(tmp_path / "s.db")
    assert run(capsys, "--store", db, "ingest", "toy", str(vec_file), "--vector-col", "vec", "--json")[0] == 0
    before = run(capsys, "--store", db, "info", "toy", "--json")[1]
    args = [a.replace("{vec}", str(vec_file)) for a in args]
    got, out, err = run(capsys, "--store", db, *args)
    assert got == code, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], err
    assert run(capsys, "--store", db, "info", "toy", "--json")[1] == before


def test_nan_vector_file_is_refused_whole(capsys, tmp_path):
    db = str(tmp_path / "s.db")
    x = np.ones((5, 4), dtype=np.float32)
    x[3, 1] = np.inf
    np.save(tmp_path / "v.npy", x)
    code, _, err = run(capsys, "--store", db, "ingest", "v", str(tmp_path / "v.npy"), "--auto-id")
    assert code == 2 and "position 3" in err and "NaN or inf" in err
    code, out, _ = run(capsys, "--store", db, "spaces", "--json")
    assert json.loads(out) == []


def test_console_script_in_a_real_process(tmp_path, vec_file):
    exe = Path(sys.executable).with_name("repspace")
    env = {**os.environ, "REPSPACE_STORE": str(tmp_path / "env.db")}
    ok = subprocess.run([str(exe), "ingest", "toy", str(vec_file), "--vector-col", "vec", "--json"],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "env.db").exists()  # REPSPACE_STORE chose the store
    bad = subprocess.run([str(exe), "search", "toy", "--vector", "[nan, 1, 2]"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert bad.returncode != 0
    assert bad.stderr.strip().count("\n") == 0 and bad.stderr.startswith("error:")
    helped = subprocess.run([str(exe), "search", "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert helped.returncode == 0 and "Examples" in helped.stdout and "--json" in helped.stdout


def test_usage_errors_are_a_short_message_not_a_traceback(capsys):
    # typer >= 0.29 raises its own copies of click's exceptions; they must not escape main()
    code, out, err = run(capsys, "--threads", "0", "encoders")
    assert code == 2 and "Traceback" not in err and "--threads" in err
    code, out, err = run(capsys, "no-such-command")
    assert code == 2 and "Traceback" not in err
