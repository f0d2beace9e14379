"""Hypothesis against the CLI's ingest and search (issue 29, part 3): hostile ids, metadata, filters, vector files.

Each property runs ``main()`` in this process (the real command line, parsed by Typer, without a process per
example) on a copy of a small store, a bounded number of times. The rule every example must keep: the command
either succeeds (exit 0) and what was given comes back exactly through ``--json``, or it answers one line
``error: ...`` with exit 2 (3 for a lookup of what is not there) and the store is unchanged; never a traceback,
an ``unexpected`` bug line or exit 1. Where the input is valid by the documented rules (a model of them is written
here: ids of printable characters, finite numbers float32 holds, vectors with a direction in a cosine space, JSON
metadata), it must be accepted; where it is not, refused.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _cli_process import one_error_line, store_dump
from _filter_cases import _make_rows, exprs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from repspace import Store
from repspace.core.filters import evaluate
from repspace.interfaces.cli import main

DIM = 4
#: What a terminal acts on; a table shows each as an escape instead (a newline is the table's own).
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
F32_MAX = float(np.finfo(np.float32).max)
#: Characters that broke or could break an id, a line, a terminal or a filter.
HOSTILE = ["\x00", "\x1b", "\n", "\r", "\t", "\x0b", "\x0c", "\x1c", "\x7f", "\x85", "\x9b", "\u2028", "\u2029",
           "\ufeff", "\u200b", "\u202e", "\u200f", "\ud800", "\udfff", "/", "'", '"', "`", "[", "]", "\\", "%", "_",
           " ", "😀", "é", "中", ":", ".", "-"]
chars = st.one_of(st.sampled_from(HOSTILE), st.characters(), st.characters(codec="ascii"))
texts = st.text(chars, max_size=12)
id_values = st.one_of(texts, texts.map(lambda t: t.strip() or "x"), st.integers(-(2**70), 2**70))
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**80), 2**80), st.floats(), texts)
json_values = st.recursive(json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(texts, c, max_size=3),
                           max_leaves=8)
numbers = st.one_of(st.floats(width=32), st.floats(width=32, allow_nan=False, allow_infinity=False),
                    st.integers(-(2**26), 2**26), st.sampled_from([0, 0.0, -0.0, 2**24 + 1, 2**63, 1e39, 1e-30, 3e19,
                                                                  float("nan"), float("inf")]))
vectors = st.one_of(st.lists(numbers, min_size=DIM, max_size=DIM), st.lists(numbers, max_size=DIM + 1),
                    st.sampled_from([None, "x", [True, 1, 2, 3], [[1.0]] * DIM]))
records = st.lists(st.fixed_dictionaries({"id": id_values, "vec": vectors},
                                         optional={"text": st.none() | texts, "meta": st.dictionaries(
                                             texts, json_values, max_size=3)}), min_size=0, max_size=4)
FUZZ = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A closed store with a space ``s`` (cosine, 4-d) of one item ``base``."""
    db = tmp_path_factory.mktemp("fuzz") / "base.db"
    store = Store(db)
    store.create_space("s", dim=DIM).add(["base"], [[1.0, 2.0, 3.0, 4.0]], texts=["the base"],
                                         metadata=[{"k": [1, {"x": None}]}])
    store.close()
    return db


def _copy(base: Path) -> tuple[str, Path]:
    folder = Path(tempfile.mkdtemp(dir=base.parent))
    shutil.copy(base, folder / "s.db")
    return str(folder / "s.db"), folder


def call(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["-q", *args])
    captured = capsys.readouterr()
    assert code in (0, 2, 3), (code, captured.err)
    if code:
        assert not captured.err.startswith("error: unexpected ") and "Traceback" not in captured.err, captured.err
    return code, captured.out, captured.err


def listing(capsys, db: str, space: str, dim: int = DIM) -> dict[str, tuple[str | None, Any]]:
    """Every item of ``space`` through ``search --json``: ``{id: (text, metadata)}``."""
    code, out, err = call(capsys, "--store", db, "search", space, "--vector", json.dumps([1.0] * dim), "--exact",
                          "-k", "100000", "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert len({h["id"] for h in hits}) == len(hits)
    return {h["id"]: (h["text"], h["metadata"]) for h in hits}


# ---------------------------------------------------------------------------------- the rules, written as a model

def _has_surrogate(value: Any) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in json.dumps(value, ensure_ascii=False, default=str))


def _id_ok(item_id: str) -> bool:
    return (bool(item_id.strip()) and len(item_id) <= 1024 and not _has_surrogate(item_id)
            and not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in item_id))


