"""Reading rows out of a block table: which blocks hold a range or a list of rows, and a space's live rows.

The three block tables (``blocks`` of dense vectors, ``sparse_blocks``, ``token_blocks``) share one
shape: a block covers ``n_rows`` consecutive rows from ``first_row`` of its space, rows are
append-only, and a dead row stays in its block. Their readers (:mod:`._rows`,
:mod:`._sparse_blocks`, :mod:`._token_blocks`) differ only in how a block's bytes decode; which
blocks to read, the refusal of a row that is not stored, and the live rows of a space (with the
sparse and token data cached per generation) are the same code, here.

Examples
--------
>>> import tempfile, os
>>> import numpy as np
>>> from repspace.core.store import Store
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
>>> _ = sp.add(["a", "b", "c"], np.ones((3, 2)))
>>> _ = sp.delete(["b"])
>>> with sp.store.db.read() as c:
...     sid, _, next_row, dead_rows = sp.header(c)
...     live_rows(c, sid, next_row, dead_rows).tolist(), [b[:3] for b in range_blocks(c, "blocks", sid, 1, 3)]
([0, 2], [(0, 1, 3)])
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np

from repspace.core.errors import NotFoundError

if TYPE_CHECKING:
    from repspace.core.store._base import SpaceBase

__all__ = ["BLOCK_TABLES", "LiveRowsCache", "RangeBlock", "check_range", "gather_rows", "live_rows", "range_blocks",
           "row_blocks"]

#: The tables whose rows are kept as blocks of consecutive rows (the only names the SQL here is built with).
BLOCK_TABLES = ("blocks", "sparse_blocks", "token_blocks")


class _Rows(Protocol):
    def take(self, positions: Any) -> Any: ...


R = TypeVar("R", bound=_Rows)


def _table(table: str) -> str:
    if table not in BLOCK_TABLES:
        raise ValueError(f"not a block table: {table!r}")
    return table


def live_rows(c: Any, sid: int, next_row: int, dead_rows: int) -> np.ndarray:
    """The live rows of space ``sid``, ascending: ``0..next_row-1`` when none has died, else read from its items."""
    if not dead_rows:
        return np.arange(next_row, dtype=np.int64)
    cur = c.execute("SELECT row FROM items WHERE space_id = ? ORDER BY row", (sid,))
    return np.fromiter((r[0] for r in cur), dtype=np.int64)


class RangeBlock(NamedTuple):
    """A block holding some of the rows asked: its rows ``first + a .. first + b - 1`` are the ones in range."""

    first: int
    a: int
    b: int
    columns: tuple[Any, ...]
    """The block's other columns asked for (its ``rowid``, its ``data``...)."""


def range_blocks(c: Any, table: str, sid: int, lo: int, hi: int, columns: str = "rowid") -> list[RangeBlock]:
    """The blocks of ``table`` holding rows ``lo..hi-1`` of space ``sid`` (live and dead), in row order.

    ``columns`` are the block's other columns to read (SQL, comma-separated), returned as
    :attr:`RangeBlock.columns`; a row of the range that no block holds is simply not covered
    (:func:`check_range` says so where that is an error).
    """
    blocks = c.execute(
        f"SELECT first_row, n_rows, {columns} FROM {_table(table)} WHERE space_id = ? AND first_row < ?"
        " AND first_row + n_rows > ? ORDER BY first_row", (sid, hi, lo)).fetchall()
    return [RangeBlock(first, max(first, lo) - first, min(first + n, hi) - first, tuple(rest))
            for first, n, *rest in blocks]


def check_range(n_read: int, lo: int, hi: int) -> None:
    """Refuse a range of rows that the blocks read (``n_read`` rows) did not all cover."""
    if n_read != max(0, hi - lo):
        raise NotFoundError(f"rows {lo} to {hi - 1} are not all stored")


def row_blocks(c: Any, table: str, sid: int, name: str, rows: np.ndarray
               ) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """For each block of ``table`` holding some of ``rows`` (int64, live or dead, any order, not empty): its
    ``rowid``, its ``n_rows``, where its rows stand in ``rows``, and their places in the block.

    A row that no block holds raises :class:`NotFoundError` naming the space ``name`` (when its
    block's turn comes: blocks before it have been yielded).
    """
    blocks = c.execute(f"SELECT first_row, n_rows, rowid FROM {_table(table)} WHERE space_id = ? ORDER BY first_row",
                       (sid,)).fetchall()
    firsts = np.array([b[0] for b in blocks], dtype=np.int64)
    which = np.searchsorted(firsts, rows, side="right") - 1
    for b in np.unique(which):
        at = np.flatnonzero(which == b)
        local = rows[at] - (firsts[b] if b >= 0 else 0)
        if b < 0 or local.min() < 0 or local.max() >= blocks[b][1]:
            raise NotFoundError(f"a requested row is not stored in space {name!r}")
        yield blocks[b][2], blocks[b][1], at, local


def gather_rows(c: Any, table: str, sid: int, name: str, rows: np.ndarray, read_block: Callable[[int, np.ndarray], R],
                concat: Callable[[list[R]], R]) -> R:
    """``rows`` (int64, not empty) in the order asked: each block's share read by ``read_block(rowid, places)``,
    the shares joined by ``concat`` and put back in order (a row not stored: :class:`NotFoundError`)."""
    parts: list[R] = []
    positions: list[np.ndarray] = []
    for rowid, _, at, local in row_blocks(c, table, sid, name, rows):
        parts.append(read_block(rowid, local))
        positions.append(at)
    joined = concat(parts)
    order = np.empty(len(rows), dtype=np.int64)
    order[np.concatenate(positions)] = np.arange(len(rows))
    return joined.take(order)


@dataclass(frozen=True)
class _Held(Generic[R]):
    generation: int
    rows: np.ndarray
    data: R


class LiveRowsCache(Generic[R]):
    """A space's live rows and their data (sparse rows, token sets), read in one transaction and kept, read-only,
    until the space's generation moves (a search loop reads them once per query)."""

    def __init__(self) -> None:
        self._held: _Held[R] | None = None
        self._lock = threading.Lock()

    def get(self, space: SpaceBase, read_range: Callable[[Any, int, int], R],
            arrays: Callable[[R], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, R]:
        """Live rows (ascending) and their data: ``read_range(c, sid, next_row)`` reads rows
        ``0..next_row-1``, the dead ones are dropped, and the rows and ``arrays(data)`` are made
        read-only before they are kept."""
        held = self._held
        if held is not None and held.generation == space.info().generation:  # one version check, no transaction
            return held.rows, held.data
        with space.store.db.read() as c:
            sid, generation, next_row, dead_rows = space.header(c)
            held = self._held
            if held is not None and held.generation == generation:
                return held.rows, held.data
            rows = live_rows(c, sid, next_row, dead_rows)
            data = read_range(c, sid, next_row)
        if len(rows) != next_row:
            data = data.take(rows)
        for arr in (rows, *arrays(data)):
            arr.flags.writeable = False
        with self._lock:
            self._held = _Held(generation, rows, data)
        return rows, data
