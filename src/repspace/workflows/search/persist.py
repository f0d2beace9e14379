"""Derived indexes persisted beside the store: stamped, extended, masked or rebuilt, never trusted stale.

An index maps labels to the space's *rows*. Rows are append-only (see
:mod:`repspace.core.store._space`), so an index built at some point is never wrong
later, only behind: :func:`ensure_index` extends it with the rows added since,
tells the caller to mask rows that died since, and rebuilds it when more than a
quarter of what it holds is dead. Each index file has a JSON stamp (space uid,
what the index is, rows covered, dead rows seen, generation); an index whose
stamp does not match is rebuilt, never trusted. Any index kind with ``ntotal``,
``add(vectors, rows)`` and ``save(path)`` (and, when it must learn something
first, ``train(vectors)``) plugs in: HNSW graphs, quantized codes, funnels.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import ConflictError, StoreError
from repspace.core.progress import Progress

if TYPE_CHECKING:
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space

#: Version of the stamp/file layout; a different one means rebuild.
FORMAT = 2
#: Rebuild when this share of the indexed rows has died since the build.
REBUILD_DEAD_SHARE = 0.25
#: Rows added per call while building, so progress can be reported.
ADD_BATCH = 50_000
#: Bytes of float vectors gathered for one add to an index that builds a better graph from one add
#: (``ADD_AT_ONCE``: an HNSW graph), read ADD_BATCH rows at a time; a larger space is added in parts this size.
ADD_AT_ONCE_BYTES = 1 << 30
#: Rows an index that must be trained learns from (a random sample of the live rows beyond this).
TRAIN_MAX = 200_000

#: Fields every stamp has, with their types; an index kind adds its own identity fields.
_COMMON: dict[str, type] = {
    "format": int, "space_uid": str, "metric": str, "dim": int, "rows": int, "dead_rows_seen": int,
    "dead_at_build": int, "clean": bool, "generation": int, "ntotal": int,
}


class Persistable(Protocol):
    """What :func:`ensure_index` needs of an index kind."""

    @property
    def ntotal(self) -> int: ...  # noqa: D102

    def add(self, vectors: np.ndarray, rows: np.ndarray) -> None: ...  # noqa: D102

    def save(self, path: Path) -> None: ...  # noqa: D102


IndexT = TypeVar("IndexT", bound=Persistable)


@dataclass(frozen=True)
class Stamp:
    """What an index file holds, written beside it as JSON.

    ``rows``: rows ``0 .. rows-1`` were considered (the live ones added);
    ``dead_rows_seen``: the space's dead rows when last built or extended;
    ``dead_at_build``: the same when built; ``clean``: the index holds no dead
    row; ``ident``: what the index is (its kind's parameters), compared exactly.
    """

    format: int
    space_uid: str
    metric: str
    dim: int
    rows: int
    dead_rows_seen: int
    dead_at_build: int
    clean: bool
    generation: int
    ntotal: int
    ident: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in _COMMON}
        data.update(dict(self.ident))
        return data

    def replace(self, **changes: Any) -> Stamp:
        data = {k: getattr(self, k) for k in (*_COMMON, "ident")}
        data.update(changes)
        return Stamp(**data)


@dataclass
class Loaded(Generic[IndexT]):
    """An up-to-date index, its stamp, whether dead rows must be masked, and what was done."""

    index: IndexT
    stamp: Stamp
    needs_mask: bool
    action: str  # "loaded", "built", "extended" or "rebuilt"


#: How a read-only store's missing index gets built: by a process with write access.
BUILD_HINT = "repspace index build, with write access, builds it"


class IndexNotReady(ConflictError):
    """A read-only store's index that would have to be built, extended or rebuilt before it could serve.

    A read-only store writes nothing, so :func:`ensure_index` raises this instead; a
    search then goes exact and says why in its plan.
    """


_MEMORY: dict[tuple[str, str], tuple[int, Loaded[Any]]] = {}
#: (index file mtime, stamp file mtime) when this process last wrote or checked them.
_FILES: dict[str, tuple[int, int]] = {}
#: Per index file: the space description a reuse was last checked against, and what it returned.
_CHECKED: dict[str, tuple[SpaceInfo, Loaded[Any]]] = {}


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically (:func:`repspace.core.atomic.write_atomic`)."""
    write_atomic(path, lambda f: f.write(json.dumps(data, indent=1).encode()))


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object written by :func:`write_json`, or None when missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def stamp_matches(saved: Any, wanted: dict[str, Any]) -> bool:
    """Whether a saved stamp records exactly the state ``wanted`` describes.

    The one comparison every derived file uses: each wanted field must be
    present and equal. Fields the saved stamp has beyond them (what was
    computed, such as a method or a count) do not matter.

    Examples
    --------
    >>> stamp_matches({"uid": "a", "generation": 3, "method": "exact"}, {"uid": "a", "generation": 3})
    True
    >>> stamp_matches({"uid": "a", "generation": 2}, {"uid": "a", "generation": 3}), stamp_matches(None, {})
    (False, False)
    """
    return isinstance(saved, dict) and all(key in saved and saved[key] == value for key, value in wanted.items())


def read_stamp(path: Path, ident: dict[str, Any]) -> Stamp | None:
    """The stamp beside an index, or None when missing, malformed, or of another identity."""
    data = read_json(path)
    if data is None or set(data) != set(_COMMON) | set(ident) or not stamp_matches(data, ident):
        return None
    for key, want in _COMMON.items():
        value = data[key]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            return None
    return Stamp(**{k: data[k] for k in _COMMON}, ident=tuple(ident.items()))


def _mtime(path: Path | str) -> int:
    """Modification time of a file, or of the newest file in a folder index (one ``stat`` for a file)."""
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        return max((p.stat().st_mtime_ns for p in Path(path).iterdir()), default=st.st_mtime_ns)
    return st.st_mtime_ns


def ensure_index(
    space: Space,
    path: Path,
    stamp_path: Path,
    ident: dict[str, Any],
    *,
    create: Callable[[SpaceInfo], IndexT],
    load: Callable[[Path, SpaceInfo], IndexT],
    progress: Progress | None = None,
    info: SpaceInfo | None = None,
    recheck: bool = True,
) -> Loaded[IndexT]:
    """Load a space's derived index, bringing it up to date first (built, extended or rebuilt).

    Parameters
    ----------
    space : Space
    path, stamp_path : Path
        The index file (or folder) and its JSON stamp.
    ident : dict
        The index's identity (kind parameters, JSON values), stored in the
        stamp and compared exactly: another identity is another index.
    create : callable
        ``create(info)``: a new empty index; if it has ``train``, it is
        trained on (a sample of) the live rows before rows are added.
    load : callable
        ``load(path, info)``: the index read back from disk; it may raise
        ``RuntimeError``/``OSError``/``ValueError`` for a damaged file (rebuilt).
    progress : callable, optional
        ``progress("index", done, total)`` while rows are added.
    info : SpaceInfo, optional
        The space's description when the caller has just read it.
    recheck : bool
        Look at the files even when this process reused the index for this very
        description (``info`` the same object, so the space has not changed since).
        The one-query path passes False: the index in memory covers exactly the
        rows of that description, whatever another process did to the files, and
        two ``stat`` calls are a tenth of its overhead. The files are looked at
        again as soon as the space changes, or after :func:`forget`.
    """
    info = info or space.info()
    if not recheck:
        checked = _CHECKED.get(str(path))
        if checked is not None and checked[0] is info:
            held = _MEMORY.get((str(path), info.uid))
            if held is not None and held[1] is checked[1]:
                return checked[1]
    fresh = _fresh_in_memory(path, stamp_path, info, ident)
    if fresh is not None:  # the common case: nothing changed since this process last used it
        return fresh
    readonly = space.store.readonly
    stamp = read_stamp(stamp_path, ident)
    ok = _valid(stamp, path, info)
    action = "loaded"
    index: Any = None
    if ok and not readonly:  # a read-only store uses an index with many dead rows as it is (masked)
        assert stamp is not None
        if info.dead_rows - stamp.dead_at_build > REBUILD_DEAD_SHARE * max(stamp.ntotal, 1):
            ok, action = False, "rebuilt"
    if ok:
        assert stamp is not None
        key = (str(path), info.uid)
        mtime = _mtime(path)
        cached = _MEMORY.get(key)
        if cached is not None and cached[0] == mtime and cached[1].stamp == stamp:
            index = cached[1].index
        else:
            try:
                index = load(path, info)
            except (RuntimeError, OSError, ValueError):  # a damaged file: it is only a cache, so rebuild it
                index = None
        if index is None or index.ntotal != stamp.ntotal:
            ok, action, index = False, "rebuilt", None
    if readonly:  # nothing is built, extended or written: what is on disk serves as it is, or not at all
        what = f"the index {path.name} of space {space.name!r}"
        if not ok or index is None:
            raise IndexNotReady(f"{what} is {'not built' if stamp is None and not path.exists() else 'out of date'}"
                                f" and this store is read-only ({BUILD_HINT})")
        assert stamp is not None
        if stamp.rows < info.next_row:
            raise IndexNotReady(f"{what} lacks the {info.next_row - stamp.rows} rows added since it was built "
                                f"and this store is read-only ({BUILD_HINT})")
    if not ok or index is None:
        action = "rebuilt" if (stamp is not None or stamp_path.exists() or path.exists()) else "built"
        index = create(info)
        stamp = Stamp(FORMAT, info.uid, info.metric.value, info.dim, rows=0, dead_rows_seen=info.dead_rows,
                      dead_at_build=info.dead_rows, clean=True, generation=info.generation, ntotal=0,
                      ident=tuple(ident.items()))
        changed = True
    else:
        changed = False
    assert stamp is not None
    if stamp.rows < info.next_row:
        # Add the live rows of [stamp.rows, next_row) a batch at a time, so that building
        # never holds more than one batch of float vectors (plus a training sample).
        lo, hi = stamp.rows, info.next_row
        if stamp.ntotal == 0 and hasattr(index, "train"):
            sample = _training_rows(space.rows(), lo, hi)
            if len(sample):
                index.train(space.read_rows(sample))
        _add_rows(space, index, lo, hi, progress)
        if action == "loaded":
            action = "extended"
        stamp = stamp.replace(rows=info.next_row, generation=info.generation, dead_rows_seen=info.dead_rows,
                              clean=stamp.clean and stamp.dead_rows_seen == info.dead_rows, ntotal=index.ntotal)
        changed = True
    needs_mask = not (stamp.clean and stamp.dead_rows_seen == info.dead_rows)
    if changed:
        index.save(path)
        write_json(stamp_path, stamp.to_json())
    result = Loaded(index, stamp, needs_mask, action)
    _MEMORY[(str(path), info.uid)] = (_mtime(path), result)
    _FILES[str(path)] = (_mtime(path), stamp_path.stat().st_mtime_ns)
    return result


def _add_rows(space: Space, index: Any, lo: int, hi: int, progress: Progress | None) -> None:
    """Add the live rows of ``[lo, hi)`` to ``index``, reading :data:`ADD_BATCH` rows at a time.

    Each batch is added as read, so that building never holds more than one batch of float
    vectors, except for an index whose ``ADD_AT_ONCE`` is true: FAISS inserts the rows of one
    HNSW add level by level, top down, in a random order, and rows added in several calls
    (frequent words first) make a graph of lower recall (GloVe 100k, HNSW32: recall@10 at
    ef 64 0.915 in two adds of 50,000 rows, 0.933 in one). Its batches are gathered into
    one add of up to :data:`ADD_AT_ONCE_BYTES` of vectors (the index keeps a copy of them anyway).
    """
    cap = max(ADD_BATCH, ADD_AT_ONCE_BYTES // (4 * space.dim)) if getattr(index, "ADD_AT_ONCE", False) else 0
    vectors_held = rows_held = None
    held = 0
    for start in range(lo, hi, ADD_BATCH):
        end = min(start + ADD_BATCH, hi)
        live, vectors = space.live_rows(start, end)
        if not cap:
            if len(live):
                index.add(vectors, live)
        else:
            if vectors_held is None or rows_held is None:
                vectors_held = np.empty((min(cap, hi - lo), space.dim), dtype=np.float32)
                rows_held = np.empty(len(vectors_held), dtype=np.int64)
            if held + len(live) > len(rows_held):
                index.add(vectors_held[:held], rows_held[:held])
                held = 0
            vectors_held[held : held + len(live)] = vectors
            rows_held[held : held + len(live)] = live
            held += len(live)
        del vectors
        if progress is not None and end < hi:
            progress("index", end - lo, hi - lo)  # rows scanned
    if held:
        assert vectors_held is not None and rows_held is not None
        index.add(vectors_held[:held], rows_held[:held])
    if progress is not None:
        progress("index", hi - lo, hi - lo)


def _valid(stamp: Stamp | None, path: Path, info: SpaceInfo) -> bool:
    """Whether an index file and its stamp describe this space as it is or was (extendable, not stale)."""
    return (
        stamp is not None
        and path.exists()
        and stamp.format == FORMAT
        and stamp.space_uid == info.uid
        and stamp.metric == info.metric.value
        and stamp.dim == info.dim
        and stamp.rows <= info.next_row
        and stamp.dead_rows_seen <= info.dead_rows
    )


def usable_stamp(path: Path, stamp_path: Path, ident: dict[str, Any], info: SpaceInfo) -> Stamp | None:
    """The stamp of an index :func:`ensure_index` would load (and perhaps extend) rather than rebuild.

    None when the index is missing, of another identity, stale, or holds more than
    :data:`REBUILD_DEAD_SHARE` dead rows. A caller that builds an index elsewhere (on a
    cluster) asks this first, and builds only when it returns None.
    """
    stamp = read_stamp(stamp_path, ident)
    if not _valid(stamp, path, info):
        return None
    assert stamp is not None
    if info.dead_rows - stamp.dead_at_build > REBUILD_DEAD_SHARE * max(stamp.ntotal, 1):
        return None
    return stamp


def install_index(space: Space, path: Path, stamp_path: Path, ident: dict[str, Any], index: IndexT,
                  info: SpaceInfo) -> Loaded[IndexT]:
    """Persist an index built elsewhere from the live rows of ``info``, stamped as :func:`ensure_index` would.

    The index must hold exactly the live rows ``0 .. info.next_row - 1`` as they were
    when ``info`` was read (a cluster build reads them after it); it is then stamped with
    that state (rows, dead rows, generation) and written atomically, index first, so
    that a crash leaves at worst a stamp that no longer matches (rebuilt, never
    trusted). Returns it as :func:`ensure_index` would, with action ``built`` or
    ``rebuilt``; this process's cached copy of an older file is dropped.
    """
    if space.store.readonly:
        raise StoreError("this store is open read-only: an index built elsewhere cannot be installed")
    existed = path.exists() or stamp_path.exists()
    stamp = Stamp(FORMAT, info.uid, info.metric.value, info.dim, rows=info.next_row, dead_rows_seen=info.dead_rows,
                  dead_at_build=info.dead_rows, clean=True, generation=info.generation, ntotal=index.ntotal,
                  ident=tuple(ident.items()))
    forget(path)
    index.save(path)
    write_json(stamp_path, stamp.to_json())
    result = Loaded(index, stamp, False, "rebuilt" if existed else "built")
    _MEMORY[(str(path), info.uid)] = (_mtime(path), result)
    _FILES[str(path)] = (_mtime(path), stamp_path.stat().st_mtime_ns)
    return result


def training_rows(space: Space, info: SpaceInfo) -> np.ndarray:
    """The live rows an index of ``space`` learns from when built from scratch (as :func:`ensure_index` does)."""
    return _training_rows(space.rows(), 0, info.next_row)


def _training_rows(live: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The live rows of ``[lo, hi)`` an index learns from: all, or a seeded sample of :data:`TRAIN_MAX`."""
    rows = live[(live >= lo) & (live < hi)]
    if len(rows) <= TRAIN_MAX:
        return rows
    return np.sort(np.random.default_rng(0).choice(rows, TRAIN_MAX, replace=False))


def _fresh_in_memory(path: Path, stamp_path: Path, info: SpaceInfo, ident: dict[str, Any]) -> Loaded[Any] | None:
    """The index this process holds, if neither its files nor the space changed since."""
    key = str(path)
    cached = _MEMORY.get((key, info.uid))
    files = _FILES.get(key)
    if cached is None or files is None:
        return None
    held = cached[1]
    stamp = held.stamp
    if stamp.rows != info.next_row or stamp.dead_rows_seen != info.dead_rows or stamp.ident != tuple(ident.items()):
        return None
    try:  # two stat calls: a file another process rewrote, or one deleted or damaged, is looked at again
        now = (_mtime(key), os.stat(stamp_path).st_mtime_ns)
    except OSError:
        return None
    if now != files:
        return None
    if held.action != "loaded":  # what a reuse reports; stored so that the next reuse allocates nothing
        held = Loaded(held.index, stamp, held.needs_mask, "loaded")
        _MEMORY[(key, info.uid)] = (cached[0], held)
    _CHECKED[key] = (info, held)
    return held


def reuse_token(path: Path | str, info: SpaceInfo, loaded: Loaded[Any]) -> tuple[Any, ...] | None:
    """What :func:`still_reused` compares: ``loaded`` as this process reuses it for ``info``, or None when
    it is not (just built, extended or rebuilt: the next :func:`ensure_index` looks at the files again).

    A caller that keeps something derived from a reused index (a search plan) keeps this
    token beside it and asks :func:`still_reused` before using it again.
    """
    key = str(path)
    checked = _CHECKED.get(key)
    if checked is None or checked[0] is not info or checked[1] is not loaded:
        return None
    return (key, info.uid, checked)


def still_reused(token: tuple[Any, ...]) -> bool:
    """Whether :func:`ensure_index` with ``recheck=False`` would return the same index for the same
    description as when ``token`` was taken (not forgotten, not replaced since)."""
    key, uid, checked = token
    if _CHECKED.get(key) is not checked:
        return False
    held = _MEMORY.get((key, uid))
    return held is not None and held[1] is checked[1]


def forget(path: Path) -> None:
    """Drop what this process holds of an index file (called when the file is deleted)."""
    key = str(path)
    _CHECKED.pop(key, None)
    _FILES.pop(key, None)
    for held in [k for k in _MEMORY if k[0] == key]:
        _MEMORY.pop(held, None)
