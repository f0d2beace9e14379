"""Hubness of a space: how unevenly items appear in each other's k-nearest-neighbour lists.

In high dimensions a few items (hubs) are among the ``k`` nearest neighbours of
very many others, and many (anti-hubs) of none (Radovanović, Nanopoulos &
Ivanović, *Hubs in space*, JMLR 2010). Everything here is a function of the
k-occurrence ``N_k(i) = #{j ≠ i : i ∈ kNN(j)}``, with the formulas of
scikit-hubness's ``Hubness`` estimator (``hubness.*`` in METRICS.md). Note
``Σ_i N_k(i) = k·n`` always, so the mean of ``N_k`` is ``k``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import skew

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.backend import Backend
from repspace.core.knn import KnnGraph, knn_graph
from repspace.core.space import Metric

__all__ = ["HubnessResult", "gini", "hubness", "k_occurrence", "robin_hood"]

#: Default neighbourhood size for hubness (scikit-hubness's default).
DEFAULT_K = 10
#: An item is a hub when ``N_k ≥ HUB_SIZE · k`` (scikit-hubness ``hub_size``).
HUB_SIZE = 2.0


@dataclass(frozen=True, eq=False)
class HubnessResult:
    """Hubness metrics of one k-nearest-neighbour graph.

    Attributes
    ----------
    k : int
        Neighbourhood size.
    k_occurrence : ndarray of shape (n,), int64
        ``N_k(i)``: how many items have item ``i`` among their ``k`` nearest.
    hub_flag : ndarray of shape (n,), bool
        ``N_k(i) ≥ hub_size · k``.
    k_skewness : float
        ``scipy.stats.skew(N_k)`` (biased Fisher–Pearson); 0 when every
        ``N_k`` is equal (scipy would return NaN).
    robin_hood : float
        ``½ Σ_i |N_k(i) − k| / Σ_i N_k(i)`` in ``[0, 1)``.
    antihub_rate : float
        Fraction of items with ``N_k = 0``.
    hub_occurrence : float
        ``Σ_{i hub} N_k(i) / (k·n)``: the share of all neighbour slots taken by hubs.
    gini : float
        Gini index of ``N_k`` in ``[0, 1)``.
    hub_size : float
        The hub threshold factor (2).
    metric, knn_method : str
        The graph's metric, and ``exact`` or ``hnsw``.
    knn_recall : float or None
        The HNSW graph's measured recall (at the graph's own ``k``; ``None`` when exact).

    Examples
    --------
    >>> r = hubness(np.eye(4), k=1)
    >>> r.k_occurrence.tolist(), round(r.k_skewness, 4), r.gini
    ([3, 1, 0, 0], 0.8165, 0.625)
    """

    k: int
    k_occurrence: np.ndarray = field(repr=False)
    hub_flag: np.ndarray = field(repr=False)
    k_skewness: float
    robin_hood: float
    antihub_rate: float
    hub_occurrence: float
    gini: float
    hub_size: float = HUB_SIZE
    metric: str = "cosine"
    knn_method: str = "exact"
    knn_recall: float | None = None

    def to_dict(self, per_item: bool = False) -> dict[str, Any]:
        """``hubness.{k, k_skewness, robin_hood, antihub_rate, hub_occurrence, gini, hub_size, n_hubs, knn}``;
        with ``per_item`` also ``hubness.k_occurrence`` and ``hubness.hub_flag`` (lists of length n).

        ``hubness.knn`` is ``{"method", "metric", "recall"}``.
        """
        out: dict[str, Any] = {
            "hubness.k": int(self.k),
            "hubness.k_skewness": float(self.k_skewness),
            "hubness.robin_hood": float(self.robin_hood),
            "hubness.antihub_rate": float(self.antihub_rate),
            "hubness.hub_occurrence": float(self.hub_occurrence),
            "hubness.gini": float(self.gini),
            "hubness.hub_size": float(self.hub_size),
            "hubness.n_hubs": int(self.hub_flag.sum()),
            "hubness.knn": {"method": self.knn_method, "metric": self.metric,
                            "recall": None if self.knn_recall is None else float(self.knn_recall)},
        }
        if per_item:
            out["hubness.k_occurrence"] = self.k_occurrence.astype(int).tolist()
            out["hubness.hub_flag"] = self.hub_flag.astype(bool).tolist()
        return out

    def __repr__(self) -> str:
        rec = "" if self.knn_recall is None else f", recall={self.knn_recall:.3f}"
        return (f"HubnessResult(k={self.k}, n={len(self.k_occurrence)}, k_skewness={self.k_skewness:.4g}, "
                f"robin_hood={self.robin_hood:.4g}, antihub_rate={self.antihub_rate:.4g}, "
                f"hub_occurrence={self.hub_occurrence:.4g}, gini={self.gini:.4g}, "
                f"knn={self.knn_method}{rec})")


def k_occurrence(indices: Any, n: int) -> np.ndarray:
    """``N_k(i)``: how many rows of ``indices`` contain item ``i``.

    Parameters
    ----------
    indices : array of shape (m, k)
        Neighbour row numbers in ``[0, n)``, e.g. :attr:`KnnGraph.indices`.
    n : int
        Number of items (the length of the result).

    Returns
    -------
    ndarray of shape (n,), int64

    Raises
    ------
    InputError
        ``indices`` is not a 2-d integer array, or holds a row number outside ``[0, n)``.

    Examples
    --------
    >>> k_occurrence([[1, 2], [0, 2], [0, 1]], 4).tolist()
    [2, 2, 2, 0]
    """
    n = check_scalar(n, "n", int, low=0)
    idx = np.asarray(indices)
    if idx.ndim != 2 or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
        raise InputError(f"indices must be a 2-d integer array (m × k), got shape {idx.shape}, dtype {idx.dtype}")
    flat = idx.ravel().astype(np.int64, copy=False)
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        raise InputError(f"indices must lie in [0, {n}); found {int(flat.min())} … {int(flat.max())}")
    return np.bincount(flat, minlength=n).astype(np.int64)


def gini(values: Any) -> float:
    """Gini index ``Σ_i Σ_j |v_i − v_j| / (2 n Σ_i v_i)`` of non-negative values, by sorting (O(n log n)).

    With ``v`` sorted ascending, ``Σ_i Σ_j |v_i − v_j| = 2 Σ_i (2i − n − 1) v_(i)``
    (``i`` from 1). Defined as 0 when every value is 0.

    Examples
    --------
    >>> gini([1, 1, 1, 1])
    0.0
    >>> gini([0, 0, 0, 4])
    0.75
    """
    v = np.sort(np.asarray(values, dtype=np.float64).ravel())
    n, total = v.size, float(v.sum())
    if n == 0 or total <= 0.0:
        return 0.0
    weights = 2.0 * np.arange(1, n + 1, dtype=np.float64) - n - 1.0
    return float(np.dot(weights, v) / (n * total))


def robin_hood(occurrence: Any, k: float) -> float:
    """Robin Hood index ``½ Σ_i |N_k(i) − k| / Σ_i N_k(i)`` (Feldbauer et al. 2018); 0 when ``Σ N_k = 0``.

    The share of neighbour slots that would have to move from richer to poorer
    items for every item to occur exactly ``k`` times.

    Examples
    --------
    >>> robin_hood([2, 2, 2], k=2)
    0.0
    >>> robin_hood([3, 1, 1, 1, 0], k=1)
    0.25
    """
    nk = np.asarray(occurrence, dtype=np.float64).ravel()
    total = float(nk.sum())
    if total <= 0.0:
        return 0.0
    return float(0.5 * np.abs(nk - k).sum() / total)


def hubness(data: KnnGraph | Any, k: int | None = None, *, metric: Metric | str = "cosine",
            exact: bool | None = None, recall_sample: int = 1000, seed: int | None = 0,
            hub_size: float = HUB_SIZE, backend: Backend | None = None) -> HubnessResult:
    """Hubness metrics of a space (``hubness.*`` in METRICS.md).

    Parameters
    ----------
    data : array of shape (n, d), or KnnGraph
        Vectors (their ``k``-NN graph is computed with :func:`knn_graph`), or
        a graph already computed; a graph with more neighbours than ``k`` is
        cut to its first ``k`` columns.
    k : int, optional
        Neighbourhood size: 10 for vectors, the graph's ``k`` for a graph.
    metric, exact, recall_sample, seed
        Passed to :func:`knn_graph` (ignored for a graph).
    hub_size : float
        An item is a hub when ``N_k ≥ hub_size · k`` (scikit-hubness's 2).
    backend : Backend, optional
        Where the graph is built (:class:`repspace.core.backend.Backend`;
        ``None``: this process; ignored for a graph).

    Returns
    -------
    HubnessResult
        ``k_occurrence``, ``hub_flag`` (per item), ``k_skewness``,
        ``robin_hood``, ``antihub_rate``, ``hub_occurrence``, ``gini`` and the
        graph's method and recall. Every number is finite: a perfectly even
        graph has skewness 0 (scipy's NaN is replaced).

    Raises
    ------
    InputError
        Bad vectors (see :func:`knn_graph`: NaN, ``n ≤ k``, ...), ``k`` larger
        than the graph's, or ``hub_size ≤ 0``.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0]])
    >>> r = hubness(X, k=1, metric="l2")
    >>> r.k_occurrence.tolist(), r.antihub_rate, r.robin_hood
    ([1, 2, 1, 0], 0.25, 0.25)
    >>> r.to_dict()["hubness.knn"]
    {'method': 'exact', 'metric': 'l2', 'recall': None}
    """
    hub_size = check_scalar(hub_size, "hub_size", float, low=0, include="neither")
    if isinstance(data, KnnGraph):
        graph = data
        if k is None:
            k = graph.k
        k = check_scalar(k, "k", int, low=1, high=graph.k)
        indices = graph.indices[:, :k]
    else:
        graph = knn_graph(data, DEFAULT_K if k is None else k, metric=metric, exact=exact,
                          recall_sample=recall_sample, seed=seed, backend=backend)
        k, indices = graph.k, graph.indices
    n = graph.n
    nk = k_occurrence(indices, n)
    flag = nk >= hub_size * k
    return HubnessResult(
        k=k,
        k_occurrence=nk,
        hub_flag=flag,
        k_skewness=_skewness(nk),
        robin_hood=robin_hood(nk, k),
        antihub_rate=float(np.mean(nk == 0)),
        hub_occurrence=float(nk[flag].sum() / (k * n)),
        gini=gini(nk),
        hub_size=float(hub_size),
        metric=graph.metric,
        knn_method=graph.method,
        knn_recall=graph.recall,
    )


def _skewness(nk: np.ndarray) -> float:
    """``scipy.stats.skew`` (biased), 0 for a constant vector (where scipy gives NaN)."""
    if nk.size == 0 or nk.min() == nk.max():
        return 0.0
    value = float(skew(nk.astype(np.float64)))
    return value if np.isfinite(value) else 0.0

