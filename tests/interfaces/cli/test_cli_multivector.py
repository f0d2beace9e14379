"""Multi-vector spaces through the real ``repspace`` command (a child process): ingest token vectors from JSON lines
or Parquet, or MiniLM token states from texts; search by id or text equals :func:`maxsim_search` (exact and MUVERA
+ rescoring) on arrays made here; info reports tokens per item; every bad input is one line and the store is
unchanged (``store_dump``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import cli, one_error_line, store_dump

from repspace.engines.search.muvera import FDEConfig, MultiVectorIndex, maxsim_search

pytestmark = pytest.mark.slow
N, DIM = 60, 8


def _rows(seed: int = 0) -> tuple[list[dict], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    sets = [rng.standard_normal((int(t), DIM)).astype(np.float32) for t in rng.integers(1, 7, size=N)]
    return [{"id": f"d{i}", "tokens": s.tolist(), "group": i % 2} for i, s in enumerate(sets)], sets


@pytest.fixture(scope="module")
def token_db(tmp_path_factory) -> tuple[Path, Path, list[np.ndarray]]:
    d = tmp_path_factory.mktemp("mv")
    rows, sets = _rows()
    src = d / "docs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = d / "s.db"
    r = cli("--store", str(db), "ingest", "tok", str(src), "--tokens-col", "tokens", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["added"] == N
    return db, d, sets


def test_search_by_id_equals_maxsim_search(token_db) -> None:
    db, _, sets = token_db
    index = MultiVectorIndex.build(sets, FDEConfig(dim=DIM))
    want = maxsim_search(index, [sets[3]], k=8)
    r = cli("--store", str(db), "search", "tok", "--id", "d3", "-k", "7", "--exact", "--json")
    assert r.code == 0, r.err
    hits = json.loads(r.out)
    assert [h["id"] for h in hits] == [f"d{i}" for i in want[1][0] if i != 3][:7]
    np.testing.assert_allclose([h["score"] for h in hits], [s for i, s in zip(want[1][0], want[0][0]) if i != 3][:7],
                               rtol=1e-6)
    via = maxsim_search(index, [sets[3]], k=6, candidates=10)
    r = cli("--store", str(db), "search", "tok", "--id", "d3", "-k", "5", "--candidates", "10", "--json", "--explain")
    got = json.loads(r.out)
    assert [h["id"] for h in got["hits"]] == [f"d{i}" for i in via[1][0] if i != 3][:5]
    assert got["plan"]["method"] == "muvera>maxsim" and got["plan"]["candidates"] == 10
    r = cli("--store", str(db), "info", "tok", "--json")
    mv = json.loads(r.out)["multivector"]
    lengths = [len(s) for s in sets]
    assert mv["tokens"] == sum(lengths) and mv["tokens_max"] == max(lengths)
    assert mv["tokens_mean"] == pytest.approx(np.mean(lengths)) and mv["bytes"] == 4 * DIM * sum(lengths) + 8 * (N + 1)


def test_parquet_list_of_lists_column(tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows, sets = _rows(1)
    pq.write_table(pa.table({"id": [r["id"] for r in rows], "tokens": [r["tokens"] for r in rows]}),
                   tmp_path / "t.parquet")
    db = tmp_path / "s.db"
    r = cli("--store", str(db), "ingest", "tok", str(tmp_path / "t.parquet"), "--tokens-col", "tokens", "--json")
    assert r.code == 0, r.err
    index = MultiVectorIndex.build(sets, FDEConfig(dim=DIM))
    want = maxsim_search(index, [sets[0]], k=4)
    r = cli("--store", str(db), "search", "tok", "--id", "d0", "-k", "3", "--exact", "--json")
    assert [h["id"] for h in json.loads(r.out)] == [f"d{i}" for i in want[1][0][1:]]


def test_texts_become_minilm_token_states_and_a_text_query_goes_the_same_way(tmp_path) -> None:
    from repspace.engines.encoders.tokens import encode_tokens

    texts = ["Flow over a flat plate at high speed.", "Heat transfer in laminar boundary layers.",
             "Lift of thin wings at subsonic speeds.", "Buckling of thin cylindrical shells."]
    src = tmp_path / "d.jsonl"
    src.write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    db = tmp_path / "s.db"
    r = cli("--store", str(db), "ingest", "mv", str(src), "--multivector", "--encoder", "MiniLM", "--json")
    assert r.code == 0, r.err
    docs = encode_tokens("hf-layers:minilm", texts)
    query = "heat in a boundary layer"
    want = maxsim_search(MultiVectorIndex.build(docs), encode_tokens("hf-layers:minilm", [query]), k=4)
    r = cli("--store", str(db), "search", "mv", query, "-k", "4", "--exact", "--json")
    hits = json.loads(r.out)
    assert [h["id"] for h in hits] == [f"t{i}" for i in want[1][0]] and hits[0]["id"] == "t1"
    np.testing.assert_allclose([h["score"] for h in hits], want[0][0], atol=1e-5)


@pytest.mark.parametrize("cell, fragment", [
    ([[1.0, 2.0], [1.0]], "are not a matrix"),
    ([[1.0] * DIM, [1.0] * (DIM + 1)], "are not a matrix"),
    ([[1.0] * (DIM + 1)], f"this space has dimension {DIM}"),
    ([], "has no token vector"),
    ("NaN", "NaN or inf"),
    ("not json", "not a JSON list"),
])
def test_bad_token_cells_are_one_line_and_change_nothing(token_db, tmp_path, cell, fragment) -> None:
    db, _, _ = token_db
    before = store_dump(db)
    text = ('{"id": "x", "tokens": [[NaN' + ", 0.0" * (DIM - 1) + "]]}\n" if cell == "NaN"
            else json.dumps({"id": "x", "tokens": json.dumps(cell) if cell == "not json" else cell}) + "\n")
    if cell == "not json":
        text = json.dumps({"id": "x", "tokens": "not json"}) + "\n"
    (tmp_path / "bad.jsonl").write_text(text)
    one_error_line(cli("--store", str(db), "ingest", "tok", str(tmp_path / "bad.jsonl"), "--tokens-col", "tokens"),
                   2, fragment)
    assert store_dump(db) == before


@pytest.mark.parametrize("args, code, fragment", [
    (["search", "tok", "--id", "nope"], 3, "'nope'"),
    (["search", "tok", "--id", "d1", "--hubness", "csls"], 2, "hubness does not apply to multi-vector"),
    (["search", "tok", "--id", "d1", "--hnsw"], 2, "method hnsw does not apply"),
    (["search", "tok", "--id", "d1", "--exact", "--candidates", "20"], 2, "do not combine with exact"),
    (["search", "tok", "a text"], 2, "ingested precomputed"),
    (["ingest", "tok", "{src}", "--tokens-col", "tokens", "--layer", "3"], 2, "--layer does not apply to token"),
    (["ingest", "tok", "{src}", "--tokens-col", "tokens", "--metric", "cosine"], 2, "--metric ip"),
    (["ingest", "new", "{src}", "--multivector", "--encoder", "static"], 2, "need an hf-layers encoder"),
])
def test_bad_commands_are_one_line_and_change_nothing(token_db, args, code, fragment) -> None:
    db, d, _ = token_db
    before = store_dump(db)
    one_error_line(cli("--store", str(db), *[a.replace("{src}", str(d / "docs.jsonl")) for a in args]), code, fragment)
    assert store_dump(db) == before
