"""Measure on Ray: the tile-join kNN graph and the map/reduce moment pass equal the local ones.

Checked against the local computations themselves (exact ``knn_graph``, ``moments``, ``compare``) on
real data (GloVe), on a local Ray of 2 CPUs and on a simulated two-node cluster, and end to end
through ``repspace diagnose`` / ``repspace compare --backend ray``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import run

from repspace import Store
from repspace.core.arrays import block_rows
from repspace.core.knn import knn_graph
from repspace.core.moments import moments
from repspace.engines.compare import compare
from repspace.workflows.distributed.measure import (
    RayKnnGraph,
    compare_ray,
    knn_graph_ray,
    moments_ray,
    ray_backend,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

MOMENT_MEASURES = ["cka_linear", "cka_debiased", "procrustes", "svcca"]


def _exact_cosine(X: np.ndarray, i: int, cols: np.ndarray) -> np.ndarray:
    """Float64 cosine distances of row ``i`` to rows ``cols`` of ``X``."""
    x = X.astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return 1.0 - x[cols] @ x[i]


def _same_modulo_near_ties(g: RayKnnGraph, ref, X: np.ndarray, rel: float = 1e-6) -> int:
    """Assert ``g`` and ``ref`` agree row by row except where neighbours are within ``rel`` of each other.

    A differing row must still hold, under exact float64 arithmetic on ``X``, neighbours as near as the
    reference's at every rank (within ``rel`` of the distance scale). Returns the number of such rows.
    """
    rows = np.flatnonzero((g.indices != ref.indices).any(axis=1))
    for i in rows:
        got = np.sort(_exact_cosine(X, i, g.indices[i]))
        want = np.sort(_exact_cosine(X, i, ref.indices[i]))
        np.testing.assert_allclose(got, want, rtol=0, atol=rel * max(1.0, float(np.abs(want).max())))
    return len(rows)


# -- the kNN graph -------------------------------------------------------------------------------------------


def test_glove_20k_graph_is_the_local_exact_graph(ray_local, glove_vectors):
    X = np.ascontiguousarray(glove_vectors[:20_000], np.float32)
    ref = knn_graph(X, 10, metric="cosine", exact=True)
    g = knn_graph_ray(X, 10, metric="cosine", block_rows=6_000)  # 4 blocks, the last short: 16 tiles
    assert isinstance(g, RayKnnGraph) and g.method == "exact" and g.recall is None and g.recall_sample == 0
    assert g.blocks == 4 and sum(g.tiles_by_node.values()) == 16
    assert g.to_dict() == {**ref.to_dict(), "backend": "ray", "blocks": 4, "tiles_by_node": g.tiles_by_node}
    # one float64 score per pair whatever the tile, so the graphs are the same, near-ties included
    assert _same_modulo_near_ties(g, ref, X) == 0
    np.testing.assert_array_equal(g.distances, ref.distances)
    assert g.distances.dtype == np.float32 and g.indices.dtype == np.int64

    # a perturbed copy: the same graph up to neighbours whose distances differ by less than the noise
    Xp = X + np.random.default_rng(0).normal(scale=1e-6, size=X.shape).astype(np.float32)
    gp = knn_graph_ray(Xp, 10, metric="cosine", block_rows=8_192)
    moved = _same_modulo_near_ties(gp, ref, X, rel=1e-5)
    assert moved < 0.01 * len(X)  # only near-ties may change order
    np.testing.assert_allclose(gp.distances, ref.distances, atol=2e-5)


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_ties_duplicates_and_any_blocking_give_the_same_graph(ray_local, metric):
    rng = np.random.default_rng(1)
    X = rng.integers(-2, 3, size=(300, 4)).astype(np.float32)  # many exact ties and duplicate rows
    X[:5] = 0.0  # zero rows: cosine 0 to everything
    ref = knn_graph(X, 7, metric=metric, exact=True)
    for rows in (37, 128, 299):  # 9, 3 and 2 blocks
        g = knn_graph_ray(X, 7, metric=metric, block_rows=rows, fan_in=2)  # tree merges of 2
        np.testing.assert_array_equal(g.indices, ref.indices)
        np.testing.assert_array_equal(g.distances, ref.distances)


def test_graph_input_errors_are_one_line(ray_local):
    from repspace.core.errors import InputError

    with pytest.raises(InputError, match="at least 11 items"):
        knn_graph_ray(np.ones((10, 3)), 10)
    with pytest.raises(InputError, match="fan_in"):
        knn_graph_ray(np.eye(20), 3, fan_in=1)
    with pytest.raises(InputError, match="NaN"):
        knn_graph_ray(np.full((20, 3), np.nan), 3)


def test_a_ray_backend_passed_down_builds_the_engines_graphs(ray_local):
    from repspace.core.errors import InputError
    from repspace.engines.geometry import hubness

    X = np.random.default_rng(0).standard_normal((500, 8))
    with ray_backend(moments=False, block_rows=200) as backend:
        got = hubness(X, k=5, backend=backend)
        with pytest.raises(InputError, match="exact kNN graphs only"):
            knn_graph(X, 5, exact=False, backend=backend)
        assert moments(X, X, backend=backend).trace_x == moments(X, X).trace_x  # moments=False: summed here
    assert [g.blocks for g in backend.run.graphs] == [3] and backend.run.moment_passes == 0
    np.testing.assert_array_equal(got.k_occurrence, hubness(X, k=5).k_occurrence)


# -- the moment pass ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def glove_pair(glove_vectors) -> tuple[np.ndarray, np.ndarray]:
    """20,000 GloVe rows (float64) and a rotated, squashed, truncated copy of them."""
    X = np.asarray(glove_vectors[:20_000], np.float64)
    Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((50, 50)))
    return X, np.tanh(0.5 * X @ Q)[:, :40]


def test_cka_and_friends_match_local_on_uneven_shards(ray_local, glove_pair):
    # Float64 products: other shards, thread counts and BLAS kernels change the order of n-term float64 sums,
    # which then differ by about eps64·√n = 3e-14 relative (n = 20,000); 1e-10 leaves room for the conditioning
    # of SVCCA's eigenproblems and still catches one row lost or counted twice (about 1e-5 here).
    X, Y = glove_pair
    local = compare(X, Y, MOMENT_MEASURES).scores()
    assert 0.5 < local["cka_linear"] < 0.99  # a real, non-trivial comparison
    for shards in ([1, 6_999, 13_000], 3_000):
        with ray_backend(knn=False, shards=shards) as backend:
            got = compare(X, Y, MOMENT_MEASURES, backend=backend).scores()
        run_ = backend.run
        assert run_.moment_passes == 1 and run_.shards == (3 if isinstance(shards, list) else 7)
        for key in MOMENT_MEASURES:
            assert got[key] == pytest.approx(local[key], rel=1e-10, abs=1e-12), key
    assert compare_ray(X, Y, "cka_linear", shards=[5_000, 15_000])["cka_linear"] == pytest.approx(
        local["cka_linear"], rel=1e-10)


def test_moments_are_the_local_moments(ray_local, glove_pair):
    X, Y = glove_pair
    ref = moments(X, Y, debiased=True)
    m = moments_ray(X, Y, debiased=True, shards=[12_345, 7_655])
    for name in ("cyx", "cxx", "cyy", "mean_x", "mean_y"):
        np.testing.assert_allclose(getattr(m, name), getattr(ref, name), rtol=1e-12,
                                   atol=1e-12 * np.abs(getattr(ref, name)).max())
    for name in ("trace_x", "trace_y", "hsic_xy", "hsic_xx", "hsic_yy"):
        assert getattr(m, name) == pytest.approx(getattr(ref, name), rel=1e-11)
    assert (m.n, m.products, m.scale_x, m.scale_y) == (ref.n, ref.products, ref.scale_x, ref.scale_y)


def test_float32_default_shards_are_whole_local_blocks(ray_local, glove_vectors):
    X = np.ascontiguousarray(glove_vectors[:20_000], np.float32)
    Y = np.ascontiguousarray(np.sqrt(np.abs(X[:, ::-1])) + X[:, :1], np.float32)
    local = compare(X, Y, ["cka_linear", "procrustes"]).scores()
    with ray_backend(knn=False) as backend:
        got = compare(X, Y, ["cka_linear", "procrustes"], backend=backend).scores()
    run_ = backend.run
    # the default shards are whole blocks of the local pass: here its one block of all the rows
    blocks = -(-len(X) // block_rows(X.shape[1] + Y.shape[1]))
    assert blocks == 1 and (run_.moment_passes, run_.shards) == (1, blocks)
    # The same float32 block products, but not the same float32 sums: a Ray task runs its BLAS on its own
    # thread count (one per task by default, the driver on every core) and the kernels may split and order the
    # n-term sums of each product differently. Two float32 sums of n terms differ by about eps32·√n relative
    # (random-walk rounding); CKA and the Procrustes distance, ratios of such sums, by the same order.
    # (A row lost at a shard edge moves this CKA by about 1.6e-5, so near the bound: the float64 test above,
    # whose sums agree to about eps64·√n, catches that at 1e-10.)
    rel = np.finfo(np.float32).eps * np.sqrt(len(X))  # 1.7e-5 for 20,000 rows
    assert got["cka_linear"] == pytest.approx(local["cka_linear"], rel=rel)
    assert got["procrustes"] == pytest.approx(local["procrustes"], rel=rel)
    # off the local blocks: other float32 sums of at most n terms, the same bound
    uneven = compare_ray(X, Y, ["cka_linear"], shards=[1, 9_999, 10_000])["cka_linear"]
    assert uneven == pytest.approx(local["cka_linear"], rel=rel)


def test_shard_sizes_must_cover_the_rows(ray_local):
    from repspace.core.errors import InputError

    with pytest.raises(InputError, match="sum to the 10 rows"):
        moments_ray(np.eye(10), np.eye(10), shards=[3, 3])


# -- the CLI seam -----------------------------------------------------------------------------------------


@pytest.fixture()
def db(tmp_path: Path, glove_vectors) -> str:
    x = np.ascontiguousarray(glove_vectors[:3_000], np.float32)
    path = str(tmp_path / "s.db")
    ids = [f"w{i}" for i in range(3_000)]
    with Store(path) as store:
        store.create_space("a", dim=50).add(ids, x)
        store.create_space("b", dim=50).add(ids, np.tanh(x - x.mean(axis=0)))
    return path


def test_cli_diagnose_on_ray_gives_the_local_figures(capsys, ray_local, db):
    code, out, err = run(capsys, "--store", db, "diagnose", "a", "--json")
    assert code == 0, err
    local = json.loads(out)
    code, out, err = run(capsys, "--store", db, "diagnose", "a", "--json", "--backend", "ray")
    assert code == 0, err
    assert json.loads(out) == local  # the same exact graphs, so every figure to the last bit
    assert local["hubness.knn"]["method"] == "exact" and "intrinsic_dimension.twonn" in local


def test_cli_compare_on_ray_gives_the_local_figures(capsys, ray_local, db):
    measures = ["--measures", "cka_linear,cka_debiased,procrustes,svcca,mutual_knn,neighbourhood_jaccard"]
    code, out, err = run(capsys, "--store", db, "compare", "a", "b", *measures, "--json")
    assert code == 0, err
    local = json.loads(out)
    code, out, err = run(capsys, "--store", db, "compare", "a", "b", *measures, "--json", "--backend", "ray")
    assert code == 0, err
    got = json.loads(out)
    assert (local["backend"], got["backend"]) == ("local", "ray")
    # svcca among the measures makes the pass multiply in float64 (compare's rule), so local and Ray sums
    # agree to about eps64·√n (1e-14 here, n = 3,000) whatever the threads and kernels: 1e-10 holds
    for key in ("cka_linear", "cka_debiased", "procrustes"):
        assert got[key] == pytest.approx(local[key], rel=1e-10), key
    assert got["svcca"]["value"] == pytest.approx(local["svcca"]["value"], rel=1e-10)
    for key in ("mutual_knn", "neighbourhood_jaccard", "n_shared", "skipped"):
        assert got[key] == local[key], key


@pytest.mark.parametrize("args, message", [
    (["diagnose", "a", "--backend", "spark"], "the backend must be one of local, ray, not 'spark'"),
    (["diagnose", "a", "--backend", "ray", "--hnsw"], "does not combine with --hnsw"),
    (["compare", "a", "b", "--backend", "spark"], "the backend must be one of local, ray, not 'spark'"),
    (["diagnose", "--encoder", "hf-layers:minilm", "--texts", "t.txt", "--backend", "ray"], "--encoder"),
])
def test_cli_bad_backend_is_one_line(capsys, db, args, message):
    code, out, err = run(capsys, "--store", db, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


# -- two nodes, and no cluster at all (these restart Ray: keep them last) ------------------------------------


@pytest.mark.slow  # starts a simulated cluster of three Ray nodes
def test_tiles_run_on_both_nodes_and_the_graph_is_local(ray_two_nodes, glove_vectors):
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    ray, _, nodes = ray_two_nodes

    @ray.remote(num_cpus=1)
    def started() -> str:  # a worker up on each node first: Ray hands queued tasks to workers already leased
        return ray.get_runtime_context().get_node_id()

    ids = {n.node_id for n in nodes}
    assert set(ray.get([started.options(scheduling_strategy=NodeAffinitySchedulingStrategy(i, soft=False)).remote()
                        for i in ids])) == ids
    X = np.ascontiguousarray(glove_vectors[:20_000], np.float32)
    g = knn_graph_ray(X, 10, metric="cosine", block_rows=4_000)  # 25 tiles over 2 single-CPU nodes
    assert set(g.tiles_by_node) == ids, g.tiles_by_node  # the head has no CPU: none ran there
    assert sum(g.tiles_by_node.values()) == 25
    ref = knn_graph(X, 10, metric="cosine", exact=True)
    np.testing.assert_array_equal(g.indices, ref.indices)
    np.testing.assert_array_equal(g.distances, ref.distances)
    X64 = X[:6_000].astype(np.float64)
    Y = np.tanh(X64)
    got = compare_ray(X64, Y, ["cka_linear"], shards=[2_500, 3_500])["cka_linear"]
    assert got == pytest.approx(compare(X64, Y, ["cka_linear"])["cka_linear"], rel=1e-10)


def test_unreachable_ray_address_is_one_line_exit_7_and_stores_nothing(capsys, db):
    import ray

    if ray.is_initialized():  # a running Ray is reused whatever the address: test the connect itself
        ray.shutdown()
    with Store(db) as store:
        before = (store.space("a").info().generation, store.space("b").info().generation)
    for args in (["diagnose", "a", "--save"], ["compare", "a", "b", "--save"]):
        code, out, err = run(capsys, "--store", db, *args, "--backend", "ray", "--ray-address", "127.0.0.1:1")
        assert code == 7, err
        assert "cannot reach a Ray cluster at 127.0.0.1:1" in err and len(err.strip().splitlines()) == 1, err
    with Store(db) as store:
        assert (store.space("a").info().generation, store.space("b").info().generation) == before
        assert all("k_occurrence" not in it.metadata and "jaccard" not in it.metadata
                   for it in store.space("a").get(["w0", "w1", "w2"]))
    assert not ray.is_initialized()
