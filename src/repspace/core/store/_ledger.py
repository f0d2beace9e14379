"""The ledger of a space: what it records beside its items, for derived data and ingestion.

Named binary states stored with the space (an encoder's fitted state, say), the
shards of distributed jobs already ingested (so a shard is never added twice)
and the content hashes of the texts (so an ingestion skips texts already
embedded). Derived files (indexes, columns) are keyed by the space's uid and
generation, read through :meth:`~repspace.core.store._base.SpaceBase.info`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from repspace.core.store._base import SpaceBase

__all__ = ["ShardEntry", "SpaceLedger"]


@dataclass(frozen=True)
class ShardEntry:
    """One shard of a distributed job, as the space's shard ledger records it.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> space = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
    >>> _ = space.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], shard=ShardEntry("ab" * 32, "job1", "shard-00000"))
    >>> (e,) = space.shards("job1").values()
    >>> e.job, e.name, e.n_rows, e.ingested_at != ""
    ('job1', 'shard-00000', 2, True)
    """

    sha256: str
    job: str
    name: str
    n_rows: int = 0
    ingested_at: str = ""


class SpaceLedger(SpaceBase):
    """A space's states, shard ledger and text hashes."""

    def state(self, name: str) -> bytes | None:
        """Named binary state stored with the space (see ``Store.create_space(state=...)``), or None."""
        with self.store.db.read() as c:
            row = c.execute("SELECT s.data FROM space_state AS s JOIN spaces AS p ON p.id = s.space_id"
                            " WHERE p.uid = ? AND s.name = ?", (self.uid, name)).fetchone()
        return None if row is None else bytes(row[0])

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
            sid = self.header(c)[0]
            rows = c.execute(sql, (sid, *(value for _, value in given))).fetchall()
        return {r[0]: ShardEntry(*r) for r in rows}

    def rows_for_hashes(self, hashes: Iterable[str]) -> dict[str, int]:
        """For each content hash already in the space, one live row that has it."""
        hashes = list(dict.fromkeys(h for h in hashes if h is not None))
        out: dict[str, int] = {}
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
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
            sid = self.header(c)[0]
            found = [h for (h,) in c.execute(
                "SELECT DISTINCT hash FROM items WHERE space_id = ? AND hash IS NOT NULL ORDER BY hash", (sid,))]
        return np.array([h.encode() for h in found], dtype="S32")
