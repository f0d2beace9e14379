"""Hubness reduction at query time: re-score k-NN retrieval so hubs stop crowding every result list.

In high dimensions a few items (hubs) are among the nearest neighbours of very
many queries while others (anti-hubs) are nobody's. Hubness reduction replaces the
plain similarity by one that corrects for how crowded each item's neighbourhood
is (Feldbauer & Flexer, *A comprehensive empirical comparison of hubness reduction
in high-dimensional spaces*, KAIS 2019). Three methods, each a pure function of
arrays plus per-item statistics of each vector's ``kappa`` nearest base items:

``csls``
    Cross-domain similarity local scaling (Lample et al., *Word translation without
    parallel data*, ICLR 2018): ``2·s(q, b) − r_q − r_b`` with ``r_q`` the mean
    similarity of ``q`` to its ``kappa`` nearest base items and ``r_b`` the mean
    similarity of ``b`` to its ``kappa`` nearest neighbours *in the base* (itself
    excluded): retrieval within one space, where the paper's second domain is the
    base itself.
``mutual-proximity``
    Mutual proximity, Gaussian approximation (Schnitzer, Flexer, Schedl & Widmer,
    *Local and global scaling reduce hubs in space*, JMLR 2012): the probability
    that ``b`` is nearer to ``q`` than a random item is to ``q`` *and* ``q`` nearer
    to ``b`` than a random item is to ``b``, ``MP = SF_q(d)·SF_b(d)``, with ``SF_x``
    the survival function of a normal distribution of ``x``'s distances. Choice
    made here: each item's mean and standard deviation are taken over its distances
    to its ``kappa`` nearest base items (as scikit-hubness does when working from
    k-NN graphs), not over all ``n`` distances as in the paper. That keeps every
    statistic a by-product of one ``kappa``-NN search (memory linear in ``n``) and
    models the local neighbourhood the ranking is decided in.
``local-scaling``
    Local scaling (Zelnik-Manor & Perona, *Self-tuning spectral clustering*, NIPS
    2004; for hubness, Schnitzer et al. 2012): ``exp(−d²/(σ_q σ_b))`` with ``σ_x``
    the distance of ``x`` to its ``kappa``-th nearest base item. This is
    ``1 − LS``, the similarity form of the paper's scaled distance
    ``LS = 1 − exp(−d²/(σ_q σ_b))``, so larger is better like the others.

Similarity ``s`` and distance ``d`` per metric: ``cosine`` s = cos, d = 1 − cos;
``ip`` s = q·b, d = −q·b (no local scaling: it needs a non-negative distance);
``l2`` d = ‖q − b‖, s = −d.

Per-item base statistics (:func:`base_statistics`) depend on the base alone and
can be cached beside an index; :func:`reduce_hubness` takes them as ``stats=``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import log_ndtr

from repspace.core.checks import check_scalar, positive_int
from repspace.core.errors import InputError
from repspace.core.exact import exact_search, normalize_rows
from repspace.core.limits import HUBNESS_BLOCK_ENTRIES, TIE_BAND_FLOAT64
from repspace.core.scores import broadcast_terms as _broadcast
from repspace.core.scores import csls
from repspace.core.space import Metric

__all__ = [
    "METHODS",
    "NeighbourStatistics",
    "base_statistics",
    "csls",
    "local_scaling",
    "mutual_proximity",
    "parse_method",
    "query_statistics",
    "reduce_hubness",
    "rescore",
    "statistics_from_neighbours",
]

#: The methods :func:`reduce_hubness` accepts.
METHODS = ("csls", "mutual-proximity", "local-scaling")
_METHOD_ALIASES = {"mp": "mutual-proximity", "mutual_proximity": "mutual-proximity", "ls": "local-scaling",
                   "local_scaling": "local-scaling"}
#: Floor on σ (local scaling) and on the standard deviation (mutual proximity), so a
#: neighbourhood of exact duplicates (σ = 0) gives finite scores instead of NaN.
SCALE_FLOOR = 1e-12


@dataclass(frozen=True, eq=False)
class NeighbourStatistics:
    """Per-item statistics of each vector's ``kappa`` nearest base items.

    Attributes
    ----------
    kappa : int
    metric : str
    r : (n,) float64
        Mean similarity to the ``kappa`` neighbours (CSLS).
    sigma : (n,) float64
        Distance to the ``kappa``-th neighbour (local scaling).
    mu, sd : (n,) float64
        Mean and standard deviation (``ddof=0``) of the distances to the ``kappa``
        neighbours (mutual proximity).

    Examples
    --------
    >>> st = base_statistics(np.eye(3), kappa=1, metric="cosine")
    >>> st
    NeighbourStatistics(n=3, kappa=1, metric='cosine')
    >>> back = NeighbourStatistics.from_arrays(st.to_arrays())
    >>> back.kappa, back.r.tolist()
    (1, [0.0, 0.0, 0.0])
    """

    kappa: int
    metric: str
    r: np.ndarray
    sigma: np.ndarray
    mu: np.ndarray
    sd: np.ndarray

    def __len__(self) -> int:
        return int(self.r.shape[0])

    def __repr__(self) -> str:
        return f"NeighbourStatistics(n={len(self)}, kappa={self.kappa}, metric={self.metric!r})"

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays for ``np.savez`` (no pickle needed to read them back)."""
        return {"kappa": np.asarray(self.kappa, np.int64), "metric": np.asarray(self.metric),
                "r": self.r, "sigma": self.sigma, "mu": self.mu, "sd": self.sd}

    @classmethod
    def from_arrays(cls, arrays: Any) -> NeighbourStatistics:
        """Rebuild from :meth:`to_arrays` (a dict or an open ``.npz``)."""
        try:
            kappa, metric = int(arrays["kappa"]), str(arrays["metric"])
            cols = [np.asarray(arrays[k], np.float64) for k in ("r", "sigma", "mu", "sd")]
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"not saved neighbour statistics: {e}") from None
        n = cols[0].shape
        if len(n) != 1 or any(c.shape != n for c in cols) or not all(np.isfinite(c).all() for c in cols):
            raise InputError("saved neighbour statistics are inconsistent (shapes or NaN)")
        return cls(kappa, Metric.parse(metric).value, *cols)


