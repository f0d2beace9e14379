"""Local-topology features of each item against a datastore: how far its neighbours are, how many dimensions its
neighbourhood spans, and how mixed that neighbourhood is.

For every query row ``x`` and its ``k`` nearest rows of the datastore (the rows themselves, ``x`` excluded, or
another set of rows of the same dimension):

``kdist``
    The distance to the ``k``-th neighbour, in the metric's distance (``cosine``: ``1 − cos``; ``l2``: Euclidean;
    ``ip``: ``−x·y``).
``mean_kdist``
    The mean of the ``k`` distances.
``local_id``
    Levina & Bickel's maximum-likelihood local intrinsic dimension over the ``k`` neighbours,
    ``(k − 1) / Σ_{j<k} log(T_k / T_j)`` on Euclidean distances ``T`` (for ``cosine``, the chord
    ``√(2(1 − cos))`` between unit rows; for ``ip``, ``‖x − y‖`` of the raw rows), as
    :func:`repspace.engines.geometry.intrinsic.local_id_from_distances` computes it (the ambient ``d`` where
    every neighbour is at one distance).
``entropy``
    Without labels, the Shannon entropy (nats) of ``softmax(s / τ)`` over the ``k`` neighbour similarities ``s``
    (``cosine``: ``cos``; ``ip``: ``x·y``; ``l2``: ``−‖x − y‖``; ``τ = 0.1`` by default): ``log k`` when the
    neighbours are equally near, lower when a few dominate. With labels of the datastore rows, the entropy of the
    neighbours' label counts (nats): 0 when all ``k`` share a label, ``log k`` when all differ.

Neighbours come from :mod:`repspace.core.knn`: exact blocked search (:func:`repspace.core.exact.exact_search`)
of the queries in blocks of :data:`BLOCK` (the progress counts them), or, for a datastore that is the space
itself above :data:`repspace.core.knn.EXACT_MAX` items, the HNSW graph of :func:`repspace.core.knn.knn_graph`
with its measured recall. Memory is ``O((n + m) · d + n · k)``: no ``n × m`` matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import exact_search
from repspace.core.knn import EXACT_MAX, knn_graph, merge_candidates, prepare_rows
from repspace.core.progress import Progress, Tally
from repspace.core.space import Metric
from repspace.engines.geometry.intrinsic import local_id_from_distances

__all__ = ["BLOCK", "DEFAULT_TEMPERATURE", "FEATURES", "LocalTopology", "local_topology"]

#: Queries searched and measured at once.
BLOCK = 4096
#: Temperature of the softmax over neighbour similarities (the entropy without labels).
DEFAULT_TEMPERATURE = 0.1
#: The per-item features, in the order they are reported.
FEATURES = ("kdist", "mean_kdist", "local_id", "entropy")
#: Quantiles of each feature reported.
_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _summary(v: np.ndarray) -> dict[str, float]:
    q = np.quantile(v, _QUANTILES) if len(v) else [float("nan")] * len(_QUANTILES)
    out = {"mean": float(v.mean()), "std": float(v.std()), "min": float(v.min()), "max": float(v.max())}
    out |= {f"q{round(p * 100):02d}": float(x) for p, x in zip(_QUANTILES, q)}
    return {k: round(x, 9) for k, x in out.items()}


@dataclass(frozen=True, eq=False)
class LocalTopology:
    """Per-item local-topology features of ``n`` queries against a datastore of ``m`` rows.

    Attributes
    ----------
    kdist, mean_kdist, local_id, entropy : ndarray of shape (n,), float64
        The features of the module's description, row-aligned with the queries.
    k : int
    metric : str
    n, m : int
        Queries and datastore rows.
    against : bool
        The datastore is another set of rows (no item excluded) rather than the queries themselves (each query
        excluded from its own neighbours).
    entropy_of : str
        ``softmax`` (of neighbour similarities at ``temperature``) or ``labels`` (of the neighbours' labels).
    temperature : float or None
    method : str
        ``exact`` or ``hnsw``; ``recall`` (HNSW: recall@k on ``recall_sample`` items) else ``None``.

    Examples
    --------
    >>> t = local_topology(np.eye(4), k=2)
    >>> t.kdist.tolist(), t.to_dict()["features"]["kdist"]["mean"]
    ([1.0, 1.0, 1.0, 1.0], 1.0)
    """

    kdist: np.ndarray = field(repr=False)
    mean_kdist: np.ndarray = field(repr=False)
    local_id: np.ndarray = field(repr=False)
    entropy: np.ndarray = field(repr=False)
    k: int
    metric: str
    n: int
    m: int
    against: bool
    entropy_of: str
    temperature: float | None
    method: str
    recall: float | None = None
    recall_sample: int = 0

    def feature(self, name: str) -> np.ndarray:
        """One feature's per-item values by name (one of :data:`FEATURES`).

        Examples
        --------
        >>> local_topology(np.eye(3), k=2).feature("kdist").tolist()
        [1.0, 1.0, 1.0]
        """
        if name not in FEATURES:
            raise InputError(f"feature must be one of {', '.join(FEATURES)}, not {name!r}")
        return getattr(self, name)

    def to_dict(self) -> dict[str, Any]:
        """``{"k", "metric", "n", "m", "self_excluded", "entropy_of", "temperature", "method", "recall",
        "recall_sample", "features": {feature: {"mean", "std", "min", "max", "q05", "q25", "q50", "q75",
        "q95"}}}``."""
        return {"k": self.k, "metric": self.metric, "n": self.n, "m": self.m, "self_excluded": not self.against,
                "entropy_of": self.entropy_of, "temperature": self.temperature, "method": self.method,
                "recall": self.recall, "recall_sample": self.recall_sample,
                "features": {f: _summary(self.feature(f)) for f in FEATURES}}


def _label_entropy(codes: np.ndarray) -> np.ndarray:
    """Entropy (nats) of each row's label counts; ``codes`` ``(b, k)`` int."""
    s = np.sort(codes, axis=1)
    k = codes.shape[1]
    out = np.zeros(len(codes))
    run = np.ones(len(codes))
    for j in range(1, k + 1):  # runs of equal codes in the sorted rows are the counts
        end = np.ones(len(codes), bool) if j == k else s[:, j] != s[:, j - 1]
        p = run / k
        out -= np.where(end, p * np.log(p), 0.0)
        if j < k:
            run = np.where(end, 1.0, run + 1.0)
    return out + 0.0


def _softmax_entropy(sims: np.ndarray, temperature: float) -> np.ndarray:
    """Entropy (nats) of ``softmax(sims / τ)`` per row, stably."""
    z = sims / temperature
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(np.exp(logp) * logp).sum(axis=1)


def _features(q: np.ndarray, base: np.ndarray, idx: np.ndarray, dist: np.ndarray, metric: Metric,
              codes: np.ndarray | None, temperature: float, d: int) -> tuple[np.ndarray, ...]:
    """The four features of one block: ``q`` the block's prepared rows, ``idx``/``dist`` its neighbours."""
    dist = dist.astype(np.float64)
    if metric is Metric.COSINE:
        sims = 1.0 - dist
        euclid = np.sqrt(np.maximum(2.0 * dist, 0.0))
    elif metric is Metric.L2:
        sims = -dist
        euclid = dist
    else:
        sims = -dist
        qq = np.einsum("ij,ij->i", q, q, dtype=np.float64)[:, None]
        bb = np.einsum("ij,ij->i", base, base, dtype=np.float64)[idx]
        euclid = np.sqrt(np.maximum(qq + bb - 2.0 * sims, 0.0))
    lid = local_id_from_distances(np.sort(euclid, axis=1), d)
    ent = _label_entropy(codes[idx]) if codes is not None else _softmax_entropy(sims, temperature)
    return dist[:, -1], dist.mean(axis=1), lid, ent


def local_topology(X: Any, base: Any = None, k: int = 10, *, metric: Metric | str = "cosine",
                   labels: Any = None, temperature: float = DEFAULT_TEMPERATURE, exact: bool | None = None,
                   recall_sample: int = 1000, seed: int | None = 0, exclude: Any = None,
                   progress: Progress | None = None) -> LocalTopology:
    """Per-item kNN distances, local intrinsic dimension and neighbourhood entropy of ``X`` against a datastore
    (see the module's description).

    Parameters
    ----------
    X : array of shape (n, d)
        The items (finite).
    base : array of shape (m, d), optional
        The datastore; ``None``: ``X`` itself, each item excluded from its own neighbours.
    k : int
        Neighbours (``k ≥ 2``: the local ID needs two distances); fewer than the datastore's rows (than ``n``
        without ``base``).
    metric : ``cosine``, ``ip`` or ``l2``
    labels : sequence of length m (n without ``base``), optional
        A label per datastore row: the entropy is that of the neighbours' labels instead of the softmax's.
    temperature : float
        ``τ`` of the softmax (``> 0``).
    exact : bool or None
        Without ``base``: as :func:`repspace.core.knn.knn_graph` (``None``: exact up to 50,000 items, HNSW
        above). With ``base`` the search is always exact.
    recall_sample, seed
        For HNSW: items behind its measured recall, and their seed.
    exclude : sequence of n ints, optional
        With ``base``: the datastore row left out of each item's neighbours (the item itself, stored in the
        datastore too), ``-1`` for none.
    progress : Progress, optional
        ``progress("local topology", done, n)`` as blocks of queries finish (and ``"knn graph"`` 0/1, 1/1 around
        an HNSW graph).

    Returns
    -------
    LocalTopology

    Raises
    ------
    InputError
        Bad arrays, dimensions that differ, ``k < 2`` or too large, an unknown metric, labels or ``exclude``
        of the wrong length (``exclude`` without ``base``), ``temperature ≤ 0``.

    Examples
    --------
    Points on a line in 5 dimensions: a local dimension near 1; five equally near neighbours: entropy log 5.

    >>> X = np.outer(np.arange(200.0), np.ones(5)) + np.random.default_rng(0).uniform(0, 0.1, (200, 5))
    >>> t = local_topology(X, k=10, metric="l2")
    >>> round(float(np.median(t.local_id)), 0), t.method
    (1.0, 'exact')
    >>> star = np.vstack([np.zeros(3), np.eye(3), -np.eye(3)[:2]])
    >>> round(float(local_topology(star, k=5, metric="l2").entropy[0]), 4) == round(float(np.log(5)), 4)
    True
    """
    metric = Metric.parse(metric)
    if metric is Metric.POINCARE:
        raise InputError("local topology needs a vector-space metric (cosine, ip or l2), not poincare")
    k = check_scalar(k, "k", int, low=2)
    temperature = check_scalar(temperature, "temperature", float, low=0, include="neither")
    X = as_matrix(X)
    n, d = X.shape
    against = base is not None
    B = as_matrix(base, "base") if against else X
    m = B.shape[0]
    if B.shape[1] != d:
        raise InputError(f"the datastore has {B.shape[1]} dimensions, the items {d}")
    room = m if against else m - 1
    if k > room:
        raise InputError(f"k={k} needs at least {k + (0 if against else 1)} datastore rows, got {m}")
    skip = None
    if exclude is not None:
        if not against:
            raise InputError("exclude applies to another datastore (base); the items themselves are always excluded")
        skip = np.asarray(exclude, dtype=np.int64)
        if skip.shape != (n,) or (skip >= m).any() or (skip < -1).any():
            raise InputError(f"exclude must be one datastore row (or -1) per item ({n}), got shape {skip.shape}")
        if k > m - 1 and (skip >= 0).any():
            raise InputError(f"k={k} needs at least {k + 1} datastore rows when an item is excluded, got {m}")
    codes = None
    if labels is not None:
        lab = np.asarray(labels, dtype=object)
        if lab.ndim != 1 or len(lab) != m:
            raise InputError(f"labels must be one per datastore row ({m}), got {lab.shape}")
        codes = np.unique(np.asarray([str(v) for v in lab]), return_inverse=True)[1].ravel()
    search = "l2" if metric is Metric.L2 else "ip"
    q = prepare_rows(X, metric)
    b = prepare_rows(B, metric) if against else q
    out = [np.empty(n) for _ in FEATURES]
    method, recall, sampled = "exact", None, 0
    graph = None
    if not against and (exact is False or (exact is None and n > EXACT_MAX)):
        graph_tally = Tally(progress, "knn graph", 1)
        graph = knn_graph(X, k, metric=metric, exact=False, recall_sample=recall_sample, seed=seed)
        graph_tally(1)
        method, recall, sampled = graph.method, graph.recall, graph.recall_sample
    tally = Tally(progress, "local topology", n)
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        if graph is not None:
            idx, dist = graph.indices[lo:hi], graph.distances[lo:hi]
        else:
            rows = np.arange(lo, hi) if not against else (None if skip is None else skip[lo:hi])
            idx, dist = _search(q[lo:hi], b, k, search, metric, rows)
        for o, v in zip(out, _features(q[lo:hi], b, idx, dist, metric, codes, temperature, d)):
            o[lo:hi] = v
        tally(hi - lo)
    return LocalTopology(*out, k=k, metric=metric.value, n=n, m=m, against=against,
                         entropy_of="softmax" if codes is None else "labels",
                         temperature=None if codes is not None else temperature, method=method, recall=recall,
                         recall_sample=sampled)


def _search(q: np.ndarray, b: np.ndarray, k: int, search: str, metric: Metric,
            rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Exact neighbours of prepared query rows: ``(indices, distances)``, the row ``rows[i]`` of ``b`` left out
    of query ``i``'s when ``rows`` is given (a row that is not among the ``k + 1`` nearest, or ``-1``: the
    ``k + 1``-th dropped instead)."""
    if rows is None:
        s, i = exact_search(q, b, k, search)
        s = s.astype(np.float64)
        if metric is Metric.COSINE:
            return i, np.clip(1.0 - s, 0.0, 2.0)
        return i, (s if metric is Metric.L2 else -s)
    s, i = exact_search(q, b, k + 1, search)
    s = s.astype(np.float64)
    scores = -(s * s) if metric is Metric.L2 else s
    idx, dist = merge_candidates(scores, i, rows, k, metric)
    return idx, dist
