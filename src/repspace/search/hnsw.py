"""FAISS HNSW graphs over a space's rows, persisted beside the store.

An index maps FAISS labels to the space's *rows*. Rows are append-only (see
:mod:`repspace.store._space`), so an index built at some point is never wrong
later, only behind: :func:`ensure_hnsw` extends it with the rows added since,
excludes rows that died since (a FAISS id-bitmap selector at search time) and
rebuilds it when more than a quarter of what it holds is dead. Each index file
has a JSON stamp (space uid, rows covered, dead rows seen, generation,
parameters); an index whose stamp does not match is rebuilt, never trusted.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np

from repspace.errors import InputError
from repspace.search.exact import normalize_rows
from repspace.space import Metric

if TYPE_CHECKING:
    from repspace.space import SpaceInfo
    from repspace.store import Space

#: Version of the stamp/file layout; a different one means rebuild.
FORMAT = 1
#: Rebuild when this share of the indexed rows has died since the build.
REBUILD_DEAD_SHARE = 0.25
#: Rows added per FAISS call while building, so progress can be reported.
ADD_BATCH = 50_000


@dataclass(frozen=True)
class HNSWParams:
    """HNSW construction parameters: ``m`` links per node, ``ef_construction`` beam width."""

    m: int = 32
    ef_construction: int = 100

    def __post_init__(self) -> None:
        if not (2 <= self.m <= 256):
            raise InputError(f"HNSW M must be between 2 and 256, not {self.m}")
        if not (1 <= self.ef_construction <= 10_000):
            raise InputError(f"HNSW efConstruction must be between 1 and 10000, not {self.ef_construction}")


@dataclass(frozen=True)
class Stamp:
    """What an index file holds, written beside it as JSON."""

    format: int
    space_uid: str
    metric: str
    dim: int
    m: int
    ef_construction: int
    rows: int  # rows 0..rows-1 were considered (live ones added)
    dead_rows_seen: int  # the space's dead_rows when last built or extended
    dead_at_build: int  # the space's dead_rows when built
    clean: bool  # the index holds no dead row
    generation: int
    ntotal: int


def faiss_metric(metric: Metric) -> int:
    """The FAISS metric constant used for a space metric (cosine = IP on normalised rows)."""
    return faiss.METRIC_L2 if metric is Metric.L2 else faiss.METRIC_INNER_PRODUCT


def prepare(vectors: np.ndarray, metric: Metric) -> np.ndarray:
    """Vectors as the index stores them: normalised for cosine, float32 C-contiguous."""
    if metric is Metric.COSINE:
        return normalize_rows(vectors)
    return np.ascontiguousarray(vectors, dtype=np.float32)


class HNSWIndex:
    """A FAISS ``IndexHNSWFlat`` wrapped in an ``IndexIDMap2`` whose labels are rows.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((500, 8)).astype("float32")
    >>> ix = HNSWIndex(8, Metric.L2, HNSWParams(m=16))
    >>> ix.add(x, np.arange(500))
    >>> d, i = ix.search(x[:1], k=1, ef=32)
    >>> int(i[0, 0])
    0
    """

    def __init__(self, dim: int, metric: Metric, params: HNSWParams, index: Any = None) -> None:
        self.dim, self.metric, self.params = dim, metric, params
        if index is None:
            inner = faiss.IndexHNSWFlat(dim, params.m, faiss_metric(metric))
            inner.hnsw.efConstruction = params.ef_construction
            index = faiss.IndexIDMap2(inner)
        self.index = index

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    def add(self, vectors: np.ndarray, rows: np.ndarray) -> None:
        """Add vectors (raw; normalised here for cosine) under the given row labels."""
        if len(rows):
            self.index.add_with_ids(prepare(vectors, self.metric), np.ascontiguousarray(rows, dtype=np.int64))

    def search(
        self, queries: np.ndarray, k: int, ef: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS scores and row labels (-1 where fewer than k were found).

        ``allowed`` is a boolean mask over rows; rows outside it are never returned.
        """
        q = prepare(np.atleast_2d(queries), self.metric)
        params = faiss.SearchParametersHNSW(efSearch=max(int(ef), k))
        bitmap = None
        if allowed is not None:
            bitmap = np.packbits(np.asarray(allowed, dtype=bool), bitorder="little")
            params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
        d, i = self.index.search(q, k, params=params)
        del bitmap  # kept alive until FAISS is done with it
        return d, i

    def save(self, path: Path) -> None:
        """Write atomically (temporary file, then rename)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(fd)
        try:
            faiss.write_index(self.index, tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(cls, path: Path, dim: int, metric: Metric, params: HNSWParams) -> HNSWIndex:
        return cls(dim, metric, params, index=faiss.read_index(str(path)))


def index_paths(space: Space, params: HNSWParams) -> tuple[Path, Path]:
    """Where a space's HNSW index and its stamp live."""
    folder = space.store.index_dir / space.uid
    stem = f"hnsw-m{params.m}-efc{params.ef_construction}"
    return folder / f"{stem}.faiss", folder / f"{stem}.json"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


