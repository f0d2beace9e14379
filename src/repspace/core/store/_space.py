"""A handle on one stored space: add, delete, read vectors and items.

Rows are append-only: an item's vector is written once, at row ``r`` of the
space's vector array, and never changes. Replacing an item appends a new row and
leaves the old one dead; deleting leaves a dead row. This is what makes derived
indexes safe to reuse: an index over rows ``0..m`` is never *wrong* after a
change, only incomplete (extend it with the new rows) or holding dead rows
(excluded at search time).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import repeat
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from repspace.core.errors import ConflictError, InputError, NotFoundError
from repspace.core.printable import excerpt
from repspace.core.space import Metric, SpaceInfo
from repspace.core.store import validate as v

if TYPE_CHECKING:
    from repspace.core.filters import Filter
    from repspace.core.store._store import Store

#: Target size of one vector block in bytes.
BLOCK_BYTES = 4 << 20


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Snapshot:
    """A consistent view of a space at one generation: ids row-aligned with vectors.

    Attributes
    ----------
    ids : list of str, the live items in row order.
    rows : int64 array, each item's row in the space's vector array.
    vectors : float32 array (n, dim), row-aligned with ``ids``.
    generation : the space's generation when read.
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


@dataclass(frozen=True)
class AddResult:
    """What a batch did: items ``added`` (new ids), ``replaced`` (same id, new
    vector), ``updated`` (same vector, new text or metadata) and ``unchanged``."""

    added: int
    replaced: int
    updated: int
    unchanged: int
    generation: int

    def to_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("added", "replaced", "updated", "unchanged", "generation")}


@dataclass(frozen=True)
class ShardEntry:
    """One shard of a distributed job, as the space's shard ledger records it."""

    sha256: str
    job: str
    name: str
    n_rows: int = 0
    ingested_at: str = ""


@dataclass(frozen=True)
class Item:
    """One stored item (without its vector)."""

    id: str
    text: str | None
    metadata: dict[str, Any]
    row: int


