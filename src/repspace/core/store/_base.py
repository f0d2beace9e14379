"""What every part of a space stands on: its identity, its description and its place in a transaction.

:class:`SpaceBase` holds the store and the space's description (re-read only
when the store may have changed); the reader, the writer and the ledger
(:mod:`._reader`, :mod:`._writer`, :mod:`._ledger`) reach the space's row in
the ``spaces`` table through :meth:`SpaceBase.header` inside their own
transaction, and nothing else of each other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, overload

from repspace.core.errors import InputError, NotFoundError
from repspace.core.space import Metric, SpaceInfo

if TYPE_CHECKING:
    from repspace.core.store._store import Store

__all__ = ["Item", "SpaceBase", "SpaceHeader", "now_iso"]

T = TypeVar("T")


def now_iso() -> str:
    """The current UTC time as ISO 8601 to the second, as the store records it.

    Examples
    --------
    >>> len(now_iso()), now_iso().endswith("+00:00")
    (25, True)
    """
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class _InfoField(Generic[T]):
    """A read-only attribute of a space: the field of the same name of its description as last read."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.field = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _InfoField[T]: ...

    @overload
    def __get__(self, obj: SpaceBase, owner: type | None = None) -> T: ...

    def __get__(self, obj: SpaceBase | None, owner: type | None = None) -> T | _InfoField[T]:
        return self if obj is None else getattr(obj._info, self.field)

    def __set__(self, obj: SpaceBase, value: Any) -> None:
        raise AttributeError(f"a space's {self.field} is read-only")


@dataclass(frozen=True)
class Item:
    """One stored item (without its vector).

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.store import Store
    >>> space = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
    >>> _ = space.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], texts=["a cat", None], metadata=[{"y": 1}, None])
    >>> [(it.id, it.text, it.metadata, it.row) for it in space.get(["b", "a"])]
    [('b', None, {}, 1), ('a', 'a cat', {'y': 1}, 0)]
    """

    id: str
    text: str | None
    metadata: dict[str, Any]
    row: int

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "text", "metadata", "row"}``."""
        return {"id": self.id, "text": self.text, "metadata": self.metadata, "row": self.row}


class SpaceHeader(NamedTuple):
    """A space's row in the ``spaces`` table as one transaction sees it."""

    sid: int
    """The space's id in the database (the ``space_id`` of its items and blocks)."""
    generation: int
    """Moves on with every change of the space's items."""
    next_row: int
    """The row the next new vector gets (rows are append-only)."""
    dead_rows: int
    """Rows of replaced or deleted items."""


class SpaceBase:
    """A space's store, identity and description; the base of its reader, writer and ledger.

    Parameters
    ----------
    store : Store
        The store holding the space.
    info : SpaceInfo
        Its description when opened (re-read by :meth:`info` as the store changes).
    """

    def __init__(self, store: Store, info: SpaceInfo) -> None:
        self.store = store
        self._info = info
        self._info_version: tuple[int, int] | None = None  # the store's version when _info was read

    # ----------------------------------------------------------------- identity (as last read; info() re-reads)
    name: _InfoField[str] = _InfoField()
    dim: _InfoField[int] = _InfoField()
    metric: _InfoField[Metric] = _InfoField()
    dtype: _InfoField[str] = _InfoField()
    uid: _InfoField[str] = _InfoField()
    layout: _InfoField[str] = _InfoField()

    @property
    def provenance(self) -> dict[str, Any]:
        return dict(self._info.provenance)

    def info(self) -> SpaceInfo:
        """The space's current description (re-read whenever the store may have changed).

        One ``PRAGMA data_version`` tells whether any connection committed since
        the last read; only then is the row read again, so a search loop pays
        a few microseconds here, not a read transaction.
        """
        version = self.store.db.version()
        if version != self._info_version:
            with self.store.db.read() as c:
                info = self.read_info(c)
            # The version read before the row: a commit in between only causes one more re-read later.
            self._info, self._info_version = info, version
        return self._info

    def __len__(self) -> int:
        return self.info().count

    def __repr__(self) -> str:
        if self._info.layout == "multivector":
            return f"<Space {self.name!r} multivector dim={self.dim} metric={self.metric.value}>"
        if self._info.sparse:
            return f"<Space {self.name!r} sparse n_features={self.dim} metric={self.metric.value}>"
        return f"<Space {self.name!r} dim={self.dim} metric={self.metric.value}>"

    def require_dense(self, what: str) -> None:
        """Refuse ``what`` (one :class:`InputError` line) on a sparse or multi-vector space (no dense vectors).

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace.core.store import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=9, layout="sparse")
        >>> try:
        ...     sp.require_dense("PCA")
        ... except InputError as e:
        ...     print(str(e)[:62])
        space 's' holds sparse vectors (9 features): PCA needs dense v
        """
        if self._info.layout == "multivector":
            raise InputError(f"space {self._info.name!r} holds token vectors (multi-vector, {self._info.dim}-d tokens): "
                             f"{what} needs dense vectors; MaxSim search (repspace search --id, a text) and repspace "
                             "info work on it")
        if self._info.sparse:
            raise InputError(f"space {self._info.name!r} holds sparse vectors ({self._info.dim} features): {what} "
                             "needs dense vectors; exact sparse search (repspace search --id, --sparse-query) and "
                             "repspace info work on it")

    def read_info(self, c: Any) -> SpaceInfo:
        """The space's description read inside the caller's transaction ``c``.

        Raises :class:`NotFoundError` if the space no longer exists.
        """
        row = c.execute(
            "SELECT id, name, dim, metric, dtype, provenance, generation, uid, created_at, updated_at,"
            " next_row, dead_rows, layout FROM spaces WHERE uid = ?",
            (self._info.uid,),
        ).fetchone()
        if row is None:
            raise NotFoundError(f"space {self._info.name!r} no longer exists")
        # Every row ever written is either live (an item) or dead, so the live
        # count is next_row - dead_rows: O(1), where count(*) scans the items.
        return SpaceInfo(
            name=row[1], dim=row[2], metric=Metric(row[3]), dtype=row[4], count=row[10] - row[11],
            provenance=json.loads(row[5]), generation=row[6], uid=row[7], created_at=row[8],
            updated_at=row[9], next_row=row[10], dead_rows=row[11], layout=row[12],
        )

    def reload(self, c: Any) -> SpaceInfo:
        """Re-read the description inside the caller's transaction ``c`` and keep it; returns it.

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace.core.store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> sp = store.create_space("t", dim=2)
        >>> with store.db.write() as c:
        ...     sp.reload(c).name, sp.read_info(c).count
        ('t', 0)
        """
        self._info = self.read_info(c)
        return self._info

    def header(self, c: Any) -> SpaceHeader:
        """``(space id, generation, next_row, dead_rows)`` inside the caller's transaction ``c``.

        Raises :class:`NotFoundError` if the space no longer exists.

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace.core.store import Store
        >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> sp = store.create_space("t", dim=2)
        >>> _ = sp.add(["a"], [[1.0, 0.0]])
        >>> with store.db.read() as c:
        ...     sp.header(c)[1:]
        (1, 1, 0)
        """
        row = c.execute(
            "SELECT id, generation, next_row, dead_rows FROM spaces WHERE uid = ?", (self._info.uid,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"space {self._info.name!r} no longer exists")
        return SpaceHeader(*row)
