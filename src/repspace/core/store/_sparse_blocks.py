"""The blob I/O under a sparse space: runs of consecutive rows stored as CSR blocks.

A sparse space keeps its rows in ``sparse_blocks`` beside the dense ``blocks`` table, with
the same rules: rows are append-only, a block covers ``n_rows`` consecutive rows from
``first_row``, and it is written inside the caller's transaction (all of a batch or none).
One block's blob is its CSR triple, each part little-endian and contiguous::

    indptr   int64 x (n_rows + 1)   offsets of each row's entries in the block, from 0
    indices  int32 x nnz            feature ids, ascending within a row
    values   float32 x nnz          weights

so a block reads back with three ``np.frombuffer`` views and no parsing.

Examples
--------
>>> import tempfile, os
>>> from repspace.core.sparse import SparseRows
>>> from repspace.core.store import Store
>>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> sid = store.create_space("s", dim=3, metric="ip", layout="sparse").header(store.db.conn).sid
>>> rows = SparseRows.from_pairs([([1], [0.5]), ([], []), ([0, 2], [1.0, 2.0])], n_features=3)
>>> with store.db.write() as c:
...     write_sparse_blocks(c, sid, 0, rows)
>>> with store.db.read() as c:
...     read_sparse_range(c, sid, 3, 1, 3).row(1), read_sparse_rows(c, sid, "s", 3, [2, 0]).row(1)
(([0, 2], [1.0, 2.0]), ([1], [0.5]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.sparse import SparseRows
from repspace.core.store._block_rows import check_range, gather_rows, range_blocks
from repspace.core.store._rows import BLOCK_BYTES

__all__ = ["read_sparse_range", "read_sparse_rows", "write_sparse_blocks"]

#: Bytes of one stored entry (an int32 feature id and a float32 weight).
_ENTRY_BYTES = 8


def write_sparse_blocks(c: Any, sid: int, first_row: int, rows: SparseRows) -> None:
    """Append ``rows`` (rows ``first_row..``) as blocks of about :data:`BLOCK_BYTES` each."""
    n = len(rows)
    start = 0
    while start < n:
        # rows up to about BLOCK_BYTES of entries (at least one row per block)
        limit = rows.indptr[start] + BLOCK_BYTES // _ENTRY_BYTES
        stop = max(start + 1, int(np.searchsorted(rows.indptr, limit, side="right")) - 1)
        stop = min(stop, n)
        a, b = int(rows.indptr[start]), int(rows.indptr[stop])
        indptr = (rows.indptr[start : stop + 1] - a).astype("<i8")
        blob = b"".join((indptr.tobytes(), rows.indices[a:b].astype("<i4").tobytes(),
                         rows.values[a:b].astype("<f4").tobytes()))
        c.execute("INSERT INTO sparse_blocks (space_id, first_row, n_rows, nnz, data) VALUES (?, ?, ?, ?, ?)",
                  (sid, first_row + start, stop - start, b - a, blob))
        start = stop


def _decode(data: bytes, n_rows: int, nnz: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    head = (n_rows + 1) * 8
    indptr = np.frombuffer(data, dtype="<i8", count=n_rows + 1)
    indices = np.frombuffer(data, dtype="<i4", count=nnz, offset=head)
    values = np.frombuffer(data, dtype="<f4", count=nnz, offset=head + 4 * nnz)
    return indptr, indices, values


def read_sparse_range(c: Any, sid: int, n_features: int, lo: int, hi: int) -> SparseRows:
    """Rows ``lo..hi-1`` (live and dead) as :class:`SparseRows`, block by block."""
    ptr_parts, idx_parts, val_parts, offset = [np.zeros(1, np.int64)], [], [], 0
    for _, a, b, (n, nnz, data) in range_blocks(c, "sparse_blocks", sid, lo, hi, "n_rows, nnz, data"):
        indptr, indices, values = _decode(data, n, nnz)
        ea, eb = int(indptr[a]), int(indptr[b])
        ptr_parts.append(indptr[a + 1 : b + 1] - ea + offset)
        idx_parts.append(indices[ea:eb])
        val_parts.append(values[ea:eb])
        offset += eb - ea
    indptr = np.concatenate(ptr_parts).astype(np.int64)
    check_range(len(indptr) - 1, lo, hi)
    indices = np.concatenate(idx_parts).astype(np.int32) if idx_parts else np.zeros(0, np.int32)
    values = np.concatenate(val_parts).astype(np.float32) if val_parts else np.zeros(0, np.float32)
    return SparseRows(indptr, indices, values, n_features)


def read_sparse_rows(c: Any, sid: int, name: str, n_features: int, rows: Any) -> SparseRows:
    """The given rows (live or dead), in the order asked; a row not stored raises :class:`NotFoundError`."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return SparseRows(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), n_features)

    def read_block(rowid: int, local: np.ndarray) -> SparseRows:
        data, n_rows, nnz = c.execute("SELECT data, n_rows, nnz FROM sparse_blocks WHERE rowid = ?",
                                      (rowid,)).fetchone()
        return SparseRows(*_decode(data, n_rows, nnz), n_features).take(local)

    return gather_rows(c, "sparse_blocks", sid, name, rows, read_block, SparseRows.concat)
