"""One query per call: the records kept per generation, the validated options, the query checks.

Every cache of the per-call path is keyed by the space's generation; these tests change the
space between two identical searches (in this process, through a second connection, and from a
real second process) and check the next search sees the change, and that the cached path
returns exactly what the uncached path (SQL on every call) returns.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from repspace import Store
from repspace.core.errors import InputError
from repspace.core.hits import Hit
from repspace.core.store import _records
from repspace.workflows.search import knn
from repspace.workflows.search.request import SearchRequest, vector_template

N, DIM = 600, 8


@pytest.fixture()
def space(store):
    x = np.random.default_rng(7).standard_normal((N, DIM)).astype(np.float32)
    sp = store.create_space("t", dim=DIM, metric="cosine")
    sp.add([f"i{i}" for i in range(N)], x, texts=[f"text {i}" for i in range(N)],
           metadata=[{"sel": i % 10, "tags": [i]} for i in range(N)])
    _records.clear()
    return sp


def _query(space, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)


def _uncached(space, q: np.ndarray, **options) -> list[Hit]:
    """The hits as the SQL read of every call gives them (no generation: nothing kept)."""
    res = knn(space, q[None], 10, **options)
    from repspace.workflows.search.hits import hits_for

    return hits_for(space, res.rows[0], res.scores[0])


@pytest.mark.parametrize("options", [{}, {"index": "hnsw32"}, {"where": "sel < 3"}, {"index": "hnsw32", "where": "sel = 4"}])
def test_repeated_search_equals_the_uncached_read(space, options) -> None:
    for seed in range(5):
        q = _query(space, seed)
        first = space.search(q, k=10, **options)
        key = f"{space.store.db.identity}/{space.uid}"  # per store file: a copy holds the same uids
        assert _records.lookup(key, space.info().generation, [h.row for h in first])[1] == []  # all kept
        second = space.search(q, k=10, **options)  # every record from memory
        assert second.hits == first.hits and list(second) == _uncached(space, q, **options)
        assert [type(h) for h in second] == [Hit] * len(second)
        assert all(a.metadata is not b.metadata for a, b in zip(first, second))  # each call its own dicts


def test_a_changed_metadata_is_seen_by_the_next_call(space) -> None:
    q = _query(space)
    top = space.search(q, k=3)[0]
    space.update_metadata([top.id], [{"sel": 99}])
    assert space.search(q, k=3)[0].metadata == {"sel": 99, "tags": [top.row]}


def test_a_caller_changing_a_hit_changes_nothing_kept(space) -> None:
    q = _query(space)
    space.search(q, k=3)[0].metadata["tags"].append("x")
    assert space.search(q, k=3)[0].metadata["tags"] == [space.search(q, k=3)[0].row]


def test_a_write_through_another_connection_is_seen(space, store) -> None:
    q = _query(space, 3)
    before = space.search(q, k=5, index="hnsw32")
    other = Store(store.path).space("t")
    other.update_metadata([before[0].id], [{"sel": 42}], merge=False)
    other.delete([before[1].id])
    after = space.search(q, k=5, index="hnsw32")
    assert after[0].id == before[0].id and after[0].metadata == {"sel": 42}
    assert before[1].id not in [h.id for h in after]
    assert space.search(q, k=5, where="sel = 42")[0].id == before[0].id


@pytest.mark.slow
def test_a_write_by_another_process_is_seen_by_the_next_call(space, store) -> None:
    """A real second process changes metadata, deletes an item and adds a nearer one between two searches."""
    q = _query(space, 5)
    before = space.search(q, k=5, index="hnsw32")
    assert space.search(q, k=5, index="hnsw32").hits == before.hits  # records now kept for this generation
    code = textwrap.dedent(f"""
        import numpy as np
        from repspace import Store
        sp = Store({str(store.path)!r}).space("t")
        sp.update_metadata([{before[0].id!r}], [{{"sel": 77}}], merge=False)
        sp.delete([{before[1].id!r}])
        sp.add(["new"], np.array([{q.tolist()!r}], dtype=np.float32), texts=["added"], metadata=[{{"sel": 1}}])
    """)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)
    after = space.search(q, k=5, index="hnsw32")
    assert after[0].id == "new" and after[0].text == "added"
    assert next(h for h in after if h.id == before[0].id).metadata == {"sel": 77}
    assert before[1].id not in [h.id for h in after]
    assert [h.id for h in space.search(q, k=5, where="sel = 77")] == [before[0].id]


def test_records_kept_are_bounded_and_per_generation(space, monkeypatch) -> None:
    monkeypatch.setattr(_records, "RECORD_CACHE_BYTES", 3 * (_records.RECORD_OVERHEAD + 40))
    gen = space.info().generation
    space.records(range(10), generation=gen)
    assert sum(len(h.records) for h in _records._HELD.values()) <= 3
    assert space.records([5], generation=gen) == {5: ("i5", "text 5", {"sel": 5, "tags": [5]})}
    assert _records.lookup(space.uid, gen + 1, [5]) == ({}, [5])


def test_vector_options_are_validated_as_the_model_does(space) -> None:
    q = _query(space)
    for bad, message in [({"k": 0}, "k must be a positive integer"), ({"index": "hnsw32", "method": "exact"},
                                                                      "choose exact search or index"),
                         ({"hybrid": True}, "hybrid and BM25 search need a query text"),
                         ({"ef": -1}, "ef must be")]:
        with pytest.raises(InputError, match=message):
            space.search(q, **bad)
    with pytest.raises(InputError, match="exactly one"):
        SearchRequest.of(q, id="i1")
    with pytest.raises(TypeError, match="unexpected keyword"):
        space.search(q, colour="red")
    assert vector_template(10, {"ef": np.int64(5)}) is None  # not a plain value: the model's own path
    space.search(q, k=3, ef=1)
    with pytest.raises(InputError, match="ef must be"):  # True equals 1 but is no beam
        space.search(q, k=3, ef=True)
    assert space.search(q, k=np.int64(3), ef=np.int64(20)) == space.search(q, k=3, ef=20)


@pytest.mark.parametrize("vector, message", [
    (np.zeros(DIM, np.float32), "all zeros"), (np.full(DIM, np.nan, np.float32), "NaN or inf"),
    (np.full(DIM, np.inf, np.float32), "NaN or inf"), (np.full(DIM, 1e-30, np.float32), "cannot normalise"),
    (np.zeros((2, DIM), np.float32), "one query vector"), (np.zeros(DIM + 1, np.float32), "dimension"),
])
def test_bad_vectors_are_refused_with_the_full_checks_message(space, vector, message) -> None:
    with pytest.raises(InputError, match=message):
        space.search(vector, k=3)


def test_large_and_tiny_but_sound_vectors_are_searched(space) -> None:
    q = _query(space)
    want = [h.id for h in space.search(q, k=5)]
    for scale in (1e-12, 1e16):  # outside the one-number check's range: the full checks pass them
        assert [h.id for h in space.search((q * scale).astype(np.float32), k=5)] == want


def test_an_l2_space_takes_a_zero_query(store) -> None:
    sp = store.create_space("l2", dim=2, metric="l2")
    sp.add(["a", "b"], np.array([[0.0, 0.1], [3.0, 0.0]], np.float32))
    assert [h.id for h in sp.search(np.zeros(2, np.float32), k=2)] == ["a", "b"]


def test_a_packed_mask_searched_again_returns_the_same_rows(space) -> None:
    from repspace.workflows.search.hnsw import ensure_hnsw
    from repspace.engines.search.hnsw import pack_mask

    index = ensure_hnsw(space).index
    q = _query(space)[None]
    mask = pack_mask(np.arange(N) % 2 == 0)
    first = index.search(q, 10, 64, mask)[1]
    assert (first % 2 == 0).all() and (index.search(q, 10, 64, mask)[1] == first).all()
    other = pack_mask(np.arange(N) % 2 == 1)  # another mask at the same ef: its own parameters
    assert (index.search(q, 10, 64, other)[1] % 2 == 1).all()


def test_a_repeated_request_is_planned_once(space) -> None:
    q = _query(space)
    first = space.search(q, k=5, index="hnsw32")  # built: not kept (the next call looks at the files again)
    second = space.search(q, k=5, index="hnsw32")
    assert (first.plan.index_action, second.plan.index_action) == ("built", "loaded")
    assert space.search(_query(space, 1), k=5, index="hnsw32").plan is second.plan  # the kept plan
    assert space.search(q, k=5, index="hnsw32", ef=80).plan.ef == 80  # another request: its own plan
    space.update_metadata(["i1"], [{"sel": 5}])  # a new space description: planned again
    assert space.search(q, k=5, index="hnsw32").plan is not second.plan


def test_planner_settings_changed_between_calls_are_seen(space, monkeypatch) -> None:
    from repspace.workflows.search import dense as query

    q = _query(space)
    assert space.search(q, k=5).plan.method == "exact"  # 600 items: exact
    monkeypatch.setattr(query, "EXACT_MAX_ITEMS", 100)
    assert space.search(q, k=5).plan.method == "hnsw"
    monkeypatch.setattr(query, "EXACT_US_PER_MAC", float("inf"))
    monkeypatch.setattr(query, "EXACT_MAX_SELECTIVITY", 0.0)
    assert space.search(q, k=5, where="sel < 3").plan.method == "hnsw"
    monkeypatch.setattr(query, "EXACT_MAX_SELECTIVITY", 0.5)  # 180 of 600 matches: selective now
    assert space.search(q, k=5, where="sel < 3").plan.method == "exact"


def test_a_dropped_index_is_built_again_by_the_next_call(space) -> None:
    from repspace.workflows.search.indexes import drop_index

    q = _query(space)
    want = [h.id for h in space.search(q, k=5, index="hnsw32")]
    assert space.search(q, k=5, index="hnsw32").plan.index_action == "loaded"
    drop_index(space, "hnsw32")
    again = space.search(q, k=5, index="hnsw32")
    assert again.plan.index_action == "built" and [h.id for h in again] == want


def test_a_copied_store_never_gets_the_records_of_its_original(tmp_path) -> None:
    """A copy holds the same space uid and generation as its original: the records each process keeps are per
    store file, so two copies changed alike (same generation, other items) each return their own hits; and a store
    made again at a deleted one's path (the system may give its inode again) does not get the old records."""
    import shutil

    from repspace import Store

    base = tmp_path / "base.db"
    original = Store(base)
    original.create_space("s", dim=2).add(["a"], [[1.0, 0.0]])
    original.close()  # its write-ahead log folded into the file, which alone is copied
    copies = [tmp_path / "one.db", tmp_path / "two.db"]
    for path, item in zip(copies, ["x", "y"]):
        shutil.copy(base, path)
        Store(path).space("s").add([item], [[0.0, 1.0]], metadata=[{"who": item}])
    for path, item in zip(copies, ["x", "y"]):  # the same uid and generation in both
        hits = Store(path).space("s").search(np.array([0.0, 1.0], np.float32), k=1)
        assert [(h.id, h.metadata) for h in hits] == [(item, {"who": item})]
    for item in ["p", "q"]:  # deleted, then copied again at the same path
        shutil.rmtree(tmp_path / "again", ignore_errors=True)
        (tmp_path / "again").mkdir()
        shutil.copy(base, tmp_path / "again" / "s.db")
        sp = Store(tmp_path / "again" / "s.db").space("s")
        sp.add([item], [[0.0, 1.0]])
        assert [h.id for h in sp.search(np.array([0.0, 1.0], np.float32), k=1)] == [item]


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_the_one_query_lane_returns_what_knn_returns(store, metric) -> None:
    """search of one vector over a kept HNSW plan goes straight to the index (knn_one): the same rows and
    scores as knn, ties included (duplicated rows: equal scores to the lower row), and records served
    from memory on the second call equal the SQL read of the first."""
    x = np.random.default_rng(3).standard_normal((N, DIM)).astype(np.float32)
    x[300:310] = x[5]  # ten copies of row 5: equal scores, ordered by row
    sp = store.create_space(f"lane-{metric}", dim=DIM, metric=metric)
    sp.add([f"i{i}" for i in range(N)], x, metadata=[{"n": i} for i in range(N)])
    for seed, q in [(0, x[5] * 2), *((s, _query(sp, s)) for s in range(1, 6))]:
        want = knn(sp, q[None], 12, index="hnsw16")
        for _ in range(2):  # the first call plans and reads the records, the second takes the lane
            res = sp.search(q, k=12, index="hnsw16")
            assert [h.row for h in res] == [r for r in want.rows[0].tolist() if r >= 0], seed
            assert [h.score for h in res] == want.scores[0].tolist()[: len(res)], seed
            assert [h.metadata["n"] for h in res] == [h.row for h in res]
