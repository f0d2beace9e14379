"""The reading half of a space: vectors, rows, items and filtered selections.

Every read is one read transaction (or one statement), so a concurrent
writer's batch is wholly in or wholly out. The vectors are cached per
generation: a space's rows never change, so a generation names its data.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import NotFoundError
from repspace.core.printable import excerpt
from repspace.core.space import SpaceInfo
from repspace.core.store import _records
from repspace.core.store._base import Item, SpaceBase
from repspace.core.store._rows import as_ids, read_range, read_rows, rows_by_id

if TYPE_CHECKING:
    from repspace.core.filters import Filter
    from repspace.core.store._store import Store

__all__ = ["Snapshot", "SpaceReader"]


@dataclass(frozen=True)
class Snapshot:
    """A consistent view of a space at one generation: ids row-aligned with vectors.

    Attributes
    ----------
    ids : list of str, the live items in row order.
    rows : int64 array, each item's row in the space's vector array.
    vectors : float32 array (n, dim), row-aligned with ``ids``.
    generation : the space's generation when read.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> space = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
    >>> _ = space.add(["a", "b", "c"], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> _ = space.delete(["b"])
    >>> snap = space.snapshot()
    >>> snap.ids, snap.rows.tolist(), snap.vectors.tolist(), snap.generation
    (['a', 'c'], [0, 2], [[1.0, 0.0], [1.0, 1.0]], 2)
    """

    ids: list[str]
    rows: np.ndarray
    vectors: np.ndarray
    generation: int
    next_row: int


@dataclass(frozen=True)
class _Vectors:
    generation: int
    rows: np.ndarray
    vectors: np.ndarray
    version: tuple[int, int] | None = None
    """The store's :meth:`~repspace.core.store._db.Database.version` read before these were."""


class SpaceReader(SpaceBase):
    """Read a space's vectors, rows and items, and select rows by filter.

    Attributes
    ----------
    normalized : tuple of two arrays or None
        A slot for the search workflow: the vectors it last searched and their
        unit-length copy (kept while the same array is searched; the core never
        reads it).
    """

    def __init__(self, store: Store, info: SpaceInfo) -> None:
        super().__init__(store, info)
        self._cache: Snapshot | None = None
        self._vectors_only: _Vectors | None = None
        self._cache_lock = threading.Lock()
        self.normalized: tuple[np.ndarray, np.ndarray] | None = None

    def snapshot(self) -> Snapshot:
        """Ids and vectors of the live items, consistent with each other.

        Read in one transaction, so a concurrent writer's batch is either wholly
        in or wholly out. Cached per generation.
        """
        self.require_dense("a snapshot of vectors")
        with self.store.db.read() as c:
            sid, generation, next_row, dead_rows = self.header(c)
            cached = self._cache
            if cached is not None and cached.generation == generation:
                return cached
            pairs = c.execute("SELECT row, item_id FROM items WHERE space_id = ? ORDER BY row", (sid,)).fetchall()
            all_rows = read_range(c, sid, self.dim, self.dtype, 0, next_row)
        rows = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
        ids = [p[1] for p in pairs]
        vectors = all_rows if len(rows) == next_row else all_rows[rows]
        # The snapshot is cached and shared: callers get read-only views (copy to modify).
        rows.flags.writeable = False
        vectors.flags.writeable = False
        snap = Snapshot(ids=ids, rows=rows, vectors=vectors, generation=generation, next_row=next_row)
        with self._cache_lock:
            self._cache = snap
        return snap

    def dump(self) -> tuple[list[Item], np.ndarray]:
        """Every live item (with text and metadata) and its vector, from one snapshot."""
        self.require_dense("reading every vector")
        with self.store.db.read() as c:
            sid, _, next_row, _ = self.header(c)
            items = [
                Item(id=i, text=t, metadata=json.loads(m), row=r)
                for r, i, t, m in c.execute(
                    "SELECT row, item_id, text, meta FROM items WHERE space_id = ? ORDER BY row", (sid,)
                )
            ]
            all_rows = read_range(c, sid, self.dim, self.dtype, 0, next_row)
        rows = np.fromiter((it.row for it in items), dtype=np.int64, count=len(items))
        return items, all_rows if len(rows) == next_row else all_rows[rows]

    def ids(self) -> list[str]:
        """Ids of the live items, in row order (aligned with :meth:`vectors`)."""
        if self.layout != "dense":
            with self.store.db.read() as c:
                sid, *_ = self.header(c)
                return [r[0] for r in c.execute("SELECT item_id FROM items WHERE space_id = ? ORDER BY row", (sid,))]
        return self.snapshot().ids

    def vectors(self) -> np.ndarray:
        """All live vectors as float32 (n, dim), row-aligned with :meth:`ids` (read-only; copy to modify).

        The ids are not read (they are most of the cost of a snapshot); use
        :meth:`snapshot` for ids and vectors read together.
        """
        return self.rows_and_vectors()[1]

    def rows_and_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Live rows and their vectors (read-only), from one read, without the ids.

        When no row is dead the rows are simply ``0..n-1`` and only the vector
        blocks are read. Cached per generation, like :meth:`snapshot`; while the
        store's version token has not moved (no commit anywhere since the last
        read) the cached arrays are returned after one statement, not a read
        transaction (a search loop calls this once per query).
        """
        if self.layout != "dense":
            self.require_dense("reading vectors")
        version = self.store.db.version()
        cached_vectors = self._vectors_only
        if cached_vectors is not None and cached_vectors.version == version:
            return cached_vectors.rows, cached_vectors.vectors
        with self.store.db.read() as c:
            sid, generation, next_row, dead_rows = self.header(c)
            for cached in (self._cache, self._vectors_only):
                if cached is not None and cached.generation == generation:
                    # The version read before the transaction: a commit in between only causes a re-read.
                    self._vectors_only = _Vectors(generation, cached.rows, cached.vectors, version)
                    return cached.rows, cached.vectors
            if dead_rows:
                cur = c.execute("SELECT row FROM items WHERE space_id = ? ORDER BY row", (sid,))
                rows = np.fromiter((r[0] for r in cur), dtype=np.int64)
            else:
                rows = np.arange(next_row, dtype=np.int64)
            vectors = read_range(c, sid, self.dim, self.dtype, 0, next_row)
        if len(rows) != next_row:
            vectors = vectors[rows]
        rows.flags.writeable = False
        vectors.flags.writeable = False
        self._vectors_only = _Vectors(generation, rows, vectors, version)
        return rows, vectors

    def rows(self) -> np.ndarray:
        """Rows of the live items, ascending."""
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            cur = c.execute("SELECT row FROM items WHERE space_id = ? ORDER BY row", (sid,))
            return np.fromiter((r[0] for r in cur), dtype=np.int64)

    def live_rows(self, lo: int = 0, hi: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Live rows in ``[lo, hi)`` and their vectors, read from one snapshot."""
        self.require_dense("reading vectors")
        with self.store.db.read() as c:
            sid, _, next_row, _ = self.header(c)
            hi = next_row if hi is None else min(hi, next_row)
            rows = np.fromiter(
                (r[0] for r in c.execute(
                    "SELECT row FROM items WHERE space_id = ? AND row >= ? AND row < ? ORDER BY row", (sid, lo, hi)
                )),
                dtype=np.int64,
            )
            block = read_range(c, sid, self.dim, self.dtype, lo, hi)
        return rows, block[rows - lo] if len(rows) != hi - lo else block

    def read_rows(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """Vectors of the given rows (live or dead), float32, reading only the bytes needed."""
        self.require_dense("reading vectors")
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            return read_rows(c, sid, self.name, self.dim, self.dtype, rows)

    def items(self, rows: Sequence[int] | np.ndarray) -> dict[int, Item]:
        """The live items at the given rows (dead rows are left out)."""
        return {r: Item(id=i, text=t, metadata=m, row=r) for r, (i, t, m) in self.records(rows).items()}

    def records(self, rows: Sequence[int] | np.ndarray, *, generation: int | None = None
                ) -> dict[int, tuple[str, str | None, dict[str, Any]]]:
        """``{row: (id, text, metadata)}`` of the live items at ``rows`` (dead rows are left out).

        What a search's hits need, read the cheapest way: one statement (a single
        SELECT is its own read transaction) and one JSON decode for all the rows'
        metadata, rather than a transaction and a decode per row. With ``generation``
        (the one the caller searched, from :meth:`info`), rows this process read at
        that generation come from memory (:mod:`repspace.core.store._records`) and
        the rows read are kept for it; each call decodes its own metadata dicts. The
        rows come in ascending order, but with ``generation`` those kept come first.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from repspace.core.store import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a", "b"], np.eye(2), texts=["x", None], metadata=[{"n": 1}, {}])
        >>> sp.records([1, 0, 7])
        {0: ('a', 'x', {'n': 1}), 1: ('b', None, {})}
        >>> sp.records([1], generation=sp.info().generation)  # kept: the next call reads nothing
        {1: ('b', None, {})}
        """
        kept = self.stored_records(rows, generation=generation)
        if not kept:
            return {}
        metadata = json.loads(f"[{','.join([rec[2] for rec in kept.values()])}]")
        return {row: (rec[0], rec[1], meta) for (row, rec), meta in zip(kept.items(), metadata)}

    def stored_records(self, rows: Sequence[int] | np.ndarray, *, generation: int | None = None
                       ) -> dict[int, tuple[str, str | None, str]]:
        """:meth:`records` with each metadata as its stored JSON text, not decoded: for a caller that
        decodes only what is read (a search's hits, :meth:`repspace.core.hits.Hit.of`).

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from repspace.core.store import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a", "b"], np.eye(2), metadata=[{"n": 1}, {}])
        >>> sp.stored_records([0])
        {0: ('a', None, '{"n": 1}')}
        """
        rows = rows.tolist() if isinstance(rows, np.ndarray) else [int(r) for r in rows]
        if not rows:
            return {}
        kept: dict[int, _records.Record] = {}
        if generation is not None:
            key = f"{self.store.db.identity}/{self.uid}"  # a copy of the store holds the same uids
            kept, rows = _records.lookup(key, generation, rows)
        if rows:
            read = self._read_records(rows)
            if generation is not None and read[0] == generation:
                _records.keep(key, generation, read[1])
            kept.update(read[1])
        return kept

    def held_records(self, generation: int) -> Mapping[int, tuple[str, str | None, str]] | None:
        """The records this process keeps of the space at ``generation`` (``{row: (id, text, metadata
        JSON)}``, as :meth:`stored_records` serves them; to read, not to change), or None: what a search
        of one query per call looks its hits up in before asking :meth:`stored_records`.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from repspace.core.store import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a", "b"], np.eye(2))
        >>> g = sp.info().generation
        >>> sp.held_records(g) is None, sp.stored_records([1], generation=g)[1][0], sp.held_records(g)[1][0]
        (True, 'b', 'b')
        """
        return _records.held(f"{self.store.db.identity}/{self.uid}", generation)

    def _read_records(self, rows: list[int]) -> tuple[int, dict[int, _records.Record]]:
        """``(generation, {row: (id, text, metadata JSON)})`` of the live rows among ``rows``, in one statement."""
        if len(rows) <= 256:  # a search's hits: a plain IN list (a third faster than json_each for 10 rows)
            sql, params = f"i.row IN ({', '.join('?' * len(rows))})", rows
        else:
            sql, params = "i.row IN (SELECT value FROM json_each(?))", [json.dumps(rows)]
        found = self.store.db.fetchall(
            "SELECT p.generation, i.row, i.item_id, i.text, i.meta FROM spaces AS p JOIN items AS i"
            f" ON i.space_id = p.id WHERE p.uid = ? AND {sql} ORDER BY i.row", (self.uid, *params)
        )
        if not found:
            with self.store.db.read() as c:
                generation = self.header(c).generation  # a space deleted meanwhile: NotFoundError
            return generation, {}
        return found[0][0], {row: (item_id, text, meta) for _, row, item_id, text, meta in found}

    def get(self, ids: Sequence[str]) -> list[Item]:
        """Items by id, in the order asked; unknown ids raise :class:`NotFoundError`."""
        ids = as_ids(ids)
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            found = rows_by_id(c, sid, list(ids))
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"id {excerpt(missing[0])} is not in space {self.name!r}")
        return [Item(id=i, text=found[i][1], metadata=json.loads(found[i][2]), row=found[i][0]) for i in ids]

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are in the space."""
        ids = as_ids(ids)
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            return set(rows_by_id(c, sid, ids))

    def vectors_of(self, ids: Sequence[str]) -> np.ndarray:
        """Vectors of the given ids (float32, in the order asked)."""
        return self.read_rows([it.row for it in self.get(ids)])

    def filter_rows(self, where: str | Filter, *, generation: int | None = None) -> np.ndarray:
        """Rows of the live items matching a filter expression (see :mod:`repspace.core.filters`), ascending.

        The selection is kept for the space's generation, and the fields it reads
        as columns, so a repeated filter costs a lookup and a new one over known
        fields a few vectorised comparisons (:mod:`repspace.core.store._selections`);
        columns of spaces of 50,000 items or more are kept beside the store too, for
        other processes; the result equals the SQL compiler's (:meth:`filter_rows_sql`). The array
        is read-only: copy it to change it. With ``generation`` (the one the caller searches,
        from :meth:`info`), a selection kept for it is returned without a read transaction.
        """
        from repspace.core.store._selections import kept_selection, select_rows

        flt, canonical = _parsed(where)
        if generation is not None:
            kept = kept_selection(self.uid, generation, canonical)
            if kept is not None:
                return kept
        with self.store.db.read() as c:
            sid, generation, next_row, dead_rows = self.header(c)
            return select_rows(c, sid, self.uid, generation, flt, next_row=next_row, dead_rows=dead_rows,
                               index_dir=self.store.index_dir, persist=not self.store.readonly)

    def columns(self, fields: Sequence[str]) -> tuple[int, np.ndarray, dict[str, Any]]:
        """Top-level metadata fields as columns: ``(generation, live rows ascending, {field: Column})``.

        The columns filters are evaluated on (:class:`~repspace.core.filters.columns.Column`:
        each item's JSON type and value), kept per generation and, for large spaces,
        beside the store; the rows are those of :meth:`snapshot` at the same generation.

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a", "b"], np.eye(2), metadata=[{"n": 1}, {"lang": "en"}])
        >>> gen, rows, cols = sp.columns(["n", "lang"])
        >>> rows.tolist(), cols["n"].number.tolist()[:1], cols["lang"].text.tolist()
        ([0, 1], [1.0], [None, 'en'])
        """
        from repspace.core.store._selections import columns_of

        paths = {name: (str(name),) for name in fields}
        with self.store.db.read() as c:
            sid, generation, next_row, dead_rows = self.header(c)
            rows, cols = columns_of(c, sid, self.uid, generation, sorted(set(paths.values())),
                                    next_row=next_row, dead_rows=dead_rows, index_dir=self.store.index_dir,
                                    persist=not self.store.readonly)
        return generation, rows, {name: cols[path] for name, path in paths.items()}

    def field_counts(self) -> tuple[int, list[tuple[str, str, int]]]:
        """``(generation, [(field, JSON type, items), ...])`` of the live items' top-level metadata, by field.

        One scan of the space's metadata in SQLite (``json_each``).

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a", "b"], np.eye(2), metadata=[{"n": 1}, {"n": 2.5, "lang": "en"}])
        >>> sp.field_counts()[1]
        [('lang', 'text', 1), ('n', 'integer', 1), ('n', 'real', 1)]
        """
        with self.store.db.read() as c:
            sid, generation, *_ = self.header(c)
            found = c.execute(
                "SELECT j.key, j.type, count(*) FROM items, json_each(items.meta) AS j WHERE items.space_id = ?"
                " GROUP BY j.key, j.type ORDER BY j.key, j.type", (sid,)).fetchall()
        return generation, [(str(k), str(t), int(n)) for k, t, n in found]

    def filter_rows_sql(self, where: str | Filter) -> np.ndarray:
        """:meth:`filter_rows` evaluated by SQLite on every call: the reference, never cached."""
        from repspace.core.filters import Filter

        flt = where if isinstance(where, Filter) else Filter.parse(where)
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            cur = c.execute(
                f"SELECT row FROM items WHERE space_id = ? AND ({flt.sql}) ORDER BY row", (sid, *flt.params)
            )
            return np.fromiter((r[0] for r in cur), dtype=np.int64)

    def iter_items(self, batch: int = 10000) -> Iterator[tuple[list[Item], np.ndarray]]:
        """Live items with their vectors in row order, ``batch`` at a time.

        The set of rows is fixed when iteration starts; each batch is read in its
        own short transaction, so the loop body may read and write the store.
        Items deleted meanwhile are skipped (vectors never change, so the rest
        is exactly as it was).
        """
        rows = self.rows()
        for lo in range(0, len(rows), batch):
            chunk = rows[lo : lo + batch]
            found = self.items(chunk)
            kept = [int(r) for r in chunk if int(r) in found]
            if kept:
                yield [found[r] for r in kept], self.read_rows(kept)


def _parsed(where: str | Filter) -> tuple[Filter, str]:
    """A filter and its canonical text (what selections are kept under); a text is parsed once."""
    from repspace.core.filters import Filter

    if isinstance(where, str):
        return _parse_text(where)
    flt = where if isinstance(where, Filter) else Filter.parse(where)
    return flt, str(flt.expr)


@functools.lru_cache(maxsize=256)
def _parse_text(text: str) -> tuple[Filter, str]:
    """:func:`_parsed` of a text, remembered (a search loop passes the same filter on every call)."""
    from repspace.core.filters import Filter

    flt = Filter.parse(text)
    return flt, str(flt.expr)