def _json_ok(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_ok(v) for v in value)
    if isinstance(value, dict):
        return all(_json_ok(v) for v in value.values())
    return True


def _direction(row32: np.ndarray) -> str:
    """``ok``, ``bad`` or ``either`` (too near float32's limits for the model to call) for a cosine space."""
    x = row32.astype(np.float64)
    if not x.any():
        return "bad"
    norm = float(np.sqrt((x * x).sum()))
    return "either" if not 1e-18 < norm < 1e18 else "ok"


def _int_exact(x: int) -> bool:
    return abs(x) <= 2**24 or (abs(x) < 2**128 and int(np.float32(float(x))) == x)


def _vector_verdict(vec: Any) -> str:
    if not isinstance(vec, list) or len(vec) != DIM:
        return "bad"
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vec):
        return "bad"
    if any(isinstance(x, int) and not _int_exact(x) for x in vec):
        return "bad"
    if any(isinstance(x, float) and not (math.isfinite(x) and abs(x) <= F32_MAX) for x in vec):
        return "bad"
    if any(isinstance(x, int) and abs(x) > F32_MAX for x in vec):
        return "bad"
    return _direction(np.array(vec, dtype=np.float64).astype(np.float32))


def _verdict(rows: list[dict[str, Any]]) -> str:
    """What the documented rules say of a JSONL batch for space ``s``: ``ok``, ``bad`` or ``either``."""
    if not rows:
        return "bad"
    ids = []
    for r in rows:
        v = r["id"]
        if isinstance(v, str) and not _id_ok(v):
            return "bad"
        ids.append(str(v))
        text = r.get("text")
        if text is not None and _has_surrogate(text):
            return "bad"
        meta = r.get("meta", {})
        if meta and (_has_surrogate(meta) or not _json_ok(meta)):
            return "bad"
    if len(set(ids)) != len(ids) or not all(_id_ok(i) for i in ids):
        return "bad"
    verdicts = {_vector_verdict(r["vec"]) for r in rows}
    return "bad" if "bad" in verdicts else "either" if "either" in verdicts else "ok"


# ------------------------------------------------------------------------------------------------- the properties

@FUZZ
@given(rows=records)
def test_jsonl_ingest_round_trips_or_is_refused_whole(capsys, base, rows):
    db, folder = _copy(base)
    path = folder / "in.jsonl"
    lines = []
    for r in rows:  # metadata as top-level columns beside id, vec and text
        obj = {k: v for k, v in r.get("meta", {}).items() if k not in ("id", "vec", "text")}
        obj.update({k: r[k] for k in ("id", "vec", "text") if k in r})
        lines.append(json.dumps(obj))  # ASCII: a lone surrogate is written as its \\ud800 escape
    path.write_text("".join(line + "\n" for line in lines), encoding="ascii")
    before = store_dump(db)
    expected = _verdict(rows)
    code, out, err = call(capsys, "--store", db, "ingest", "s", str(path), "--vector-col", "vec", "--json")
    if code == 0:
        assert expected != "bad", (rows, out)
        got = listing(capsys, db, "s")
        want = {"base": ("the base", {"k": [1, {"x": None}]})}
        for r in rows:
            meta = {k: v for k, v in r.get("meta", {}).items() if k not in ("id", "vec", "text")}
            want[str(r["id"])] = (r.get("text"), meta)
        assert got == want
        code, out, err = call(capsys, "--store", db, "search", "s", "--vector", json.dumps([1.0] * DIM), "-k", "10")
        assert code == 0 and RAW.search(out) is None, (err, RAW.findall(out))  # the table: data shown, not obeyed
    else:
        assert expected != "ok", (rows, err)
        one_error_line_of(code, out, err)
        assert store_dump(db) == before
    shutil.rmtree(folder)


def one_error_line_of(code: int, out: str, err: str) -> None:
    from _cli_process import Result

    one_error_line(Result(code, out, err), 2)


npy_dtypes = st.sampled_from(["float16", "float32", "float64", "int8", "int32", "int64", "uint64", "bool",
                              "complex64"])
npy_arrays = st.one_of(  # mostly arrays a user means to ingest; then anything numpy can save
    hnp.arrays(st.sampled_from(["float16", "float32", "float64"]), hnp.array_shapes(min_dims=2, max_dims=2),
               elements=st.floats(-1e4, 1e4, width=16)),
    hnp.arrays(npy_dtypes, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))