# -- statistics ------------------------------------------------------------------------------


def base_statistics(base: Any, kappa: int = 10, metric: Metric | str = "cosine") -> NeighbourStatistics:
    """Statistics of each base item's ``kappa`` nearest neighbours in the base, itself excluded.

    One exact ``(kappa + 1)``-NN search of the base against itself (duplicates of an
    item count as its neighbours; only the item itself is left out). The result
    depends on the base alone: cache it and pass it to :func:`reduce_hubness`.

    Parameters
    ----------
    base : (n, d) array, ``n > kappa``
    kappa : int
        Neighbourhood size (10 in Lample et al. and scikit-hubness).
    metric : ``cosine``, ``ip`` or ``l2``

    Examples
    --------
    >>> base = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    >>> st = base_statistics(base, kappa=1)
    >>> st.r.round(2).tolist(), st.sigma.round(2).tolist()
    ([0.8, 0.8, 0.6], [0.2, 0.2, 0.4])
    """
    metric = Metric.parse(metric)
    kappa = positive_int(kappa, "kappa")
    x = _prepare(base, "base", metric)
    return _base_stats(x, kappa, metric)


def query_statistics(queries: Any, base: Any, kappa: int = 10,
                     metric: Metric | str = "cosine") -> NeighbourStatistics:
    """Statistics of each query's ``kappa`` nearest base items (nothing excluded).

    Examples
    --------
    >>> base = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    >>> query_statistics([[1.0, 0.0]], base, kappa=2).r.round(2).tolist()
    [0.9]
    """
    metric = Metric.parse(metric)
    kappa = positive_int(kappa, "kappa")
    x = _prepare(base, "base", metric)
    q = _prepare(queries, "queries", metric, x.shape[1])
    if x.shape[0] < kappa:
        raise InputError(f"kappa={kappa} needs at least {kappa} base items, got {x.shape[0]}")
    s, _ = exact_search(q, x, kappa, _search_metric(metric))
    return _stats(s.astype(np.float64), kappa, metric)


