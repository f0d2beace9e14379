"""Measure on Ray: the kNN graph as a blocked tile join, the moment pass as a map and a sum.

Two heavy steps of ``diagnose`` and ``compare`` run across a Ray cluster, each
giving what the local path gives:

* :func:`knn_graph_ray`, the exact k-nearest-neighbour graph behind hubness and
  local intrinsic dimension. The prepared rows (:func:`repspace.core.knn.prepare_rows`)
  are cut into blocks, each put in the object store once; one task per
  (query block, base block) tile finds the tile's ``k + 1`` best by
  :func:`repspace.core.exact.exact_search` and scores them pair by pair in
  float64 (the arithmetic of the local re-scoring, so a pair has the same score
  in every tile and every blocking); a tree of merge tasks per query block
  keeps the ``k + 1`` best by (score desc, row asc) and the last one removes
  the item itself (:func:`repspace.core.knn.merge_candidates`). The graph is
  therefore the one :func:`repspace.core.knn.knn_graph` computes with
  ``exact=True``. A task holds two blocks; the driver holds the ``(n, k)`` result.
* :func:`moments_ray`, the one streamed pass behind CKA, debiased CKA,
  Procrustes and SVCCA (:mod:`repspace.core.moments`). The driver makes one
  plan (pivots, power-of-two scales, product dtype) from the first rows, every
  shard of aligned rows of ``X`` and ``Y`` is summed on a worker in float64
  (:func:`repspace.core.moments.accumulate`), and the driver adds the shards'
  sums in shard order (:func:`repspace.core.moments.add_sums`). The measures
  are then the local functions themselves.

:class:`RayBackend` is a :class:`repspace.core.backend.Backend` that answers
the kNN graphs and/or moment passes it is handed with these; :func:`ray_backend`
opens a Ray session and yields one, which a caller passes explicitly
(``backend=``) to the engine functions (``hubness``, ``diagnose``, ``compare``,
``cka_linear``...). :func:`compare_ray` and the workflows' ``backend="ray"`` use
it. Ray is imported only when one of these runs.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.arrays import as_matrix, block_rows, check_pair
from repspace.core.checks import check_scalar, positive_int
from repspace.core.errors import BackendError, InputError
from repspace.core.exact import exact_search
from repspace.core.backend import LOCAL
from repspace.core.knn import KnnGraph, merge_candidates, prepare_rows
from repspace.core.limits import RESCORE_ENTRIES
from repspace.core.moments import MomentPlan, Moments, accumulate, add_sums
from repspace.core.moments import moments as streamed_moments
from repspace.core.space import Metric
from repspace.workflows.distributed.backend import node_id, one_line, ray_session

if TYPE_CHECKING:
    from repspace.engines.compare import Comparison

__all__ = ["BLOCK_ROWS", "MERGE_FAN_IN", "RayBackend", "RayKnnGraph", "RayRun", "compare_ray", "knn_graph_ray",
           "moments_ray", "ray_backend"]

#: Rows per block of the tile join: a tile's float32 score block is at most 8192² (256 MiB).
BLOCK_ROWS = 8192
#: Partial top-k lists one merge task combines (bounds a merge task's memory to this many tiles' results).
MERGE_FAN_IN = 8


@dataclass(frozen=True, eq=False)
class RayKnnGraph(KnnGraph):
    """A :class:`~repspace.core.knn.KnnGraph` computed on Ray, with where its tiles ran.

    Attributes
    ----------
    tiles_by_node : dict
        Ray node id → tiles (query block × base block) that ran there.
    blocks : int
        Row blocks the items were cut into (``blocks²`` tiles).
    seconds : float
        Wall time of the join, from the first put to the last merged block.

    Examples
    --------
    >>> g = RayKnnGraph(np.zeros((2, 1), np.int64), np.zeros((2, 1), np.float32), "l2", "exact",
    ...                 tiles_by_node={"n1": 1}, blocks=1)
    >>> g.to_dict()["backend"], g.to_dict()["tiles_by_node"]
    ('ray', {'n1': 1})
    """

    tiles_by_node: dict[str, int] = field(default_factory=dict, repr=False)
    blocks: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """:meth:`KnnGraph.to_dict` plus ``{"backend": "ray", "blocks", "tiles_by_node"}``."""
        return {**super().to_dict(), "backend": "ray", "blocks": int(self.blocks),
                "tiles_by_node": dict(self.tiles_by_node)}


@dataclass
class RayRun:
    """What a :class:`RayBackend` sent to Ray: filled in as graphs and passes run.

    Attributes
    ----------
    graphs : list of RayKnnGraph
        Every kNN graph built on Ray.
    moment_passes : int
        Moment passes mapped over shards.
    shards : int
        Shards summed, over all passes.

    Examples
    --------
    A backend's ``run`` (see :func:`ray_backend`) after one graph of four tiles on two nodes and
    one moment pass over three shards:

    >>> g = RayKnnGraph(np.zeros((4, 1), np.int64), np.zeros((4, 1), np.float32), "cosine", "exact",
    ...                 tiles_by_node={"node-a": 3, "node-b": 1}, blocks=2)
    >>> run = RayRun([g], moment_passes=1, shards=3)
    >>> run.tiles_by_node(), run.to_dict()["graphs"], run.to_dict()["shards"]
    ({'node-a': 3, 'node-b': 1}, 1, 3)
    """

    graphs: list[RayKnnGraph] = field(default_factory=list)
    moment_passes: int = 0
    shards: int = 0

    def tiles_by_node(self) -> dict[str, int]:
        """Tiles per Ray node id, over every graph."""
        total: Counter[str] = Counter()
        for g in self.graphs:
            total.update(g.tiles_by_node)
        return dict(total)

    def to_dict(self) -> dict[str, Any]:
        """``{"backend": "ray", "graphs", "tiles_by_node", "moment_passes", "shards"}``."""
        return {"backend": "ray", "graphs": len(self.graphs), "tiles_by_node": self.tiles_by_node(),
                "moment_passes": self.moment_passes, "shards": self.shards}


# -- the kNN graph as a tile join ---------------------------------------------------------------------------


def knn_graph_ray(X: Any, k: int, *, metric: Metric | str = "cosine", block_rows: int = BLOCK_ROWS,
                  fan_in: int = MERGE_FAN_IN, address: str | None = None) -> RayKnnGraph:
    """The exact ``k``-nearest-neighbour graph of ``X``, as a blocked tile join on Ray.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row (an array or a memory map, read block by block);
        finite; ``n > k``.
    k : int
        Neighbours per item, the item itself excluded.
    metric : ``cosine``, ``ip`` or ``l2``
        As :func:`repspace.core.knn.knn_graph`.
    block_rows : int
        Rows per block; ``⌈n / block_rows⌉²`` tile tasks, each holding two blocks.
    fan_in : int
        Partial lists combined per merge task (``≥ 2``).
    address : str, optional
        The Ray cluster (see :func:`~repspace.workflows.distributed.backend.ray_session`);
        an initialised Ray is used as it is.

    Returns
    -------
    RayKnnGraph
        The graph :func:`repspace.core.knn.knn_graph` returns with ``exact=True``
        (same indices, distances, ties to the lower row), whatever the blocking,
        with the tiles each Ray node ran.

    Raises
    ------
    InputError
        As :func:`repspace.core.knn.knn_graph`, or ``block_rows < 1``, ``fan_in < 2``.
    BackendError
        Ray missing, unreachable, or a task lost.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.0, 0.0]])
    >>> g = knn_graph_ray(X, k=2, block_rows=2)  # doctest: +SKIP
    >>> g.indices.tolist(), sum(g.tiles_by_node.values())  # doctest: +SKIP
    ([[1, 2], [0, 2], [1, 0], [0, 1]], 4)
    """
    metric = Metric.parse(metric)
    k = positive_int(k, "k")
    block_rows = positive_int(block_rows, "block_rows")
    check_scalar(fan_in, "fan_in", int, low=2)
    X = as_matrix(X)
    n = X.shape[0]
    if n <= k:
        raise InputError(f"k={k} needs at least {k + 1} items (an item's neighbours exclude itself), got {n}")
    with ray_session(address) as ray:
        return _tile_join(ray, X, k, metric, block_rows, fan_in)


def _tile_join(ray: Any, X: np.ndarray, k: int, metric: Metric, rows: int, fan_in: int) -> RayKnnGraph:
    n = X.shape[0]
    kk = k + 1  # the item itself is among them, removed at the end as the local path does
    search = "l2" if metric is Metric.L2 else "ip"
    bounds = [(lo, min(n, lo + rows)) for lo in range(0, n, rows)]
    start = time.perf_counter()
    tile = ray.remote(num_cpus=1, num_returns=2)(_tile)
    top = ray.remote(num_cpus=1)(_top)
    final = ray.remote(num_cpus=1)(_final)
    out_i = np.empty((n, k), np.int64)
    out_d = np.empty((n, k), np.float32)
    try:
        blocks = [ray.put(prepare_rows(X[lo:hi], metric)) for lo, hi in bounds]
        nodes = []
        pending = {}
        for qi, (qlo, qhi) in enumerate(bounds):
            parts = []
            for bi, (blo, _) in enumerate(bounds):
                part, node = tile.remote(blocks[qi], blocks[bi], blo, kk, search)
                parts.append(part)
                nodes.append(node)
            while len(parts) > fan_in:  # a tree of merges: no task holds more than fan_in lists
                parts = [top.remote(kk, *parts[j:j + fan_in]) if len(parts[j:j + fan_in]) > 1 else parts[j]
                         for j in range(0, len(parts), fan_in)]
            pending[final.remote(qlo, k, metric.value, *parts)] = (qlo, qhi)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            qlo, qhi = pending.pop(done[0])
            out_i[qlo:qhi], out_d[qlo:qhi] = ray.get(done[0])
        counts = Counter(ray.get(nodes))
    except ray.exceptions.RayError as e:
        raise BackendError(f"a Ray task of the kNN graph failed: {one_line(e)}") from None
    return RayKnnGraph(out_i, out_d, metric.value, "exact", tiles_by_node=dict(sorted(counts.items())),
                       blocks=len(bounds), seconds=time.perf_counter() - start)


def _pair_scores(q: np.ndarray, xb: np.ndarray, cand: np.ndarray, l2: bool) -> np.ndarray:
    """Float64 scores of each query against its candidate rows: ``q·x`` or ``−‖q − x‖²``.

    The arithmetic of :mod:`repspace.core.exact`'s re-scoring (one ``einsum`` per
    pair over float64 copies), so a pair scores the same in every tile as in a
    local search, and ties break the same way.
    """
    out = np.empty(cand.shape, np.float64)
    step = max(1, RESCORE_ENTRIES // max(1, cand.shape[1] * xb.shape[1]))
    for lo in range(0, q.shape[0], step):
        c = cand[lo:lo + step]
        q64 = q[lo:lo + step].astype(np.float64)
        x64 = xb[c].astype(np.float64)
        if l2:
            x64 -= q64[:, None, :]
            out[lo:lo + step] = -np.einsum("pkd,pkd->pk", x64, x64)
        else:
            out[lo:lo + step] = np.einsum("pkd,pd->pk", x64, q64)
    return out


def _tile(q: np.ndarray, xb: np.ndarray, offset: int, kk: int,
          search: str) -> tuple[tuple[np.ndarray, np.ndarray], str]:
    """One tile: each query's ``kk`` best rows of this base block, with float64 scores and global rows."""
    _, idx = exact_search(q, xb, kk, search)
    scores = _pair_scores(q, xb, idx, search == "l2")
    return (scores, idx + offset), node_id()


