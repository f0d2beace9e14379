"""The blob I/O under a multi-vector space: runs of consecutive rows' token matrices, as blocks.

A multi-vector space keeps its rows in ``token_blocks`` beside ``blocks`` and ``sparse_blocks``,
with the same rules: rows are append-only, a block covers ``n_rows`` consecutive rows from
``first_row``, and it is written inside the caller's transaction (all of a batch or none).
One block's blob is, little-endian and contiguous::

    offsets  int64 x (n_rows + 1)       where each row's tokens start in the block, from 0
    tokens   float32 x n_tokens x dim   every token vector of the block's rows, row after row

so a block reads back with two ``np.frombuffer`` views and no parsing.

Examples
--------
>>> import tempfile, os
>>> import numpy as np
>>> from repspace.core.multivector import TokenSets
>>> from repspace.core.store import Store
>>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> sid = store.create_space("m", dim=2, metric="ip", layout="multivector").header(store.db.conn).sid
>>> sets = TokenSets.from_list([np.eye(2), np.ones((1, 2)), np.full((3, 2), 0.5)])
>>> with store.db.write() as c:
...     write_token_blocks(c, sid, 0, sets)
>>> with store.db.read() as c:
...     read_token_range(c, sid, 2, 1, 3).row_tokens().tolist(), read_token_rows(c, sid, "m", 2, [2, 1]).get(1)
([1, 3], array([[1., 1.]], dtype=float32))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.multivector import TokenSets
from repspace.core.store._block_rows import check_range, gather_rows, range_blocks
from repspace.core.store._rows import BLOCK_BYTES

__all__ = ["read_token_range", "read_token_rows", "write_token_blocks"]


def write_token_blocks(c: Any, sid: int, first_row: int, sets: TokenSets) -> None:
    """Append ``sets`` (rows ``first_row..``) as blocks of about :data:`BLOCK_BYTES` each (a row is never split)."""
    n = len(sets)
    per_token = 4 * sets.dim
    start = 0
    while start < n:
        limit = sets.offsets[start] + max(1, BLOCK_BYTES // per_token)
        stop = min(n, max(start + 1, int(np.searchsorted(sets.offsets, limit, side="right")) - 1))
        a, b = int(sets.offsets[start]), int(sets.offsets[stop])
        offsets = (sets.offsets[start : stop + 1] - a).astype("<i8")
        blob = offsets.tobytes() + np.ascontiguousarray(sets.tokens[a:b], dtype="<f4").tobytes()
        c.execute("INSERT INTO token_blocks (space_id, first_row, n_rows, n_tokens, data) VALUES (?, ?, ?, ?, ?)",
                  (sid, first_row + start, stop - start, b - a, blob))
        start = stop


def _decode(data: bytes, n_rows: int, n_tokens: int, dim: int) -> TokenSets:
    offsets = np.frombuffer(data, dtype="<i8", count=n_rows + 1)
    tokens = np.frombuffer(data, dtype="<f4", count=n_tokens * dim, offset=(n_rows + 1) * 8)
    return TokenSets(tokens.reshape(n_tokens, dim), offsets)


def read_token_range(c: Any, sid: int, dim: int, lo: int, hi: int) -> TokenSets:
    """Rows ``lo..hi-1`` (live and dead) as :class:`TokenSets`, block by block."""
    parts = []
    for _, a, b, (n, n_tokens, data) in range_blocks(c, "token_blocks", sid, lo, hi, "n_rows, n_tokens, data"):
        block = _decode(data, n, n_tokens, dim)
        ta, tb = int(block.offsets[a]), int(block.offsets[b])
        parts.append(TokenSets(block.tokens[ta:tb], block.offsets[a : b + 1] - ta))
    out = (TokenSets.concat(parts) if parts
           else TokenSets(np.zeros((0, dim), np.float32), np.zeros(1, np.int64)))
    check_range(len(out), lo, hi)
    return TokenSets(np.array(out.tokens, dtype=np.float32), out.offsets.astype(np.int64))


def read_token_rows(c: Any, sid: int, name: str, dim: int, rows: Any) -> TokenSets:
    """The given rows (live or dead), in the order asked; a row not stored raises :class:`NotFoundError`."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return TokenSets(np.zeros((0, dim), np.float32), np.zeros(1, np.int64))

    def read_block(rowid: int, local: np.ndarray) -> TokenSets:
        data, n_rows, n_tokens = c.execute("SELECT data, n_rows, n_tokens FROM token_blocks WHERE rowid = ?",
                                           (rowid,)).fetchone()
        return _decode(data, n_rows, n_tokens, dim).take(local)

    return gather_rows(c, "token_blocks", sid, name, rows, read_block, TokenSets.concat)