def _base_stats(x: np.ndarray, kappa: int, metric: Metric) -> NeighbourStatistics:
    n = x.shape[0]
    if n < kappa + 1:
        raise InputError(f"kappa={kappa} needs at least {kappa + 1} base items (each item's neighbours "
                         f"exclude itself), got {n}")
    s, idx = exact_search(x, x, kappa + 1, _search_metric(metric))
    keep = idx != np.arange(n)[:, None]
    absent = keep.all(axis=1)  # itself beyond the list (many exact duplicates): drop the last instead
    keep[absent, -1] = False
    return _stats(s[keep].reshape(n, kappa).astype(np.float64), kappa, metric)


def _stats(scores: np.ndarray, kappa: int, metric: Metric) -> NeighbourStatistics:
    """From exact_search's scores of the kappa neighbours (similarities, or l2 distances)."""
    sim, dist = _sim_dist(scores, metric)
    return NeighbourStatistics(kappa, metric.value, sim.mean(axis=1), dist[:, -1].copy(),
                               dist.mean(axis=1), dist.std(axis=1))


# -- the building blocks ---------------------------------------------------------------------


def mutual_proximity(dist: Any, mu_q: Any, sd_q: Any, mu_b: Any, sd_b: Any, *, log: bool = False) -> np.ndarray:
    """Mutual proximity, Gaussian approximation: ``SF(d; μ_q, σ_q)·SF(d; μ_b, σ_b)``.

    Larger is better (a probability in [0, 1]). Standard deviations are floored at
    :data:`SCALE_FLOOR`. With ``log=True`` the natural log is returned, computed
    stably (``scipy.special.log_ndtr``), which keeps far-apart pairs distinguishable
    where the product underflows to 0; rankings use it.

    Parameters
    ----------
    dist : (m, n) array
        Distances of queries to base items.
    mu_q, sd_q : (m,) arrays
    mu_b, sd_b : (n,) or (m, n) arrays

    Examples
    --------
    >>> mutual_proximity([[1.0]], [1.0], [0.5], [2.0], [0.5]).round(4).tolist()
    [[0.4886]]
    """
    dist, mq, mb = _broadcast(dist, mu_q, mu_b)
    _, sq, sb = _broadcast(dist, sd_q, sd_b)
    sq, sb = np.maximum(sq, SCALE_FLOOR), np.maximum(sb, SCALE_FLOOR)
    out = log_ndtr((mq - dist) / sq) + log_ndtr((mb - dist) / sb)
    return out if log else np.exp(out)


def local_scaling(dist: Any, sigma_q: Any, sigma_b: Any, *, log: bool = False) -> np.ndarray:
    """Local scaling as a similarity: ``exp(−d²/(σ_q σ_b))`` (``1 −`` the scaled distance).

    ``σ`` are floored at :data:`SCALE_FLOOR`; ``log=True`` returns the exponent.

    Parameters
    ----------
    dist : (m, n) array
        Non-negative distances of queries to base items.
    sigma_q : (m,) array
        Each query's distance to its ``kappa``-th nearest base item.
    sigma_b : (n,) or (m, n) array
        Each base item's distance to its ``kappa``-th nearest neighbour in the base.

    Examples
    --------
    >>> local_scaling([[1.0, 1.0]], [1.0], [1.0, 4.0]).round(4).tolist()
    [[0.3679, 0.7788]]
    """
    dist, sq, sb = _broadcast(dist, sigma_q, sigma_b)
    exponent = -(dist * dist) / (np.maximum(sq, SCALE_FLOOR) * np.maximum(sb, SCALE_FLOOR))
    return exponent if log else np.exp(exponent)


# -- the search ------------------------------------------------------------------------------


