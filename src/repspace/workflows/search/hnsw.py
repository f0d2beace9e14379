"""A stored space's FAISS HNSW graph, persisted beside the store.

An index maps FAISS labels to the space's *rows*; :func:`ensure_hnsw` keeps it
up to date with :func:`repspace.workflows.search.persist.ensure_index`: extended with
the rows added since, dead rows excluded at search time (a FAISS id-bitmap
selector), rebuilt when a quarter of it is dead or its stamp does not match.

:class:`ShardedHNSW` (spec ``hnsw32,shards4``) is the same graph split over disjoint
shards of rows, searched by fan-out with a top-``k`` merge; :func:`ensure_sharded_hnsw`
keeps it by the same rules.
"""

from __future__ import annotations

import functools
import os
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import faiss
import numpy as np

from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.engines.search.hnsw import HNSWIndex, HNSWParams, faiss_metric, pack_mask
from repspace.workflows.search.persist import Loaded, ensure_index

if TYPE_CHECKING:
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space


def index_paths(space: Space, params: HNSWParams) -> tuple[Path, Path]:
    """Where a space's HNSW index and its stamp live."""
    return _paths(space.store.index_dir, space.uid, params.m, params.ef_construction)


@functools.lru_cache(maxsize=256)
def _paths(index_dir: Path, uid: str, m: int, ef_construction: int) -> tuple[Path, Path]:
    # Cached: building paths costs more than a whole search step of a one-query call.
    folder = index_dir / uid
    stem = f"hnsw-m{m}-efc{ef_construction}"
    return folder / f"{stem}.faiss", folder / f"{stem}.json"


#: What :func:`ensure_hnsw` returns: the index, its stamp, whether to mask dead rows, what was done.
LoadedIndex = Loaded


def ensure_hnsw(
    space: Space,
    params: HNSWParams | None = None,
    *,
    progress: Progress | None = None,
    info: SpaceInfo | None = None,
    recheck: bool = True,
) -> Loaded[HNSWIndex]:
    """Load the space's HNSW index, bringing it up to date first (built, extended or rebuilt).

    ``progress("index", done, total)`` is called while rows are added; ``info`` is the
    space's description when the caller has just read it. See
    :func:`repspace.workflows.search.persist.ensure_index` for the rules (and ``recheck``).
    """
    params = params or HNSWParams()
    path, stamp_path = index_paths(space, params)
    return ensure_index(
        space, path, stamp_path, {"m": params.m, "ef_construction": params.ef_construction},
        create=lambda i: HNSWIndex(i.dim, i.metric, params),
        load=lambda p, i: HNSWIndex.load(p, i.dim, i.metric, params),
        progress=progress, info=info, recheck=recheck,
    )


class ShardedHNSW:
    """HNSW graphs over disjoint shards of rows, searched by fan-out and a top-``k`` merge.

    Row ``r`` lives in shard ``r % n`` (so rows added later keep the shards even); each
    shard is an :class:`~repspace.engines.search.hnsw.HNSWIndex` labelled by global rows.
    :meth:`search` asks every shard for its top ``k`` and keeps the ``k`` best by
    FAISS's distance, equal distances to the lower row: the semantics of FAISS'
    ``IndexShards``. The file is one ``.npz`` of the shards' serialised FAISS indexes,
    written atomically.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.core.space import Metric
    >>> x = np.random.default_rng(0).standard_normal((400, 8)).astype("float32")
    >>> ix = ShardedHNSW(2, 8, Metric.L2, HNSWParams(m=8))
    >>> ix.add(x, np.arange(400))
    >>> [s.ntotal for s in ix.shards]
    [200, 200]
    >>> d, i = ix.search(x[:2], k=1, ef=32)
    >>> i.tolist()
    [[0], [1]]
    """

    def __init__(self, n: int, dim: int, metric: Metric, params: HNSWParams,
                 shards: list[HNSWIndex] | None = None) -> None:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise InputError(f"shards must be a positive integer, not {n!r}")
        self.n, self.dim, self.metric, self.params = n, dim, metric, params
        self.shards = shards if shards is not None else [HNSWIndex(dim, metric, params) for _ in range(n)]
        if len(self.shards) != n:
            raise ValueError(f"{len(self.shards)} shards where {n} were expected")

    @property
    def ntotal(self) -> int:
        return sum(s.ntotal for s in self.shards)

    def add(self, vectors: np.ndarray, rows: np.ndarray) -> None:
        """Add vectors (raw) under the given row labels, row ``r`` to shard ``r % n``."""
        rows = np.asarray(rows, dtype=np.int64)
        for s, shard in enumerate(self.shards):
            pick = np.flatnonzero(rows % self.n == s)
            if len(pick):
                shard.add(vectors[pick], rows[pick])

    def search(
        self, queries: np.ndarray, k: int, ef: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS distances and row labels of the ``k`` best over all shards (-1 where fewer were found).

        ``allowed`` as in :meth:`HNSWIndex.search` (a mask over global rows, packed or not).
        """
        q = np.array(queries, dtype=np.float32, order="C", ndmin=2)
        if allowed is not None and allowed.dtype != np.uint8:
            allowed = pack_mask(allowed)
        parts = [s.search(q, k, ef, allowed) for s in self.shards if s.ntotal]
        if not parts:
            worst = np.inf if self.metric is Metric.L2 else -np.inf
            return np.full((q.shape[0], k), worst, np.float32), np.full((q.shape[0], k), -1, np.int64)
        return merge_topk([p[0] for p in parts], [p[1] for p in parts], k, ascending=self.metric is Metric.L2)

    def save(self, path: Path) -> None:
        """Write every shard into one ``.npz`` file, atomically (temporary file, then rename)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **{f"shard{s}": faiss.serialize_index(sh.index) for s, sh in enumerate(self.shards)})
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(cls, path: Path, n: int, dim: int, metric: Metric, params: HNSWParams) -> ShardedHNSW:
        """Read a file written by :meth:`save` (``ValueError`` if it holds another number of shards)."""
        try:
            with np.load(path) as data:
                if sorted(data.files) != sorted(f"shard{s}" for s in range(n)):
                    raise ValueError(f"{path} does not hold {n} HNSW shards")
                shards = [HNSWIndex(dim, metric, params, index=faiss.deserialize_index(data[f"shard{s}"]))
                          for s in range(n)]
        except (zipfile.BadZipFile, EOFError, KeyError, AttributeError) as e:  # not an npz of shards: damaged
            raise ValueError(f"{path} is not an index of HNSW shards ({e})") from None
        for sh in shards:
            if sh.index.d != dim or sh.index.metric_type != faiss_metric(metric):
                raise ValueError(f"{path} holds shards of another dimension or metric")
        return cls(n, dim, metric, params, shards)


