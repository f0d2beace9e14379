"""Ollivier-Ricci curvature of a space's kNN graph (Ollivier 2009; on embedding graphs, S053).

An edge ``(u, v)`` of a graph is positively curved when the neighbourhoods of ``u`` and ``v`` overlap or are
joined by many short paths, negatively curved when it is a bridge between regions. Each node ``x`` spreads a unit
of mass ``m_x``: ``alpha`` stays on ``x`` (idleness), ``1 − alpha`` is spread evenly over its neighbours. The
edge's curvature is ``κ(u, v) = 1 − W1(m_u, m_v) / d(u, v)``, with ``W1`` the Wasserstein-1 distance whose ground
cost is the graph's shortest-path (hop) distance, solved exactly by optimal transport (POT's network simplex, the
solver behind ``ot.emd2``). A node's curvature is the mean over its edges. These are the definitions of the
GraphRicciCurvature package's ``OllivierRicci`` with ``method="OTD"`` on an unweighted graph (every edge weight
1), which the tests check it against.

The graph is the kNN graph symmetrised by union (``u — v`` when either is among the other's ``k`` nearest),
unweighted. Every node of it has at least ``k`` neighbours, so no node is isolated and every node curvature is
defined. Two nodes of an edge are at distance 1 and every pair of their neighbours at most 3 hops apart
(``x — u — v — y``), so the costs are 0, 1, 2 or 3: 0 for the same node, 1 for adjacent ones, 2 for nodes with a
common neighbour, else 3. They are computed for all edges of one node at once by two sparse products (adjacency
and common neighbours of the node's closed neighbourhood against those of its neighbours'), so memory stays
bounded by one node's two-hop ball, never ``n × n``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.knn import KnnGraph, knn_graph
from repspace.core.progress import Progress, Tally

if TYPE_CHECKING:
    from repspace.core.space import Metric

__all__ = ["CURVATURE_BINS", "CURVATURE_QUANTILES", "DEFAULT_ALPHA", "CurvatureSummary", "RicciCurvature",
           "graph_ricci", "knn_ricci", "summarize", "union_edges"]

#: Idleness: the share of a node's mass that stays on it (GraphRicciCurvature's default, Lin-Lu-Yau use 0 < α < 1).
DEFAULT_ALPHA = 0.5
#: Network-simplex iterations per transport problem (``ot.emd2``'s ``numItermax`` default).
EMD_MAX_ITER = 100_000
#: Quantiles reported for edge and node curvature (``q05`` ... ``q95``).
CURVATURE_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: Histogram bins of edge curvature: width 0.1 over ``[−2, 1]``, the range of κ when costs are at most 3.
CURVATURE_BINS = np.round(np.linspace(-2.0, 1.0, 31), 10)
#: Cost-matrix entries built at once (float64: 32 MiB): the bound on the curvature's working memory beside the
#: graph; a block holds whole nodes' edge lists, so one node with more entries is a block alone.
BLOCK_COST_ENTRIES = 4 * 1024 * 1024


@dataclass(frozen=True)
class CurvatureSummary:
    """Mean, extremes and quantiles of a set of curvatures.

    Examples
    --------
    >>> summarize(np.array([-1.0, 0.0, 0.5, 1.0])).to_dict()["median"]
    0.25
    """

    mean: float
    min: float
    max: float
    quantiles: tuple[float, ...]

    def to_dict(self) -> dict[str, float]:
        """``{"mean", "min", "q05", "q25", "median", "q75", "q95", "max"}``."""
        names = ["q05", "q25", "median", "q75", "q95"]
        return {"mean": self.mean, "min": self.min, **dict(zip(names, self.quantiles)), "max": self.max}


def summarize(values: np.ndarray) -> CurvatureSummary:
    """The :class:`CurvatureSummary` of ``values`` (non-empty).

    Examples
    --------
    >>> s = summarize(np.array([0.0, 1.0]))
    >>> s.mean, s.min, s.max
    (0.5, 0.0, 1.0)
    """
    v = np.asarray(values, dtype=np.float64)
    q = np.quantile(v, CURVATURE_QUANTILES)
    return CurvatureSummary(float(v.mean()), float(v.min()), float(v.max()), tuple(round(float(x), 12) for x in q))


@dataclass(frozen=True, eq=False)
class RicciCurvature:
    """Ollivier-Ricci curvature of every edge and node of a graph.

    Attributes
    ----------
    edges : ndarray of shape (m, 2), int64
        The undirected edges, ``u < v``, sorted.
    edge_curvature : ndarray of shape (m,)
        ``κ(u, v) = 1 − W1(m_u, m_v)`` (every edge has length 1).
    node_curvature : ndarray of shape (n,)
        Mean of ``κ`` over each node's edges.
    alpha : float
        The idleness.
    k : int or None
        Neighbours per item of the kNN graph (``None`` for a graph given by its edges).
    graph : dict or None
        The kNN graph's ``method``, ``metric`` and measured ``recall`` (:meth:`KnnGraph.to_dict`).

    Examples
    --------
    A triangle: every edge has curvature 1 − W1 = 0.75 with alpha 0.5:

    >>> r = graph_ricci([(0, 1), (1, 2), (0, 2)], 3)
    >>> r.edge_curvature.round(6).tolist(), r.mean_curvature
    ([0.75, 0.75, 0.75], 0.75)
    """

    edges: np.ndarray = field(repr=False)
    edge_curvature: np.ndarray = field(repr=False)
    node_curvature: np.ndarray = field(repr=False)
    alpha: float
    k: int | None = None
    graph: dict[str, Any] | None = None

    @property
    def n(self) -> int:
        """Number of nodes (items)."""
        return int(len(self.node_curvature))

    @property
    def mean_curvature(self) -> float:
        """Mean edge curvature."""
        return round(float(self.edge_curvature.mean()), 12)

    def histogram(self) -> dict[str, list]:
        """Edge curvature counted in the bins of :data:`CURVATURE_BINS` (``{"bins": [...31 edges], "counts"}``)."""
        counts, _ = np.histogram(np.clip(self.edge_curvature, -2.0, 1.0), bins=CURVATURE_BINS)
        return {"bins": CURVATURE_BINS.tolist(), "counts": counts.astype(int).tolist()}

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "n_edges", "k", "alpha", "mean_curvature", "edge_curvature", "node_curvature",
        "edge_histogram", "graph"}`` (summaries; the per-item array is :attr:`node_curvature`)."""
        return {"n": self.n, "n_edges": int(len(self.edges)), "k": self.k, "alpha": self.alpha,
                "mean_curvature": self.mean_curvature,
                "edge_curvature": summarize(self.edge_curvature).to_dict(),
                "node_curvature": summarize(self.node_curvature).to_dict(),
                "edge_histogram": self.histogram(), "graph": self.graph}

    def __repr__(self) -> str:
        return (f"RicciCurvature(n={self.n}, edges={len(self.edges)}, alpha={self.alpha}, "
                f"mean_curvature={self.mean_curvature:.4f})")


