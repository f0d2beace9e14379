"""A space's sharded HNSW index (``hnsw16,shards3``) built locally: persisted, listed, searched, kept current."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.space import Metric
from repspace.engines.search.hnsw import HNSWParams, ShardedHNSW, merge_topk
from repspace.workflows.search.hnsw import ensure_sharded_hnsw, sharded_paths
from repspace.workflows.search.indexes import build_index, drop_index, list_indexes
from repspace.workflows.search.query import knn

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture()
def space(store, glove_vectors):
    sp = store.create_space("g", dim=50, metric="l2")
    sp.add([f"w{i}" for i in range(3_000)], np.asarray(glove_vectors[:3_000], dtype=np.float32))
    return sp


def test_local_build_list_search_drop(space, glove_vectors):
    report = build_index(space, "hnsw16,shards3")
    assert (report.spec, report.action, report.ntotal, report.backend) == ("hnsw16,shards3", "built", 3_000, None)
    path = sharded_paths(space, HNSWParams(m=16), 3)[0]
    assert report.memory_bytes == path.stat().st_size
    loaded = ensure_sharded_hnsw(space, HNSWParams(m=16), 3)
    # row r in shard r % 3, labelled by its global row
    assert [s.ntotal for s in loaded.index.shards] == [1_000, 1_000, 1_000]
    labels = [np.sort(np.array([s.index.id_map.at(j) for j in range(s.ntotal)])) for s in loaded.index.shards]
    assert all(np.array_equal(lab, np.arange(i, 3_000, 3)) for i, lab in enumerate(labels))
    assert [(r.spec, r.action) for r in list_indexes(space)] == [("hnsw16,shards3", "current")]
    q = np.asarray(glove_vectors[:20], dtype=np.float32)
    res = knn(space, q, 5, index="hnsw16,shards3,ef80")
    assert res.plan.method == "hnsw16,shards3,ef80" and res.plan.ef == 80 and res.plan.index_action == "loaded"
    assert res.rows[:, 0].tolist() == list(range(20)) and np.all(res.scores[:, 0] == 0)
    assert np.all(np.diff(res.scores, axis=1) >= 0)  # l2: distances ascending, as exact search gives them
    exact = knn(space, q, 5, method="exact")
    np.testing.assert_allclose(res.scores, exact.scores, rtol=1e-5, atol=1e-5)
    # a deleted row is masked in every shard
    space.delete(["w1"])
    after = knn(space, q[:3], 5, index="hnsw16,shards3")
    assert 1 not in after.rows and after.plan.index_action == "loaded"
    assert drop_index(space, "hnsw16,shards3").action == "dropped" and not path.exists()
    assert list_indexes(space) == []


def test_other_shard_counts_are_other_indexes(space):
    build_index(space, "hnsw16,shards2")
    build_index(space, "hnsw16,shards3")
    assert build_index(space, "hnsw16,shards2").action == "loaded"
    assert sorted(r.spec for r in list_indexes(space)) == ["hnsw16,shards2", "hnsw16,shards3"]


def test_empty_shards_and_merge_padding():
    ix = ShardedHNSW(4, 3, Metric.IP, HNSWParams(m=8))
    d, i = ix.search(np.ones((2, 3), np.float32), 3, ef=16)
    assert i.tolist() == [[-1] * 3] * 2 and np.all(d == -np.inf)
    ix.add(np.eye(3, dtype=np.float32), np.array([0, 1, 2]))  # shard 3 stays empty
    d, i = ix.search(np.array([[1.0, 0.5, 0.0]], np.float32), 5, ef=16)
    assert i.tolist() == [[0, 1, 2, -1, -1]] and d[0, :3].tolist() == [1.0, 0.5, 0.0]
    d, i = merge_topk([np.array([[0.5, 0.5]])], [np.array([[8, 3]])], 2, ascending=False)
    assert i.tolist() == [[3, 8]]