def _top(kk: int, *parts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The ``kk`` best of several partial lists, by (score desc, row asc)."""
    s = np.concatenate([p[0] for p in parts], axis=1)
    i = np.concatenate([p[1] for p in parts], axis=1)
    order = np.lexsort((i, -s), axis=-1)[:, :kk]
    return np.take_along_axis(s, order, axis=1), np.take_along_axis(i, order, axis=1)


def _final(lo: int, k: int, metric: str, *parts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A query block's graph rows from its last partial lists: merged, itself removed, as distances."""
    s = np.concatenate([p[0] for p in parts], axis=1)
    i = np.concatenate([p[1] for p in parts], axis=1)
    return merge_candidates(s, i, np.arange(lo, lo + s.shape[0]), k, metric)


# -- the moment pass as map and reduce ---------------------------------------------------------------------


def moments_ray(X: Any, Y: Any, *, grams: bool = True, debiased: bool = False, precision: str = "auto",
                shards: int | Sequence[int] | None = None, address: str | None = None) -> Moments:
    """:func:`repspace.core.moments.moments` of ``X`` and ``Y``, its rows summed shard by shard on Ray.

    Parameters
    ----------
    X, Y : arrays of shape (n, d₁), (n, d₂)
        The same items, row for row.
    grams, debiased, precision
        As :func:`repspace.core.moments.moments`.
    shards : int, list of int or None
        Rows per shard, or the shards' sizes (summing to ``n``); default: about
        two shards per CPU of the cluster, each a whole number of the local
        pass's blocks (so float32 block products are those of the local pass, up to the order in which the
        BLAS sums them, which its kernels and thread count decide: about float32 eps x sqrt(n) apart).
    address : str, optional
        The Ray cluster (see :func:`~repspace.workflows.distributed.backend.ray_session`).

    Returns
    -------
    Moments
        Equal to the local pass's up to the order of float64 additions (about
        1e-15 relative) when products are float64; with float32 products and
        shards cut off the local blocks, to float32 rounding (about 1e-7).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((100, 3))
    >>> m = moments_ray(X, 2.0 * X, shards=[30, 70])  # doctest: +SKIP
    >>> from repspace.core.moments import moments
    >>> np.allclose(m.cxx, moments(X, 2.0 * X).cxx, rtol=1e-12)  # doctest: +SKIP
    True
    """
    X, Y = check_pair(X, Y, scan=False)
    with ray_backend(address, knn=False, shards=shards) as backend:
        return streamed_moments(X, Y, grams=grams, debiased=debiased, precision=precision, backend=backend)


def _shard_bounds(n: int, d: int, shards: int | Sequence[int] | None, cpus: int) -> list[tuple[int, int]]:
    if shards is None:
        step = block_rows(d)
        per = max(1, math.ceil(n / step / max(1, 2 * cpus))) * step
        return [(lo, min(n, lo + per)) for lo in range(0, n, per)]
    if isinstance(shards, (int, np.integer)) and not isinstance(shards, bool):
        per = positive_int(int(shards), "shards")
        return [(lo, min(n, lo + per)) for lo in range(0, n, per)]
    sizes = [int(s) for s in shards]
    if any(s < 1 for s in sizes) or sum(sizes) != n:
        raise InputError(f"shard sizes must be positive and sum to the {n} rows, got {sizes}")
    edges = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    return list(zip(edges[:-1], edges[1:]))


def _shard_sums(X: np.ndarray, Y: np.ndarray, p: MomentPlan) -> dict[str, Any]:
    return accumulate(X, Y, p)


def _map_reduce(ray: Any, run: RayRun, shards: int | Sequence[int] | None, X: Any, Y: Any,
                p: MomentPlan) -> dict[str, Any]:
    """The sums of a moment pass over all rows: shards summed on workers, added here in shard order."""
    cpus = int(ray.cluster_resources().get("CPU", 1) or 1)
    bounds = _shard_bounds(X.shape[0], X.shape[1] + Y.shape[1], shards, cpus)
    task = ray.remote(num_cpus=1)(_shard_sums)
    try:
        plan_ref = ray.put(p)
        refs = [task.remote(np.asarray(X[lo:hi]), np.asarray(Y[lo:hi]), plan_ref) for lo, hi in bounds]
        total = ray.get(refs[0])
        for ref in refs[1:]:  # in shard order (a fixed sum), one shard's sums held at a time
            total = add_sums(total, ray.get(ref))
    except ray.exceptions.RayError as e:
        raise BackendError(f"a Ray task of the moment pass failed: {one_line(e)}") from None
    run.moment_passes += 1
    run.shards += len(bounds)
    return total


# -- the backend ------------------------------------------------------------------------------------------


class RayBackend:
    """A :class:`repspace.core.backend.Backend` on a connected Ray: the tile join and the shard map.

    Parameters
    ----------
    ray : module
        The ``ray`` module, initialised (:func:`~repspace.workflows.distributed.backend.ray_session`).
    knn : bool
        Build kNN graphs on Ray (always exact: ``exact=False`` is refused);
        ``False`` builds them here (:data:`repspace.core.backend.LOCAL`).
    moments : bool
        Sum moment passes shard by shard on Ray; ``False`` sums them here.
    block_rows : int
        Rows per block of the tile join.
    shards : int, list of int or None
        The shards of a moment pass, as :func:`moments_ray` takes them.

    Attributes
    ----------
    name : str
        ``ray``.
    run : RayRun
        What was sent to Ray so far (graphs, tiles per node, shards).

    Examples
    --------
    >>> from repspace.engines.geometry import hubness
    >>> X = np.random.default_rng(0).standard_normal((500, 8))
    >>> with ray_backend() as backend:  # doctest: +SKIP
    ...     h = hubness(X, k=5, backend=backend)
    >>> len(backend.run.graphs), h.k  # doctest: +SKIP
    (1, 5)
    """

    name = "ray"

    def __init__(self, ray: Any, *, knn: bool = True, moments: bool = True, block_rows: int = BLOCK_ROWS,
                 shards: int | Sequence[int] | None = None) -> None:
        self.ray = ray
        self.knn = bool(knn)
        self.moments = bool(moments)
        self.block_rows = positive_int(block_rows, "block_rows")
        self.shards = shards
        self.run = RayRun()

    def knn_graph(self, X: np.ndarray, k: int, *, metric: str, exact: bool | None, recall_sample: int,
                  seed: int | None) -> KnnGraph:
        """The exact graph as a tile join on Ray (:func:`knn_graph_ray`), or here when built with ``knn=False``."""
        if not self.knn:
            return LOCAL.knn_graph(X, k, metric=metric, exact=exact, recall_sample=recall_sample, seed=seed)
        if exact is False:
            raise InputError("the Ray backend builds exact kNN graphs only; leave out --hnsw / exact=False")
        g = _tile_join(self.ray, as_matrix(X), int(k), Metric.parse(metric), self.block_rows, MERGE_FAN_IN)
        self.run.graphs.append(g)
        return g

    def accumulate(self, X: Any, Y: Any, plan: MomentPlan) -> dict[str, Any]:
        """The pass's sums from shards summed on Ray workers, or here when built with ``moments=False``."""
        if not self.moments:
            return LOCAL.accumulate(X, Y, plan)
        return _map_reduce(self.ray, self.run, self.shards, X, Y, plan)

    def __repr__(self) -> str:
        return f"RayBackend(knn={self.knn}, moments={self.moments})"


@contextmanager
def ray_backend(address: str | None = None, *, knn: bool = True, moments: bool = True,
                block_rows: int = BLOCK_ROWS, shards: int | Sequence[int] | None = None) -> Iterator[RayBackend]:
    """A :class:`RayBackend` on a Ray session held open for this block: pass it as ``backend=``.

    Parameters
    ----------
    address : str, optional
        The Ray cluster (see :func:`~repspace.workflows.distributed.backend.ray_session`);
        an initialised Ray is used as it is, a Ray started here is shut down on exit.
    knn, moments, block_rows, shards
        As :class:`RayBackend`.

    Yields
    ------
    RayBackend
        Its ``run`` is filled in as graphs and passes run (tiles per node, shards).

    Examples
    --------
    >>> from repspace.engines.compare import compare
    >>> X = np.random.default_rng(0).standard_normal((300, 6))
    >>> with ray_backend(knn=False, shards=100) as backend:  # doctest: +SKIP
    ...     c = compare(X, 2.0 * X, ["cka_linear"], backend=backend)
    >>> round(c["cka_linear"], 10), backend.run.shards  # doctest: +SKIP
    (1.0, 3)
    """
    with ray_session(address) as ray:
        yield RayBackend(ray, knn=knn, moments=moments, block_rows=block_rows, shards=shards)


def compare_ray(X: Any, Y: Any, measures: str | Sequence[str] | None = None, k: int = 10, *,
                address: str | None = None, shards: int | Sequence[int] | None = None,
                **options: Any) -> Comparison:
    """:func:`repspace.engines.compare.compare` with its moment pass (CKA, Procrustes, SVCCA) on Ray.

    The kNN measures and RSA run here as before; ``options`` go to
    :func:`~repspace.engines.compare.compare`.

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((300, 6))
    >>> round(compare_ray(X, 2.0 * X, ["cka_linear"])["cka_linear"], 10)  # doctest: +SKIP
    1.0
    """
    from repspace.engines.compare import compare

    with ray_backend(address, knn=False, shards=shards) as backend:
        return compare(X, Y, measures, k, backend=backend, **options)
