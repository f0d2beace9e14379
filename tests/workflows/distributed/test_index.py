"""Indexes built on Ray (issue 18, part 3): IVF-PQ filled by workers and merged, HNSW built per shard.

Real data throughout: the GloVe 6B 50-d vectors (the most frequent words first). The merged IVF-PQ index
is compared with one filled in a single pass from the same trained quantisers (ids and scores identical,
and the serialised index byte for byte); the sharded HNSW's recall against exact search with a single
graph's, and its fan-out merge with a brute-force merge of what every shard returned.
"""

from __future__ import annotations

import json
from pathlib import Path

import faiss
import numpy as np
import pytest
from _cli_process import run

from repspace import Store
from repspace.core.errors import BackendError, InputError
from repspace.core.space import Metric
from repspace.engines.search.funnel import FunnelIndex
from repspace.engines.search.hnsw import HNSWIndex, HNSWParams, ShardedHNSW, merge_topk
from repspace.engines.search.specs import parse_spec
from repspace.workflows.distributed.index import add_ivf_shards, build_hnsw_shards
from repspace.workflows.search.hnsw import sharded_paths
from repspace.workflows.search.indexes import build_index, drop_index, funnel_paths, list_indexes
from repspace.workflows.search.query import knn

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(autouse=True)
def _own_local_ray(monkeypatch):
    """``ray.init()`` without an address joins the newest Ray on the machine; these tests start their own."""
    monkeypatch.setenv("RAY_ADDRESS", "local")


@pytest.fixture(scope="module")
def glove(glove_vectors) -> np.ndarray:
    """The 31,000 most frequent GloVe words' vectors, float32 (30,000 to index, 1,000 held out as queries)."""
    return np.ascontiguousarray(glove_vectors[:31_000], dtype=np.float32)


def _space(store, glove: np.ndarray, n: int, metric: str = "cosine", name: str = "glove"):
    sp = store.create_space(name, dim=50, metric=metric)
    sp.add([f"w{i}" for i in range(n)], glove[:n])
    return sp


def _contiguous(x: np.ndarray, shards: int):
    """Pieces as the search workflow cuts them: equal contiguous runs of rows, in row order."""
    for s, rows in enumerate(np.array_split(np.arange(len(x)), shards)):
        yield s, x[rows], rows


def _copy(ix: FunnelIndex) -> FunnelIndex:
    out = FunnelIndex(ix.spec, ix.dim, ix.metric)
    out.index = faiss.deserialize_index(faiss.serialize_index(ix.index))
    return out


# -- IVF-PQ: shards filled by workers, merged == filled in one pass ------------------------------------


@pytest.mark.parametrize(("spec", "metric", "merge"), [
    ("ivf64,pq10", "cosine", "memory"),
    ("ivf128,pq25>rerank", "l2", "disk"),  # FAISS' on-disk merge (merge_ondisk), read back into the index
])
def test_merged_ivfpq_is_the_single_built_index(ray_local, glove, spec, metric, merge):
    base, queries = glove[:12_000], glove[30_000:30_300]
    trained = FunnelIndex(spec, 50, metric).train(base[np.random.default_rng(0).choice(12_000, 5_000, False)])
    single = _copy(trained)
    single.add(base, np.arange(12_000))  # one pass over every row
    merged = _copy(trained)
    built = add_ivf_shards(merged, _contiguous(base, 3), 3, merge=merge)
    assert built.merge == merge and built.index is merged
    assert [w.rows for w in built.work] == [4000, 4000, 4000] and sum(built.nodes.values()) == 12_000
    fetch = lambda rows: base[rows]  # noqa: E731
    s1, r1 = single.search(queries, 10, fetch=fetch)
    s2, r2 = merged.search(queries, 10, fetch=fetch)
    np.testing.assert_array_equal(r2, r1)
    np.testing.assert_array_equal(s2, s1)
    # the same codes in the same lists in the same order
    assert bytes(faiss.serialize_index(merged.index)) == bytes(faiss.serialize_index(single.index))


def test_ivf_shards_refuse_an_index_not_ready(ray_local, glove):
    with pytest.raises(InputError, match="trained and empty"):
        add_ivf_shards(FunnelIndex("ivf16,pq10", 50, "l2"), [], 2)
    with pytest.raises(InputError, match="ivfN,pqM"):
        add_ivf_shards(FunnelIndex("int8", 50, "l2"), [], 2)


# -- HNSW per shard: recall and the fan-out merge ----------------------------------------------------


