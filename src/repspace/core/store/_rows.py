"""The SQL and blob I/O under a space: vector blocks, rows by id, ids as stored.

Functions of an open connection and a space id, shared by the space's reader,
writer and ledger (:mod:`._reader`, :mod:`._writer`, :mod:`._ledger`): each runs
inside the caller's transaction and knows nothing of caches.

Examples
--------
>>> as_ids("a"), as_ids([1, "b"])
(['a'], ['1', 'b'])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from repspace.core.store._block_rows import range_blocks, row_blocks

__all__ = ["BLOCK_BYTES", "as_ids", "read_range", "read_rows", "rows_by_id", "write_blocks"]

#: Target size of one vector block in bytes.
BLOCK_BYTES = 4 << 20


def as_ids(ids: str | Iterable[Any]) -> list[str]:
    """Ids as strings, as :meth:`Space.add` stores them (a lone string is one id)."""
    if isinstance(ids, str):
        return [ids]
    return [str(i) if isinstance(i, (int, np.integer)) and not isinstance(i, bool) else i for i in ids]


def write_blocks(c: Any, sid: int, first_row: int, block: np.ndarray) -> None:
    """Append ``block`` (the vectors of rows ``first_row..``) as blocks of about :data:`BLOCK_BYTES`."""
    per_block = max(1, BLOCK_BYTES // max(1, block.shape[1] * block.itemsize))
    for start in range(0, len(block), per_block):
        part = np.ascontiguousarray(block[start : start + per_block])
        c.execute(
            "INSERT INTO blocks (space_id, first_row, n_rows, data) VALUES (?, ?, ?, ?)",
            (sid, first_row + start, len(part), memoryview(part).cast("B")),
        )


def read_range(c: Any, sid: int, dim: int, dtype: str, lo: int, hi: int) -> np.ndarray:
    """Vectors of rows ``lo..hi-1`` (live and dead) as float32, block by block.

    Each block's bytes for the range are read with SQLite's incremental
    blob I/O (``blobopen``): one copy out of the database pages, where
    selecting the column copies the whole blob twice (SQLite assembles it,
    then Python copies it into a ``bytes``), and only the rows asked for.
    """
    out = np.empty((max(0, hi - lo), dim), dtype=np.float32)
    dt = np.dtype(dtype)
    row_bytes = dim * dt.itemsize
    for first, a, b, (rowid,) in range_blocks(c, "blocks", sid, lo, hi):
        with c.blobopen("blocks", "data", rowid, readonly=True) as blob:
            blob.seek(a * row_bytes)
            data = blob.read((b - a) * row_bytes)
        out[first + a - lo : first + b - lo] = np.frombuffer(data, dtype=dt).reshape(b - a, dim)
    return out


def read_rows(c: Any, sid: int, name: str, dim: int, dtype: str, rows: Sequence[int] | np.ndarray) -> np.ndarray:
    """Vectors of the given rows (live or dead) as float32, reading only the bytes needed.

    A row that is not stored raises :class:`NotFoundError` naming the space ``name``.
    """
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty((len(rows), dim), dtype=np.float32)
    if len(rows) == 0:
        return out
    dt = np.dtype(dtype)
    width = dim * dt.itemsize
    for rowid, n_rows, positions, local in row_blocks(c, "blocks", sid, name, rows):
        with c.blobopen("blocks", "data", rowid, readonly=True) as blob:
            if len(positions) * 8 >= n_rows:  # many rows of this block: read it whole
                whole = np.frombuffer(blob.read(), dtype=dt).reshape(-1, dim)
                out[positions] = whole[local]
            else:  # a few rows: read just their bytes
                for p, r in zip(positions, local):
                    blob.seek(int(r) * width)
                    out[p] = np.frombuffer(blob.read(width), dtype=dt)
    return out


def rows_by_id(c: Any, sid: int, ids: list[str]) -> dict[str, tuple[int, str | None, str]]:
    """``{id: (row, text, meta JSON)}`` of the live items among ``ids``."""
    # One statement with the ids as a JSON array parameter: far faster than
    # many `IN (?, ?, ...)` statements, and still fully parameterized. The
    # CROSS JOIN fixes the order: each id probes the `items_by_id` index
    # (written as `item_id IN (SELECT ...)`, SQLite scans every item of
    # the space instead, so a batch cost grew with the space).
    cur = c.execute(
        "SELECT i.item_id, i.row, i.text, i.meta FROM json_each(?) AS j"
        " CROSS JOIN items AS i ON i.space_id = ? AND i.item_id = j.value",
        (json.dumps(ids), sid),
    )
    return {item_id: (row, text, meta) for item_id, row, text, meta in cur}
