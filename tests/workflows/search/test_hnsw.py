"""HNSW: recall against exact, persistence beside the store, extension, masking, rebuilds, stamps."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import repspace.workflows.search.persist as persist_mod
from repspace.workflows.search import HNSWParams, ensure_hnsw, knn

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

SMALL = HNSWParams(m=16, ef_construction=64)


@pytest.fixture(autouse=True)
def _no_memory_cache(monkeypatch):
    """Each test starts with an empty in-process index cache (what a new process has)."""
    monkeypatch.setattr(persist_mod, "_MEMORY", {})


def _clustered(rng, n, dim, clusters=40, spread=1.0):
    centers = rng.standard_normal((clusters, dim)) * 2.0
    return (centers[rng.integers(0, clusters, n)] + spread * rng.standard_normal((n, dim))).astype(np.float32), centers


def _files(store, space, params=SMALL):
    folder = store.index_dir / space.uid
    stem = f"hnsw-m{params.m}-efc{params.ef_construction}"
    return folder / f"{stem}.faiss", folder / f"{stem}.json"


def _space(store, rng, name="h", n=3000, dim=16, metric="l2"):
    sp = store.create_space(name, dim=dim, metric=metric)
    x, _ = _clustered(rng, n, dim)
    sp.add([f"i{i}" for i in range(n)], x)
    return sp, x


@pytest.mark.parametrize("metric", ["cosine"])
def test_recall_at_10_on_clustered_data(store, rng, metric):
    n, dim = 20_000, 64
    sp = store.create_space("big", dim=dim, metric=metric)
    x, centers = _clustered(rng, n, dim, clusters=200, spread=1.5)
    sp.add([f"i{i}" for i in range(n)], x)
    q = (centers[rng.integers(0, 200, 200)] + 1.5 * rng.standard_normal((200, dim))).astype(np.float32)
    approx = knn(sp, q, 10, method="hnsw")
    exact = knn(sp, q, 10, method="exact")
    assert approx.plan.method == "hnsw" and approx.plan.index_action == "built"
    assert approx.rows.shape == (200, 10) and np.all(approx.rows >= 0)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(approx.rows, exact.rows)])
    assert recall >= 0.95, recall
    # Scores of the rows HNSW returns are the true scores of those rows.
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    true = np.einsum("md,mkd->mk", qn, xn[approx.rows])
    np.testing.assert_allclose(approx.scores, true, atol=1e-4)
    assert np.all(np.diff(approx.scores, axis=1) <= 1e-6)
    # method="auto" on this size stays exact.
    assert knn(sp, q[:2], 10).plan.method == "exact"


def test_index_persists_and_is_loaded(store, rng, monkeypatch):
    sp, x = _space(store, rng)
    res = knn(sp, x[:5], 3, method="hnsw", hnsw=SMALL)
    assert res.plan.index_action == "built"
    assert res.rows[:, 0].tolist() == [0, 1, 2, 3, 4]
    index_file, stamp_file = _files(store, sp)
    assert index_file.is_file() and stamp_file.is_file()
    assert not list(index_file.parent.glob("*.tmp"))
    stamp = json.loads(stamp_file.read_text())
    assert stamp["space_uid"] == sp.uid and stamp["rows"] == 3000 and stamp["ntotal"] == 3000
    assert stamp["metric"] == "l2" and stamp["dim"] == 16 and stamp["m"] == 16 and stamp["ef_construction"] == 64
    mtime = index_file.stat().st_mtime_ns
    # A fresh process: empty cache, new Store object.
    monkeypatch.setattr(persist_mod, "_MEMORY", {})
    from repspace import Store

    with Store(store.path) as other:
        sp2 = other.space("h")
        loaded = ensure_hnsw(sp2, SMALL)
        assert loaded.action == "loaded" and not loaded.needs_mask and loaded.index.ntotal == 3000
        res2 = knn(sp2, x[:5], 3, method="hnsw", hnsw=SMALL)
        assert res2.plan.index_action == "loaded"
        assert np.array_equal(res2.rows, res.rows)
    assert index_file.stat().st_mtime_ns == mtime  # loading did not rewrite it
    # Different parameters: a separate index.
    assert ensure_hnsw(sp, HNSWParams(m=8, ef_construction=32)).action == "built"
    assert _files(store, sp, HNSWParams(m=8, ef_construction=32))[0].is_file()
    assert ensure_hnsw(sp, SMALL).action == "loaded"


def test_added_rows_extend_the_index_and_are_findable(store, rng):
    sp, x = _space(store, rng)
    assert ensure_hnsw(sp, SMALL).action == "built"
    new = rng.standard_normal((400, 16)).astype(np.float32) * 3 + 10  # far from everything else
    sp.add([f"n{i}" for i in range(400)], new)
    res = knn(sp, new, 1, method="hnsw", hnsw=SMALL)
    assert res.plan.index_action == "extended"
    assert res.rows[:, 0].tolist() == list(range(3000, 3400))
    np.testing.assert_allclose(res.scores[:, 0], 0.0, atol=1e-3)
    stamp = json.loads(_files(store, sp)[1].read_text())
    assert stamp["rows"] == 3400 and stamp["ntotal"] == 3400 and stamp["generation"] == sp.info().generation
    assert ensure_hnsw(sp, SMALL).action == "loaded"
    hits = sp.search(new[7], k=1, method="hnsw", hnsw=SMALL)
    assert hits[0].id == "n7"


def test_deleted_items_never_appear(store, rng):
    sp, x = _space(store, rng)
    ensure_hnsw(sp, SMALL)
    gone = list(range(0, 3000, 5))[:500]  # 500 of 3000: below the rebuild threshold
    sp.delete([f"i{i}" for i in gone])
    loaded = ensure_hnsw(sp, SMALL)
    assert loaded.action == "loaded" and loaded.needs_mask
    assert loaded.index.ntotal == 3000  # still holds the dead rows
    # Query exactly at the deleted vectors, asking for many neighbours.
    res = knn(sp, x[gone[:100]], 50, method="hnsw", hnsw=SMALL)
    assert res.plan.index_action == "loaded"
    assert not set(res.rows.ravel().tolist()) & set(gone)
    assert np.all((res.rows >= 0).sum(axis=1) >= 45)  # the mask does not starve the search
    for q in x[gone[:20]]:
        hits = sp.search(q, k=30, method="hnsw", hnsw=SMALL)
        assert len(hits) == 30
        assert not {h.id for h in hits} & {f"i{i}" for i in gone}
    # Replaced items: the old row never appears, the new one does.
    sp.add(["i1", "i2"], rng.standard_normal((2, 16)).astype(np.float32) + 20)
    res = knn(sp, x[[1, 2]], 50, method="hnsw", hnsw=SMALL)
    assert res.plan.index_action == "extended"
    assert not {1, 2} & set(res.rows.ravel().tolist())
    assert not set(res.rows.ravel().tolist()) & set(gone)
    hits = sp.search(sp.vectors_of(["i1"])[0], k=1, method="hnsw", hnsw=SMALL)
    assert hits[0].id == "i1" and hits[0].row == 3000


def test_deleting_more_than_a_quarter_rebuilds(store, rng):
    sp, x = _space(store, rng, n=1000)
    ensure_hnsw(sp, SMALL)
    sp.delete([f"i{i}" for i in range(250)])  # exactly a quarter: still masked
    loaded = ensure_hnsw(sp, SMALL)
    assert loaded.action == "loaded" and loaded.needs_mask and loaded.index.ntotal == 1000
    sp.delete(["i250"])  # now more than a quarter
    loaded = ensure_hnsw(sp, SMALL)
    assert loaded.action == "rebuilt" and not loaded.needs_mask
    assert loaded.index.ntotal == 749 == loaded.stamp.ntotal
    stamp = json.loads(_files(store, sp)[1].read_text())
    assert stamp["ntotal"] == 749 and stamp["dead_at_build"] == 251 and stamp["clean"] is True
    res = knn(sp, x[:300], 10, method="hnsw", hnsw=SMALL)
    assert res.plan.index_action == "loaded"
    assert res.rows.min() >= 251
    assert ensure_hnsw(sp, SMALL).action == "loaded"


@pytest.mark.parametrize("edit", ["uid", "rows", "metric", "dim", "format", "ntotal", "garbage", "missing_index"])
def test_untrustworthy_stamp_is_rebuilt(store, rng, edit):
    sp, x = _space(store, rng, n=800)
    ensure_hnsw(sp, SMALL)
    index_file, stamp_file = _files(store, sp)
    stamp = json.loads(stamp_file.read_text())
    if edit == "uid":
        stamp["space_uid"] = "0" * 32
    elif edit == "rows":
        stamp["rows"] = 5000  # more rows than exist
    elif edit == "metric":
        stamp["metric"] = "ip"
    elif edit == "dim":
        stamp["dim"] = 17
    elif edit == "format":
        stamp["format"] = 99
    elif edit == "ntotal":
        stamp["ntotal"] = 801
    if edit == "garbage":
        stamp_file.write_text("{not json")
    elif edit == "missing_index":
        index_file.unlink()
    else:
        stamp_file.write_text(json.dumps(stamp))
    loaded = ensure_hnsw(sp, SMALL)
    # Any index or stamp left on disk that is not trusted is "rebuilt" ("built" is for a first build).
    assert loaded.action == "rebuilt"
    assert loaded.stamp.space_uid == sp.uid and loaded.stamp.rows == 800 and loaded.index.ntotal == 800
    fixed = json.loads(stamp_file.read_text())
    assert fixed["space_uid"] == sp.uid and fixed["rows"] == 800 and fixed["metric"] == "l2"
    res = knn(sp, x[:20], 1, method="hnsw", hnsw=SMALL)
    assert res.rows[:, 0].tolist() == list(range(20))


def test_index_of_other_space_copied_in_is_not_used(store, rng):
    a, xa = _space(store, rng, name="a", n=600)
    b, xb = _space(store, rng, name="b", n=600)
    ensure_hnsw(a, SMALL)
    fa, sa = _files(store, a)
    fb, sb = _files(store, b)
    fb.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(fa, fb)
    shutil.copy(sa, sb)  # a's stamp names a's uid
    loaded = ensure_hnsw(b, SMALL)
    assert loaded.action == "rebuilt"
    res = knn(b, xb[:10], 1, method="hnsw", hnsw=SMALL)
    assert res.rows[:, 0].tolist() == list(range(10))


def test_recreated_space_never_uses_old_index(store, rng):
    sp, x = _space(store, rng, name="same", n=1000)
    old_uid = sp.uid
    ensure_hnsw(sp, SMALL)
    old_files = _files(store, sp)
    saved = store.index_dir.parent / "saved-index"
    shutil.copytree(old_files[0].parent, saved)
    store.delete_space("same")
    assert not old_files[0].parent.exists()
    # Put the old index back where it was: the new space must still ignore it.
    shutil.copytree(saved, old_files[0].parent)
    new = store.create_space("same", dim=16, metric="l2")
    assert new.uid != old_uid
    y = rng.standard_normal((1000, 16)).astype(np.float32) + 50
    new.add([f"n{i}" for i in range(1000)], y)
    res = knn(new, y[:50], 1, method="hnsw", hnsw=SMALL)
    assert res.plan.index_action == "built"
    assert res.rows[:, 0].tolist() == list(range(50))
    hits = new.search(y[3], k=5, method="hnsw", hnsw=SMALL)
    assert hits[0].id == "n3" and all(h.id.startswith("n") for h in hits)
    assert _files(store, new)[0].is_file()
    assert json.loads(_files(store, new)[1].read_text())["space_uid"] == new.uid


def test_progress_and_empty_space(store, rng):
    sp, _ = _space(store, rng, n=500)
    calls = []
    ensure_hnsw(sp, SMALL, progress=lambda *a: calls.append(a))
    assert calls and calls[-1] == ("index", 500, 500)
    empty = store.create_space("e", dim=4, metric="l2")
    assert empty.search(np.ones(4), k=3, method="hnsw") == []


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_hnsw_scores_by_metric(store, rng, metric):
    sp, x = _space(store, rng, n=1500, metric=metric)
    q = rng.standard_normal((10, 16)).astype(np.float32)
    res = knn(sp, q, 8, method="hnsw", hnsw=SMALL)
    got = x[res.rows].astype(np.float64)
    if metric == "l2":
        true = np.linalg.norm(got - q[:, None, :], axis=2)  # Euclidean distance, not squared
        assert np.all(np.diff(res.scores, axis=1) >= -1e-5)
    else:
        true = np.einsum("md,mkd->mk", q, got)
        assert np.all(np.diff(res.scores, axis=1) <= 1e-5)
    np.testing.assert_allclose(res.scores, true, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
def test_equal_scores_go_to_the_lower_row(store, metric):
    """Copies of a vector score equally; HNSW results put them by row, as exact search does (FAISS
    leaves them in the order its graph search met them: 40 of 60 queries, before)."""
    rng = np.random.default_rng(1)
    pattern = rng.integers(0, 30, 1500)
    sp = store.create_space("dups", dim=16, metric=metric)
    sp.add([f"i{i}" for i in range(1500)], rng.standard_normal((30, 16)).astype(np.float32)[pattern])
    res = knn(sp, rng.standard_normal((20, 16)).astype(np.float32), 10, method="hnsw", hnsw=SMALL)
    assert np.all(res.rows >= 0)
    bad = [(r, list(rows)) for r, (rows, sc) in enumerate(zip(res.rows, res.scores))
           if any(a == b and x > y for a, b, x, y in zip(sc, sc[1:], rows, rows[1:]))]
    assert bad == []
    assert np.all(np.diff(res.scores, axis=1) >= 0) if metric == "l2" else np.all(np.diff(res.scores, axis=1) <= 0)


def test_bad_hnsw_params():
    from repspace import InputError

    for kw in ({"m": 1}, {"m": 300}, {"ef_construction": 0}, {"ef_construction": 20_000}):
        with pytest.raises(InputError):
            HNSWParams(**kw)


def test_stamp_with_wrong_types_is_rebuilt(store, rng):
    sp, _ = _space(store, rng, n=300)
    ensure_hnsw(sp, SMALL)
    stamp_file = _files(store, sp)[1]
    stamp = json.loads(stamp_file.read_text())
    stamp["rows"] = None
    stamp_file.write_text(json.dumps(stamp))
    assert ensure_hnsw(sp, SMALL).action == "rebuilt"


def test_corrupt_index_file_is_rebuilt(store, rng):
    sp, x = _space(store, rng, n=300)
    ensure_hnsw(sp, SMALL)
    index_file = _files(store, sp)[0]
    index_file.write_bytes(index_file.read_bytes()[:100])  # truncated
    loaded = ensure_hnsw(sp, SMALL)
    assert loaded.action == "rebuilt" and loaded.index.ntotal == 300


def test_concurrent_writer_during_index_extension(store, rng):
    from repspace import Store

    sp, _ = _space(store, rng, n=500)
    ensure_hnsw(sp, SMALL)
    sp.delete(["i0"])  # the index now needs a dead-row mask
    sp.add([f"j{i}" for i in range(100)], rng.standard_normal((100, 16)).astype(np.float32))
    other = Store(store.path)  # another connection, as another process would have
    try:
        writer = other.space("h")
        wrote = []

        def progress(phase, done, total):  # runs while knn extends the index
            if not wrote:
                writer.add([f"w{i}" for i in range(50)], rng.standard_normal((50, 16)).astype(np.float32))
                wrote.append(True)

        res = knn(sp, rng.standard_normal((2, 16)).astype(np.float32), 5, method="hnsw", hnsw=SMALL,
                  progress=progress)
        assert wrote and res.rows.shape == (2, 5) and 0 not in res.rows
    finally:
        other.close()


def test_the_graph_is_built_in_one_add_as_faiss_builds_it(store, rng, monkeypatch):
    """Rows read 500 at a time, added in one call: the very graph FAISS builds from one add of all the
    rows (rows added batch by batch make another graph, of lower recall on GloVe: persist._add_rows)."""
    import faiss

    from repspace.core.threads import one_faiss_thread

    monkeypatch.setattr(persist_mod, "ADD_BATCH", 500)
    sp, x = _space(store, rng, n=2000, metric="cosine")
    with one_faiss_thread(1):  # FAISS builds on several threads in a nondeterministic order
        graph = faiss.downcast_index(ensure_hnsw(sp, SMALL).index.index.index).hnsw
        ref = faiss.IndexHNSWFlat(16, SMALL.m, faiss.METRIC_INNER_PRODUCT)
        ref.hnsw.efConstruction = SMALL.ef_construction
        ref.add(x / np.linalg.norm(x, axis=1, keepdims=True))
        batched = faiss.IndexHNSWFlat(16, SMALL.m, faiss.METRIC_INNER_PRODUCT)
        batched.hnsw.efConstruction = SMALL.ef_construction
        for lo in range(0, 2000, 500):
            batched.add(x[lo : lo + 500] / np.linalg.norm(x[lo : lo + 500], axis=1, keepdims=True))
    links = faiss.vector_to_array(graph.neighbors)
    assert np.array_equal(links, faiss.vector_to_array(ref.hnsw.neighbors))
    assert not np.array_equal(links, faiss.vector_to_array(batched.hnsw.neighbors))  # the test can tell