def test_sharded_hnsw_recall_and_fan_out_merge(ray_local, glove):
    base, queries = glove[:30_000], glove[30_000:30_300]
    params = HNSWParams(m=16)
    rows = np.arange(len(base))
    pieces = [(s, base[rows % 4 == s], rows[rows % 4 == s]) for s in range(4)]
    built = build_hnsw_shards(pieces, 4, 50, "cosine", params)
    assert [g.ntotal for g in built.index] == [7500] * 4 and built.merge == "none"
    sharded = ShardedHNSW(4, 50, Metric.COSINE, params, built.index)
    single = HNSWIndex(50, Metric.COSINE, params)
    single.add(base, rows)

    normed = base / np.linalg.norm(base, axis=1, keepdims=True)
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    truth = np.argsort(-(qn @ normed.T), axis=1)[:, :10]

    def recall(found: np.ndarray) -> float:
        return float(np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth)]))

    _, r_single = single.search(queries, 10, ef=64)
    d_sharded, r_sharded = sharded.search(queries, 10, ef=64)
    assert recall(r_sharded) >= recall(r_single) - 0.01, (recall(r_sharded), recall(r_single))
    # every label is a global row of the shard it came from
    assert np.all(r_sharded >= 0)
    # fan-out merge == brute force over every shard's own top 10: highest inner product, lower row on ties
    per_shard = [g.search(queries, 10, ef=64) for g in built.index]
    for qi in range(len(queries)):
        pool = [(float(d[qi, j]), int(r[qi, j])) for d, r in per_shard for j in range(10) if r[qi, j] >= 0]
        best = sorted(pool, key=lambda p: (-p[0], p[1]))[:10]
        assert r_sharded[qi].tolist() == [r for _, r in best]
        np.testing.assert_array_equal(d_sharded[qi], np.array([d for d, _ in best], dtype=np.float32))


def test_merge_topk_pads_and_breaks_ties_by_row():
    d, i = merge_topk([np.array([[1.0, 3.0]]), np.array([[1.0, np.inf]])], [np.array([[9, 4]]), np.array([[2, -1]])],
                      4, ascending=True)
    assert i.tolist() == [[2, 9, 4, -1]] and d[0, :3].tolist() == [1.0, 1.0, 3.0] and d[0, 3] == np.inf


# -- the search workflow's build on Ray: saved where and as the local build saves it ----------------------


@pytest.mark.slow
def test_ray_build_is_the_local_build(store, ray_local, glove):
    sp = _space(store, glove, 12_000)
    report = build_index(sp, "ivf64,pq10>rerank", backend="ray", shards=3)
    assert (report.spec, report.action, report.ntotal, report.backend, report.merge) == (
        "ivf64,pq10>rerank10", "built", 12_000, "ray", "memory")
    assert sum(report.nodes.values()) == 12_000
    assert [(r.spec, r.action) for r in list_indexes(sp)] == [("ivf64-pq10", "current"), ("vectors", "current")]
    path, stamp_path = funnel_paths(sp, parse_spec("ivf64,pq10"))
    ray_bytes, ray_stamp = path.read_bytes(), json.loads(stamp_path.read_text())
    q = glove[30_000:30_100]
    on_ray = knn(sp, q, 10, index="ivf64,pq10>rerank")
    assert on_ray.plan.index_action == "loaded"
    drop_index(sp, "ivf64,pq10")
    local = build_index(sp, "ivf64,pq10>rerank")  # trained on the same seeded sample, filled in one pass
    assert local.action == "built" and local.backend is None and "nodes" not in local.to_dict()
    assert path.read_bytes() == ray_bytes and json.loads(stamp_path.read_text()) == ray_stamp
    again = knn(sp, q, 10, index="ivf64,pq10>rerank")
    np.testing.assert_array_equal(again.rows, on_ray.rows)
    np.testing.assert_array_equal(again.scores, on_ray.scores)
    # current: a Ray build loads it rather than building it again
    assert build_index(sp, "ivf64,pq10", backend="ray").action == "loaded"


def test_stale_ray_index_is_not_trusted(store, ray_local, glove):
    sp = _space(store, glove, 6_000, metric="l2")
    spec = "hnsw16,shards2"
    first = build_index(sp, spec, backend="ray")
    assert first.action == "built" and first.merge == "none" and sum(first.nodes.values()) == 6_000
    assert [(r.spec, r.action) for r in list_indexes(sp)] == [(spec, "current")]
    path = sharded_paths(sp, HNSWParams(m=16), 2)[0]
    assert path.exists() and not (path.parent / "hnsw-m16-efc100.faiss").exists()
    # rows added: behind, extended (not rebuilt) by the next use
    sp.add([f"x{i}" for i in range(500)], glove[6_000:6_500])
    assert [r.action for r in list_indexes(sp)] == ["behind (extended on next use)"]
    res = knn(sp, glove[6_000:6_010], 1, index=spec)
    assert res.plan.index_action == "extended" and res.plan.method == spec
    assert res.rows[:, 0].tolist() == list(range(6_000, 6_010))
    # a third of the rows deleted: stale; a Ray build rebuilds it on the cluster instead of trusting it
    sp.delete([f"w{i}" for i in range(2_200)])
    rebuilt = build_index(sp, spec, backend="ray")
    assert rebuilt.action == "rebuilt" and rebuilt.ntotal == 4_300 and sum(rebuilt.nodes.values()) == 4_300
    res = knn(sp, glove[:50], 5, index=spec)
    assert res.plan.index_action == "loaded" and res.rows.min() >= 2_200
    # a damaged file is rebuilt, never trusted
    path.write_bytes(b"not an index")
    assert build_index(sp, spec).action == "rebuilt"


