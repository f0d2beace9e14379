"""Item records (id, text, metadata as stored) kept in memory per space generation, for search hits.

A search's hits need each row's id, text and metadata. Reading them costs one SQLite
statement per call (about 30 us for 10 rows, as much as a graph search of 100,000 items);
a space's records change only when its generation does (every write moves it on), so the
records a process read are kept here under the generation they were read at, and a row
found again costs a dictionary lookup. They are kept per store file and space (the caller's key:
the file's device, inode and change time, and the space's uid), since a copy of a store holds the same uids and
generations as its original. A newer generation drops what an older one kept,
so nothing stale is ever served: the caller names the generation it searched (the one
:meth:`~repspace.core.store._base.SpaceBase.info` read, which a write by any process moves).

Metadata is kept as its JSON text and decoded on every call, so each hit gets a dict of
its own to change. Bounded by :data:`~repspace.core.limits.RECORD_CACHE_BYTES` (all
spaces together, each record measured by its strings plus a fixed overhead); the rows
kept longest go first.

Examples
--------
>>> keep("uid-a", 3, {7: ("a", None, "{}")})
>>> lookup("uid-a", 3, [7, 8])
({7: ('a', None, '{}')}, [8])
>>> lookup("uid-a", 4, [7])  # another generation: nothing is known of it
({}, [7])
>>> clear()
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from repspace.core.limits import RECORD_CACHE_BYTES

__all__ = ["Record", "clear", "keep", "lookup"]

#: One row's ``(id, text, metadata JSON)`` as stored.
Record = tuple[str, "str | None", str]
#: Bytes counted per record beyond its strings (the tuple, the dict slot, the string headers).
RECORD_OVERHEAD = 200


class _Held:
    """One space's records of one generation, and their measured size."""

    __slots__ = ("generation", "records", "nbytes")

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.records: dict[int, Record] = {}
        self.nbytes = 0


_LOCK = threading.Lock()
#: Space uid -> its records of the newest generation read.
_HELD: dict[str, _Held] = {}
_TOTAL = [0]


def lookup(uid: str, generation: int, rows: list[int]) -> tuple[dict[int, Record], list[int]]:
    """``(records found, rows not kept)`` of the space ``uid`` at ``generation``."""
    held = _HELD.get(uid)
    if held is None or held.generation != generation:
        return {}, rows
    kept = held.records
    found: dict[int, Record] = {}
    missing: list[int] = []
    for r in rows:
        rec = kept.get(r)
        if rec is None:
            missing.append(r)
        else:
            found[r] = rec
    return found, missing


def held(uid: str, generation: int) -> Mapping[int, Record] | None:
    """The records kept of the space ``uid`` at ``generation`` (read them only: a reader of this process
    may add to them meanwhile), or None."""
    h = _HELD.get(uid)
    return h.records if h is not None and h.generation == generation else None


def keep(uid: str, generation: int, records: Mapping[int, Record]) -> None:
    """Keep records the store returned for ``uid`` at ``generation`` (read in one statement at it).

    Records of an older generation than the one kept are not kept (another view of the
    space read them late); a newer one replaces what was kept.
    """
    if sum(map(_size, records.values())) > RECORD_CACHE_BYTES:
        return
    with _LOCK:
        held = _HELD.get(uid)
        if held is None or held.generation < generation:
            if held is not None:
                _TOTAL[0] -= held.nbytes
            held = _HELD[uid] = _Held(generation)
        elif held.generation > generation:
            return
        added = 0
        for row, rec in records.items():
            if row not in held.records:
                held.records[row] = rec
                added += _size(rec)
        held.nbytes += added
        _TOTAL[0] += added
        if _TOTAL[0] > RECORD_CACHE_BYTES:
            _evict(held)


def _evict(current: _Held) -> None:
    """Drop other spaces' records, then this one's oldest, until the total fits (under the lock)."""
    for uid in [u for u, h in _HELD.items() if h is not current]:
        _TOTAL[0] -= _HELD.pop(uid).nbytes
        if _TOTAL[0] <= RECORD_CACHE_BYTES:
            return
    records = current.records
    while records and _TOTAL[0] > RECORD_CACHE_BYTES // 2:  # make room for a while, not for one call
        size = _size(records.pop(next(iter(records))))
        current.nbytes -= size
        _TOTAL[0] -= size


def _size(rec: Record) -> int:
    """Bytes a record is counted as."""
    return len(rec[0]) + len(rec[1] or "") + len(rec[2]) + RECORD_OVERHEAD


def clear() -> None:
    """Forget every kept record (tests; memory pressure)."""
    with _LOCK:
        _HELD.clear()
        _TOTAL[0] = 0
