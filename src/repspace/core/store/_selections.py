"""Filter selections of a space, reused per generation.

Evaluating a filter in SQL costs a scan of every item's JSON, whatever the
filter. A space's items change only
when its generation does, so here:

* the rows a filter selects are kept per ``(space uid, generation, filter)``:
  repeating a filter costs a dictionary lookup;
* each field a filter reads is read once per generation into a column
  (:class:`~repspace.core.filters.columns.Column`, the JSON type and value the SQL
  compiler's conditions are written on), and a filter over cached columns, new
  or not, is a few vectorised comparisons.

Columns of large spaces are also written beside the store
(:mod:`repspace.core.store._column_files`), so that another process (a CLI
call, a server worker) reads a field in milliseconds instead of scanning.
The caches of this process are bounded (:data:`MAX_COLUMN_BYTES`,
:data:`MAX_SELECTIONS`), least recently used first out. A write gives the space a
new generation, so nothing stale is ever served; entries of old generations are
dropped as soon as a newer one is read.
"""

from __future__ import annotations

import threading
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.cache import LRUCache
from repspace.core.filters.columns import (
    MISSING,
    TYPE_CODES,
    Column,
    evaluate_columns,
    fields_of,
)
from repspace.core.filters import Field, Filter, field_sql
from repspace.core.store._column_files import (
    PERSIST_MIN_ITEMS,
    column_file,
    load_column,
    save_column,
)

#: Bytes of columns kept in memory (all spaces of the process together).
MAX_COLUMN_BYTES = 512 * 1024 * 1024
#: Filter selections kept (all spaces together).
MAX_SELECTIONS = 256

_LOCK = threading.Lock()
#: (uid, generation) -> live rows in row order (the order of every column of that generation).
_ROWS: dict[tuple[str, int], np.ndarray] = {}
#: (uid, generation, field path) -> column, at most MAX_COLUMN_BYTES in all.
_COLUMNS: LRUCache[Column] = LRUCache(1 << 30, max_bytes=MAX_COLUMN_BYTES, sizeof=lambda col: col.nbytes)
#: (uid, generation, canonical filter text) -> selected rows (read-only), at most MAX_SELECTIONS.
_SELECTIONS: LRUCache[np.ndarray] = LRUCache(MAX_SELECTIONS)
#: How selections were answered (a lookup, columns already read, a read): tests check the caches with it.
STATS = {"cached": 0, "columns": 0, "read": 0, "files": 0}


def select_rows(c: Any, sid: int, uid: str, generation: int, flt: Filter, *,
                next_row: int = -1, dead_rows: int = -1, index_dir: Path | None = None,
                persist: bool = True) -> np.ndarray:
    """Rows of the live items matching ``flt``, ascending, inside the read transaction ``c``.

    ``generation`` (and ``next_row``, ``dead_rows``) must be the ones read in ``c``
    (the caller's ``_state``), so that the columns read here and the selection
    kept belong to them. With ``index_dir``, columns of large spaces are also
    kept in files beside the store (:mod:`repspace.core.store._column_files`)
    and read from there by any process while the space is unchanged; with ``persist``
    False (a read-only store) such files are read but never written.
    """
    key = (uid, generation, str(flt.expr))
    hit = _SELECTIONS.get(key)
    if hit is not None:
        with _LOCK:
            STATS["cached"] += 1
        return hit
    paths = fields_of(flt.expr)
    rows, columns = columns_of(c, sid, uid, generation, paths, next_row=next_row, dead_rows=dead_rows,
                               index_dir=index_dir, persist=persist)
    selected = rows[evaluate_columns(flt.expr, columns)]
    selected.flags.writeable = False
    _SELECTIONS.put(key, selected)
    return selected


def kept_selection(uid: str, generation: int, canonical: str) -> np.ndarray | None:
    """The selection kept for the space ``uid`` at ``generation`` and the filter of canonical text
    ``canonical`` (``str(flt.expr)``), or None: what :func:`select_rows` returns for it without a read."""
    hit = _SELECTIONS.get((uid, generation, canonical))
    if hit is not None:
        with _LOCK:
            STATS["cached"] += 1
    return hit