def _read_ids_model(content: str) -> list[str]:
    """The ids file's rule: one UTF-8 BOM skipped, lines end at \\n (one \\r before it removed)."""
    content = content.removeprefix("\ufeff")
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _npy_verdict(arr: np.ndarray, ids: list[str], content: str) -> str:
    if _has_surrogate(content) or arr.ndim != 2 or 0 in arr.shape or arr.dtype.kind not in "iuf":
        return "bad"
    if len(ids) != arr.shape[0] or len(set(ids)) != len(ids) or not all(_id_ok(i) for i in ids):
        return "bad"
    if arr.dtype.kind in "iu" and not all(_int_exact(int(x)) for x in arr.ravel()):
        return "bad"
    with np.errstate(over="ignore", invalid="ignore"):
        arr32 = arr.astype(np.float32)
    if not (np.isfinite(arr).all() and np.isfinite(arr32).all()):
        return "bad"
    verdicts = {_direction(row) for row in arr32}
    return "bad" if "bad" in verdicts else "either" if "either" in verdicts else "ok"


@FUZZ
@given(arr=npy_arrays, data=st.data(), bom=st.booleans(), crlf=st.booleans())
def test_npy_ingest_keeps_each_id_on_its_vector_or_is_refused(capsys, base, arr, data, bom, crlf):
    rows = arr.shape[0] if arr.ndim else 1
    lines = data.draw(st.one_of(st.lists(st.text(chars, max_size=8), min_size=rows, max_size=rows),
                                st.lists(st.text(chars, max_size=8), max_size=5)), label="lines")
    db, folder = _copy(base)
    np.save(folder / "v.npy", arr)
    content = ("\ufeff" if bom else "") + "".join(line + ("\r\n" if crlf else "\n") for line in lines)
    (folder / "ids.txt").write_bytes(content.encode("utf-8", "surrogatepass"))
    ids = _read_ids_model(content)
    expected = _npy_verdict(arr, ids, content)
    before = store_dump(db)
    code, out, err = call(capsys, "--store", db, "ingest", "new", str(folder / "v.npy"), "--ids",
                          str(folder / "ids.txt"), "--json")
    if code == 0:
        assert expected != "bad", (arr, ids, out)
        store = Store(db, create=False)
        snap = store.space("new").snapshot()
        store.close()
        assert snap.ids == ids
        assert np.array_equal(snap.vectors, arr.astype(np.float32))
        assert set(listing(capsys, db, "new", arr.shape[1])) == set(ids)
    else:
        assert expected != "ok", (arr, ids, err)
        one_error_line_of(code, out, err)
        assert store_dump(db) == before
    shutil.rmtree(folder)


@pytest.fixture(scope="module")
def filtered(tmp_path_factory) -> tuple[str, list[tuple[str, str | None, dict[str, Any]]]]:
    """A store whose space ``f`` holds the filter tests' hostile rows (ids, texts, nested odd-keyed metadata)."""
    rows = [r for r in _make_rows() if r[0].strip()]
    db = tmp_path_factory.mktemp("filters") / "f.db"
    store = Store(db)
    x = np.random.default_rng(5).standard_normal((len(rows), DIM)).astype(np.float32) + 3.0
    store.create_space("f", dim=DIM).add([r[0] for r in rows], x, texts=[r[1] for r in rows],
                                         metadata=[r[2] for r in rows])
    store.close()
    return str(db), rows


@settings(FUZZ, max_examples=80)
@given(expr=exprs)
def test_a_where_expression_selects_what_the_language_says(capsys, filtered, expr):
    db, rows = filtered
    code, out, err = call(capsys, "--store", db, "search", "f", "--vector", json.dumps([1.0] * DIM), "--exact",
                          "-k", "100000", f"--where={expr}", "--json")
    if code == 0:
        assert {h["id"] for h in json.loads(out)} == {i for i, t, m in rows if evaluate(expr, i, t, m)}
    else:
        one_error_line_of(code, out, err)


@FUZZ
@given(where=st.text(st.one_of(chars, st.sampled_from(list("()=<>!'\" andornotinlikeis0123.,`"))), max_size=30),
       item_id=texts)
def test_any_where_text_or_id_is_answered_in_one_line(capsys, filtered, where, item_id):
    db, _ = filtered
    before = store_dump(db)
    code, out, err = call(capsys, "--store", db, "search", "f", "--vector", json.dumps([1.0] * DIM),
                          f"--where={where}", "--json")
    if code:
        one_error_line_of(code, out, err)
    code, out, err = call(capsys, "--store", db, "search", "f", f"--id={item_id}", "-k", "3", "--json")
    if code == 0:
        assert len(json.loads(out)) == 3 and item_id not in {h["id"] for h in json.loads(out)}
    else:
        assert code in (2, 3) and out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    assert store_dump(db) == before