def union_edges(indices: np.ndarray) -> np.ndarray:
    """The undirected edges ``(u, v)``, ``u < v``, of a kNN graph symmetrised by union, sorted.

    Examples
    --------
    >>> union_edges(np.array([[1], [0], [1]])).tolist()
    [[0, 1], [1, 2]]
    """
    idx = np.asarray(indices, dtype=np.int64)
    n, k = idx.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols = idx.ravel()
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    keys = np.unique(lo[lo != hi] * n + hi[lo != hi])
    return np.stack([keys // n, keys % n], axis=1)


def knn_ricci(X: Any, k: int = 10, *, alpha: float = DEFAULT_ALPHA, metric: Metric | str = "cosine",
              exact: bool | None = None, seed: int | None = 0, progress: Progress | None = None) -> RicciCurvature:
    """Ollivier-Ricci curvature of the kNN graph of ``X``, symmetrised by union and unweighted.

    Parameters
    ----------
    X : array of shape (n, d)
        One item per row; ``n ≥ 3`` and ``n > k``.
    k : int
        Neighbours per item (the item itself excluded).
    alpha : float
        Idleness in ``[0, 1)``: the mass each node keeps.
    metric, exact, seed
        The kNN graph's (:func:`repspace.core.knn.knn_graph`): exact up to 50,000 items, HNSW with measured
        recall above.
    progress : Progress, optional
        Called as ``progress("curvature", edges done, edges)``.

    Returns
    -------
    RicciCurvature

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((60, 5))
    >>> r = knn_ricci(X, k=5)
    >>> r.n, r.k, bool(-2 <= r.mean_curvature <= 1), r.graph["method"]
    (60, 5, True, 'exact')
    """
    X = as_matrix(X)
    n = int(X.shape[0])
    if n < 3:
        raise InputError(f"Ricci curvature needs at least 3 items, got {n}")
    k = check_scalar(k, "k", int, low=1)
    if k >= n:
        raise InputError(f"k={k} needs more than {k} items (an item's neighbours exclude itself), got {n}")
    g: KnnGraph = knn_graph(X, k, metric=metric, exact=exact, seed=seed)
    r = graph_ricci(union_edges(g.indices), n, alpha=alpha, progress=progress)
    return RicciCurvature(r.edges, r.edge_curvature, r.node_curvature, r.alpha, k, g.to_dict())


def graph_ricci(edges: Sequence[tuple[int, int]] | np.ndarray, n: int, *, alpha: float = DEFAULT_ALPHA,
                progress: Progress | None = None) -> RicciCurvature:
    """Ollivier-Ricci curvature of an undirected, unweighted graph on nodes ``0 … n−1``.

    Parameters
    ----------
    edges : sequence of (u, v)
        Each edge once or twice, in any order; no self-loops.
    n : int
        Number of nodes; every node needs an edge (an isolated node has no curvature).
    alpha : float
        Idleness in ``[0, 1)``.
    progress : Progress, optional
        Called as ``progress("curvature", edges done, edges)``.

    Returns
    -------
    RicciCurvature
        Edges sorted as ``u < v``; each κ computed once.

    Examples
    --------
    A path 0 — 1 — 2 — 3: the middle edge is flat (a line), the end edges positively curved (a leaf's mass
    stays near its neighbour's):

    >>> r = graph_ricci([(0, 1), (1, 2), (2, 3)], 4)
    >>> r.edge_curvature.round(4).tolist(), r.node_curvature.round(4).tolist()
    ([0.5, 0.0, 0.5], [0.5, 0.25, 0.25, 0.5])
    """
    alpha = check_scalar(alpha, "alpha", float, low=0.0, high=1.0, include="left")
    n = check_scalar(n, "n", int, low=2)
    e = _check_edges(edges, n)
    A = sparse.csr_matrix((np.ones(2 * len(e)), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])), shape=(n, n))
    A.sum_duplicates()
    A.sort_indices()
    deg = np.diff(A.indptr)
    if (deg == 0).any():
        raise InputError(f"the graph has {(deg == 0).sum()} isolated node(s) (first: {int(np.argmax(deg == 0))}); "
                         "Ricci curvature needs every node on an edge")
    R = (A + sparse.identity(n, format="csr")).tocsr()  # closed neighbourhoods: the measures' supports
    R.data[:] = 1.0
    R.sort_indices()
    kappa = _edge_curvatures(R, deg.astype(np.int64), e, alpha, progress)
    sums = np.bincount(e[:, 0], kappa, n) + np.bincount(e[:, 1], kappa, n)
    return RicciCurvature(e, kappa, sums / deg, alpha)


