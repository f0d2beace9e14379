"""Reading a block table's rows (:mod:`repspace.core.store._block_rows`), through the three layouts that share it.

Dense, sparse and multi-vector spaces each get three batches (three blocks) and a delete; rows asked in any order
across blocks read back what was written (dead rows too), a row or range no block holds is refused with one
:class:`NotFoundError` naming the space, and a space's live rows are read once per generation, read-only.
"""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import NotFoundError
from repspace.core.sparse import SparseRows
from repspace.core.store._block_rows import check_range, live_rows, range_blocks
from repspace.core.store._rows import read_range, read_rows
from repspace.core.store._sparse_blocks import read_sparse_range, read_sparse_rows
from repspace.core.store._token_blocks import read_token_range, read_token_rows

#: Rows per batch: each batch is written as a block of its own.
BATCH = 4
N = 3 * BATCH
DIM = 3


def _dense(rng) -> np.ndarray:
    return rng.standard_normal((N, DIM)).astype(np.float32)


def _sparse(rng) -> SparseRows:
    return SparseRows.from_pairs([([i % DIM], [float(i + 1)]) for i in range(N)], DIM)


def _tokens(rng) -> list[np.ndarray]:
    return [rng.standard_normal((1 + i % 3, DIM)).astype(np.float32) for i in range(N)]


def _space(store, layout: str, data):
    sp = store.create_space(layout, dim=DIM, metric="ip", layout=layout)
    for lo in range(0, N, BATCH):
        part = data.take(np.arange(lo, lo + BATCH)) if isinstance(data, SparseRows) else data[lo : lo + BATCH]
        sp.add([f"{layout}{i}" for i in range(lo, lo + BATCH)], part)
    sp.delete([f"{layout}{i}" for i in (1, 5, 6)])
    return sp


@pytest.fixture
def spaces(store, rng):
    data = {"dense": _dense(rng), "sparse": _sparse(rng), "multivector": _tokens(rng)}
    return {layout: (_space(store, layout, d), d) for layout, d in data.items()}


def _read(sp, layout: str, rows) -> list[bytes]:
    """The stored rows at ``rows`` through the layout's own reader, as bytes to compare exactly."""
    with sp.store.db.read() as c:
        sid = sp.header(c).sid
        if layout == "dense":
            return [r.tobytes() for r in read_rows(c, sid, sp.name, DIM, "float32", rows)]
        if layout == "sparse":
            got = read_sparse_rows(c, sid, sp.name, DIM, rows)
            return [got.indices[a:b].tobytes() + got.values[a:b].tobytes() for a, b in zip(got.indptr, got.indptr[1:])]
        return [m.tobytes() for m in read_token_rows(c, sid, sp.name, DIM, rows).to_list()]


def _written(data, rows) -> list[bytes]:
    if isinstance(data, SparseRows):
        return [data.indices[data.indptr[r] : data.indptr[r + 1]].astype(np.int32).tobytes()
                + data.values[data.indptr[r] : data.indptr[r + 1]].astype(np.float32).tobytes() for r in rows]
    return [np.asarray(data[r], dtype=np.float32).tobytes() for r in rows]


@pytest.mark.parametrize("layout", ["dense", "sparse", "multivector"])
def test_rows_in_any_order_across_blocks_read_back_as_written(spaces, layout):
    sp, data = spaces[layout]
    with sp.store.db.read() as c:
        table = {"dense": "blocks", "sparse": "sparse_blocks", "multivector": "token_blocks"}[layout]
        assert c.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 3
    rows = [11, 0, 5, 4, 4, 1, 8, 3]  # every block, a repeat, dead rows 1 and 5
    assert _read(sp, layout, rows) == _written(data, rows)
    assert _read(sp, layout, []) == []


@pytest.mark.parametrize("layout", ["dense", "sparse", "multivector"])
@pytest.mark.parametrize("rows", [[0, N], [N + 5], [-1], [3, -1, 7]])
def test_a_row_no_block_holds_is_refused_naming_the_space(spaces, layout, rows):
    sp, _ = spaces[layout]
    with pytest.raises(NotFoundError, match=f"^a requested row is not stored in space '{layout}'$"):
        _read(sp, layout, rows)


def test_ranges_are_sliced_from_the_blocks_and_a_range_not_stored_is_refused(spaces):
    (dense, x), (sparse, s), (tok, t) = spaces["dense"], spaces["sparse"], spaces["multivector"]
    with dense.store.db.read() as c:
        sid = dense.header(c).sid
        assert [b[:3] for b in range_blocks(c, "blocks", sid, 2, 9)] == [(0, 2, 4), (4, 0, 4), (8, 0, 1)]
        assert read_range(c, sid, DIM, "float32", 2, 9).tobytes() == x[2:9].tobytes()
        got = read_sparse_range(c, sparse.header(c).sid, DIM, 3, 10)
        assert [got.row(i) for i in range(7)] == [s.row(i) for i in range(3, 10)]
        sets = read_token_range(c, tok.header(c).sid, DIM, 5, 12)
        assert [m.tobytes() for m in sets.to_list()] == [m.tobytes() for m in t[5:12]]
        for read in (lambda: read_sparse_range(c, sparse.header(c).sid, DIM, 10, N + 1),
                     lambda: read_token_range(c, tok.header(c).sid, DIM, 0, N + 2)):
            with pytest.raises(NotFoundError, match="^rows .* to .* are not all stored$"):
                read()
        with pytest.raises(ValueError, match="not a block table"):
            range_blocks(c, "items", sid, 0, 1)
    check_range(0, 5, 5)  # an empty range is whole
    with pytest.raises(NotFoundError, match="^rows 5 to 7 are not all stored$"):
        check_range(2, 5, 8)


@pytest.mark.parametrize("layout", ["sparse", "multivector"])
def test_live_rows_are_read_once_per_generation_and_read_only(spaces, layout, rng):
    sp, _ = spaces[layout]
    read = sp.sparse_rows if layout == "sparse" else sp.multivector_rows
    rows, data = read()
    assert rows.tolist() == [0, 2, 3, 4, 7, 8, 9, 10, 11] and len(data) == len(rows)
    again = read()
    assert again[0] is rows and again[1] is data  # the same generation: the cached arrays
    arrays = (data.indptr, data.indices, data.values) if layout == "sparse" else (data.tokens, data.offsets)
    assert not any(a.flags.writeable for a in (rows, *arrays))
    sp.delete([f"{layout}0"])
    assert read()[0].tolist() == rows.tolist()[1:]  # a new generation: read again
    with sp.store.db.read() as c:
        assert live_rows(c, sp.header(c).sid, 3, 0).tolist() == [0, 1, 2]  # none dead: no read of the items
