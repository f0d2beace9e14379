"""Writing a learned space whole or not at all: the steps every learn workflow shares."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import ConflictError, NotFoundError
from repspace.core.progress import Progress

if TYPE_CHECKING:
    from repspace.core.store import Space, Store

#: Items written per transaction.
BATCH = 100_000


def refuse_existing(store: Store, name: str) -> None:
    """A :class:`ConflictError` when ``name`` is a stored space."""
    try:
        store.space(name)
    except NotFoundError:
        return
    raise ConflictError(f"space {name!r} already exists")


def write_space(store: Store, name: str, ids: Sequence[str], vectors: np.ndarray, *, metric: str,
                provenance: Mapping[str, Any], texts: Callable[[int, int], list[str | None]] | None = None,
                metadata: Callable[[int, int], list[dict[str, Any]]] | None = None,
                files: Mapping[str, bytes] | None = None, progress: Progress | None = None) -> Space:
    """Store ``ids``/``vectors`` as the new space ``name`` under a temporary name, renamed when complete.

    ``texts(lo, hi)`` and ``metadata(lo, hi)`` give the rows ``lo:hi`` of each;
    ``files`` are written beside the store (``STORE.indexes/<uid>/<relative path>``,
    atomically) before any row. On any error the temporary space and its files
    are deleted and the error goes on.
    """
    n = len(ids)
    temp = f"{name[:100]}.partial-{uuid.uuid4().hex[:8]}"
    target = store.create_space(temp, dim=int(vectors.shape[1]), metric=metric, provenance=dict(provenance))
    try:
        for relative, data in (files or {}).items():
            write_atomic(Path(store.index_dir) / target.uid / relative, lambda f, data=data: f.write(data),
                         durable=True)
        for lo in range(0, n, BATCH):
            hi = min(n, lo + BATCH)
            target.add(list(ids[lo:hi]), vectors[lo:hi], texts=None if texts is None else texts(lo, hi),
                       metadata=None if metadata is None else metadata(lo, hi), on_conflict="error")
            if progress is not None:
                progress("write", hi, n)
        return store.rename_space(temp, name)
    except BaseException:
        try:
            store.delete_space(temp)  # its folder beside the store goes with it
        except NotFoundError:
            pass
        raise


@dataclass(frozen=True)
class LearnedSpace:
    """What a graph or derived learn workflow stored.

    Attributes
    ----------
    space, uid : the new space's name and uid.
    method : ``poincare``, ``node2vec``, ``retrofit``, ``matryoshka``, ``adapter`` or ``cca``.
    n, dim, metric : items stored, their dimension, the space's metric.
    seconds : the whole call; ``train_seconds`` the training alone.
    recipe : the space's provenance (the full recipe).
    details : what the method measured or counted (relations, walks, moved words, dev scores, ...).
    """

    space: str
    uid: str
    method: str
    n: int
    dim: int
    metric: str
    train_seconds: float
    seconds: float
    recipe: dict[str, Any] = field(repr=False)
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON values."""
        return {"space": self.space, "uid": self.uid, "method": self.method, "n": self.n, "dim": self.dim,
                "metric": self.metric, "train_seconds": self.train_seconds, "seconds": self.seconds,
                "details": self.details, "recipe": self.recipe}
