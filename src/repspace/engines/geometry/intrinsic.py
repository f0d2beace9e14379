"""Intrinsic dimension: how many dimensions the data really spans, from nearest-neighbour distances.

Two global estimators and one local one (``intrinsic_dimension.*`` in METRICS.md),
all on Euclidean distances of the k-nearest-neighbour graph of
:func:`repspace.core.knn.knn_graph` (exact up to 50,000 distinct points,
HNSW above, with its recall reported), so they scale to large spaces.

``twonn``
    TwoNN (Facco, d'Errico, Rodriguez & Laio, *Estimating the intrinsic
    dimension of datasets by a minimal neighborhood information*, Sci. Rep.
    2017): ``μ_i = r₂/r₁`` follows a Pareto law of shape ``d``; ``d`` is the
    least-squares slope through the origin of ``−log(1 − F(μ))`` on ``log μ``
    over the smallest 90% of the ``μ``, with ``F(μ_(i)) = i/N``. Same as
    scikit-dimension's ``TwoNN()`` (``method="linear"``, ``discard_fraction=0.1``).
``mle``
    Levina & Bickel (NIPS 2004) with the correction of MacKay & Ghahramani
    (2005): per point ``m_k(x) = [(1/(k−1)) Σ_{j<k} log(T_k/T_j)]⁻¹`` over its
    ``k`` nearest distances ``T_1 ≤ … ≤ T_k``; the global estimate is the
    inverse of the mean of ``1/m_k``. Same as scikit-dimension's ``MLE()``
    (``comb="mle"``, 20 neighbours).
``local``
    The per-point ``m_k(x_i)``.

Exact duplicate rows have distance 0 and would make ``μ`` and ``log(T_k/T_j)``
infinite: they are removed first (the first occurrence is kept) and counted
(``duplicates_removed``); estimates are over the distinct points, and a
duplicate's local estimate is that of its first occurrence. Rows are compared
as float32 (the precision of the search), ``-0.0`` equal to ``0.0``. Every
estimator is invariant to scaling ``X``; extreme magnitudes are rescaled
before the float32 search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, max_abs, row_blocks
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import exact_search
from repspace.core.backend import Backend
from repspace.core.knn import KnnGraph, knn_graph

__all__ = ["IntrinsicDimension", "intrinsic_dimension", "local_id", "local_id_from_distances", "mle", "twonn"]

#: Neighbours of the MLE estimators (scikit-dimension's and Levina–Bickel's 20).
DEFAULT_K = 20
#: Fraction of the largest ``μ`` discarded by TwoNN (Facco et al.).
DEFAULT_DISCARD = 0.1
#: Rows are rescaled by their largest entry when it lies outside this range (float32 safety).
_SCALE_RANGE = (1e-15, 1e12)
#: Floor on a neighbour distance, for a distance that underflowed float32 between distinct rows.
_TINY = np.finfo(np.float64).tiny


@dataclass(frozen=True, eq=False)
class IntrinsicDimension:
    """Intrinsic dimension estimates of one space.

    Attributes
    ----------
    twonn : float
        The TwoNN estimate.
    mle : float
        The Levina–Bickel MLE (MacKay–Ghahramani average).
    local : ndarray of shape (n,), float64
        Per-item MLE ``m_k(x_i)`` (a duplicate gets its first occurrence's).
    duplicates_removed : int
        Rows that were exact duplicates of an earlier row and left out.
    k : int
        Neighbours of the MLE estimates.
    discard : float
        Fraction of the largest ratios TwoNN discarded.
    knn_method : str
        ``exact`` or ``hnsw``.
    knn_recall : float or None
        The HNSW graph's measured recall@k (``None`` when exact).

    Examples
    --------
    >>> r = IntrinsicDimension(2.0, 2.1, np.array([2.0, 2.2]), 0, 20, 0.1, "exact", None)
    >>> r.to_dict()["intrinsic_dimension.mle"]
    2.1
    """

    twonn: float
    mle: float
    local: np.ndarray = field(repr=False)
    duplicates_removed: int
    k: int
    discard: float
    knn_method: str = "exact"
    knn_recall: float | None = None
    knn_metric: str = "l2"

    def to_dict(self, per_item: bool = False) -> dict[str, Any]:
        """``intrinsic_dimension.{twonn, mle, duplicates_removed, k, discard, knn}``; with ``per_item``
        also ``intrinsic_dimension.local`` (a list of length n).

        ``intrinsic_dimension.knn`` is ``{"method", "metric", "recall"}`` (metric ``l2``).
        """
        out: dict[str, Any] = {
            "intrinsic_dimension.twonn": float(self.twonn),
            "intrinsic_dimension.mle": float(self.mle),
            "intrinsic_dimension.duplicates_removed": int(self.duplicates_removed),
            "intrinsic_dimension.k": int(self.k),
            "intrinsic_dimension.discard": float(self.discard),
            "intrinsic_dimension.knn": {"method": self.knn_method, "metric": self.knn_metric,
                                        "recall": None if self.knn_recall is None else float(self.knn_recall)},
        }
        if per_item:
            out["intrinsic_dimension.local"] = [float(v) for v in self.local]
        return out

    def __repr__(self) -> str:
        rec = "" if self.knn_recall is None else f", recall={self.knn_recall:.3f}"
        return (f"IntrinsicDimension(twonn={self.twonn:.4g}, mle={self.mle:.4g}, k={self.k}, "
                f"n={len(self.local)}, duplicates_removed={self.duplicates_removed}, knn={self.knn_method}{rec})")


# -- public functions ---------------------------------------------------------------------------


def twonn(X: Any, discard: float = DEFAULT_DISCARD, *, exact: bool | None = None,
          recall_sample: int = 1000, seed: int | None = 0, backend: Backend | None = None) -> float:
    """TwoNN intrinsic dimension (Facco et al. 2017), as scikit-dimension's ``TwoNN``.

    Parameters
    ----------
    X : array of shape (n, d)
        One point per row, finite; at least 3 distinct rows.
    discard : float
        Fraction in ``[0, 1)`` of the largest ratios ``μ = r₂/r₁`` left out of
        the fit. At most ``N − 1`` of the ``N`` ratios are kept even with
        ``discard=0`` (the largest has ``F = 1``, at infinity).
    exact, recall_sample, seed
        Passed to :func:`knn_graph` (Euclidean; TwoNN asks for 2 neighbours).
    backend : Backend, optional
        Where the graph is built (:class:`repspace.core.backend.Backend`;
        ``None``: this process).

    Returns
    -------
    float
        The slope ``Σ x y / Σ x²`` with ``x = log μ_(i)``, ``y = −log(1 − i/N)``
        over the kept ratios. ``r₂`` may equal ``r₁`` (two neighbours at the
        same distance, ``μ = 1``). Exact duplicates are removed first (see
        :func:`intrinsic_dimension` for their count).

    Raises
    ------
    InputError
        Bad ``X`` (NaN, not 2-d), fewer than 3 distinct rows or fewer than 2
        kept ratios, ``discard`` outside ``[0, 1)``, or every kept ``μ`` equal
        to 1 (a regular grid: the slope is infinite).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((1000, 2)) @ rng.standard_normal((2, 10))  # a plane in 10-d
    >>> round(twonn(X), 2)
    2.03
    """
    discard = _check_discard(discard)
    xu, _, _ = _distinct_rows(as_matrix(X))
    graph = _graph(xu, 2, "TwoNN", exact, recall_sample, seed, backend=backend)
    return _twonn_from(graph.distances, discard)


def mle(X: Any, k: int = DEFAULT_K, *, exact: bool | None = None, recall_sample: int = 1000,
        seed: int | None = 0, backend: Backend | None = None) -> float:
    """Levina–Bickel MLE of the intrinsic dimension, MacKay–Ghahramani average, as scikit-dimension's ``MLE``.

    Parameters
    ----------
    X : array of shape (n, d)
        One point per row, finite; more than ``k`` distinct rows.
    k : int
        Neighbours per point (``k ≥ 2``; 20 as scikit-dimension).
    exact, recall_sample, seed, backend
        As in :func:`twonn`.

    Returns
    -------
    float
        ``(k − 1) / mean_i S_i`` with ``S_i = Σ_{j<k} log(T_k(x_i)/T_j(x_i))``,
        i.e. the inverse of the mean of the inverse per-point estimates, over
        the distinct points (exact duplicates removed first).

    Raises
    ------
    InputError
        Bad ``X``, ``k < 2``, at most ``k`` distinct rows, or every point's
        ``k`` neighbours all at one distance (every ``S_i = 0``: the estimate
        is infinite).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((1000, 2)) @ rng.standard_normal((2, 10))
    >>> round(mle(X), 2)
    2.03
    """
    k = _check_mle_k(k)
    xu, _, _ = _distinct_rows(as_matrix(X))
    graph = _graph(xu, k, "MLE", exact, recall_sample, seed, backend=backend)
    return _mle_from(_log_sums(graph.distances), k)


def local_id(X: Any, k: int = DEFAULT_K, *, exact: bool | None = None, recall_sample: int = 1000,
             seed: int | None = 0, backend: Backend | None = None) -> np.ndarray:
    """Per-point Levina–Bickel estimates ``m_k(x_i) = (k − 1) / Σ_{j<k} log(T_k/T_j)``.

    Parameters
    ----------
    X : array of shape (n, d)
        One point per row, finite; more than ``k`` distinct rows.
    k, exact, recall_sample, seed, backend
        As in :func:`mle`.

    Returns
    -------
    ndarray of shape (n,), float64
        One estimate per row of ``X``; an exact duplicate gets the estimate of
        its first occurrence. A point whose ``k`` neighbours are all at the
        same distance (``S_i = 0``, an infinite estimate) gets ``d``, the
        ambient dimension, instead. Always finite.

    Raises
    ------
    InputError
        Bad ``X``, ``k < 2``, or at most ``k`` distinct rows.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((1000, 2)) @ rng.standard_normal((2, 10))
    >>> loc = local_id(X)
    >>> loc.shape, round(float(np.median(loc)), 1)
    ((1000,), 2.1)
    """
    k = _check_mle_k(k)
    X = as_matrix(X)
    xu, inverse, _ = _distinct_rows(X)
    graph = _graph(xu, k, "MLE", exact, recall_sample, seed, backend=backend)
    return _local_from(_log_sums(graph.distances), k, X.shape[1])[inverse]


def local_id_from_distances(distances: Any, d: int) -> np.ndarray:
    """Per-point Levina–Bickel estimates from each point's ``k`` nearest Euclidean distances, nearest first:
    ``m_k = (k − 1) / Σ_{j<k} log(T_k/T_j)``, ``d`` (the ambient dimension) where every distance is equal
    (the estimate of :func:`local_id`, for neighbours found elsewhere, e.g. in another set of points).

    Distances of 0 are floored at the smallest positive float64 (a duplicate neighbour; its estimate tends to
    0).

    Examples
    --------
    >>> local_id_from_distances(np.array([[1.0, 2.0, 4.0], [1.0, 1.0, 1.0]]), 7).round(3).tolist()
    [0.962, 7.0]
    """
    dist = np.asarray(distances, dtype=np.float64)
    if dist.ndim != 2 or dist.shape[1] < 2:
        raise InputError(f"local ID needs at least 2 neighbour distances per point, got shape {dist.shape}")
    with np.errstate(over="ignore", divide="ignore"):  # a floored 0 distance: an estimate of 0, no warning
        return _local_from(_log_sums(dist), dist.shape[1], int(d))


def intrinsic_dimension(X: Any, k: int = DEFAULT_K, discard: float = DEFAULT_DISCARD, *,
                        exact: bool | None = None, recall_sample: int = 1000,
                        seed: int | None = 0, graph: KnnGraph | None = None,
                        metric: str = "l2", backend: Backend | None = None) -> IntrinsicDimension:
    """TwoNN, MLE and local MLE from one ``k``-NN graph, Euclidean by default (``intrinsic_dimension.*``).

    Parameters
    ----------
    X : array of shape (n, d)
        One point per row, finite; more than ``k`` distinct rows.
    k : int
        Neighbours of the MLE estimates (``k ≥ 2``); TwoNN uses the first two.
    discard : float
        TwoNN's discarded fraction of the largest ratios.
    exact, recall_sample, seed
        Passed to :func:`knn_graph`: exact up to 50,000 distinct rows, else
        HNSW with its recall reported.
    graph : KnnGraph, optional
        A Euclidean graph of ``X``'s rows with at least ``k`` neighbours,
        already computed (:func:`repspace.engines.geometry.diagnose` shares one
        between hubness and intrinsic dimension for unit vectors); used only
        when ``X`` has no duplicate rows, since the estimators need distinct
        points.
    metric : ``l2`` or ``poincare``
        The distance of the neighbour graph. Both estimators need only the
        distances to the nearest neighbours of a Riemannian manifold (locally
        Euclidean), so the hyperbolic distance of a Poincare ball serves as well.
    backend : Backend, optional
        As in :func:`twonn`, for a graph computed here.

    Returns
    -------
    IntrinsicDimension
        The values of :func:`twonn`, :func:`mle` and :func:`local_id`, and the
        number of duplicate rows removed before estimating.

    Raises
    ------
    InputError
        As :func:`twonn`, :func:`mle` and :func:`local_id`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((1000, 2)) @ rng.standard_normal((2, 10))
    >>> X = np.vstack([X, X[:5]])  # five duplicate rows
    >>> r = intrinsic_dimension(X)
    >>> round(r.twonn, 2), round(r.mle, 2), r.duplicates_removed, r.local.shape
    (2.03, 2.03, 5, (1005,))
    """
    k = _check_mle_k(k)
    discard = _check_discard(discard)
    X = as_matrix(X)
    xu, inverse, removed = _distinct_rows(X)
    check_choice(metric, "metric", ("l2", "poincare"))
    usable = graph is not None and graph.metric == metric and graph.n == X.shape[0] and graph.k >= k
    if usable and removed == 0:
        assert graph is not None
        graph = KnnGraph(graph.indices[:, :k], graph.distances[:, :k], metric, graph.method, graph.recall,
                         graph.recall_sample)
    elif usable and xu.shape[0] > k:
        assert graph is not None
        graph = _distinct_graph(graph, inverse, xu, k)
    else:
        graph = _graph(xu, k, "MLE", exact, recall_sample, seed, metric, backend=backend)
    sums = _log_sums(graph.distances)
    return IntrinsicDimension(
        twonn=_twonn_from(graph.distances[:, :2], discard),
        mle=_mle_from(sums, k),
        local=_local_from(sums, k, X.shape[1])[inverse],
        duplicates_removed=removed,
        k=k,
        discard=discard,
        knn_method=graph.method,
        knn_metric=graph.metric,
        knn_recall=graph.recall,
    )


# -- the estimators on neighbour distances ------------------------------------------------------


def _twonn_from(dist: np.ndarray, discard: float) -> float:
    """TwoNN from each point's first two neighbour distances (columns 0 and 1)."""
    r1 = dist[:, 0].astype(np.float64)
    r2 = dist[:, 1].astype(np.float64)
    ok = r1 > 0  # always, once duplicates are gone (a float32 underflow aside)
    mu = np.sort(r2[ok] / r1[ok])
    n = mu.size
    keep = min(int(n * (1 - discard)), n - 1)
    if keep < 2:
        raise InputError(f"TwoNN needs at least 2 ratios after discarding {discard:.0%}; "
                         f"got {n} distinct points (give more points)")
    x = np.log(mu[:keep])
    y = -np.log1p(-np.arange(1, keep + 1, dtype=np.float64) / n)
    sxx = float(np.dot(x, x))
    if sxx <= 0.0:
        raise InputError("TwoNN is undefined: every point's two nearest neighbours are at the same distance "
                         "(μ = 1; a regular grid?)")
    return float(np.dot(x, y) / sxx)


def _log_sums(dist: np.ndarray) -> np.ndarray:
    """``S_i = Σ_{j<k} log(T_k/T_j)`` for each row of neighbour distances (float64)."""
    t = np.maximum(dist.astype(np.float64), _TINY)
    return np.log(t[:, -1:] / t[:, :-1]).sum(axis=1)


def _mle_from(sums: np.ndarray, k: int) -> float:
    mean = float(sums.mean())
    if not mean > 0.0:
        raise InputError(f"MLE is undefined: every point's {k} nearest neighbours are all at one distance "
                         "(a regular arrangement?)")
    return (k - 1) / mean


def _local_from(sums: np.ndarray, k: int, d: int) -> np.ndarray:
    out = np.full(sums.shape, float(d))
    pos = sums > 0
    out[pos] = (k - 1) / sums[pos]
    return out


# -- helpers ------------------------------------------------------------------------------------


def _check_discard(discard: Any) -> float:
    return check_scalar(discard, "discard", float, low=0, high=1, include="left")


def _check_mle_k(k: Any) -> int:
    return check_scalar(k, "k", int, low=2)


def _graph(xu: np.ndarray, k: int, what: str, exact: bool | None, recall_sample: int,
           seed: int | None, metric: str = "l2", *, backend: Backend | None = None) -> KnnGraph:
    if xu.shape[0] <= k:
        raise InputError(f"{what} with k={k} needs at least {k + 1} distinct points, got {xu.shape[0]}")
    return knn_graph(xu, k, metric=metric, exact=exact, recall_sample=recall_sample, seed=seed, backend=backend)


def _distinct_graph(graph: KnnGraph, inverse: np.ndarray, xu: np.ndarray, k: int) -> KnnGraph:
    """The ``k``-NN graph of the distinct rows, from a graph of all rows (duplicates included).

    Each distinct point takes its first occurrence's neighbour list, mapped to
    distinct points, without itself and without repeats; the few points left
    with fewer than ``k`` (many duplicates nearby) are searched again exactly
    among the distinct points.
    """
    nu = xu.shape[0]
    first = np.unique(inverse, return_index=True)[1]  # distinct point u first appears at row first[u]
    mapped = inverse[graph.indices[first]]
    dist = graph.distances[first]
    own = mapped == np.arange(nu)[:, None]
    srt = np.sort(mapped, axis=1)
    clean = ~own.any(axis=1) & ~(srt[:, 1:] == srt[:, :-1]).any(axis=1)
    out_i = np.empty((nu, k), np.int64)
    out_d = np.empty((nu, k), np.float32)
    out_i[clean], out_d[clean] = mapped[clean, :k], dist[clean, :k]
    redo = []
    for u in np.flatnonzero(~clean):
        seen: dict[int, float] = {}
        for v, dv in zip(mapped[u].tolist(), dist[u].tolist()):
            if v != u and v not in seen:
                seen[v] = dv
        if len(seen) >= k:
            out_i[u] = list(seen)[:k]
            out_d[u] = list(seen.values())[:k]
        else:
            redo.append(u)
    if redo:
        rows = np.asarray(redo, np.int64)
        s, i = exact_search(xu[rows], xu, k + 1, graph.metric)
        keep = i != rows[:, None]
        keep[keep.all(axis=1), -1] = False
        out_i[rows] = i[keep].reshape(len(rows), k)
        out_d[rows] = s[keep].reshape(len(rows), k)
    return KnnGraph(out_i, out_d, graph.metric, graph.method, graph.recall, graph.recall_sample)


def _distinct_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The distinct rows of ``X`` as float32 (first occurrences, in order), the map from each row
    to its distinct row, and how many rows were duplicates. Rescaled when its magnitude is extreme."""
    n, d = X.shape
    top = max_abs(X)
    lo, hi = _SCALE_RANGE
    x = np.empty((n, d), np.float32)
    scale = 1.0 / top if top > 0 and not lo <= top <= hi else None
    for start, block in row_blocks(X, convert=scale is not None):
        x[start:start + len(block)] = block * scale if scale is not None else block
    x += np.float32(0.0)  # -0.0 → 0.0, so equal rows have equal bytes
    rows = np.ascontiguousarray(x).view(np.dtype((np.void, x.dtype.itemsize * d))).ravel()
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    if len(first) == n:
        return x, np.arange(n), 0
    order = np.argsort(first, kind="stable")
    position = np.empty(len(first), np.int64)
    position[order] = np.arange(len(first))
    return x[first[order]], position[inverse.ravel()], n - len(first)