class Space:
    """A stored space: items, vectors, state. Get one from :meth:`Store.space` or ``create_space``.

    The core knows nothing of search; ``repspace.Space`` (a subclass in
    :mod:`repspace.workflows.store`) adds :meth:`~repspace.workflows.store.Space.search`.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from repspace import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> sp = store.create_space("toy", dim=3)
    >>> sp.add(["a", "b"], np.eye(3)[:2], texts=["x", "y"], metadata=[{"n": 1}, {"n": 2}]).added
    2
    >>> sp.ids(), sp.vectors().shape
    (['a', 'b'], (2, 3))
    """

    def __init__(self, store: Store, info: SpaceInfo) -> None:
        self.store = store
        self._info = info
        self._info_version: tuple[int, int] | None = None  # the store's version when _info was read
        self._cache: Snapshot | None = None
        self._vectors_only: _Vectors | None = None
        self._cache_lock = threading.Lock()

    # ----------------------------------------------------------------- identity
    @property
    def name(self) -> str:
        return self._info.name

    @property
    def dim(self) -> int:
        return self._info.dim

    @property
    def metric(self) -> Metric:
        return self._info.metric

    @property
    def dtype(self) -> str:
        return self._info.dtype

    @property
    def uid(self) -> str:
        return self._info.uid

    @property
    def provenance(self) -> dict[str, Any]:
        return dict(self._info.provenance)

    def info(self) -> SpaceInfo:
        """The space's current description (re-read whenever the store may have changed).

        One ``PRAGMA data_version`` tells whether any connection committed since
        the last read; only then is the row read again, so a search loop pays
        a few microseconds here, not a read transaction.
        """
        db = self.store.db
        with db._lock:  # db.version(), inlined: this runs once per search call
            version = (db.conn.execute("PRAGMA data_version").fetchone()[0], db.commits)
        if version != self._info_version:
            with db.read() as c:
                info = self._read_info(c)
            # The version read before the row: a commit in between only causes one more re-read later.
            self._info, self._info_version = info, version
        return self._info

    def state(self, name: str) -> bytes | None:
        """Named binary state stored with the space (see ``Store.create_space(state=...)``), or None."""
        with self.store.db.read() as c:
            row = c.execute("SELECT s.data FROM space_state AS s JOIN spaces AS p ON p.id = s.space_id"
                            " WHERE p.uid = ? AND s.name = ?", (self._info.uid, name)).fetchone()
        return None if row is None else bytes(row[0])

    def __len__(self) -> int:
        return self.info().count

    def __repr__(self) -> str:
        return f"<Space {self.name!r} dim={self.dim} metric={self.metric.value}>"

    def _read_info(self, c: Any) -> SpaceInfo:
        row = c.execute(
            "SELECT id, name, dim, metric, dtype, provenance, generation, uid, created_at, updated_at,"
            " next_row, dead_rows FROM spaces WHERE uid = ?",
            (self._info.uid,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"space {self._info.name!r} no longer exists")
        # Every row ever written is either live (an item) or dead, so the live
        # count is next_row - dead_rows: O(1), where count(*) scans the items.
        return SpaceInfo(
            name=row[1], dim=row[2], metric=Metric(row[3]), dtype=row[4], count=row[10] - row[11],
            provenance=json.loads(row[5]), generation=row[6], uid=row[7], created_at=row[8],
            updated_at=row[9], next_row=row[10], dead_rows=row[11],
        )

    def _state(self, c: Any) -> tuple[int, int, int, int]:
        """(space id, generation, next_row, dead_rows) inside a transaction."""
        row = c.execute(
            "SELECT id, generation, next_row, dead_rows FROM spaces WHERE uid = ?", (self._info.uid,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"space {self._info.name!r} no longer exists")
        return row

    # ------------------------------------------------------------------- writes
    def add(
        self,
        ids: Sequence[str],
        vectors: Any,
        texts: Sequence[str | None] | None = None,
        metadata: Sequence[dict[str, Any] | None] | None = None,
        *,
        on_conflict: Literal["upsert", "error"] = "upsert",
        shard: ShardEntry | None = None,
    ) -> AddResult:
        """Add a batch of items atomically: all of it is stored, or none of it.

        Parameters
        ----------
        ids : sequence of str
            Unique within the batch.
        vectors : array-like (n, dim)
            Finite numbers; stored as the space's dtype, returned as float32.
        texts, metadata : optional sequences aligned with ``ids``.
        on_conflict : ``"upsert"`` (default) or ``"error"``
            With ``upsert`` an existing id is replaced: the item becomes what
            this batch says, text and metadata included (a new vector gets a new
            row; an identical vector keeps its row and only text and metadata are
            updated). With ``error`` the whole batch is refused if any id exists.
        shard : ShardEntry, optional
            The batch is this shard of a distributed job: it is recorded in the
            space's shard ledger in the same transaction, and refused
            (:class:`ConflictError`, nothing written) if the ledger has it already.

        Returns
        -------
        AddResult

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from repspace import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> sp.add(["a"], [[1.0, 0.0]]).added, sp.add(["a"], [[0.0, 1.0]]).replaced
        (1, 1)
        """
        if on_conflict not in ("upsert", "error"):
            raise InputError(f"on_conflict must be 'upsert' or 'error', not {excerpt(on_conflict)}")
        ids = v.check_ids(ids)
        vecs = v.check_vectors(vectors, ids, self.dim, self.dtype)
        texts = v.check_texts(texts, ids)
        metas = v.check_metas(metadata, ids)
        hashes = [v.text_hash(t) if t is not None else None for t in texts]
        stored = vecs.astype(self.dtype, copy=False)
        if self.metric is Metric.POINCARE:
            _check_in_ball(stored, ids)
        elif self.metric is Metric.COSINE:  # checked as stored: a float16 rounding to zero is caught too
            v.check_directions(stored, ids)
        with self.store.db.write() as c:
            sid, generation, next_row, dead_rows = self._state(c)
            if shard is not None and c.execute("SELECT 1 FROM shards WHERE space_id = ? AND sha256 = ?",
                                               (sid, shard.sha256)).fetchone():
                raise ConflictError(f"shard {shard.name} ({shard.sha256[:12]}) is already in space {self.name!r}")
            existing = self._rows_by_id(c, sid, ids)
            if existing and on_conflict == "error":
                some = ", ".join(excerpt(i) for i in list(existing)[:3])
                raise ConflictError(f"{len(existing)} id(s) already in space {self.name!r}: {some}")
            old_vectors = self._read_rows(c, sid, [r for r, *_ in existing.values()]) if existing else None
            old_index = {r: j for j, (r, *_) in enumerate(existing.values())}
            new_pos, dead, updates, unchanged = [], [], [], 0
            for i, item_id in enumerate(ids):
                old = existing.get(item_id)
                if old is None:
                    new_pos.append(i)
                    continue
                row, old_text, old_meta = old
                same_vector = old_vectors[old_index[row]].astype(self.dtype).tobytes() == stored[i].tobytes()
                if not same_vector:
                    dead.append(row)
                    new_pos.append(i)
                elif old_text != texts[i] or old_meta != metas[i]:
                    updates.append((texts[i], metas[i], hashes[i], sid, row))
                else:
                    unchanged += 1
            replaced = len(dead)
            if dead:
                c.execute(
                    "DELETE FROM items WHERE space_id = ? AND row IN (SELECT value FROM json_each(?))",
                    (sid, json.dumps(dead)),
                )
            if updates:
                c.executemany("UPDATE items SET text = ?, meta = ?, hash = ? WHERE space_id = ? AND row = ?", updates)
            if new_pos:
                cols = (ids, texts, metas, hashes)
                if len(new_pos) != len(ids):
                    cols = tuple([col[i] for i in new_pos] for col in cols)
                rows = range(next_row, next_row + len(new_pos))
                if all(t is None for t in cols[1]) and all(m == "{}" for m in cols[2]):  # vectors and ids only
                    c.executemany("INSERT INTO items (space_id, row, item_id, text, meta, hash)"
                                  " VALUES (?, ?, ?, NULL, '{}', NULL)", zip(repeat(sid), rows, cols[0]))
                else:  # zip, not a generator of tuples: the rows are assembled in C
                    c.executemany("INSERT INTO items (space_id, row, item_id, text, meta, hash)"
                                  " VALUES (?, ?, ?, ?, ?, ?)", zip(repeat(sid), rows, *cols))
                block = stored[new_pos] if len(new_pos) != len(ids) else stored
                self._write_blocks(c, sid, next_row, block)
            changed = bool(new_pos or updates)
            if changed:
                generation += 1
                c.execute(
                    "UPDATE spaces SET generation = ?, next_row = ?, dead_rows = ?, updated_at = ? WHERE id = ?",
                    (generation, next_row + len(new_pos), dead_rows + replaced, _now(), sid),
                )
            if shard is not None:
                c.execute("INSERT INTO shards (space_id, sha256, job, name, n_rows, ingested_at)"
                          " VALUES (?, ?, ?, ?, ?, ?)", (sid, shard.sha256, shard.job, shard.name, len(ids), _now()))
        return AddResult(
            added=len(new_pos) - replaced, replaced=replaced, updated=len(updates),
            unchanged=unchanged, generation=generation,
        )

    def delete(self, ids: Iterable[str], *, missing_ok: bool = False) -> int:
        """Delete items by id, atomically; returns how many were deleted.

        Unknown ids raise :class:`NotFoundError` and delete nothing, unless
        ``missing_ok``.
        """
        ids = list(dict.fromkeys(_as_ids(ids)))
        with self.store.db.write() as c:
            sid, generation, next_row, dead_rows = self._state(c)
            found = self._rows_by_id(c, sid, ids)
            missing = [i for i in ids if i not in found]
            if missing and not missing_ok:
                some = ", ".join(excerpt(i) for i in missing[:3])
                raise NotFoundError(f"{len(missing)} id(s) not in space {self.name!r}: {some}")
            rows = [r for r, *_ in found.values()]
            c.execute(
                "DELETE FROM items WHERE space_id = ? AND row IN (SELECT value FROM json_each(?))",
                (sid, json.dumps(rows)),
            )
            if rows:
                c.execute(
                    "UPDATE spaces SET generation = ?, dead_rows = ?, updated_at = ? WHERE id = ?",
                    (generation + 1, dead_rows + len(rows), _now(), sid),
                )
        return len(rows)

    def update_metadata(
        self, ids: Sequence[str], metadata: Sequence[dict[str, Any]], *, merge: bool = True
    ) -> int:
        """Set items' metadata without touching their vectors, atomically; returns how many changed.

        Parameters
        ----------
        ids : sequence of str
            Items of this space; an unknown id refuses the whole batch.
        metadata : sequence of dict, aligned with ``ids``
        merge : bool
            Merge into the existing metadata (keys given replace theirs, a key
            set to ``None`` is removed; JSON merge patch, RFC 7396) or replace it.

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from repspace import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a"], [[1.0, 0.0]], metadata=[{"lang": "en"}])
        >>> sp.update_metadata(["a"], [{"year": 2024}])
        1
        >>> sp.get(["a"])[0].metadata
        {'lang': 'en', 'year': 2024}
        """
        ids = v.check_ids(ids)
        metas = v.check_metas(metadata, ids)
        with self.store.db.write() as c:
            sid, generation, _, _ = self._state(c)
            found = self._rows_by_id(c, sid, ids)
            missing = [i for i in ids if i not in found]
            if missing:
                some = ", ".join(excerpt(i) for i in missing[:3])
                raise NotFoundError(f"{len(missing)} id(s) not in space {self.name!r}: {some}")
            return self._set_metadata(c, sid, generation, [found[i][0] for i in ids], metas, merge)

    def patch_rows_metadata(self, rows: np.ndarray, metadata: Sequence[dict[str, Any]], *,
                            generation: int) -> int:
        """Merge metadata into the items at ``rows``, only if the space is still at ``generation``.

        For results computed from a snapshot (per-item diagnostics): if anything
        was added, replaced or deleted since, the rows may no longer be the items
        measured, so the whole batch is refused (:class:`ConflictError`) and
        nothing changes. Returns how many items changed.
        """
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) != len(metadata):
            raise InputError(f"got {len(metadata)} metadata records for {len(rows)} rows")
        metas = v.check_metas(metadata, [str(r) for r in rows.tolist()])
        with self.store.db.write() as c:
            sid, now, _, _ = self._state(c)
            if now != generation:
                raise ConflictError(f"space {self.name!r} changed while its items were measured "
                                    f"(generation {generation} -> {now}); nothing was written, run again")
            return self._set_metadata(c, sid, now, rows.tolist(), metas, True)

    def _set_metadata(self, c: Any, sid: int, generation: int, rows: list[int], metas: list[str],
                      merge: bool) -> int:
        sql = ("UPDATE items SET meta = json_patch(meta, ?) WHERE space_id = ? AND row = ?" if merge
               else "UPDATE items SET meta = ? WHERE space_id = ? AND row = ?")
        before = c.total_changes
        c.executemany(sql, zip(metas, repeat(sid), rows))
        changed = c.total_changes - before
        if changed:
            c.execute("UPDATE spaces SET generation = ?, updated_at = ? WHERE id = ?", (generation + 1, _now(), sid))
        return changed

    def _write_blocks(self, c: Any, sid: int, first_row: int, block: np.ndarray) -> None:
        per_block = max(1, BLOCK_BYTES // max(1, block.shape[1] * block.itemsize))
        for start in range(0, len(block), per_block):
            part = np.ascontiguousarray(block[start : start + per_block])
            c.execute(
                "INSERT INTO blocks (space_id, first_row, n_rows, data) VALUES (?, ?, ?, ?)",
                (sid, first_row + start, len(part), memoryview(part).cast("B")),
            )

    # -------------------------------------------------------------------- reads
    def snapshot(self) -> Snapshot:
        """Ids and vectors of the live items, consistent with each other.

        Read in one transaction, so a concurrent writer's batch is either wholly
        in or wholly out. Cached per generation.
        """
        with self.store.db.read() as c:
            sid, generation, next_row, dead_rows = self._state(c)
            cached = self._cache
            if cached is not None and cached.generation == generation:
                return cached
            pairs = c.execute("SELECT row, item_id FROM items WHERE space_id = ? ORDER BY row", (sid,)).fetchall()
            all_rows = self._read_range(c, sid, 0, next_row)
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
        with self.store.db.read() as c:
            sid, _, next_row, _ = self._state(c)
            items = [
                Item(id=i, text=t, metadata=json.loads(m), row=r)
                for r, i, t, m in c.execute(
                    "SELECT row, item_id, text, meta FROM items WHERE space_id = ? ORDER BY row", (sid,)
                )
            ]
            all_rows = self._read_range(c, sid, 0, next_row)
        rows = np.fromiter((it.row for it in items), dtype=np.int64, count=len(items))
        return items, all_rows if len(rows) == next_row else all_rows[rows]

    def ids(self) -> list[str]:
        """Ids of the live items, in row order (aligned with :meth:`vectors`)."""
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
        blocks are read. Cached per generation, like :meth:`snapshot`.
        """
        with self.store.db.read() as c:
            sid, generation, next_row, dead_rows = self._state(c)
            for cached in (self._cache, self._vectors_only):
                if cached is not None and cached.generation == generation:
                    return cached.rows, cached.vectors
            if dead_rows:
                cur = c.execute("SELECT row FROM items WHERE space_id = ? ORDER BY row", (sid,))
                rows = np.fromiter((r[0] for r in cur), dtype=np.int64)
            else:
                rows = np.arange(next_row, dtype=np.int64)
            vectors = self._read_range(c, sid, 0, next_row)
        if len(rows) != next_row:
            vectors = vectors[rows]
        rows.flags.writeable = False
        vectors.flags.writeable = False
        self._vectors_only = _Vectors(generation, rows, vectors)
        return rows, vectors

    def _read_range(self, c: Any, sid: int, lo: int, hi: int) -> np.ndarray:
        """Vectors of rows ``lo..hi-1`` (live and dead) as float32, block by block.

        Each block's bytes for the range are read with SQLite's incremental
        blob I/O (``blobopen``): one copy out of the database pages, where
        selecting the column copies the whole blob twice (SQLite assembles it,
        then Python copies it into a ``bytes``), and only the rows asked for.
        """
        out = np.empty((max(0, hi - lo), self.dim), dtype=np.float32)
        dt = np.dtype(self.dtype)
        row_bytes = self.dim * dt.itemsize
        blocks = c.execute(
            "SELECT rowid, first_row, n_rows FROM blocks WHERE space_id = ? AND first_row < ?"
            " AND first_row + n_rows > ? ORDER BY first_row",
            (sid, hi, lo),
        ).fetchall()
        for rowid, first, n in blocks:
            a, b = max(first, lo), min(first + n, hi)
            with c.blobopen("blocks", "data", rowid, readonly=True) as blob:
                blob.seek((a - first) * row_bytes)
                data = blob.read((b - a) * row_bytes)
            out[a - lo : b - lo] = np.frombuffer(data, dtype=dt).reshape(b - a, self.dim)
        return out

    def rows(self) -> np.ndarray:
        """Rows of the live items, ascending."""
        with self.store.db.read() as c:
            sid, *_ = self._state(c)
            cur = c.execute("SELECT row FROM items WHERE space_id = ? ORDER BY row", (sid,))
            return np.fromiter((r[0] for r in cur), dtype=np.int64)

    def live_rows(self, lo: int = 0, hi: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Live rows in ``[lo, hi)`` and their vectors, read from one snapshot."""
        with self.store.db.read() as c:
            sid, _, next_row, _ = self._state(c)
            hi = next_row if hi is None else min(hi, next_row)
            rows = np.fromiter(
                (r[0] for r in c.execute(
                    "SELECT row FROM items WHERE space_id = ? AND row >= ? AND row < ? ORDER BY row", (sid, lo, hi)
                )),
                dtype=np.int64,
            )
            block = self._read_range(c, sid, lo, hi)
        return rows, block[rows - lo] if len(rows) != hi - lo else block

    def read_rows(self, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """Vectors of the given rows (live or dead), float32, reading only the bytes needed."""
        with self.store.db.read() as c:
            sid, *_ = self._state(c)
            return self._read_rows(c, sid, rows)

    def _read_rows(self, c: Any, sid: int, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        if len(rows) == 0:
            return out
        blocks = c.execute(
            "SELECT first_row, rowid, n_rows FROM blocks WHERE space_id = ? ORDER BY first_row", (sid,)
        ).fetchall()
        firsts = np.array([b[0] for b in blocks], dtype=np.int64)
        dt = np.dtype(self.dtype)
        width = self.dim * dt.itemsize
        which = np.searchsorted(firsts, rows, side="right") - 1
        for b in np.unique(which):
            positions = np.flatnonzero(which == b)
            local = rows[positions] - (firsts[b] if b >= 0 else 0)
            if b < 0 or local.min() < 0 or local.max() >= blocks[b][2]:
                raise NotFoundError(f"a requested row is not stored in space {self.name!r}")
            with c.blobopen("blocks", "data", blocks[b][1], readonly=True) as blob:
                if len(positions) * 8 >= blocks[b][2]:  # many rows of this block: read it whole
                    whole = np.frombuffer(blob.read(), dtype=dt).reshape(-1, self.dim)
                    out[positions] = whole[local]
                else:  # a few rows: read just their bytes
                    for p, r in zip(positions, local):
                        blob.seek(int(r) * width)
                        out[p] = np.frombuffer(blob.read(width), dtype=dt)
        return out

    def items(self, rows: Sequence[int] | np.ndarray) -> dict[int, Item]:
        """The live items at the given rows (dead rows are left out)."""
        return {r: Item(id=i, text=t, metadata=m, row=r) for r, (i, t, m) in self.records(rows).items()}

    def records(self, rows: Sequence[int] | np.ndarray) -> dict[int, tuple[str, str | None, dict[str, Any]]]:
        """``{row: (id, text, metadata)}`` of the live items at ``rows`` (dead rows are left out).

        What a search's hits need, read the cheapest way: one statement (a single
        SELECT is its own read transaction) and one JSON decode for all the rows'
        metadata. 10 hits of 400k items: ``items()`` on top of it took 35 us where a
        transaction and a decode per row took 59 us (the statement and the one decode
        alone: 27 us).

        Examples
        --------
        >>> import numpy as np, tempfile, os
        >>> from repspace.core.store import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a", "b"], np.eye(2), texts=["x", None], metadata=[{"n": 1}, {}])
        >>> sp.records([1, 0, 7])
        {0: ('a', 'x', {'n': 1}), 1: ('b', None, {})}
        """
        rows = rows.tolist() if isinstance(rows, np.ndarray) else [int(r) for r in rows]
        if not rows:
            return {}
        if len(rows) <= 256:  # a search's hits: a plain IN list (a third faster than json_each for 10 rows)
            sql, params = f"i.row IN ({', '.join('?' * len(rows))})", rows
        else:
            sql, params = "i.row IN (SELECT value FROM json_each(?))", [json.dumps(rows)]
        with self.store.db._lock:
            found = self.store.db.conn.execute(
                "SELECT i.row, i.item_id, i.text, i.meta FROM spaces AS p JOIN items AS i ON i.space_id = p.id"
                f" WHERE p.uid = ? AND {sql} ORDER BY i.row", (self._info.uid, *params)
            ).fetchall()
        if not found:
            with self.store.db.read() as c:
                self._state(c)  # a space deleted meanwhile: NotFoundError
            return {}
        metadata = json.loads(f"[{','.join([m for *_, m in found])}]")
        return {row: (item_id, text, meta) for (row, item_id, text, _), meta in zip(found, metadata)}

    def get(self, ids: Sequence[str]) -> list[Item]:
        """Items by id, in the order asked; unknown ids raise :class:`NotFoundError`."""
        ids = _as_ids(ids)
        with self.store.db.read() as c:
            sid, *_ = self._state(c)
            found = self._rows_by_id(c, sid, list(ids))
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"id {excerpt(missing[0])} is not in space {self.name!r}")
        return [Item(id=i, text=found[i][1], metadata=json.loads(found[i][2]), row=found[i][0]) for i in ids]

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are in the space."""
        ids = _as_ids(ids)
        with self.store.db.read() as c:
            sid, *_ = self._state(c)
            return set(self._rows_by_id(c, sid, ids))

    def vectors_of(self, ids: Sequence[str]) -> np.ndarray:
        """Vectors of the given ids (float32, in the order asked)."""
        return self.read_rows([it.row for it in self.get(ids)])

    def rows_for_hashes(self, hashes: Iterable[str]) -> dict[str, int]:
        """For each content hash already in the space, one live row that has it."""
        hashes = list(dict.fromkeys(h for h in hashes if h is not None))
        out: dict[str, int] = {}
        with self.store.db.read() as c:
            sid, *_ = self._state(c)
            for h, row in c.execute(
                "SELECT hash, min(row) FROM items WHERE space_id = ? AND hash IN (SELECT value FROM json_each(?))"
                " GROUP BY hash",
                (sid, json.dumps(hashes)),
            ):
                out[h] = row
        return out

    def text_hashes(self) -> np.ndarray:
        """The distinct content hashes of the live items' texts, sorted (``S32``; for ``np.searchsorted``).

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], texts=["hello", None])
        >>> sp.text_hashes()
        array([b'2cf24dba5fb0a30e26e83b2ac5b9e29e'], dtype='|S32')
        """
        with self.store.db.read() as c:
            sid = self._state(c)[0]
            found = [h for (h,) in c.execute(
                "SELECT DISTINCT hash FROM items WHERE space_id = ? AND hash IS NOT NULL ORDER BY hash", (sid,))]
        return np.array([h.encode() for h in found], dtype="S32")

    def shards(self, job: str | None = None, *, sha256: str | None = None) -> dict[str, ShardEntry]:
        """The shards ingested into this space (all, one job's, or the one with this SHA-256: a key lookup), by SHA-256.

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
        >>> _ = sp.add(["a"], [[1.0, 0.0]], shard=ShardEntry("ab" * 32, "job1", "shard-00000"))
        >>> [(e.name, e.n_rows) for e in sp.shards().values()]
        [('shard-00000', 1)]
        >>> sp.shards(sha256="cd" * 32)
        {}
        """
        sql = "SELECT sha256, job, name, n_rows, ingested_at FROM shards WHERE space_id = ?"
        given = [(column, value) for column, value in (("job", job), ("sha256", sha256)) if value is not None]
        sql += "".join(f" AND {column} = ?" for column, _ in given)
        with self.store.db.read() as c:
            sid = self._state(c)[0]
            rows = c.execute(sql, (sid, *(value for _, value in given))).fetchall()
        return {r[0]: ShardEntry(*r) for r in rows}

    def filter_rows(self, where: str | Filter) -> np.ndarray:
        """Rows of the live items matching a filter expression (see :mod:`repspace.core.filters`), ascending.

        The selection is kept for the space's generation, and the fields it reads
        as columns, so a repeated filter costs a lookup and a new one over known
        fields a few vectorised comparisons (:mod:`repspace.core.store._selections`);
        columns of spaces of 50,000 items or more are kept beside the store too, for
        other processes; the result equals the SQL compiler's (:meth:`filter_rows_sql`). The array
        is read-only: copy it to change it.
        """
        from repspace.core.filters import Filter
        from repspace.core.store._selections import select_rows

        flt = where if isinstance(where, Filter) else Filter.parse(where)
        with self.store.db.read() as c:
            sid, generation, next_row, dead_rows = self._state(c)
            return select_rows(c, sid, self._info.uid, generation, flt, next_row=next_row, dead_rows=dead_rows,
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
            sid, generation, next_row, dead_rows = self._state(c)
            rows, cols = columns_of(c, sid, self._info.uid, generation, sorted(set(paths.values())),
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
            sid, generation, *_ = self._state(c)
            found = c.execute(
                "SELECT j.key, j.type, count(*) FROM items, json_each(items.meta) AS j WHERE items.space_id = ?"
                " GROUP BY j.key, j.type ORDER BY j.key, j.type", (sid,)).fetchall()
        return generation, [(str(k), str(t), int(n)) for k, t, n in found]

    def filter_rows_sql(self, where: str | Filter) -> np.ndarray:
        """:meth:`filter_rows` evaluated by SQLite on every call: the reference, never cached."""
        from repspace.core.filters import Filter

        flt = where if isinstance(where, Filter) else Filter.parse(where)
        with self.store.db.read() as c:
            sid, *_ = self._state(c)
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

    def _rows_by_id(self, c: Any, sid: int, ids: list[str]) -> dict[str, tuple[int, str | None, str]]:
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


def _as_ids(ids: str | Iterable[Any]) -> list[str]:
    """Ids as strings, as :meth:`Space.add` stores them (a lone string is one id)."""
    if isinstance(ids, str):
        return [ids]
    return [str(i) if isinstance(i, (int, np.integer)) and not isinstance(i, bool) else i for i in ids]


def _check_in_ball(vectors: np.ndarray, ids: list[str]) -> None:
    """A poincare space holds points of the open unit ball: the first row at norm >= 1 is one error line
    (checked as stored, so a float16 rounding that reaches the sphere is caught too)."""
    norms = np.sqrt(np.einsum("ij,ij->i", vectors.astype(np.float64), vectors.astype(np.float64)))
    bad = np.flatnonzero(norms >= 1.0)
    if len(bad):
        i = int(bad[0])
        raise InputError(f"item {excerpt(ids[i])} has norm {norms[i]:.6g}: a poincare space holds points of the open unit "
                         f"ball (norm < 1); {len(bad)} of {len(ids)} vectors are outside it")
