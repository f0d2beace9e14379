"""Sparse spaces through the CLI: ingest (lists or token maps), info, search; every bad input one line, store unchanged.

The search results are checked against scipy.sparse brute force over the same file's rows, read
here with the json module (not through repspace), and each refused ingest leaves the store's every
row (``store_dump``) as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sps
from _cli_process import one_error_line, run, store_dump


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _random_rows(n: int, n_features: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        idx = sorted(rng.choice(n_features, size=int(rng.integers(1, 8)), replace=False).tolist())
        out.append({"id": f"d{i}", "indices": idx, "values": rng.uniform(0.1, 2.0, len(idx)).round(3).tolist(),
                    "group": i % 3})
    return out


@pytest.fixture()
def sparse_db(tmp_path: Path, capsys) -> tuple[str, list[dict]]:
    db = str(tmp_path / "s.db")
    rows = _random_rows(300, 50)
    rows.append({"id": "empty", "indices": [], "values": [], "group": 0})
    src = _write_jsonl(tmp_path / "docs.jsonl", rows)
    code, out, err = run(capsys, "--store", db, "ingest", "sp", str(src), "--indices-col", "indices",
                         "--values-col", "values", "--n-features", "50", "--json")
    assert code == 0, err
    assert json.loads(out)["added"] == 301
    return db, rows


def _brute(rows: list[dict], q: np.ndarray, k: int, exclude: str | None = None) -> list[str]:
    X = sps.csr_array((np.concatenate([np.asarray(r["values"], dtype=np.float32) for r in rows]),
                       np.concatenate([np.asarray(r["indices"], dtype=np.int64) for r in rows]),
                       np.cumsum([0] + [len(r["indices"]) for r in rows])), shape=(len(rows), len(q)))
    scores = X.astype(np.float64) @ q
    order = [i for i in np.lexsort((np.arange(len(rows)), -scores)) if rows[i]["id"] != exclude]
    return [rows[i]["id"] for i in order[:k]]


def test_search_by_id_vector_and_sparse_query_equal_brute_force(capsys, sparse_db):
    db, rows = sparse_db
    q = np.zeros(50)
    q[rows[7]["indices"]] = np.asarray(rows[7]["values"], dtype=np.float32)
    code, out, err = run(capsys, "--store", db, "search", "sp", "--id", "d7", "-k", "10", "--json")
    assert code == 0, err
    assert [h["id"] for h in json.loads(out)] == _brute(rows, q, 10, exclude="d7")
    query = {"3": 1.0, "17": 0.5, "40": 2.0}
    qv = np.zeros(50)
    qv[[3, 17, 40]] = [1.0, 0.5, 2.0]
    code, out, err = run(capsys, "--store", db, "search", "sp", "--sparse-query", json.dumps(query), "-k", "5",
                         "--json", "--explain")
    assert code == 0, err
    res = json.loads(out)
    assert [h["id"] for h in res["hits"]] == _brute(rows, qv, 5) and res["plan"]["method"] == "sparse-exact"
    code, out, err = run(capsys, "--store", db, "search", "sp", "--vector", json.dumps(qv.tolist()), "-k", "5",
                         "--json")
    assert [h["id"] for h in json.loads(out)] == _brute(rows, qv, 5)
    code, out, err = run(capsys, "--store", db, "search", "sp", "--sparse-query", json.dumps(query), "-k", "5",
                         "--where", "group = 1", "--json")
    picked = [r for r in rows if r.get("group") == 1]
    assert [h["id"] for h in json.loads(out)] == _brute(picked, qv, 5)


def test_info_reports_the_expected_flops_and_empty_rows(capsys, sparse_db):
    db, rows = sparse_db
    code, out, err = run(capsys, "--store", db, "info", "sp", "--json")
    assert code == 0, err
    info = json.loads(out)
    p = np.bincount(np.concatenate([np.asarray(r["indices"], dtype=np.int64) for r in rows]), minlength=50) / len(rows)
    assert info["layout"] == "sparse" and info["dim"] == 50
    assert info["sparse"]["empty_rows"] == 1 and info["sparse"]["nnz"] == sum(len(r["indices"]) for r in rows)
    assert info["sparse"]["expected_flops"] == pytest.approx(float((p**2).sum()), rel=1e-12)
    code, out, _ = run(capsys, "--store", db, "info", "sp")
    assert "sparse.expected_flops" in out and "sparse.empty_rows" in out


def test_token_maps_from_parquet_build_the_vocabulary(capsys, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table({"id": ["a", "b", "c"],
                      "terms": pa.array([[("cat", 1.5), ("sat", 0.5)], [("dog", 2.0), ("cat", 0.25)], [("fish", 1.0)]],
                                        type=pa.map_(pa.string(), pa.float32()))})
    pq.write_table(table, tmp_path / "bow.parquet")
    db = str(tmp_path / "s.db")
    code, out, err = run(capsys, "--store", db, "ingest", "bow", str(tmp_path / "bow.parquet"), "--weights-col",
                         "terms", "--metric", "cosine", "--json")
    assert code == 0, err
    code, out, err = run(capsys, "--store", db, "search", "bow", "--sparse-query", '{"cat": 1.0}', "--json")
    hits = json.loads(out)
    assert [h["id"] for h in hits] == ["a", "b", "c"]
    assert hits[0]["score"] == pytest.approx(1.5 / np.sqrt(1.5**2 + 0.5**2), rel=1e-6)
    assert json.loads(run(capsys, "--store", db, "info", "bow", "--json")[1])["sparse"]["feature_names"] is True


def _bad(tmp_path: Path, rows: list[dict]) -> Path:
    return _write_jsonl(tmp_path / "bad.jsonl", rows)


BAD_INGEST = [
    ([{"id": "x", "indices": [1], "values": [-0.5]}], ["--n-features", "50"], "negative weight -0.5"),
    ([{"id": "x", "indices": [50], "values": [1.0]}], ["--n-features", "50"], "feature index 50, beyond"),
    ([{"id": "x", "indices": [-1], "values": [1.0]}], ["--n-features", "50"], "feature index -1, beyond"),
    ([{"id": "x", "indices": [2, 2], "values": [1.0, 1.0]}], ["--n-features", "50"], "feature index 2 twice"),
    ([{"id": "x", "indices": [1, 2], "values": [1.0]}], ["--n-features", "50"], "has 2 indices and 1 values"),
    ([{"id": "x", "indices": [1], "values": ["a"]}], ["--n-features", "50"], "not a number"),
    ([{"id": "x", "indices": [1], "values": [1.0]}], [], "--n-features N or --vocab FILE"),
    ([{"id": "x", "indices": [1], "values": [1.0]}], ["--n-features", "50", "--vector-col", "v"],
     "--vector-col does not apply to sparse vectors"),
    ([{"id": "x", "terms": {"ca\u001bt": 1.0}}], ["--weights-col", "terms"], "has a control character"),
    ([{"id": "x", "terms": {"cat": 1.0}}], ["--weights-col", "terms", "--indices-col", "indices"], "not both"),
]


@pytest.mark.parametrize("rows, options, message", BAD_INGEST, ids=[m for *_, m in BAD_INGEST])
def test_bad_sparse_input_is_one_error_line_and_changes_nothing(capsys, tmp_path, sparse_db, rows, options, message):
    db, _ = sparse_db
    src = _bad(tmp_path, rows)
    before = store_dump(db)
    cols = [] if "--weights-col" in options else ["--indices-col", "indices", "--values-col", "values"]
    # into the existing space (its size known: no --n-features) and into a new one
    for space in ("fresh",) if "--n-features" in message else ("sp", "fresh"):
        opts = [o for o in options if space == "fresh" or o not in ("--n-features", "50")]
        one_error_line(run(capsys, "--store", db, "ingest", space, str(src), *cols, *opts), 2, message)
        assert store_dump(db) == before


def test_nan_and_inf_weights_from_parquet_are_refused(capsys, tmp_path, sparse_db):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    db, _ = sparse_db
    before = store_dump(db)
    for bad in (float("nan"), float("inf")):
        pq.write_table(pa.table({"id": ["x"], "indices": [[1]], "values": [[bad]]}), tmp_path / "bad.parquet")
        one_error_line(run(capsys, "--store", db, "ingest", "sp", str(tmp_path / "bad.parquet"), "--indices-col",
                           "indices", "--values-col", "values"), 2, f"{bad} weight")
    assert store_dump(db) == before


def test_negative_weights_when_allowed(capsys, tmp_path, sparse_db):
    db, _ = sparse_db
    src = _bad(tmp_path, [{"id": "neg", "indices": [1, 4], "values": [-0.5, 1.0]}])
    code, out, err = run(capsys, "--store", db, "ingest", "neg", str(src), "--indices-col", "indices",
                         "--values-col", "values", "--n-features", "5", "--allow-negative", "--json")
    assert code == 0, err
    assert json.loads(run(capsys, "--store", db, "info", "neg", "--json")[1])["sparse"]["negative_weights"] is True


@pytest.mark.parametrize("args, message", [
    (["--id", "d1", "--hnsw"], "method hnsw does not apply to sparse space"),
    (["--id", "d1", "--index", "hnsw32"], "index 'hnsw32' does not apply to sparse space"),
    (["--id", "d1", "--index", "pca8>rerank"], "does not apply to sparse space"),
    (["--id", "d1", "--mmr", "0.5"], "mmr does not apply"),
    (["--id", "d1", "--ef", "32"], "ef does not apply"),
    (["a text query"], "holds sparse vectors and no encoder"),
    (["--id", "empty"], "has no non-zero weight"),
    (["--sparse-query", '{"99": 1.0}'], "beyond the vocabulary of 50"),
    (["--sparse-query", '{"cat": 1.0}'], "is not one of feature ids"),
    (["--sparse-query", "[1, 2]"], "--sparse-query must be a JSON object"),
    (["--sparse-query", "{}"], "the sparse query is empty"),
    (["--vector", "[1, 0]"], "has 50 features"),
])
def test_dense_only_search_options_are_one_error_line(capsys, sparse_db, args, message):
    db, _ = sparse_db
    one_error_line(run(capsys, "--store", db, "search", "sp", *args), 2, message)


def test_dense_space_refuses_sparse_queries_and_reads(capsys, tmp_path):
    db = str(tmp_path / "d.db")
    np.save(tmp_path / "v.npy", np.eye(3, dtype=np.float32))
    assert run(capsys, "--store", db, "ingest", "dense", str(tmp_path / "v.npy"), "--auto-id")[0] == 0
    one_error_line(run(capsys, "--store", db, "search", "dense", "--sparse-query", '{"1": 1.0}'), 2,
                   "a sparse query searches a sparse space")
    src = _bad(tmp_path, [{"id": "x", "indices": [1], "values": [1.0]}])
    one_error_line(run(capsys, "--store", db, "ingest", "dense", str(src), "--indices-col", "indices",
                       "--values-col", "values", "--n-features", "3"), 4, "holds dense vectors")