def reduce_hubness(
    queries: Any,
    base: Any,
    k: int,
    method: str = "csls",
    *,
    metric: Metric | str = "cosine",
    kappa: int = 10,
    candidates: int | None = None,
    stats: NeighbourStatistics | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` base items of each query by a hubness-reduced similarity.

    Parameters
    ----------
    queries : (m, d) array
    base : (n, d) array, ``n > kappa``
    k : int
        Results per query (fewer when ``n < k``).
    method : ``csls``, ``mutual-proximity`` (``mp``) or ``local-scaling`` (``ls``)
        See the module documentation for the definitions.
    metric : ``cosine`` (default), ``ip`` or ``l2``
    kappa : int
        Neighbourhood size of the per-item statistics.
    candidates : int or None
        None (default): score every base item for every query (exact; memory
        linear in ``n``, time ``m·n``). An int ``>= k``: re-score only the
        top-``candidates`` plain neighbours of each query (the practical way at
        scale; equal to the exact result once ``candidates = n``).
    stats : NeighbourStatistics or None
        :func:`base_statistics` of this base with this ``kappa`` and ``metric``
        (cached by the caller); computed here when None.

    Returns
    -------
    scores : (m, k') float32
        The reduced similarities, descending (larger is better). Mutual proximity
        and local scaling values can underflow to 0 for far pairs; the order is
        still decided on their logarithms.
    indices : (m, k') int64
        Rows of ``base``; equal scores go to the lower row.

    Examples
    --------
    Items 1-5 crowd together between 30° and 50°; item 0, at 0°, is alone. A query
    at 20° is nearest to the crowd, but CSLS discounts the crowd's density and
    ranks the lone item first:

    >>> deg = np.radians([0, 30, 35, 40, 45, 50])
    >>> base = np.c_[np.cos(deg), np.sin(deg)]
    >>> query = [[np.cos(np.radians(20)), np.sin(np.radians(20))]]
    >>> exact_search(query, base, 2, "cosine")[1].tolist()
    [[1, 2]]
    >>> scores, rows = reduce_hubness(query, base, 2, "csls", kappa=2)
    >>> rows.tolist(), [round(float(s), 3) for s in scores[0]]
    ([[0, 1]], [0.061, 0.004])
    """
    method = parse_method(method)
    metric = Metric.parse(metric)
    k, kappa = positive_int(k, "k"), positive_int(kappa, "kappa")
    if method == "local-scaling" and metric is Metric.IP:
        raise InputError("local scaling needs a non-negative distance; use metric 'cosine' or 'l2', not 'ip'")
    x = _prepare(base, "base", metric)
    q = _prepare(queries, "queries", metric, x.shape[1])
    n = x.shape[0]
    if candidates is not None:
        candidates = check_scalar(candidates, f"candidates (k={k})", int, low=k)
    if stats is None:
        stats = _base_stats(x, kappa, metric)
    elif not isinstance(stats, NeighbourStatistics):
        raise InputError(f"stats must be NeighbourStatistics, not {type(stats).__name__}")
    elif stats.kappa != kappa or stats.metric != metric.value or len(stats) != n:
        raise InputError(f"stats were computed with kappa={stats.kappa}, metric={stats.metric}, n={len(stats)}; "
                         f"this search has kappa={kappa}, metric={metric.value}, n={n}")
    elif n < kappa + 1:
        raise InputError(f"kappa={kappa} needs at least {kappa + 1} base items, got {n}")
    m, kk = q.shape[0], min(k, n)
    if m == 0:
        return np.empty((0, kk), np.float32), np.empty((0, kk), np.int64)
    width = min(n, max(kappa, candidates or 0))
    qs, qi = exact_search(q, x, width, _search_metric(metric))
    qstats = _stats(qs[:, :kappa].astype(np.float64), kappa, metric)
    if candidates is None:
        return _exact(q, x, kk, method, metric, qstats, stats)
    return _rerank(q, x, qi[:, : min(candidates, n)], kk, method, metric, qstats, stats)


def statistics_from_neighbours(scores: Any, kappa: int, metric: Metric | str = "cosine") -> NeighbourStatistics:
    """Statistics from each vector's ``kappa`` nearest-neighbour scores, nearest first.

    ``scores`` are what a search reports: similarities (cosine, ip) or l2
    distances, shape ``(m, kappa)``; for base items the item itself must be
    left out. This is how statistics come from an approximate (HNSW) graph.

    Examples
    --------
    >>> statistics_from_neighbours([[0.9, 0.7]], 2).r.tolist()
    [0.8]
    """
    metric = Metric.parse(metric)
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != kappa:
        raise InputError(f"neighbour scores must have shape (m, {kappa}), not {arr.shape}")
    return _stats(arr, kappa, metric)


def rescore(raw: Any, method: str, metric: Metric | str, query_stats: NeighbourStatistics,
            base_stats: NeighbourStatistics) -> tuple[np.ndarray, np.ndarray]:
    """Hubness-reduced scores of given (query, candidate) pairs, and the order that ranks them.

    Parameters
    ----------
    raw : (m, c) array
        Plain scores of each query's candidates as a search reports them
        (similarities for cosine/ip, distances for l2).
    method : ``csls``, ``mutual-proximity`` or ``local-scaling``
    metric : the space's metric
    query_stats : statistics of the m queries (``kappa`` nearest base items each)
    base_stats : statistics of the candidates, shaped ``(m, c)`` per array

    Returns
    -------
    scores : (m, c) float32, the reduced similarities (larger is better)
    order : (m, c) int64, columns by reduced score descending, ties to the lower column

    Examples
    --------
    >>> q = NeighbourStatistics(1, "cosine", np.array([0.5]), np.array([0.5]), np.array([0.5]), np.array([0.1]))
    >>> b = NeighbourStatistics(1, "cosine", np.array([[0.9, 0.1]]), np.array([[0.1, 0.9]]),
    ...                         np.array([[0.1, 0.9]]), np.array([[0.1, 0.1]]))
    >>> s, o = rescore([[0.6, 0.5]], "csls", "cosine", q, b)
    >>> o.tolist()
    [[1, 0]]
    """
    method = parse_method(method)
    metric = Metric.parse(metric)
    if method == "local-scaling" and metric is Metric.IP:
        raise InputError("local scaling needs a non-negative distance; use metric 'cosine' or 'l2', not 'ip'")
    arr = np.asarray(raw, dtype=np.float64)
    key = _key(arr, method, metric, query_stats, base_stats)
    cols = np.broadcast_to(np.arange(arr.shape[1]), arr.shape)
    order = np.lexsort((cols, -key), axis=-1)
    return _report(key, method), order


def _exact(q: np.ndarray, x: np.ndarray, k: int, method: str, metric: Metric,
           qst: NeighbourStatistics, bst: NeighbourStatistics) -> tuple[np.ndarray, np.ndarray]:
    """Every base item scored for every query, in blocks of queries.

    A float64 matrix product ranks every item; each query's items within
    :data:`TIE_BAND_FLOAT64` of its k-th key are then scored again pair by pair
    (:func:`_rerank`), which decides the result. BLAS rounds an entry differently
    by where it sits and by CPU, so ranking on the product alone gave duplicates
    unequal keys (breaking the lower-row tie rule) and a CPU-dependent order.
    """
    m, n = q.shape[0], x.shape[0]
    x64 = x.astype(np.float64)
    x_sq = np.einsum("ij,ij->i", x64, x64) if metric is Metric.L2 else None
    out_s = np.empty((m, k), np.float32)
    out_i = np.empty((m, k), np.int64)
    step = max(1, HUBNESS_BLOCK_ENTRIES // n)
    for lo in range(0, m, step):
        rows = slice(lo, min(m, lo + step))
        q64 = q[rows].astype(np.float64)
        raw = q64 @ x64.T
        if x_sq is not None:  # ‖q − b‖² by expansion, in float64
            d2 = np.einsum("ij,ij->i", q64, q64)[:, None] - 2.0 * raw + x_sq[None, :]
            raw = np.sqrt(np.maximum(d2, 0.0))
        qst_rows = _take(qst, rows)
        cand = _band(_key(raw, method, metric, qst_rows, bst), k)
        out_s[rows], out_i[rows] = _rerank(q[rows], x, cand, k, method, metric, qst_rows, bst)
    return out_s, out_i


def _rerank(q: np.ndarray, x: np.ndarray, cand: np.ndarray, k: int, method: str, metric: Metric,
            qst: NeighbourStatistics, bst: NeighbourStatistics) -> tuple[np.ndarray, np.ndarray]:
    """Only each query's candidate rows, re-scored pair by pair in float64."""
    m, c = cand.shape
    d = x.shape[1]
    out_s = np.empty((m, k), np.float32)
    out_i = np.empty((m, k), np.int64)
    step = max(1, HUBNESS_BLOCK_ENTRIES // max(1, c * d))
    for lo in range(0, m, step):
        rows = slice(lo, min(m, lo + step))
        ci = cand[rows]
        q64 = q[rows].astype(np.float64)
        xb = x[ci].astype(np.float64)  # (rows, c, d)
        if metric is Metric.L2:
            xb -= q64[:, None, :]
            raw = np.sqrt(np.einsum("pkd,pkd->pk", xb, xb))
        else:
            raw = np.einsum("pkd,pd->pk", xb, q64)
        sub = NeighbourStatistics(bst.kappa, bst.metric, bst.r[ci], bst.sigma[ci], bst.mu[ci], bst.sd[ci])
        key = _key(raw, method, metric, _take(qst, rows), sub)
        order = np.lexsort((ci, -key), axis=-1)[:, :k]
        out_i[rows] = np.take_along_axis(ci, order, axis=1)
        out_s[rows] = _report(np.take_along_axis(key, order, axis=1), method)
    return out_s, out_i


def _key(raw: np.ndarray, method: str, metric: Metric, qst: NeighbourStatistics,
         bst: NeighbourStatistics) -> np.ndarray:
    """The ranking key (larger is better): CSLS itself, or the log of MP / LS."""
    sim, dist = _sim_dist(raw, metric)
    if method == "csls":
        return csls(sim, qst.r, bst.r)
    if method == "mutual-proximity":
        return mutual_proximity(dist, qst.mu, qst.sd, bst.mu, bst.sd, log=True)
    return local_scaling(dist, qst.sigma, bst.sigma, log=True)


def _report(key: np.ndarray, method: str) -> np.ndarray:
    return (key if method == "csls" else np.exp(key)).astype(np.float32)


def _band(key: np.ndarray, k: int) -> np.ndarray:
    """Columns of each row's largest keys: the top ``k`` and every key within :data:`TIE_BAND_FLOAT64`
    of the k-th, padded with the next largest to one width for all rows (``(m, width)``)."""
    m, n = key.shape
    if k >= n:
        return np.broadcast_to(np.arange(n), (m, n))
    kth = -np.partition(-key, k - 1, axis=1)[:, k - 1]
    with np.errstate(invalid="ignore"):  # -inf keys: nothing below them to add
        low = kth - TIE_BAND_FLOAT64 * (np.abs(kth) + 1.0)
        width = max(k, int((key >= low[:, None]).sum(axis=1).max()))
    if width >= n:
        return np.broadcast_to(np.arange(n), (m, n))
    return np.argpartition(-key, width - 1, axis=1)[:, :width]


def _take(st: NeighbourStatistics, rows: slice) -> NeighbourStatistics:
    return NeighbourStatistics(st.kappa, st.metric, st.r[rows], st.sigma[rows], st.mu[rows], st.sd[rows])


def _sim_dist(raw: np.ndarray, metric: Metric) -> tuple[np.ndarray, np.ndarray]:
    """(similarity, distance) from what exact_search reports: similarities, or l2 distances."""
    if metric is Metric.L2:
        return -raw, raw
    if metric is Metric.COSINE:
        return raw, 1.0 - raw
    return raw, -raw


def _search_metric(metric: Metric) -> str:
    return "l2" if metric is Metric.L2 else "ip"  # cosine: rows are normalised by _prepare


def _prepare(a: Any, what: str, metric: Metric, d: int | None = None) -> np.ndarray:
    """A float32 C-contiguous 2-D array, checked; unit rows for cosine."""
    if not metric.is_vector_space:
        raise InputError(f"hubness reduction is not available for a {metric.value} space: its rescoring works on "
                         f"l2 or inner-product scores (search it without --hubness)")
    try:
        arr = np.asarray(a, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise InputError(f"{what} is not a numeric matrix: {e}") from None
    if arr.ndim == 1 and what == "queries":
        arr = arr[None, :]
    if arr.ndim != 2:
        raise InputError(f"{what} must be a 2-D array (rows, dimensions), not shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise InputError(f"{what} have {arr.shape[1]} dimensions; the base has {d}")
    if not np.isfinite(arr).all():
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise InputError(f"{what} has NaN or infinite values (row {bad})")
    arr = normalize_rows(arr) if metric is Metric.COSINE else arr
    return np.ascontiguousarray(arr)


def parse_method(method: Any) -> str:
    """The canonical name of a hubness reduction (``mp`` and ``ls`` accepted), or an :class:`InputError`.

    Examples
    --------
    >>> parse_method("MP"), parse_method("csls")
    ('mutual-proximity', 'csls')
    """
    key = str(method).strip().lower()
    key = _METHOD_ALIASES.get(key, key)
    if key not in METHODS:
        raise InputError(f"unknown hubness reduction {method!r}; use one of: {', '.join(METHODS)} (or mp, ls)")
    return key
