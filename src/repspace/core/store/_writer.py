"""The writing half of a space: add, delete and change metadata, each one atomic transaction.

Rows are append-only (see :mod:`._space`): a new vector gets a new row, a
replaced or deleted item leaves a dead row, and every change moves the space's
generation on, which is what every cache and derived file is keyed by.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Literal, Protocol

import numpy as np

from repspace.core.errors import ConflictError, InputError, NotFoundError
from repspace.core.printable import excerpt
from repspace.core.space import Metric
from repspace.core.store import validate as v
from repspace.core.store._base import SpaceBase, now_iso
from repspace.core.store._ledger import ShardEntry
from repspace.core.store._rows import as_ids, read_rows, rows_by_id, write_blocks
from repspace.core.store._multivector_space import multivector_payload
from repspace.core.store._sparse_space import sparse_payload

__all__ = ["AddResult", "SpaceWriter"]


@dataclass(frozen=True)
class AddResult:
    """What a batch did: items ``added`` (new ids), ``replaced`` (same id, new
    vector), ``updated`` (same vector, new text or metadata) and ``unchanged``.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> space = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
    >>> _ = space.add(["a", "b", "c"], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> r = space.add(["a", "b", "c", "d"], [[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [1.0, 2.0]],
    ...               texts=[None, "bee", None, None])
    >>> r.added, r.replaced, r.updated, r.unchanged, r.generation
    (1, 1, 1, 1, 2)
    >>> r.to_dict()["added"]
    1
    """

    added: int
    replaced: int
    updated: int
    unchanged: int
    generation: int

    def to_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("added", "replaced", "updated", "unchanged", "generation")}


class SpaceWriter(SpaceBase):
    """Add, delete and update a space's items; every method is one write transaction."""

    def add(
        self,
        ids: Sequence[str],
        vectors: Any,
        texts: Sequence[str | None] | None = None,
        metadata: Sequence[dict[str, Any] | None] | None = None,
        *,
        on_conflict: Literal["upsert", "error"] = "upsert",
        shard: ShardEntry | None = None,
        allow_negative: bool = False,
    ) -> AddResult:
        """Add a batch of items atomically: all of it is stored, or none of it.

        Parameters
        ----------
        ids : sequence of str
            Unique within the batch.
        vectors : array-like (n, dim), or sparse rows for a sparse space
            Finite numbers; stored as the space's dtype, returned as float32. A sparse space
            takes :class:`~repspace.core.sparse.SparseRows` or a scipy sparse matrix of
            ``(n, n_features)``, checked by :func:`~repspace.core.sparse.check_sparse`; a
            multi-vector space one ``(n_tokens_i, dim)`` matrix of token vectors per id, checked by
            :func:`~repspace.core.multivector.check_token_sets`.
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
        allow_negative : bool
            Sparse spaces only: accept negative weights (refused by default).

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
        make = {"sparse": sparse_payload, "multivector": multivector_payload}.get(self.layout, _dense_payload)
        payload: Payload = make(self, vectors, ids, allow_negative)
        texts = v.check_texts(texts, ids)
        metas = v.check_metas(metadata, ids)
        hashes = [v.text_hash(t) if t is not None else None for t in texts]
        with self.store.db.write() as c:
            sid, generation, next_row, dead_rows = self.header(c)
            if shard is not None and c.execute("SELECT 1 FROM shards WHERE space_id = ? AND sha256 = ?",
                                               (sid, shard.sha256)).fetchone():
                raise ConflictError(f"shard {shard.name} ({shard.sha256[:12]}) is already in space {self.name!r}")
            existing = rows_by_id(c, sid, ids)
            if existing and on_conflict == "error":
                some = ", ".join(excerpt(i) for i in list(existing)[:3])
                raise ConflictError(f"{len(existing)} id(s) already in space {self.name!r}: {some}")
            same = payload.same_as_stored(c, sid, [(i, existing[item_id][0]) for i, item_id in enumerate(ids)
                                                   if item_id in existing]) if existing else set()
            new_pos, dead, updates, unchanged = [], [], [], 0
            for i, item_id in enumerate(ids):
                old = existing.get(item_id)
                if old is None:
                    new_pos.append(i)
                    continue
                row, old_text, old_meta = old
                if i not in same:
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
                payload.write(c, sid, next_row, new_pos if len(new_pos) != len(ids) else None)
            changed = bool(new_pos or updates)
            if changed:
                generation += 1
                c.execute(
                    "UPDATE spaces SET generation = ?, next_row = ?, dead_rows = ?, updated_at = ? WHERE id = ?",
                    (generation, next_row + len(new_pos), dead_rows + replaced, now_iso(), sid),
                )
            if shard is not None:
                c.execute("INSERT INTO shards (space_id, sha256, job, name, n_rows, ingested_at)"
                          " VALUES (?, ?, ?, ?, ?, ?)", (sid, shard.sha256, shard.job, shard.name, len(ids), now_iso()))
        return AddResult(
            added=len(new_pos) - replaced, replaced=replaced, updated=len(updates),
            unchanged=unchanged, generation=generation,
        )

    def delete(self, ids: Iterable[str], *, missing_ok: bool = False) -> int:
        """Delete items by id, atomically; returns how many were deleted.

        Unknown ids raise :class:`NotFoundError` and delete nothing, unless
        ``missing_ok``.
        """
        ids = list(dict.fromkeys(as_ids(ids)))
        with self.store.db.write() as c:
            sid, generation, next_row, dead_rows = self.header(c)
            found = rows_by_id(c, sid, ids)
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
                    (generation + 1, dead_rows + len(rows), now_iso(), sid),
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
            sid, generation, _, _ = self.header(c)
            found = rows_by_id(c, sid, ids)
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
            sid, now, _, _ = self.header(c)
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
            c.execute("UPDATE spaces SET generation = ?, updated_at = ? WHERE id = ?", (generation + 1, now_iso(), sid))
        return changed


class Payload(Protocol):
    """A checked batch of rows as :meth:`SpaceWriter.add` writes it: dense vectors or sparse rows."""

    def same_as_stored(self, c: Any, sid: int, pairs: list[tuple[int, int]]) -> set[int]:
        """Of ``(position in the batch, stored row)`` pairs, the positions whose row is stored unchanged."""

    def write(self, c: Any, sid: int, first_row: int, positions: list[int] | None) -> None:
        """Append the batch's rows at ``positions`` (all when None) from row ``first_row``."""


@dataclass(frozen=True)
class _DensePayload:
    space: SpaceWriter
    stored: np.ndarray  # the vectors as the space's dtype

    def same_as_stored(self, c: Any, sid: int, pairs: list[tuple[int, int]]) -> set[int]:
        sp = self.space
        old = read_rows(c, sid, sp.name, sp.dim, sp.dtype, [row for _, row in pairs])
        return {i for (i, _), vec in zip(pairs, old) if vec.astype(sp.dtype).tobytes() == self.stored[i].tobytes()}

    def write(self, c: Any, sid: int, first_row: int, positions: list[int] | None) -> None:
        write_blocks(c, sid, first_row, self.stored if positions is None else self.stored[positions])


def _dense_payload(space: SpaceWriter, vectors: Any, ids: list[str], allow_negative: bool) -> _DensePayload:
    if allow_negative:
        raise InputError("allow_negative applies to sparse spaces only")
    vecs = v.check_vectors(vectors, ids, space.dim, space.dtype)
    stored = vecs.astype(space.dtype, copy=False)
    if space.metric is Metric.POINCARE:
        _check_in_ball(stored, ids)
    elif space.metric is Metric.COSINE:  # checked as stored: a float16 rounding to zero is caught too
        v.check_directions(stored, ids)
    return _DensePayload(space, stored)


def _check_in_ball(vectors: np.ndarray, ids: list[str]) -> None:
    """A poincare space holds points of the open unit ball: the first row at norm >= 1 is one error line
    (checked as stored, so a float16 rounding that reaches the sphere is caught too)."""
    norms = np.sqrt(np.einsum("ij,ij->i", vectors.astype(np.float64), vectors.astype(np.float64)))
    bad = np.flatnonzero(norms >= 1.0)
    if len(bad):
        i = int(bad[0])
        raise InputError(f"item {excerpt(ids[i])} has norm {norms[i]:.6g}: a poincare space holds points of the open unit "
                         f"ball (norm < 1); {len(bad)} of {len(ids)} vectors are outside it")