def merge_topk(distances: list[np.ndarray], labels: list[np.ndarray], k: int, *,
               ascending: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of several result lists per query: FAISS' ``IndexShards`` merge.

    ``distances``/``labels`` are ``(m, k_i)`` arrays from each shard (FAISS's
    convention: labels -1 for padding). Kept: the best distances (smallest when
    ``ascending``, largest otherwise), equal distances to the lower label, padding last.

    Examples
    --------
    >>> d, i = merge_topk([np.array([[0.1, 0.5]]), np.array([[0.2, 0.5]])],
    ...                   [np.array([[7, 3]]), np.array([[4, 1]])], 3, ascending=True)
    >>> i.tolist(), d.tolist()
    ([[7, 4, 1]], [[0.10000000149011612, 0.20000000298023224, 0.5]])
    """
    d = np.concatenate([np.asarray(x, dtype=np.float32) for x in distances], axis=1)
    i = np.concatenate([np.asarray(x, dtype=np.int64) for x in labels], axis=1)
    real = i >= 0
    key = np.where(real, d if ascending else -d, np.inf)
    order = np.lexsort((np.where(real, i, np.iinfo(np.int64).max), key), axis=-1)[:, :k]
    d, i = np.take_along_axis(d, order, axis=1), np.take_along_axis(i, order, axis=1)
    if d.shape[1] < k:
        pad = k - d.shape[1]
        d = np.concatenate([d, np.full((d.shape[0], pad), np.inf if ascending else -np.inf, np.float32)], axis=1)
        i = np.concatenate([i, np.full((i.shape[0], pad), -1, np.int64)], axis=1)
    worst = np.float32(np.inf if ascending else -np.inf)
    return np.where(i >= 0, d, worst).astype(np.float32), i


def sharded_paths(space: Space, params: HNSWParams, shards: int) -> tuple[Path, Path]:
    """Where a space's sharded HNSW index (one ``.npz`` of all shards) and its stamp live."""
    folder = space.store.index_dir / space.uid
    stem = f"hnsw-m{params.m}-efc{params.ef_construction}-shards{shards}"
    return folder / f"{stem}.shards", folder / f"{stem}.json"


def sharded_ident(params: HNSWParams, shards: int) -> dict[str, int]:
    """What a sharded HNSW's stamp says it is (compared exactly: another identity is another index)."""
    return {"m": params.m, "ef_construction": params.ef_construction, "shards": shards}


def ensure_sharded_hnsw(
    space: Space,
    params: HNSWParams,
    shards: int,
    *,
    progress: Progress | None = None,
    info: SpaceInfo | None = None,
    recheck: bool = True,
) -> Loaded[ShardedHNSW]:
    """Load the space's ``shards``-way HNSW index, bringing it up to date first (as :func:`ensure_hnsw`).

    Built here, one shard after another, when missing or stale;
    ``build_index(..., backend="ray")`` builds the shards in parallel on a cluster instead.
    """
    path, stamp_path = sharded_paths(space, params, shards)
    return ensure_index(
        space, path, stamp_path, sharded_ident(params, shards),
        create=lambda i: ShardedHNSW(shards, i.dim, i.metric, params),
        load=lambda p, i: ShardedHNSW.load(p, shards, i.dim, i.metric, params),
        progress=progress, info=info, recheck=recheck,
    )
