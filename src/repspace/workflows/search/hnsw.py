"""A stored space's FAISS HNSW graph, persisted beside the store.

An index maps FAISS labels to the space's *rows*; :func:`ensure_hnsw` keeps it
up to date with :func:`repspace.workflows.search.persist.ensure_index`: extended with
the rows added since, dead rows excluded at search time (a FAISS id-bitmap
selector), rebuilt when a quarter of it is dead or its stamp does not match.

:class:`~repspace.engines.search.hnsw.ShardedHNSW` (spec ``hnsw32,shards4``) is the
same graph split over disjoint shards of rows, searched by fan-out with a top-``k``
merge; :func:`ensure_sharded_hnsw` keeps it by the same rules.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from repspace.core.progress import Progress
from repspace.engines.search.hnsw import HNSWIndex, HNSWParams, ShardedHNSW
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


#: The construction parameters when none are given (built once: a search loop asks for them per query).
DEFAULT_HNSW = HNSWParams()

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
    params = params or DEFAULT_HNSW
    path, stamp_path = index_paths(space, params)
    return ensure_index(
        space, path, stamp_path, {"m": params.m, "ef_construction": params.ef_construction},
        create=lambda i: HNSWIndex(i.dim, i.metric, params),
        load=lambda p, i: HNSWIndex.load(p, i.dim, i.metric, params),
        progress=progress, info=info, recheck=recheck,
    )


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
