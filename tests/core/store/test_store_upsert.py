"""Upsert semantics: updated, replaced, unchanged, and on_conflict="error"."""

from __future__ import annotations

import numpy as np
import pytest

from repspace import ConflictError

DTYPES = ["float32", "float16"]


def _counts(res):
    return res.added, res.replaced, res.updated, res.unchanged


@pytest.mark.parametrize("dtype", DTYPES)
def test_same_vector_new_text_and_metadata_is_updated_in_place(store, dtype):
    sp = store.create_space("u", dim=3, dtype=dtype)
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    g1 = sp.add(["a", "b"], x, texts=["old a", "old b"], metadata=[{"v": 1}, {"v": 1}]).generation
    info1 = sp.info()
    res = sp.add(["a"], x[:1], texts=["new a"], metadata=[{"v": 2, "extra": [1]}])
    assert _counts(res) == (0, 0, 1, 0)
    assert res.generation == g1 + 1 == sp.info().generation
    item = sp.get(["a"])[0]
    assert (item.text, item.metadata, item.row) == ("new a", {"v": 2, "extra": [1]}, 0)
    info2 = sp.info()
    assert (info2.next_row, info2.dead_rows, info2.count) == (info1.next_row, 0, 2)
    assert sp.get(["b"])[0].text == "old b"


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_same_id_new_vector_appends_row_and_kills_old(store, dtype):
    sp = store.create_space("r", dim=2, metric="l2", dtype=dtype)
    sp.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], texts=["ta", "tb"])
    g = sp.info().generation
    res = sp.add(["a", "c"], [[5.0, 5.0], [7.0, 7.0]], texts=["ta2", "tc"])
    assert _counts(res) == (1, 1, 0, 0)
    assert res.generation == g + 1
    info = sp.info()
    assert (info.count, info.next_row, info.dead_rows) == (3, 4, 1)
    assert sp.ids() == ["b", "a", "c"]
    assert sp.rows().tolist() == [1, 2, 3]
    assert sp.get(["a"])[0].row == 2 and sp.get(["a"])[0].text == "ta2"
    assert sp.vectors_of(["a"]).tolist() == [[5.0, 5.0]]
    # The dead row still holds the old vector (rows are append-only) but is not live.
    assert sp.read_rows([0]).tolist() == [[1.0, 0.0]]
    assert 0 not in sp.items([0, 1, 2])


@pytest.mark.parametrize("dtype", DTYPES)
def test_identical_readd_is_unchanged_and_keeps_generation(store, rng, dtype):
    sp = store.create_space("same", dim=5, dtype=dtype)
    x = rng.standard_normal((40, 5)).astype(np.float32)
    ids = [f"i{i}" for i in range(40)]
    texts = [f"t{i}" for i in range(40)]
    metas = [{"i": i, "nested": {"k": [i]}} for i in range(40)]
    sp.add(ids, x, texts=texts, metadata=metas)
    before = sp.info()
    res = sp.add(ids[::-1], x[::-1], texts=texts[::-1], metadata=metas[::-1])
    assert _counts(res) == (0, 0, 0, 40)
    after = sp.info()
    assert res.generation == before.generation == after.generation
    assert (after.next_row, after.dead_rows, after.updated_at) == (before.next_row, before.dead_rows, before.updated_at)


def test_metadata_key_order_does_not_count_as_a_change(store):
    sp = store.create_space("order", dim=2)
    sp.add(["a"], [[1.0, 2.0]], metadata=[{"x": 1, "y": 2}])
    res = sp.add(["a"], [[1.0, 2.0]], metadata=[{"y": 2, "x": 1}])
    assert _counts(res) == (0, 0, 0, 1)


def test_mixed_batch_counts(store):
    sp = store.create_space("mix", dim=2, metric="l2")
    sp.add(["keep", "upd", "rep"], [[1, 1], [2, 2], [3, 3]], texts=["k", "u", "r"])
    res = sp.add(["new1", "keep", "upd", "rep", "new2"], [[9, 9], [1, 1], [2, 2], [33, 33], [8, 8]],
                 texts=["n1", "k", "u2", "r", "n2"])
    assert _counts(res) == (2, 1, 1, 1)
    assert sp.ids() == ["keep", "upd", "new1", "rep", "new2"]
    assert sp.vectors().tolist() == [[1, 1], [2, 2], [9, 9], [33, 33], [8, 8]]
    assert [it.text for it in sp.get(sp.ids())] == ["k", "u2", "n1", "r", "n2"]
    assert (sp.info().next_row, sp.info().dead_rows) == (6, 1)