@dataclass
class LoadedIndex:
    """An up-to-date index, its stamp, whether dead rows must be masked, and what was done."""

    index: HNSWIndex
    stamp: Stamp
    needs_mask: bool
    action: str  # "loaded", "built", "extended" or "rebuilt"


_MEMORY: dict[tuple[str, str], tuple[float, LoadedIndex]] = {}
#: (index file mtime, stamp file mtime) when this process last wrote or checked them.
_FILES: dict[str, tuple[int, int]] = {}


def ensure_hnsw(
    space: Space,
    params: HNSWParams | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    info: SpaceInfo | None = None,
) -> LoadedIndex:
    """Load the space's HNSW index, bringing it up to date first (built, extended or rebuilt).

    ``progress(done, total)`` is called while rows are added; ``info`` is the
    space's description when the caller has just read it.
    """
    params = params or HNSWParams()
    info = info or space.info()
    path, stamp_path = index_paths(space, params)
    fresh = _fresh_in_memory(path, stamp_path, info)
    if fresh is not None:  # the common case: nothing changed since this process last used it
        return fresh
    stamp = _read_stamp(stamp_path)
    ok = (
        stamp is not None
        and path.exists()
        and stamp.format == FORMAT
        and stamp.space_uid == info.uid
        and stamp.metric == info.metric.value
        and stamp.dim == info.dim
        and stamp.rows <= info.next_row
        and stamp.dead_rows_seen <= info.dead_rows
    )
    action = "loaded"
    loaded: HNSWIndex | None = None
    if ok:
        assert stamp is not None
        dead_since_build = info.dead_rows - stamp.dead_at_build
        if dead_since_build > REBUILD_DEAD_SHARE * max(stamp.ntotal, 1):
            ok, action = False, "rebuilt"
    if ok:
        assert stamp is not None
        key = (str(path), space.uid)
        mtime = path.stat().st_mtime_ns
        cached = _MEMORY.get(key)
        if cached is not None and cached[0] == mtime and cached[1].stamp == stamp:
            loaded = cached[1].index
        else:
            try:
                loaded = HNSWIndex.load(path, info.dim, info.metric, params)
            except RuntimeError:  # a damaged file: it is only a cache, so rebuild it
                loaded = None
        if loaded is None or loaded.ntotal != stamp.ntotal:
            ok, action, loaded = False, "rebuilt", None
    if not ok or loaded is None:
        action = "rebuilt" if (stamp is not None or stamp_path.exists() or path.exists()) else "built"
        loaded = HNSWIndex(info.dim, info.metric, params)
        stamp = Stamp(FORMAT, info.uid, info.metric.value, info.dim, params.m, params.ef_construction,
                      rows=0, dead_rows_seen=info.dead_rows, dead_at_build=info.dead_rows, clean=True,
                      generation=info.generation, ntotal=0)
        changed = True
    else:
        changed = False
    assert stamp is not None
    if stamp.rows < info.next_row:
        # Add the live rows in [stamp.rows, next_row) read from one snapshot.
        live, vectors = space.live_rows(stamp.rows, info.next_row)
        total = len(live)
        for start in range(0, total, ADD_BATCH):
            loaded.add(vectors[start : start + ADD_BATCH], live[start : start + ADD_BATCH])
            if progress is not None:
                progress(min(start + ADD_BATCH, total), total)
        del vectors
        if action == "loaded":
            action = "extended"
        stamp = Stamp(**{**asdict(stamp), "rows": info.next_row, "generation": info.generation,
                         "clean": stamp.clean and stamp.dead_rows_seen == info.dead_rows,
                         "dead_rows_seen": info.dead_rows, "ntotal": loaded.ntotal})
        changed = True
    needs_mask = not (stamp.clean and stamp.dead_rows_seen == info.dead_rows)
    if changed:
        loaded.save(path)
        _write_json(stamp_path, asdict(stamp))
    result = LoadedIndex(loaded, stamp, needs_mask, action)
    _MEMORY[(str(path), space.uid)] = (path.stat().st_mtime_ns, result)
    _FILES[str(path)] = (path.stat().st_mtime_ns, stamp_path.stat().st_mtime_ns)
    return result


def _fresh_in_memory(path: Path, stamp_path: Path, info: SpaceInfo) -> LoadedIndex | None:
    """The index this process holds, if neither its files nor the space changed since."""
    cached = _MEMORY.get((str(path), info.uid))
    files = _FILES.get(str(path))
    if cached is None or files is None:
        return None
    try:
        now = (path.stat().st_mtime_ns, stamp_path.stat().st_mtime_ns)
    except OSError:
        return None
    held = cached[1]
    if now != files or held.stamp.rows != info.next_row or held.stamp.dead_rows_seen != info.dead_rows:
        return None
    return LoadedIndex(held.index, held.stamp, held.needs_mask, "loaded")


def _read_stamp(path: Path) -> Stamp | None:
    """The stamp beside an index, or None when it is missing or not exactly of the expected shape."""
    try:
        data = json.loads(path.read_text())
        stamp = Stamp(**data)
    except (OSError, ValueError, TypeError):
        return None
    for f in fields(Stamp):
        value = getattr(stamp, f.name)
        want = {"int": int, "str": str, "bool": bool}[str(f.type)]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            return None
    return stamp