# -- the CLI seam ------------------------------------------------------------------------------------


@pytest.fixture()
def db(tmp_path: Path, glove) -> str:
    path = str(tmp_path / "s.db")
    with Store(path) as s:
        _space(s, glove, 5_000)
    return path


def test_cli_builds_on_ray_then_search_uses_it(capsys, db, ray_local):
    code, out, err = run(capsys, "--store", db, "index", "build", "glove", "ivf32,pq10>rerank", "--backend", "ray",
                         "--shards", "2", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["action"], report["ntotal"], report["backend"], report["merge"]) == ("built", 5_000, "ray",
                                                                                       "memory")
    code, out, err = run(capsys, "--store", db, "search", "glove", "--id", "w7", "--index", "ivf32,pq10>rerank",
                         "--explain", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["plan"]["method"] == "ivf32,pq10>rerank10" and data["plan"]["index_action"] == "loaded"
    exact = json.loads(run(capsys, "--store", db, "search", "glove", "--id", "w7", "--exact", "--json")[1])
    found, truth = [h["id"] for h in data["hits"]], [h["id"] for h in exact]
    assert found[0] == truth[0] and len(set(found) & set(truth)) >= 8
    code, out, err = run(capsys, "--store", db, "index", "build", "glove", "hnsw16,shards2", "--backend", "ray")
    assert code == 0 and "hnsw16,shards2: built, 5,000 vectors, on 1 Ray node(s)" in err + out
    listed = json.loads(run(capsys, "--store", db, "index", "list", "glove", "--json")[1])
    assert [(r["spec"], r["action"]) for r in listed] == [("hnsw16,shards2", "current"), ("ivf32-pq10", "current"),
                                                          ("vectors", "current")]


def test_cli_unreachable_ray_is_one_line_and_writes_nothing(capsys, db):
    import ray

    if ray.is_initialized():  # a running Ray would be reused whatever the address
        ray.shutdown()
    index_dir = Path(db + ".indexes")
    before = {p.name for p in Path(db).parent.iterdir()}
    code, out, err = run(capsys, "--store", db, "index", "build", "glove", "ivf32,pq10", "--backend", "ray",
                         "--ray-address", "127.0.0.1:1")
    assert code == BackendError.exit_code == 7
    assert out == "" and len(err.strip().splitlines()) == 1 and "127.0.0.1:1" in err
    # nothing but SQLite's own WAL files beside the store: no index folder, no temporary files
    assert {p.name for p in Path(db).parent.iterdir()} - before <= {"s.db-wal", "s.db-shm"}
    assert not index_dir.exists()


def test_backend_choices_are_checked_before_any_work(capsys, db):
    code, _, err = run(capsys, "--store", db, "index", "build", "glove", "ivf32,pq10", "--backend", "spark")
    assert code == InputError.exit_code and "the backend must be one of local, ray, not 'spark'" in err
    code, _, err = run(capsys, "--store", db, "index", "build", "glove", "int8", "--backend", "ray")
    assert code == InputError.exit_code and "backend 'ray' builds ivfN,pqM and hnswM,shardsN" in err
    code, _, err = run(capsys, "--store", db, "index", "build", "glove", "hnsw32", "--backend", "ray")
    assert code == InputError.exit_code and "hnsw32,shards4" in err
    code, _, err = run(capsys, "--store", db, "index", "build", "glove", "ivf32,pq10", "--shards", "2")
    assert code == InputError.exit_code and "--backend ray" in err
    code, _, err = run(capsys, "--store", db, "index", "build", "glove", "hnsw16,shards2", "--backend", "ray",
                       "--shards", "3")
    assert code == InputError.exit_code and "spec names them" in err


# -- a simulated two-node cluster (last: it replaces the session's local Ray) ---------------------------


@pytest.mark.slow
def test_two_nodes_both_build(store, ray_two_nodes, glove):
    ray, _cluster, nodes = ray_two_nodes
    ids = {n.node_id for n in nodes}
    sp = _space(store, glove, 6_000)
    ivf = build_index(sp, "ivf32,pq10", backend="ray", shards=4)
    assert set(ivf.nodes) == ids and all(c > 0 for c in ivf.nodes.values()) and sum(ivf.nodes.values()) == 6_000
    path = funnel_paths(sp, parse_spec("ivf32,pq10"))[0]
    on_cluster = path.read_bytes()
    q = glove[30_000:30_050]
    found = knn(sp, q, 10, index="ivf32,pq10").rows
    drop_index(sp, "ivf32,pq10")
    assert build_index(sp, "ivf32,pq10").action == "built"
    assert path.read_bytes() == on_cluster
    np.testing.assert_array_equal(knn(sp, q, 10, index="ivf32,pq10").rows, found)
    graphs = build_index(sp, "hnsw16,shards2", backend="ray")
    assert set(graphs.nodes) == ids and sorted(graphs.nodes.values()) == [3_000, 3_000]
