"""A new space appears whole or not at all: written under a temporary name, renamed when complete.

Every workflow that creates a space from computed vectors (a derived space, a
learned one) goes through :func:`write_new_space`: a reader of the target name
never sees a half-written space, and on any error (a bad row, a full disk, an
interrupt) the temporary space and its files beside the store are deleted and
nothing is left.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import ConflictError, NotFoundError
from repspace.core.limits import WRITE_BATCH
from repspace.core.progress import Progress

if TYPE_CHECKING:
    from repspace.core.store import Space, Store

__all__ = ["Rows", "refuse_existing", "write_new_space"]


#: ``rows(lo, hi)`` -> the ids, vectors, texts (or None) and metadata (or None) of rows ``lo:hi``.
Rows = Callable[[int, int], tuple[list[str], np.ndarray, "list[str | None] | None", "list[dict[str, Any]] | None"]]


def refuse_existing(store: Store, name: str) -> None:
    """A :class:`ConflictError` when ``name`` is a stored space.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> store = example_space(name="taken").store
    >>> refuse_existing(store, "free")
    >>> refuse_existing(store, "taken")
    Traceback (most recent call last):
    ...
    repspace.core.errors.ConflictError: space 'taken' already exists
    """
    try:
        store.space(name)
    except NotFoundError:
        return
    raise ConflictError(f"space {name!r} already exists")


def write_new_space(store: Store, name: str, n: int, rows: Rows, *, dim: int, metric: str,
                    provenance: Mapping[str, Any], dtype: str = "float32", state: Mapping[str, bytes] | None = None,
                    files: Mapping[str, bytes] | None = None, progress: Progress | None = None,
                    batch: int = WRITE_BATCH) -> Space:
    """Store ``n`` items as the new space ``name``, whole or not at all.

    ``rows(lo, hi)`` gives rows ``lo:hi`` (:data:`Rows`), asked for in batches of
    ``batch`` rows (one transaction each), so a caller can compute them as they are written. ``state``
    is stored with the space (``Space.state``); ``files`` are written beside the
    store (``STORE.indexes/<uid>/<relative path>``, atomically) before any row.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> X = np.eye(3, dtype=np.float32)
    >>> sp = write_new_space(store, "e", 3, lambda lo, hi: ([f"r{i}" for i in range(lo, hi)], X[lo:hi], None, None),
    ...                      dim=3, metric="l2", provenance={"encoder": "precomputed"})
    >>> sp.name, sp.info().count, [s.name for s in store.spaces()]
    ('e', 3, ['e'])
    """
    temp = f"{name[:100]}.partial-{uuid.uuid4().hex[:8]}"
    target = store.create_space(temp, dim=int(dim), metric=metric, dtype=dtype, provenance=dict(provenance),
                                state=dict(state) if state else None)
    try:
        for relative, data in (files or {}).items():
            write_atomic(Path(store.index_dir) / target.uid / relative, lambda f, data=data: f.write(data),
                         durable=True)
        for lo in range(0, n, batch):
            hi = min(n, lo + batch)
            ids, vectors, texts, metadata = rows(lo, hi)
            target.add(ids, vectors, texts=texts, metadata=metadata, on_conflict="error")
            if progress is not None:
                progress("write", hi, n)
        return store.rename_space(temp, name)
    except BaseException:
        try:
            store.delete_space(temp)  # its folder beside the store goes with it
        except NotFoundError:
            pass
        raise
