"""The k-nearest-neighbour graph of a space: each item's ``k`` nearest other items.

Hubness (``hubness.*``) and local intrinsic dimension (``intrinsic_dimension.*``)
are functions of this graph. It is exact (blocked BLAS through
:func:`repspace.core.exact.exact_search`) up to :data:`EXACT_MAX` items and a
FAISS HNSW graph above, whose recall@k against exact search on a random sample
of items is measured and carried with the graph (``knn.recall``), so every
metric built on it can say how approximate it is. Memory is linear in ``n``:
no ``n × n`` matrix is ever formed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.arrays import as_matrix, max_abs, row_blocks, unit_rows
from repspace.core.checks import positive_int
from repspace.core.errors import InputError
from repspace.core.exact import exact_search
from repspace.core.limits import EXACT_MAX_ITEMS as EXACT_MAX  # the public name of this module
from repspace.core.limits import RESCORE_ENTRIES
from repspace.core.space import Metric

if TYPE_CHECKING:
    from repspace.core.backend import Backend

__all__ = ["EXACT_MAX", "HNSW_EF_CONSTRUCTION", "HNSW_EF_MAX", "HNSW_EF_SEARCH", "HNSW_M", "RECALL_TARGET",
           "KnnGraph", "knn_graph", "local_graph", "merge_candidates", "prepare_rows"]

#: FAISS ``IndexHNSWFlat`` links per node. 16 builds about twice as fast as 32 (100k MiniLM
#: vectors: 22-28 s against 42 s here) and still reaches recall@20 0.976 at efSearch 64.
HNSW_M = 16
#: HNSW beam width while building.
HNSW_EF_CONSTRUCTION = 64
#: First HNSW beam width while searching; doubled (up to :data:`HNSW_EF_MAX`) until the recall
#: measured on the sample reaches :data:`RECALL_TARGET`.
HNSW_EF_SEARCH = 64
#: Largest beam the recall target may ask for.
HNSW_EF_MAX = 1024
#: Recall@k an HNSW graph must reach on its sample before it is used.
RECALL_TARGET = 0.95
#: Queries searched at once (bounds the result and re-scoring buffers).
QUERY_BLOCK = 8192
#: ``d · max|x|²`` above this would overflow float32 dot products in FAISS and BLAS.
FLOAT32_SAFE = 1e36
#: Relative tolerance when deciding that a returned neighbour is as near as the exact k-th.
RECALL_TOL = 1e-6


@dataclass(frozen=True, eq=False)
class KnnGraph:
    """Each item's ``k`` nearest other items, nearest first.

    Attributes
    ----------
    indices : ndarray of shape (n, k), int64
        Row numbers of the neighbours; an item is never its own neighbour;
        equal distances go to the lower row (exact graphs).
    distances : ndarray of shape (n, k), float32
        ``cosine``: ``1 − cos`` (in ``[0, 2]``); ``ip``: ``−x·y``; ``l2``: the
        Euclidean distance. Non-decreasing along each row.
    metric : str
        ``cosine``, ``ip`` or ``l2``.
    method : str
        ``exact`` or ``hnsw``.
    recall : float or None
        For ``hnsw``: recall@k against exact search on a sample of items
        (a neighbour counts when it is as near as the exact k-th, so ties do
        not count as misses); ``None`` for an exact graph.
    recall_sample : int
        Items the recall was measured on (0 for an exact graph).

    Examples
    --------
    >>> g = knn_graph(np.array([[0.0], [1.0], [3.0]]), k=1, metric="l2")
    >>> g.indices.ravel().tolist(), g.distances.ravel().tolist()
    ([1, 0, 1], [1.0, 1.0, 2.0])
    >>> g.to_dict()
    {'method': 'exact', 'metric': 'l2', 'k': 1, 'n': 3, 'recall': None, 'recall_sample': 0}
    """

    indices: np.ndarray = field(repr=False)
    distances: np.ndarray = field(repr=False)
    metric: str
    method: str
    recall: float | None = None
    recall_sample: int = 0

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.indices.shape[0])

    @property
    def k(self) -> int:
        """Neighbours per item."""
        return int(self.indices.shape[1])

    def to_dict(self) -> dict[str, Any]:
        """``{"method", "metric", "k", "n", "recall", "recall_sample"}`` (the arrays are left out)."""
        return {"method": self.method, "metric": self.metric, "k": self.k, "n": self.n,
                "recall": None if self.recall is None else float(self.recall),
                "recall_sample": int(self.recall_sample)}

    def __repr__(self) -> str:
        rec = "" if self.recall is None else f", recall={self.recall:.4f}"
        return f"KnnGraph(n={self.n}, k={self.k}, metric={self.metric!r}, method={self.method!r}{rec})"


def knn_graph(X: Any, k: int, *, metric: Metric | str = "cosine", exact: bool | None = None,
              recall_sample: int = 1000, seed: int | None = 0, backend: Backend | None = None) -> KnnGraph:
    """The ``k`` nearest other items of every item of ``X``.

    The input is checked here; the graph of a checked matrix is built by
    ``backend`` (:class:`repspace.core.backend.Backend`), this process by default.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row; finite; ``n > k``.
    k : int
        Neighbours per item (``k ≥ 1``); the item itself is excluded.
    metric : ``cosine``, ``ip``, ``l2`` or ``poincare`` (hyperbolic distance; always an exact scan)
        ``cosine`` treats a zero row as the zero vector: its cosine with every
        row is 0 (distance 1), never NaN.
    exact : bool or None
        ``None``: exact search when ``n ≤ EXACT_MAX`` (50,000), else HNSW.
        ``True`` / ``False`` force one or the other.
    recall_sample : int
        For HNSW: items whose exact neighbours are computed to measure recall@k
        (all items when ``n`` is smaller).
    seed : int or None
        Seed of the recall sample.
    backend : Backend, optional
        Where the graph is built (``cosine``, ``ip`` and ``l2``; a ``poincare``
        graph is always scanned here): ``None``, this process (as
        :data:`repspace.core.backend.LOCAL`, by :func:`local_graph`); the Ray backend builds exact graphs
        only (:class:`repspace.workflows.distributed.measure.RayBackend`).

    Returns
    -------
    KnnGraph
        ``indices`` (n, k) int64 and ``distances`` (n, k) float32, nearest first.
        Exact: equal distances go to the lower row. HNSW (FAISS
        ``IndexHNSWFlat``, M = 16, efConstruction = 64, efSearch from 64,
        doubled until the recall measured on the sample reaches 0.95):
        candidates are re-scored pair by pair (float32, as FAISS computes
        them) and sorted with ties to the lower row; the graph may miss true
        neighbours, which ``recall`` measures.

    Raises
    ------
    InputError
        ``X`` is not a finite 2-d numeric array, ``k < 1``, ``n ≤ k``, an
        unknown metric, or (``ip``/``l2``) values so large that float32 dot
        products overflow (rescale ``X``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.0, 0.0]])
    >>> g = knn_graph(X, k=2)
    >>> g.indices.tolist()
    [[1, 2], [0, 2], [1, 0], [0, 1]]
    >>> g.distances.astype(float).round(3).tolist()
    [[0.006, 1.0], [0.006, 0.89], [0.89, 1.0], [1.0, 1.0]]

    A backend receives the checked matrix and the metric's name:

    >>> class Noted:
    ...     name = "noted"
    ...     seen = []
    ...     def knn_graph(self, X, k, **options):
    ...         self.seen.append((len(X), k, options["metric"]))
    ...         return local_graph(X, k, **options)
    >>> knn_graph(np.eye(3), k=1, metric="l2", backend=Noted()).method, Noted.seen
    ('exact', [(3, 1, 'l2')])
    """
    metric = Metric.parse(metric)
    k = positive_int(k, "k")
    recall_sample = int(recall_sample)
    if recall_sample < 1:
        raise InputError(f"recall_sample must be ≥ 1, got {recall_sample}")
    X = as_matrix(X)
    n = X.shape[0]
    if n <= k:
        raise InputError(f"k={k} needs at least {k + 1} items (an item's neighbours exclude itself), got {n}")
    if metric is Metric.POINCARE:  # hyperbolic distance: exact scan here, whatever n or backend
        if exact is False:
            metric.require_vector_space("an HNSW neighbour graph")
        scores, idx = _exact_graph(np.ascontiguousarray(X, dtype=np.float32), k, metric.value)
        return KnnGraph(idx, scores.astype(np.float32), metric.value, "exact")
    build = local_graph if backend is None else backend.knn_graph  # None: LOCAL's work, without its indirection
    return build(X, k, metric=metric.value, exact=exact, recall_sample=recall_sample, seed=seed)


def local_graph(X: np.ndarray, k: int, *, metric: Metric | str, exact: bool | None = None,
                recall_sample: int = 1000, seed: int | None = 0) -> KnnGraph:
    """The graph :func:`knn_graph` returns, built in this process from a checked matrix (the local backend's work).

    ``X`` is finite and 2-d with ``n > k`` (:func:`knn_graph` checks it);
    ``metric`` is ``cosine``, ``ip`` or ``l2``. Exact when ``exact`` says so or
    ``n ≤ EXACT_MAX``, else HNSW with its measured recall.

    Examples
    --------
    >>> local_graph(np.array([[0.0], [1.0], [3.0]]), 1, metric="l2").indices.ravel().tolist()
    [1, 0, 1]
    """
    metric = Metric.parse(metric)
    n = X.shape[0]
    x = _prepare(X, metric)
    search_metric = "l2" if metric is Metric.L2 else "ip"
    use_exact = n <= EXACT_MAX if exact is None else bool(exact)
    if use_exact:
        scores, idx = _exact_graph(x, k, search_metric)
        return KnnGraph(idx, _to_distances(scores, metric), metric.value, "exact")
    scores, idx, recall, m = _hnsw_graph(x, k, search_metric, recall_sample, seed)
    return KnnGraph(idx, _to_distances(scores, metric), metric.value, "hnsw", recall, m)


def prepare_rows(X: Any, metric: Metric | str) -> np.ndarray:
    """The rows of ``X`` as :func:`knn_graph` searches them: float32, unit rows for ``cosine``.

    Row by row, so a block of rows prepared alone equals the same rows of the
    whole array prepared at once (a distributed graph prepares block by block).
    Searched with ``ip`` for ``cosine`` and ``ip``, with ``l2`` for ``l2``.

    Raises
    ------
    InputError
        ``ip``/``l2`` values so large that float32 dot products overflow.

    Examples
    --------
    >>> prepare_rows(np.array([[3.0, 4.0], [0.0, 0.0]]), "cosine").tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    return _prepare(np.asarray(X), Metric.parse(metric))


def merge_candidates(scores: np.ndarray, indices: np.ndarray, rows: np.ndarray, k: int,
                     metric: Metric | str) -> tuple[np.ndarray, np.ndarray]:
    """The graph's rows for some items, from candidate neighbours gathered anywhere (e.g. blocks of a base).

    Parameters
    ----------
    scores : ndarray (m, c), float64
        Exact scores of the candidates of the prepared rows (:func:`prepare_rows`):
        ``x·y`` for ``cosine`` and ``ip``, ``−‖x − y‖²`` for ``l2``; larger is nearer.
    indices : ndarray (m, c), int64
        Their rows; every item's own row and its ``k`` best others among them (``c > k``).
    rows : ndarray (m,)
        The items' own rows.
    k : int
    metric : ``cosine``, ``ip`` or ``l2``

    Returns
    -------
    indices : ndarray (m, k), int64
    distances : ndarray (m, k), float32
        As :func:`knn_graph` makes them: the ``k + 1`` best by (score desc, row
        asc), the item itself removed (the last when absent), converted to
        distances.

    Examples
    --------
    >>> s = np.array([[1.0, 0.5, 0.5, 0.1]])
    >>> i, d = merge_candidates(s, np.array([[0, 7, 3, 2]]), np.array([0]), 2, "cosine")
    >>> i.tolist(), d.tolist()
    ([[3, 7]], [[0.5, 0.5]])
    """
    metric = Metric.parse(metric)
    order = np.lexsort((indices, -scores), axis=-1)[:, :k + 1]
    s = np.take_along_axis(scores, order, axis=1)
    i = np.take_along_axis(indices, order, axis=1)
    s = np.sqrt(np.maximum(-s, 0.0)).astype(np.float32) if metric is Metric.L2 else s.astype(np.float32)
    s, i = _drop_self(s, i, np.asarray(rows), k)
    return i, _to_distances(s, metric)


def _prepare(X: np.ndarray, metric: Metric) -> np.ndarray:
    """Rows as they are searched, float32 C-contiguous: unit rows for cosine (computed in float64)."""
    n, d = X.shape
    if metric is Metric.COSINE:
        out = np.empty((n, d), np.float32)
        for start, block in row_blocks(X):
            out[start:start + len(block)] = unit_rows(block)
        return out
    top = max_abs(X)
    if d * top * top > FLOAT32_SAFE:
        raise InputError(f"X has values up to {top:.3g}: too large for float32 {metric.value} search; rescale X")
    return np.ascontiguousarray(X, dtype=np.float32)


def _to_distances(scores: np.ndarray, metric: Metric) -> np.ndarray:
    """From scores (similarities for cosine/ip, Euclidean distances for l2) to float32 distances."""
    s = scores.astype(np.float64)
    if metric is Metric.COSINE:
        return np.clip(1.0 - s, 0.0, 2.0).astype(np.float32)
    if metric is Metric.IP:
        return (-s).astype(np.float32)
    return s.astype(np.float32)


def _drop_self(scores: np.ndarray, idx: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """From ``k + 1`` results per row, remove the row itself (by index, not position); if it is
    absent (more than ``k`` items at least as near, e.g. duplicates), drop the last instead."""
    keep = idx != rows[:, None]
    absent = keep.all(axis=1)
    keep[absent, -1] = False
    m = len(rows)
    return scores[keep].reshape(m, k), idx[keep].reshape(m, k)


def _exact_graph(x: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    n = x.shape[0]
    out_s = np.empty((n, k), np.float32)
    out_i = np.empty((n, k), np.int64)
    for lo in range(0, n, QUERY_BLOCK):
        hi = min(n, lo + QUERY_BLOCK)
        s, i = exact_search(x[lo:hi], x, k + 1, metric)
        out_s[lo:hi], out_i[lo:hi] = _drop_self(s, i, np.arange(lo, hi), k)
    return out_s, out_i


def _rescore(x: np.ndarray, rows: np.ndarray, cand: np.ndarray, l2: bool) -> np.ndarray:
    """Scores (``x·y``, or ``−‖x − y‖²``) of each row against its candidates (``−1``: −inf), as float64.

    FAISS's ``fvec_inner_products_by_idx`` / ``fvec_L2sqr_by_idx`` compute them
    in float32 where the vectors lie (no gather of an ``(m, c, d)`` copy); the
    same arithmetic as the HNSW search itself, consistent for every pair.
    """
    import faiss

    m, c = cand.shape
    out32 = np.empty((m, c), np.float32)
    q = np.ascontiguousarray(x[rows])
    ids = np.ascontiguousarray(np.maximum(cand, 0), dtype=np.int64)
    by_idx = faiss.fvec_L2sqr_by_idx if l2 else faiss.fvec_inner_products_by_idx
    if m and c:
        by_idx(faiss.swig_ptr(out32), faiss.swig_ptr(q), faiss.swig_ptr(x), faiss.swig_ptr(ids), x.shape[1], m, c)
    out = out32.astype(np.float64)
    if l2:
        out = -out
    out[cand < 0] = -np.inf
    return out


def _hnsw_graph(x: np.ndarray, k: int, metric: str, sample: int,
                seed: int | None) -> tuple[np.ndarray, np.ndarray, float, int]:
    """The HNSW graph, searched with a beam doubled until the sampled recall reaches the target.

    Returns scores, indices, the recall and the sample size.
    """
    import faiss

    d = x.shape[1]
    l2 = metric == "l2"
    index = faiss.IndexHNSWFlat(d, HNSW_M, faiss.METRIC_L2 if l2 else faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    index.add(x)
    truth = _sample_truth(x, k, metric, sample, seed)
    ef = max(HNSW_EF_SEARCH, k + 1)
    while True:
        scores, idx = _search_graph(index, x, k, metric, ef)
        recall, m = _recall(truth, scores, k, metric)
        if recall >= RECALL_TARGET or ef >= HNSW_EF_MAX:
            return scores, idx, recall, m
        ef = min(2 * ef, HNSW_EF_MAX)


def _search_graph(index: Any, x: np.ndarray, k: int, metric: str, ef: int) -> tuple[np.ndarray, np.ndarray]:
    """FAISS HNSW candidates (k + 1 per item), re-scored exactly, self removed, ties to the lower row."""
    import faiss

    n = x.shape[0]
    l2 = metric == "l2"
    params = faiss.SearchParametersHNSW(efSearch=ef)
    out_s = np.empty((n, k), np.float64)
    out_i = np.empty((n, k), np.int64)
    short: list[np.ndarray] = []
    for lo in range(0, n, QUERY_BLOCK):
        hi = min(n, lo + QUERY_BLOCK)
        rows = np.arange(lo, hi)
        _, cand = index.search(x[lo:hi], k + 1, params=params)
        cand = cand.astype(np.int64)
        s = _rescore(x, rows, cand, l2)
        s[cand == rows[:, None]] = -np.inf  # itself: sorted last, then cut
        cand = np.where(np.isinf(s), np.iinfo(np.int64).max, cand)
        order = np.lexsort((cand, -s), axis=-1)[:, :k]
        out_s[lo:hi] = np.take_along_axis(s, order, axis=1)
        out_i[lo:hi] = np.take_along_axis(cand, order, axis=1)
        short.append(rows[np.isinf(out_s[lo:hi]).any(axis=1)])
    missing = np.concatenate(short)
    if len(missing):  # HNSW returned fewer than k others (rare): search those rows exactly
        s, i = exact_search(x[missing], x, k + 1, metric)
        s, i = _drop_self(s, i, missing, k)
        out_s[missing], out_i[missing] = (-(s.astype(np.float64) ** 2) if l2 else s), i
    if l2:
        out_s = np.sqrt(np.maximum(-out_s, 0.0))
    return out_s.astype(np.float32), out_i


def _sample_truth(x: np.ndarray, k: int, metric: str, sample: int,
                  seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``sample`` random rows and the score of each one's exact k-th neighbour (itself excluded)."""
    n = x.shape[0]
    m = min(sample, n)
    rows = np.sort(np.random.default_rng(seed).choice(n, size=m, replace=False))
    s, i = exact_search(x[rows], x, k + 1, metric)
    s, _ = _drop_self(s, i, rows, k)
    return rows, s[:, -1].astype(np.float64)


def _recall(truth: tuple[np.ndarray, np.ndarray], scores: np.ndarray, k: int, metric: str) -> tuple[float, int]:
    """Recall@k of the graph's scores on the sampled rows against their exact k-th neighbour.

    A returned neighbour counts as found when it is as near as the exact k-th
    neighbour (relative tolerance :data:`RECALL_TOL`), so that a different
    choice among equally near items is not a miss.
    """
    rows, kth = truth
    m = len(rows)
    got = scores[rows].astype(np.float64)
    tol = RECALL_TOL * (np.abs(kth) + 1.0)
    found = got <= (kth + tol)[:, None] if metric == "l2" else got >= (kth - tol)[:, None]
    recall = float(found.sum()) / (m * k)
    return (recall if math.isfinite(recall) else 0.0), m
