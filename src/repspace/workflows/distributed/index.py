"""Index building on Ray: IVF-PQ lists filled by workers and merged, HNSW graphs built per shard.

The heavy steps of :func:`repspace.workflows.search.indexes.build_index` with
``backend="ray"``, arrays in and indexes out (the store-side steps, training sample,
stamps and files, stay with the search workflow, which calls these):

- :func:`add_ivf_shards`: the driver has trained the coarse quantiser and the product
  quantiser on a seeded sample; the trained, empty index is serialised once into the
  object store, every worker deserialises it and ``add_with_ids`` its shard of rows
  (labels are the space's rows, as the local index's are), and the driver merges the
  filled shards' inverted lists into the trained index, in shard order, so that each
  list holds its rows in row order exactly as an index filled in one pass does: the
  merged index is the single-built one, code for code.
- :func:`build_hnsw_shards`: each worker builds one HNSW graph
  (:class:`~repspace.engines.search.hnsw.HNSWIndex`, the local graph's FAISS index and
  parameters) over its shard of rows; searched by fan-out with a top-``k`` merge
  (:class:`repspace.engines.search.hnsw.ShardedHNSW`).

Vectors reach the workers through the object store (``ray.put`` per piece): a worker on
another machine cannot read the driver's SQLite file. Every function takes ``address``
and runs in :func:`~repspace.workflows.distributed.backend.ray_session`, which reuses a
running Ray. Ray is imported inside the functions only.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import BackendError, InputError, RepspaceError
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.engines.search.funnel import FunnelIndex
from repspace.engines.search.hnsw import HNSWIndex, HNSWParams
from repspace.workflows.distributed.backend import node_id, one_line, ray_session

__all__ = ["MERGE_IN_MEMORY_BYTES", "ShardWork", "ShardedBuild", "add_ivf_shards", "build_hnsw_shards"]

#: With ``merge="auto"``, filled IVF shards up to this many bytes in all are merged in memory;
#: larger ones through FAISS' on-disk merge (:func:`faiss.contrib.ondisk.merge_ondisk`).
MERGE_IN_MEMORY_BYTES = 1 << 30

#: A piece of a shard: ``(shard, vectors (n, dim), rows (n,))``.
Piece = tuple[int, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class ShardWork:
    """What one worker did: its shard, the Ray node it ran on, the vectors it added, its seconds."""

    shard: int
    node: str
    rows: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class ShardedBuild:
    """The result of a build on Ray: the index (or the shards' indexes) and what each worker did.

    Attributes
    ----------
    index : FunnelIndex or list of HNSWIndex
        The merged IVF-PQ index (:func:`add_ivf_shards`) or one graph per shard
        (:func:`build_hnsw_shards`), in shard order.
    work : tuple of ShardWork
        One per shard, in shard order.
    merge : str
        ``memory``, ``disk`` (FAISS' on-disk merge) or ``none`` (HNSW shards stay apart).

    Examples
    --------
    What :func:`build_hnsw_shards` returns for three shards built on two nodes (the index left out here):

    >>> work = (ShardWork(0, "node-a", 500, 1.0), ShardWork(1, "node-b", 500, 1.0), ShardWork(2, "node-a", 200, 0.5))
    >>> b = ShardedBuild(index=None, work=work, merge="none")
    >>> b, b.nodes, b.to_dict()["work"][2]["rows"]
    (ShardedBuild(3 shards on 2 node(s), merge=none), {'node-a': 700, 'node-b': 500}, 200)
    """

    index: Any
    work: tuple[ShardWork, ...]
    merge: str

    @property
    def nodes(self) -> dict[str, int]:
        """Vectors added on each Ray node (node id to count)."""
        out: dict[str, int] = {}
        for w in self.work:
            out[w.node] = out.get(w.node, 0) + w.rows
        return out

    def to_dict(self) -> dict[str, Any]:
        """For ``--json`` (the index itself is not serialised)."""
        return {"merge": self.merge, "nodes": self.nodes, "work": [w.to_dict() for w in self.work]}

    def __repr__(self) -> str:
        return f"ShardedBuild({len(self.work)} shards on {len(self.nodes)} node(s), merge={self.merge})"


def add_ivf_shards(
    index: FunnelIndex,
    pieces: Iterable[Piece],
    shards: int,
    *,
    address: str | None = None,
    merge: Literal["auto", "memory", "disk"] = "auto",
    workdir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> ShardedBuild:
    """Fill a trained, empty IVF-PQ index with vectors added by Ray workers, one task per shard.

    Parameters
    ----------
    index : FunnelIndex
        An ``ivfN,pqM`` index, trained and empty; filled in place and returned.
    pieces : iterable of (shard, vectors, rows)
        The vectors (raw; normalised on the workers for cosine) and their row labels,
        a piece at a time (each is put in the object store as it comes, so the
        caller holds one at a time). A shard's pieces are added in the order given;
        give each shard a contiguous range of rows, in row order, and the merged index
        is the one a single pass over the rows fills.
    shards : int
        Number of shards (tasks); shards without pieces are skipped.
    address : str, optional
        The Ray cluster (see :func:`~repspace.workflows.distributed.backend.ray_session`).
    merge : ``auto``, ``memory`` or ``disk``
        How the driver merges the filled shards. ``memory``: each shard's lists are
        appended to the index's (``IndexIVF.merge_from``), one shard at a time.
        ``disk``: FAISS' on-disk merge: the shards are written to files in
        ``workdir`` and memory-mapped, their lists merged into one
        ``OnDiskInvertedLists`` file (:func:`faiss.contrib.ondisk.merge_ondisk`), which
        is then read into the index's own lists and deleted, so that the index is
        saved as one plain FAISS file like a locally built one; the driver never holds
        a shard in memory. ``auto``: ``disk`` beyond :data:`MERGE_IN_MEMORY_BYTES` of
        filled shards.
    workdir : path, optional
        Where the on-disk merge writes (default: the system's temporary folder); the
        search workflow passes the index's folder beside the store.
    progress : callable, optional
        ``progress("index", shards done, shards)``.

    Returns
    -------
    ShardedBuild
        ``index`` is ``index``, filled.

    Examples
    --------
    >>> x = np.random.default_rng(0).standard_normal((2000, 8)).astype("float32")
    >>> ix = FunnelIndex("ivf16,pq4", 8, "l2").train(x)
    >>> pieces = [(0, x[:1000], np.arange(1000)), (1, x[1000:], np.arange(1000, 2000))]
    >>> built = add_ivf_shards(ix, pieces, 2)  # doctest: +SKIP
    >>> built.index.ntotal, sorted(built.nodes.values())  # doctest: +SKIP
    (2000, [2000])
    """
    if not isinstance(index, FunnelIndex) or index.spec.kind != "ivfpq":
        raise InputError("add_ivf_shards fills an ivfN,pqM FunnelIndex")
    if not index.is_trained or index.ntotal:
        raise InputError(f"{index.spec} must be trained and empty before its shards are added")
    check_choice(merge, "merge", ("auto", "memory", "disk"))
    _check_shards(shards)
    import faiss

    blob = faiss.serialize_index(index.index)
    with ray_session(address) as ray:
        task = ray.remote(num_cpus=1, max_retries=1)(_fill_ivf_shard)
        blob_ref = ray.put(blob)
        refs = _submit(ray, task, pieces, shards, lambda p: (blob_ref, str(index.spec), index.dim,
                                                             index.metric.value, p))
        filled = [(s, ref) for s, ref in refs]
        work, mode = _merge_ivf(ray, index, filled, merge, workdir, progress, len(refs))
    return ShardedBuild(index, tuple(work), mode)


def build_hnsw_shards(
    pieces: Iterable[Piece],
    shards: int,
    dim: int,
    metric: Metric | str,
    params: HNSWParams | None = None,
    *,
    address: str | None = None,
    progress: Progress | None = None,
) -> ShardedBuild:
    """One HNSW graph per shard, each built by a Ray worker over its shard's rows.

    Parameters
    ----------
    pieces : iterable of (shard, vectors, rows)
        As for :func:`add_ivf_shards`; a shard's graph gets its pieces in the order given.
    shards : int
        Number of shards; every shard gets a graph (empty if it had no piece).
    dim, metric, params
        The graphs' dimension, metric and construction parameters (M, efConstruction).
    address, progress
        As for :func:`add_ivf_shards`.

    Returns
    -------
    ShardedBuild
        ``index`` is the list of :class:`~repspace.engines.search.hnsw.HNSWIndex`, in shard order.

    Examples
    --------
    >>> x = np.random.default_rng(0).standard_normal((600, 8)).astype("float32")
    >>> rows = np.arange(600)
    >>> pieces = [(s, x[rows % 2 == s], rows[rows % 2 == s]) for s in range(2)]
    >>> built = build_hnsw_shards(pieces, 2, 8, "l2", HNSWParams(m=8))  # doctest: +SKIP
    >>> [g.ntotal for g in built.index]  # doctest: +SKIP
    [300, 300]
    """
    _check_shards(shards)
    metric = Metric.parse(metric)
    params = params or HNSWParams()
    import faiss

    with ray_session(address) as ray:
        task = ray.remote(num_cpus=1, max_retries=1)(_build_hnsw_shard)
        refs = dict(_submit(ray, task, pieces, shards, lambda p: (dim, metric.value, params.m,
                                                                  params.ef_construction, p)))
        graphs, work = [], []
        for s in range(shards):
            if s not in refs:
                graphs.append(HNSWIndex(dim, metric, params))
                continue
            data, w = _get(ray, refs.pop(s))
            graphs.append(HNSWIndex(dim, metric, params, index=faiss.deserialize_index(data)))
            work.append(ShardWork(s, *w))
            del data
            if progress is not None:
                progress("index", len(work), len(refs) + len(work))
    return ShardedBuild(graphs, tuple(work), "none")


# -- driver side -----------------------------------------------------------------------------


def _check_shards(shards: Any) -> None:
    check_scalar(shards, "shards", int, low=1, high=4096)


def _submit(ray: Any, task: Any, pieces: Iterable[Piece], shards: int,
            args: Callable[[list[tuple[Any, Any]]], tuple[Any, ...]]) -> list[tuple[int, Any]]:
    """Put every piece in the object store as it comes, then start one task per shard that got any.

    Tasks are spread over the cluster's nodes (``SPREAD``), one CPU each.
    """
    held: dict[int, list[tuple[Any, Any]]] = {}
    for shard, vectors, rows in pieces:
        if not 0 <= shard < shards:
            raise InputError(f"piece for shard {shard} of {shards}")
        if len(rows):
            held.setdefault(int(shard), []).append(
                (ray.put(np.ascontiguousarray(vectors, dtype=np.float32)),
                 ray.put(np.ascontiguousarray(rows, dtype=np.int64))))
    return [(s, task.options(scheduling_strategy="SPREAD").remote(*args(held[s]))) for s in sorted(held)]


def _get(ray: Any, ref: Any) -> Any:
    """``ray.get``, with Ray's failures as one :class:`BackendError` line (a repspace error passes through)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, RepspaceError):
            raise cause from None
        raise BackendError(f"an index build task failed on Ray: {one_line(cause or e)}") from None
    except ray.exceptions.RayError as e:
        raise BackendError(f"Ray lost an index build task: {one_line(e)}") from None


def _merge_ivf(ray: Any, index: FunnelIndex, filled: list[tuple[int, Any]], merge: str,
               workdir: str | os.PathLike[str] | None, progress: Progress | None,
               total: int) -> tuple[list[ShardWork], str]:
    """Merge the filled shards into ``index``, in shard order (see :func:`add_ivf_shards`).

    ``auto`` holds the fetched shards until they pass :data:`MERGE_IN_MEMORY_BYTES`, then
    spills them to files and finishes as ``disk``; ``disk`` writes each to a file as it comes.
    """
    import faiss

    ivf = faiss.extract_index_ivf(index.index)
    work: list[ShardWork] = []
    held: list[np.ndarray] = []  # auto: shards fetched while the merge mode is undecided
    files: list[str] = []
    tmp: str | None = None
    mode, size = merge, 0
    try:
        for s, ref in filled:
            data, w = _get(ray, ref)
            work.append(ShardWork(s, *w))
            if progress is not None:
                progress("index", len(work), total)
            if mode == "memory":
                _merge_one(ivf, data)
                continue
            size += data.nbytes
            if mode == "auto":
                held.append(data)
                if size <= MERGE_IN_MEMORY_BYTES:
                    continue
                mode = "disk"
            if tmp is None:
                tmp = tempfile.mkdtemp(prefix="ivf-merge-", dir=workdir)
            for blob in held or [data]:
                files.append(os.path.join(tmp, f"shard{len(files)}.faiss"))
                blob.tofile(files[-1])
            held.clear()
            del data
        if mode == "auto":  # everything fitted: merge in memory
            mode = "memory"
            for blob in held:
                _merge_one(ivf, blob)
        elif mode == "disk" and files:
            assert tmp is not None
            _merge_on_disk(index, ivf, files, os.path.join(tmp, "merged.ivfdata"))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return work, mode


def _merge_one(ivf: Any, data: np.ndarray) -> None:
    """Append one filled shard's inverted lists to ``ivf``'s (labels kept as they are)."""
    import faiss

    shard = faiss.deserialize_index(data)  # kept referenced: the IVF extracted from it does not own it
    ivf.merge_from(faiss.extract_index_ivf(shard), 0)
    del shard


def _merge_on_disk(index: FunnelIndex, ivf: Any, files: list[str], ivfdata: str) -> None:
    """FAISS' on-disk merge of the filled shards' files, then read back into ``ivf``'s own lists.

    :func:`faiss.contrib.ondisk.merge_ondisk` memory-maps the shard files and writes
    every list once into an ``OnDiskInvertedLists`` file; that file is copied list by
    list into an ``ArrayInvertedLists`` (the form a locally built index is saved in),
    and the caller deletes it.
    """
    import faiss
    from faiss.contrib.ondisk import merge_ondisk

    with _stdout_to_stderr():  # OnDiskInvertedLists prints "resizing ..." to C stdout: keep --json clean
        merge_ondisk(index.index, files, ivfdata)
    lists = faiss.ArrayInvertedLists(ivf.nlist, ivf.code_size)
    lists.merge_from(ivf.invlists, 0)
    ivf.replace_invlists(lists, True)
    lists.this.disown()


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what C code writes to file descriptor 1 to descriptor 2 meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        try:  # C stdio buffers what it printed: flush it while descriptor 1 is still stderr
            import ctypes

            ctypes.CDLL(None).fflush(None)
        except (OSError, AttributeError):  # pragma: no cover - no C library to ask
            pass
        os.dup2(saved, 1)
        os.close(saved)


# -- worker side (run by Ray tasks; module-level so that workers import them by name) -------


def _pieces(piece_refs: list[tuple[Any, Any]]) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    import ray

    for v_ref, r_ref in piece_refs:
        yield ray.get(v_ref), ray.get(r_ref)


def _fill_ivf_shard(blob: np.ndarray, spec: str, dim: int, metric: str,
                    piece_refs: list[tuple[Any, Any]]) -> tuple[np.ndarray, tuple[str, int, float]]:
    """Deserialise the trained index, add this shard's pieces, return it serialised."""
    import faiss

    t0 = time.perf_counter()
    ix = FunnelIndex(spec, dim, metric)
    ix.index = faiss.deserialize_index(blob)
    for vectors, rows in _pieces(piece_refs):
        ix.add(vectors, rows)
    return faiss.serialize_index(ix.index), (node_id(), ix.ntotal, time.perf_counter() - t0)


def _build_hnsw_shard(dim: int, metric: str, m: int, ef_construction: int,
                      piece_refs: list[tuple[Any, Any]]) -> tuple[np.ndarray, tuple[str, int, float]]:
    """Build this shard's HNSW graph from its pieces in one add, return it serialised.

    One add, as :attr:`HNSWIndex.ADD_AT_ONCE` asks: FAISS inserts one add's rows level by level in a
    random order, and a graph grown piece by piece in the store's order has a lower recall. The
    graph keeps a copy of the vectors anyway, so gathering the shard's pieces at most doubles them.
    """
    import faiss

    t0 = time.perf_counter()
    graph = HNSWIndex(dim, Metric.parse(metric), HNSWParams(m=m, ef_construction=ef_construction))
    pieces = list(_pieces(piece_refs))
    if pieces:
        graph.add(np.concatenate([v for v, _ in pieces]), np.concatenate([r for _, r in pieces]))
    del pieces
    return faiss.serialize_index(graph.index), (node_id(), graph.ntotal, time.perf_counter() - t0)
