"""What every ingest shares: its report, and the target space opened, created or refused without a trace.

Kept apart from :mod:`._ingest` so that each kind of ingest (texts, vectors, sparse rows, sparse
encoders, Gaussians, token vectors) imports these without importing the others.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.errors import ConflictError, InputError, NotFoundError, RepspaceError
from repspace.core.printable import excerpt
from repspace.core.progress import Progress
from repspace.core.store import Space, Store

__all__ = ["IngestReport", "add_in_batches", "created_or_existing", "existing_space", "refuse_existing"]


@dataclass(frozen=True)
class IngestReport:
    """What an ingest did, per space written (one per layer for ``layer="all"``).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from repspace.workflows.ingest import Records, ingest_records
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> _ = ingest_records(store, "eye", Records("inline", ["x", "y"], None, np.eye(2, dtype="float32"), [{}, {}]))
    >>> r = ingest_records(store, "eye", Records("inline", ["y", "z"], None, np.eye(2, dtype="float32"), [{}, {}]))
    >>> r.spaces, r.read, r.added, r.replaced, r.unchanged, r.encoded
    (['eye'], 2, 1, 1, 0, 0)
    """

    spaces: list[str]
    read: int
    encoded: int
    reused: int
    added: int
    replaced: int
    updated: int
    unchanged: int
    duplicates_dropped: int
    seconds: float
    encode_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)



def existing_space(store: Store, name: str) -> Space | None:
    try:
        return store.space(name)
    except NotFoundError:
        return None


def _open_or_create(store: Store, name: str, dim: int, metric: str | None, dtype: str,
                    provenance: dict[str, Any], **create: Any) -> Space:
    existing = existing_space(store, name)
    if existing is None:
        default = "ip" if create.get("layout") in ("sparse", "multivector") else "cosine"
        return store.create_space(name, dim, metric or default, dtype=dtype, provenance=provenance, **create)
    if existing.dim != dim:
        raise InputError(f"space {name!r} has dimension {existing.dim}; the new vectors have {dim}")
    if metric is not None and existing.metric.value != metric:
        raise ConflictError(f"space {name!r} uses metric {existing.metric.value}, not {metric}")
    return existing


@contextmanager
def created_or_existing(store: Store, name: str, dim: int, metric: str | None, dtype: str,
                         provenance: dict[str, Any], **create: Any) -> Iterator[Space]:
    """The space, created when missing (``create``: more of :meth:`Store.create_space`'s options); a space
    created here is removed again if the block fails before anything was written to it, so a refused
    ingest leaves no trace."""
    existed = existing_space(store, name) is not None
    space = _open_or_create(store, name, dim, metric, dtype, provenance, **create)
    try:
        yield space
    except BaseException:
        if not existed:
            try:
                if space.info().next_row == 0:
                    store.delete_space(name)
            except RepspaceError:
                pass
        raise


def refuse_existing(space: Space, ids: list[str]) -> None:
    present = space.existing_ids(ids)
    if present:
        first = next(i for i in ids if i in present)
        raise ConflictError(f"{len(present)} id(s) already in space {space.name!r}, e.g. {excerpt(first)}")


def add_in_batches(space: Space, ids: list[str], rows: Any, texts: list[str | None] | None,
                   metadata: list[dict[str, Any]], commit_every: int | None, on_conflict: str,
                   progress: Progress | None, **add_options: Any) -> tuple[int, int, int, int]:
    """Add ``rows`` (sparse rows or token sets: anything with ``take(positions)``) in one transaction, or one
    per ``commit_every`` items; ``(added, replaced, updated, unchanged)`` summed over the batches.

    ``add_options`` go to :meth:`Space.add` (``allow_negative`` for sparse rows).

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.core.sparse import SparseRows
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=3, layout="sparse")
    >>> rows = SparseRows.from_pairs([([0], [1.0]), ([2], [2.0]), ([1], [0.5])], 3)
    >>> add_in_batches(sp, ["a", "b", "c"], rows, None, [{}, {}, {}], 2, "upsert", None)
    (3, 0, 0, 0)
    """
    n = len(ids)
    step = commit_every or n
    totals = np.zeros(4, dtype=np.int64)
    for start in range(0, n, step):
        stop = min(n, start + step)
        r = space.add(ids[start:stop], rows.take(np.arange(start, stop)),
                      None if texts is None else texts[start:stop], metadata[start:stop],
                      on_conflict=on_conflict, **add_options)  # type: ignore[arg-type]
        totals += (r.added, r.replaced, r.updated, r.unchanged)
        if progress is not None:
            progress("write", stop, n)
    return tuple(int(t) for t in totals)  # type: ignore[return-value]
