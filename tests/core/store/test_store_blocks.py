"""Vector blocks: large batches span several blocks; row reads match the full array."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from repspace.core.store import _rows


def _blocks(path, name):
    con = sqlite3.connect(path)
    try:
        return con.execute(
            "SELECT b.first_row, b.n_rows, length(b.data) FROM blocks b JOIN spaces s ON s.id = b.space_id"
            " WHERE s.name = ? ORDER BY b.first_row", (name,)
        ).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_large_batch_spans_several_blocks(store, rng, dtype):
    n, dim = 20_000, 384
    x = rng.standard_normal((n, dim)).astype(np.float32)
    sp = store.create_space("big", dim=dim, dtype=dtype)
    sp.add([f"i{i}" for i in range(n)], x)
    blocks = _blocks(store.path, "big")
    itemsize = np.dtype(dtype).itemsize
    assert len(blocks) >= 2
    # Contiguous, non-overlapping, covering all rows, each within the block budget.
    assert blocks[0][0] == 0
    assert all(a[0] + a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    assert blocks[-1][0] + blocks[-1][1] == n
    assert all(length == rows * dim * itemsize <= _rows.BLOCK_BYTES for _, rows, length in blocks)
    expect = x if dtype == "float32" else x.astype(np.float16).astype(np.float32)
    assert np.array_equal(sp.vectors(), expect)
    # Rows at block boundaries and random rows.
    bounds = [b[0] for b in blocks] + [b[0] + b[1] - 1 for b in blocks]
    picks = np.concatenate([bounds, rng.integers(0, n, 500)])
    assert np.array_equal(sp.read_rows(picks), expect[picks])
    rows, vecs = sp.live_rows(blocks[0][1] - 3, blocks[1][0] + 5)
    assert np.array_equal(vecs, expect[rows]) and len(rows) == 8


def test_read_rows_matches_full_array_with_dead_rows(store, rng, monkeypatch):
    # Small blocks so that many batches and blocks are involved.
    monkeypatch.setattr(_rows, "BLOCK_BYTES", 16 * 8 * 4 * 7)  # 7 rows of dim 16
    dim = 16
    sp = store.create_space("rr", dim=dim, metric="l2")
    full: list[np.ndarray] = []  # every row ever written, in row order
    ids_model: dict[str, int] = {}
    for step in range(8):
        n = int(rng.integers(1, 60))
        ids = [f"s{step}-{i}" for i in range(n)]
        # Some upserts with new vectors (new rows), some re-adds of the same vector.
        olds = list(ids_model)[: int(rng.integers(0, 5))]
        batch_ids = ids + olds
        x = rng.standard_normal((len(batch_ids), dim)).astype(np.float32)
        sp.add(batch_ids, x)
        for item_id, vec in zip(batch_ids, x):
            ids_model[item_id] = len(full)
            full.append(vec)
        gone = list(ids_model)[:: 5][:3]
        sp.delete(gone)
        for g in gone:
            ids_model.pop(g)
    full_arr = np.array(full)
    info = sp.info()
    assert info.next_row == len(full) and info.count == len(ids_model)
    assert info.dead_rows == len(full) - len(ids_model)
    assert len(_blocks(store.path, "rr")) > 8
    # Random rows (live and dead, repeated, unsorted).
    for _ in range(5):
        picks = rng.integers(0, len(full), 300)
        assert np.array_equal(sp.read_rows(picks), full_arr[picks])
    assert np.array_equal(sp.read_rows(np.arange(len(full))[::-1]), full_arr[::-1])
    # Live views agree with the model.
    live = sorted(ids_model.values())
    snap = sp.snapshot()
    assert snap.rows.tolist() == live
    assert np.array_equal(snap.vectors, full_arr[live])
    for lo, hi in [(0, None), (3, 50), (len(full) - 4, len(full) + 10), (10, 10)]:
        rows, vecs = sp.live_rows(lo, hi)
        stop = len(full) if hi is None else min(hi, len(full))
        assert rows.tolist() == [r for r in live if lo <= r < stop]
        assert np.array_equal(vecs, full_arr[rows])
    for item_id, row in list(ids_model.items())[:50]:
        assert np.array_equal(sp.vectors_of([item_id])[0], full_arr[row])
    # iter_items reads the same live rows with vectors, in row order.
    got_rows, got_vecs = [], []
    for items, vecs in sp.iter_items(batch=37):
        got_rows += [it.row for it in items]
        got_vecs.append(vecs)
    assert got_rows == live
    assert np.array_equal(np.vstack(got_vecs), full_arr[live])


def test_many_small_batches(store, rng):
    sp = store.create_space("small", dim=3)
    x = rng.standard_normal((300, 3)).astype(np.float32)
    for i in range(300):
        sp.add([f"i{i}"], x[i : i + 1])
    assert len(_blocks(store.path, "small")) == 300
    assert np.array_equal(sp.vectors(), x)
    assert np.array_equal(sp.read_rows([299, 0, 150]), x[[299, 0, 150]])


def test_iter_items_allows_reads_and_writes_in_the_loop(store, rng):
    src = store.create_space("src", dim=4)
    dst = store.create_space("dst", dim=4)
    x = rng.standard_normal((25, 4)).astype(np.float32)
    src.add([f"i{i}" for i in range(25)], x)
    for items, vecs in src.iter_items(batch=10):
        assert src.get([items[0].id])[0].id == items[0].id  # a read inside the loop
        dst.add([it.id for it in items], vecs)  # copying a space batch by batch
    assert np.array_equal(dst.vectors(), x)


def test_mutating_returned_vectors_does_not_change_the_space(store):
    sp = store.create_space("mut", dim=2, metric="l2")
    sp.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    v = sp.vectors()
    with pytest.raises(ValueError, match="read-only"):
        v *= 0  # e.g. an in-place normalisation by a caller: the cached snapshot is read-only
    w = sp.vectors().copy()
    w *= 0  # a copy is the caller's own
    assert sp.vectors().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert [h.id for h in sp.search(np.array([1.0, 0.1]), k=1, method="exact")] == ["a"]