def _check_edges(edges: Any, n: int) -> np.ndarray:
    """Edges as sorted unique ``(u, v)``, ``u < v``, int64; self-loops and nodes outside ``0 … n−1`` refused."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2) if len(edges) else np.empty((0, 2), np.int64)
    if len(e) == 0:
        raise InputError("the graph has no edges")
    if (e < 0).any() or (e >= n).any():
        raise InputError(f"an edge names a node outside 0 … {n - 1}")
    if (e[:, 0] == e[:, 1]).any():
        raise InputError("the graph has a self-loop; Ricci curvature is defined on simple graphs")
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    keys = np.unique(lo * n + hi)
    return np.stack([keys // n, keys % n], axis=1)


def _edge_curvatures(R: sparse.csr_matrix, deg: np.ndarray, e: np.ndarray, alpha: float,
                     progress: Progress | None) -> np.ndarray:
    """κ of every edge: blocks of edges (whole nodes' edge lists, :data:`BLOCK_COST_ENTRIES` cost entries at most)
    get their cost matrices from :func:`_block_costs`, then one exact transport problem per edge."""
    from ot.lp.emd_wrap import check_result, emd_c  # the network simplex ot.emd2 calls, without its per-call checks

    kappa = np.empty(len(e))
    mark, stamp = np.full(len(deg), -1, np.int64), [0]
    tally = Tally(progress, "curvature", len(e))
    ptr, ind = R.indptr.astype(np.int64), R.indices.astype(np.int64)  # one compiled signature
    size = np.cumsum((ptr[e[:, 0] + 1] - ptr[e[:, 0]]) * (ptr[e[:, 1] + 1] - ptr[e[:, 1]]))
    first = np.flatnonzero(np.r_[True, e[1:, 0] != e[:-1, 0]])
    bounds = np.r_[first, len(e)]  # where each node's edges start, and the end
    before = np.r_[0, size][bounds]  # cost entries before each bound
    i = 0
    while i < len(bounds) - 1:
        j = max(i + 1, int(np.searchsorted(before, before[i] + BLOCK_COST_ENTRIES, side="right")) - 1)
        lo, hi = int(bounds[i]), int(bounds[j])
        costs = _block_costs(ptr, ind, deg, e[lo:hi], alpha, mark, stamp)
        for t, (mu, nu, M) in enumerate(costs, start=lo):
            _, cost, _, _, code = emd_c(mu, nu, M, EMD_MAX_ITER, 1)
            if code != 1:  # 1: optimal
                raise RuntimeError(f"optimal transport failed on edge {tuple(e[t])}: {check_result(code)}")
            kappa[t] = 1.0 - cost
        tally(hi - lo)
        i = j
    return kappa


def _gather(ptr: np.ndarray, ind: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The concatenated rows ``nodes`` of a CSR structure (``ptr``, ``ind``)."""
    lens = ptr[nodes + 1] - ptr[nodes]
    return ind[np.repeat(ptr[nodes] - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())]


def _block_costs(ptr: np.ndarray, ind: np.ndarray, deg: np.ndarray, e: np.ndarray, alpha: float, mark: np.ndarray,
                 stamp: list[int]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(m_u, m_v, hop costs)`` of each edge ``(u, v)`` of ``e`` (sorted by ``u``).

    Rows are the closed neighbourhoods ``N[u]`` of the block's source nodes (once per node), columns the
    ``N[v]`` of its edges; the hop distances come from the compiled :func:`fill_hop_costs` (``mark`` and
    ``stamp[0]``: its scratch marks and last stamp, kept across blocks).
    """
    from repspace.engines.analyze._hops import fill_hop_costs

    u, v = e[:, 0], e[:, 1]
    nodes, first = np.unique(u, return_index=True)
    a = ptr[nodes + 1] - ptr[nodes]
    b = ptr[v + 1] - ptr[v]
    xs, ys = _gather(ptr, ind, nodes), _gather(ptr, ind, v)
    x_node = np.repeat(np.arange(len(nodes)), a)  # row -> its source node's position
    y_edge = np.repeat(np.arange(len(e)), b)  # column -> its edge
    edge_node = np.repeat(np.arange(len(nodes)), np.diff(np.r_[first, len(e)]))
    x0, y0 = np.cumsum(a) - a, np.cumsum(b) - b
    ab = a[edge_node] * b
    off = np.cumsum(ab) - ab
    buf = np.empty(int(ab.sum()))
    stamp[0] = fill_hop_costs(ptr, ind, xs, x0, a, ys, y0, b, edge_node, off, buf, mark, stamp[0])
    mu = np.where(xs == nodes[x_node], alpha, (1.0 - alpha) / deg[nodes[x_node]])
    nu = np.where(ys == v[y_edge], alpha, (1.0 - alpha) / deg[v[y_edge]])
    mass_x = np.add.reduceat(mu, x0)[edge_node]
    nu *= np.repeat(mass_x / np.add.reduceat(nu, y0), b)  # equal masses, as ot.emd2 makes them
    xl, yl, ol, al, bl, nl = x0.tolist(), y0.tolist(), off.tolist(), a.tolist(), b.tolist(), edge_node.tolist()
    out = []
    for j in range(len(e)):
        g = nl[j]
        out.append((mu[xl[g]:xl[g] + al[g]], nu[yl[j]:yl[j] + bl[j]],
                    buf[ol[j]:ol[j] + al[g] * bl[j]].reshape(al[g], bl[j])))
    return out