def columns_of(c: Any, sid: int, uid: str, generation: int, paths: list[tuple[str, ...]] | set[tuple[str, ...]], *,
               next_row: int = -1, dead_rows: int = -1, index_dir: Path | None = None, persist: bool = True
               ) -> tuple[np.ndarray, dict[tuple[str, ...], Column]]:
    """The live rows and the columns of ``paths`` at the state read in ``c``: kept, from files, or read.

    What :func:`select_rows` evaluates a filter on; the explorer colours a map by the
    same columns. Columns read here are kept per generation like a filter's.
    """
    with _LOCK:
        _forget_older(uid, generation)
        # Local references: another thread may evict entries while this one reads.
        kept = {p: _COLUMNS.get((uid, generation, p)) for p in paths}
        columns = {p: col for p, col in kept.items() if col is not None}
        rows = _ROWS.get((uid, generation))
    missing = [p for p in paths if p not in columns]
    state = (uid, generation, next_row, dead_rows)
    known = rows
    if index_dir is not None and missing:  # kept beside the store by this or another process?
        for path in list(missing):
            kept = load_column(column_file(index_dir, uid, path), state, path)
            if kept is not None and (rows is None or np.array_equal(kept[0], rows)):
                rows, columns[path] = kept[0], kept[1]
                missing.remove(path)
                STATS["files"] += 1
    if missing or rows is None:
        to_read = sorted(paths if rows is None else missing)
        sql_rows, new = _read_columns(c, sid, to_read)
        if rows is not None and not np.array_equal(sql_rows, rows):  # never expected: read every field again
            to_read = sorted(paths)
            sql_rows, new = _read_columns(c, sid, to_read)
        rows = sql_rows
        columns.update(new)
        if index_dir is not None and persist and len(rows) >= PERSIST_MIN_ITEMS:
            for path in to_read:
                try:
                    save_column(column_file(index_dir, uid, path), state, path, rows, new[path])
                except OSError:  # a read-only or full disk: the files are only a cache
                    break
    with _LOCK:
        added = [p for p in paths if _COLUMNS.get((uid, generation, p)) is None]
        if added or known is None:
            _ROWS[(uid, generation)] = rows
            for path in added:
                _COLUMNS.put((uid, generation, path), columns[path])
            STATS["read"] += 1
        else:
            STATS["columns"] += 1
    return rows, columns


def _read_columns(c: Any, sid: int, paths: list[tuple[str, ...]]) -> tuple[np.ndarray, dict[tuple[str, ...], Column]]:
    """One scan of the space's items: live rows and the type/value columns of ``paths``.

    The JSON type comes back as its code (a ``CASE`` in SQL) and each column is
    taken out of the records by ``map(itemgetter)``: at a million items that is
    0.4 s less per field than type names looked up in Python and ``zip(*records)``.
    """
    exprs, params = [], []
    for path in paths:
        (t, tp), (v, vp) = field_sql(Field(path))
        exprs += [f"CASE {t} {_TYPE_CASES} ELSE {MISSING} END", v]
        params += [*tp, *vp]
    select = ", ".join(["row", *exprs])
    records = c.execute(f"SELECT {select} FROM items WHERE space_id = ? ORDER BY row", (*params, sid)).fetchall()
    n = len(records)
    rows = np.fromiter(map(itemgetter(0), records), dtype=np.int64, count=n)
    columns = {}
    for i, path in enumerate(paths):
        kind = np.fromiter(map(itemgetter(1 + 2 * i), records), dtype=np.uint8, count=n)
        columns[path] = Column.from_arrays(kind, list(map(itemgetter(2 + 2 * i), records)))
    return rows, columns


#: ``WHEN 'integer' THEN 4 ...``: SQLite's type names as :mod:`~repspace.core.filters.columns` codes.
_TYPE_CASES = " ".join(f"WHEN '{name}' THEN {code}" for name, code in TYPE_CODES.items())


def _forget_older(uid: str, generation: int) -> None:
    """Drop what was kept for earlier generations of the space (they can never be asked again)."""
    for cache in (_COLUMNS, _SELECTIONS):
        for key in [k for k in cache.keys() if k[0] == uid and k[1] < generation]:  # type: ignore[index]
            cache.pop(key)
    for key in [k for k in _ROWS if k[0] == uid and k[1] < generation]:
        del _ROWS[key]


def clear() -> None:
    """Forget every cached column and selection (tests; memory pressure)."""
    with _LOCK:
        _ROWS.clear()
        _COLUMNS.clear()
        _SELECTIONS.clear()