def test_text_removed_counts_as_update(store):
    sp = store.create_space("tx", dim=2)
    sp.add(["a"], [[1.0, 0.0]], texts=["hello"])
    res = sp.add(["a"], [[1.0, 0.0]])  # no text now
    assert _counts(res) == (0, 0, 1, 0)
    assert sp.get(["a"])[0].text is None


def test_readd_after_delete_is_added(store):
    sp = store.create_space("again", dim=2)
    sp.add(["a"], [[1.0, 0.0]])
    sp.delete(["a"])
    res = sp.add(["a"], [[1.0, 0.0]])
    assert _counts(res) == (1, 0, 0, 0)
    assert sp.get(["a"])[0].row == 1


def test_on_conflict_error_refuses_whole_batch(store, state_of):
    sp = store.create_space("c", dim=2)
    sp.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], texts=["A", "B"])
    before = state_of(store)
    with pytest.raises(ConflictError) as e:
        sp.add(["new1", "new2", "b", "new3"], [[1, 1], [2, 2], [3, 3], [4, 4]], on_conflict="error")
    assert "'b'" in str(e.value) and "\n" not in str(e.value)
    assert state_of(store) == before
    assert sp.ids() == ["a", "b"]
    # Even an identical re-add is refused with on_conflict="error".
    with pytest.raises(ConflictError):
        sp.add(["a"], [[1.0, 0.0]], texts=["A"], on_conflict="error")
    assert state_of(store) == before
    # Without existing ids the same mode just adds.
    res = sp.add(["new1"], [[1.0, 1.0]], on_conflict="error")
    assert res.added == 1 and len(sp) == 3


def test_generation_increases_with_every_change(store):
    sp = store.create_space("gen", dim=2)
    gens = [sp.info().generation]
    sp.add(["a"], [[1.0, 0.0]]); gens.append(sp.info().generation)
    sp.add(["a"], [[1.0, 0.0]], texts=["t"]); gens.append(sp.info().generation)
    sp.add(["a"], [[0.0, 1.0]], texts=["t"]); gens.append(sp.info().generation)
    sp.delete(["a"]); gens.append(sp.info().generation)
    assert gens == [0, 1, 2, 3, 4]
    sp.delete(["a"], missing_ok=True)  # nothing deleted: no new generation
    assert sp.info().generation == 4


def test_snapshot_cache_follows_generation(store):
    """Two handles on the same space: a write through one is seen by the other."""
    sp1 = store.create_space("cache", dim=2)
    sp1.add(["a"], [[1.0, 0.0]])
    from repspace import Store

    other = Store(store.path)
    try:
        sp2 = other.space("cache")
        assert sp2.ids() == ["a"]
        sp1.add(["b"], [[0.0, 1.0]])
        assert sp2.ids() == ["a", "b"]
        sp1.delete(["a"])
        assert sp2.ids() == ["b"] and sp2.vectors().tolist() == [[0.0, 1.0]]
    finally:
        other.close()


def test_live_count_matches_the_items_table_after_random_operations(store):
    """info().count is derived (next_row - dead_rows); check it against count(*) after many operations."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    sp = store.create_space("counted", dim=2)
    ops = st.lists(st.tuples(st.sampled_from(["add", "delete"]), st.lists(st.integers(0, 15), max_size=6,
                                                                           unique=True), st.integers(0, 3)),
                   max_size=25)

    @settings(max_examples=40, deadline=None)
    @given(ops)
    def run(sequence):
        for op, keys, salt in sequence:
            ids = [f"k{k}" for k in keys]
            if op == "add" and ids:
                sp.add(ids, [[float(k), float(salt) + 1.0] for k in keys], texts=[f"t{salt}"] * len(ids))
            elif ids:
                sp.delete(ids, missing_ok=True)
            (actual,) = store.db.conn.execute("SELECT count(*) FROM items").fetchone()
            info = sp.info()
            assert info.count == actual == len(sp.ids())
            assert sp.vectors().shape == (actual, 2)

    run()
