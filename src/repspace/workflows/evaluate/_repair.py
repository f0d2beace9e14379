"""Repairs inside an evaluation: a transform fitted on the task's own vectors, and query-time hubness reduction.

A *transform* (``--transform center,whiten128``, :mod:`repspace.engines.transforms`) makes a
derived space: it is fitted, without labels, on the vectors the task embeds
anyway, then every vector the task scores (documents and queries, both sides of
each pair, ...) goes through it. What it is fitted on, per task:

==================  ===========================================================
task                fitted on
==================  ===========================================================
``sts``             the distinct sentences of the split (both sides)
``pairclass``       the distinct sentences of the file (both sides)
``retrieval``       the corpus documents (one row per document); queries are
                    only transformed, never fitted on
``clustering``,     the distinct texts of the file, or the labelled vectors of a
``classification``  space (``--label-field``); labels are never seen
``wordsim``,        a stored space (a vocabulary such as GloVe): the whole
``analogy``         vocabulary, or its first ``restrict_vocab`` words; an
                    encoder: the task's distinct (lower-cased) words
==================  ===========================================================

The word tasks differ on purpose: WS-353 has 437 distinct words, too few to fit a
50- or 300-d covariance and not a sample of the vocabulary, while
all-but-the-top (Mu & Viswanath 2018) is defined on the vocabulary. Text tasks
follow Su et al. (2021), who fit whitening on the sentences being scored.

A compression codec, when given too, is fitted after the transform, on the
transformed vectors. The result records ``transform`` (the canonical spec),
``transform_fit`` (what it was fitted on, how many rows, dimensions in and out)
and ``transform_provenance`` (each fitted step with a sha256 of its state).

*Hubness reduction* (``--hubness csls``, :mod:`repspace.engines.search.hubness`) re-scores
retrieval at query time: every document is scored for every query with CSLS,
mutual proximity or local scaling, whose per-document statistics come from each
document's ``kappa`` nearest documents in the corpus. It is recorded as
``hubness_reduction``.

Both can report the hubness of what was scored (``measure_hubness=k``): the
k-occurrence skewness and Robin Hood index of the fitted rows after the
transform (``repspace.engines.geometry.hubness``, cosine); with a hubness reduction, of
the corpus's k-NN graph under the reduced similarity (each document against the
other documents, both sides' statistics from the corpus).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.core.limits import HUBNESS_BLOCK_ENTRIES, TIE_BAND_FLOAT64
from repspace.engines.eval import TaskResult, as_encode, as_query_encode
from repspace.engines.eval.retrieval import (
    DEPTH,
    MAIN_METRIC,
    BeirData,
    retrieval_scores,
)
from repspace.engines.eval.ranking import query_scores
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic
from repspace.engines.eval.units import query_units
from repspace.engines.eval.words import WordVectors
from repspace.engines.geometry import HubnessResult, KnnGraph, hubness
from repspace.engines.search.hubness import (
    METHODS,
    NeighbourStatistics,
    base_statistics,
    csls,
    local_scaling,
    mutual_proximity,
    reduce_hubness,
)
from repspace.engines.transforms import (
    PCA,
    Transform,
    Whiten,
    format_transforms,
    parse_transforms,
    transforms_provenance,
)

__all__ = [
    "HUBNESS_METHODS",
    "FittedTransform",
    "fit_transform",
    "hubness_retrieval",
    "neighbour_hubness",
    "parse_hubness",
    "parse_transform",
    "transform_output_dim",
]

#: The query-time hubness reductions ``--hubness`` accepts.
HUBNESS_METHODS = METHODS
_HUBNESS_ALIASES = {"mp": "mutual-proximity", "ls": "local-scaling"}
#: Neighbourhood size of the hubness-reduction statistics (Lample et al. 2018; scikit-hubness).
DEFAULT_KAPPA = 10
#: Largest corpus whose reduced k-NN graph :func:`neighbour_hubness` computes (it scores all n² pairs).
REDUCED_GRAPH_MAX = 50_000
#: Largest float64 array of gathered candidate rows while re-scoring, in entries (64 MiB).
_RESCORE_ENTRIES = 8 * 1024 * 1024


def parse_transform(spec: str | None) -> str | None:
    """The canonical spec of a transform chain, or None for no transform; an :class:`InputError` if malformed.

    Examples
    --------
    >>> parse_transform(" Center , WHITEN128 "), parse_transform("none"), parse_transform(None)
    ('center,whiten128', None, None)
    >>> parse_transform("center,sphere")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: unknown transform 'sphere' in 'center,sphere'; accepted: center, normalize, ...
    """
    if spec is None:
        return None
    steps = parse_transforms(spec)
    return format_transforms(steps) if steps else None


def parse_hubness(method: str | None) -> str | None:
    """The canonical name of a hubness reduction (``csls``, ``mutual-proximity``, ``local-scaling``), or None.

    ``mp`` and ``ls`` are accepted, and underscores for hyphens.

    Examples
    --------
    >>> parse_hubness("CSLS"), parse_hubness("mutual_proximity"), parse_hubness("ls"), parse_hubness(None)
    ('csls', 'mutual-proximity', 'local-scaling', None)
    >>> parse_hubness("zscore")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: unknown hubness reduction 'zscore'; use csls, mutual-proximity or local-scaling
    """
    if method is None:
        return None
    key = str(method).strip().lower().replace("_", "-")
    key = _HUBNESS_ALIASES.get(key, key)
    if key in ("", "none"):
        return None
    if key not in HUBNESS_METHODS:
        raise InputError(f"unknown hubness reduction {method!r}; use {', '.join(HUBNESS_METHODS[:-1])} or "
                         f"{HUBNESS_METHODS[-1]}")
    return key


def transform_output_dim(spec: str | None, dim: int) -> int:
    """The dimension a chain's output will have for ``dim``-d input (before fitting; for sweep planning).

    Examples
    --------
    >>> transform_output_dim("center,whiten128,normalize", 384), transform_output_dim("abtt3", 384)
    (128, 384)
    """
    out = dim
    for step in parse_transforms(spec or ""):
        if isinstance(step, Whiten) and step.k is not None:
            out = min(out, int(step.k))
        elif isinstance(step, PCA) and isinstance(step.n_components, int):
            out = min(out, int(step.n_components))
    return out


@dataclass(frozen=True, eq=False)
class FittedTransform:
    """A transform chain fitted on a task's own vectors.

    Attributes
    ----------
    spec : str
        The canonical spec (``center,whiten128``).
    steps : list of Transform
        The fitted steps, in the order they apply.
    fitted_on : str
        What the rows were (``distinct sentences``, ``corpus documents``, ``vocabulary``...).
    n_fit : int
        How many rows it was fitted on.
    dim_in, dim_out : int

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 6))
    >>> ft = fit_transform("center,whiten3", X, fitted_on="toy rows")
    >>> ft.transform(X).shape, ft.info()["transform"], ft.info()["transform_fit"]["n"]
    ((50, 3), 'center,whiten3', 50)
    """

    spec: str
    steps: list[Transform]
    fitted_on: str
    n_fit: int
    dim_in: int
    dim_out: int

    def transform(self, X: Any) -> np.ndarray:
        """Apply every step; float32 ``(n, dim_out)``."""
        out = np.asarray(X, dtype=np.float32)
        for step in self.steps:
            out = step.transform(out)
        return out

    def info(self) -> dict[str, Any]:
        """What a TaskResult records: ``transform``, ``transform_fit``, ``transform_provenance``."""
        return {
            "transform": self.spec,
            "transform_fit": {"on": self.fitted_on, "n": self.n_fit, "dim_in": self.dim_in,
                              "dim_out": self.dim_out, "labels": False},
            "transform_provenance": transforms_provenance(self.steps),
        }

    def encode(self, encode: Callable[[list[str]], np.ndarray]) -> Callable[[list[str]], np.ndarray]:
        """``encode`` followed by this transform (what a task is handed)."""

        def transformed(texts: list[str]) -> np.ndarray:
            return self.transform(encode(list(texts)))

        return transformed

    def words(self, vectors: WordVectors, restrict_vocab: int | None = None) -> WordVectors:
        """A vocabulary table with transformed vectors (only its first ``restrict_vocab`` words, if given)."""
        n = len(vectors) if restrict_vocab is None else min(int(restrict_vocab), len(vectors))
        return WordVectors(vectors.words[:n], self.transform(vectors.vectors[:n]), lowercase=vectors.lowercase)


def fit_transform(spec: str, X: Any, *, fitted_on: str = "rows") -> FittedTransform:
    """Fit a transform chain on the rows of ``X`` (no labels: there are none to give).

    Parameters
    ----------
    spec : str
        A :func:`repspace.engines.transforms.parse_transforms` spec.
    X : (n, d) array
    fitted_on : str
        What the rows are, recorded with the result.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(40, 4)) + 3.0
    >>> ft = fit_transform("center,normalize", X, fitted_on="distinct sentences")
    >>> ft.spec, ft.n_fit, (ft.dim_in, ft.dim_out), ft.info()["transform_fit"]["on"]
    ('center,normalize', 40, (4, 4), 'distinct sentences')
    >>> Z = ft.transform(X)
    >>> bool(np.allclose(np.linalg.norm(Z, axis=1), 1.0, atol=1e-6))
    True
    >>> fit_transform("", X)
    Traceback (most recent call last):
    repspace.core.errors.InputError: the transform spec names no transform
    """
    steps = parse_transforms(spec)
    if not steps:
        raise InputError("the transform spec names no transform")
    arr = np.asarray(X, dtype=np.float32)
    if arr.ndim != 2:
        raise InputError(f"a transform is fitted on an (n, d) array, not shape {arr.shape}")
    out = arr
    for step in steps:
        out = step.fit(out).transform(out)
    return FittedTransform(format_transforms(steps), steps, fitted_on, int(arr.shape[0]), int(arr.shape[1]),
                           int(out.shape[1]))


# -- hubness of what is scored -----------------------------------------------------------------


def neighbour_hubness(X: Any, k: int = 10, *, reduction: str | None = None,
                      kappa: int = DEFAULT_KAPPA) -> HubnessResult:
    """Hubness of the cosine k-NN graph of ``X``, or of the graph under a hubness-reduced similarity.

    Without ``reduction`` this is :func:`repspace.engines.geometry.hubness` (cosine; exact
    up to 50,000 rows, HNSW with its recall above). With one, each row is scored
    against every other row by CSLS / mutual proximity / local scaling, both
    sides' statistics being those of their ``kappa`` nearest other rows
    (:func:`repspace.engines.search.hubness.base_statistics`), and the ``k`` best other
    rows are its neighbours (exact, every pair scored; at most
    :data:`REDUCED_GRAPH_MAX` rows; equal scores go to the lower row). The rows
    within :data:`TIE_BAND_FLOAT64` of a row's k-th score are scored again pair by pair:
    a BLAS product rounds an entry by where it sits and by CPU, which gave
    duplicate rows unequal scores and a graph that differed between CPUs.

    Examples
    --------
    Non-negative, uncentred data (all vectors in one orthant) is hubby under cosine:

    >>> X = np.random.default_rng(0).exponential(size=(500, 100))
    >>> plain, reduced = neighbour_hubness(X), neighbour_hubness(X, reduction="csls")
    >>> round(plain.k_skewness, 2), round(reduced.k_skewness, 2), reduced.metric
    (1.68, 0.88, 'csls')
    """
    if reduction is None:
        return hubness(np.asarray(X, dtype=np.float32), k, metric="cosine")
    method = parse_hubness(reduction)
    x = normalize_rows(np.asarray(X, dtype=np.float32))
    n = x.shape[0]
    if n > REDUCED_GRAPH_MAX:
        raise InputError(f"the reduced k-NN graph scores all pairs; {n} rows is more than {REDUCED_GRAPH_MAX}")
    if n <= max(k, kappa):
        raise InputError(f"k={k} and kappa={kappa} need more than {max(k, kappa)} rows, got {n}")
    st = base_statistics(x, kappa=kappa, metric="cosine")
    x64 = x.astype(np.float64)
    idx = np.empty((n, k), np.int64)
    dist = np.empty((n, k), np.float32)
    step = max(1, HUBNESS_BLOCK_ENTRIES // n)
    for lo in range(0, n, step):
        own = np.arange(lo, min(n, lo + step))
        key = _reduced_key(x64[own] @ x64.T, method, st, own, slice(None))
        key[np.arange(len(own)), own] = -np.inf  # an item is not its own neighbour
        idx[own], best = _reduced_top_k(x64, own, _band(key, k), k, method, st)
        dist[own] = -best
    return hubness(KnnGraph(idx, dist, method, "exact"), k)


def _reduced_key(sim: np.ndarray, method: str, st: NeighbourStatistics, rows: np.ndarray,
                 cols: np.ndarray | slice) -> np.ndarray:
    """The reduced similarity of rows ``rows`` to columns ``cols`` (larger is better; MP and LS as logs)."""
    if method == "csls":
        return csls(sim, st.r[rows], st.r[cols])
    if method == "mutual-proximity":
        return mutual_proximity(1.0 - sim, st.mu[rows], st.sd[rows], st.mu[cols], st.sd[cols], log=True)
    return local_scaling(1.0 - sim, st.sigma[rows], st.sigma[cols], log=True)


def _band(key: np.ndarray, k: int) -> np.ndarray:
    """Columns of each row's top ``k`` keys and of every key within :data:`TIE_BAND_FLOAT64` of the k-th."""
    m, n = key.shape
    kth = -np.partition(-key, k - 1, axis=1)[:, k - 1]
    low = kth - TIE_BAND_FLOAT64 * (np.abs(kth) + 1.0)
    width = max(k, int((key >= low[:, None]).sum(axis=1).max()))
    if width >= n:
        return np.broadcast_to(np.arange(n), (m, n))
    return np.argpartition(-key, width - 1, axis=1)[:, :width]


def _reduced_top_k(x64: np.ndarray, own: np.ndarray, cand: np.ndarray, k: int, method: str,
                   st: NeighbourStatistics) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best candidates of each row, scored again pair by pair (``einsum``: equal rows get
    equal scores), by (score desc, row asc); their rows and scores."""
    m, c = cand.shape
    top = np.empty((m, k), np.int64)
    best = np.empty((m, k))
    step = max(1, _RESCORE_ENTRIES // (c * x64.shape[1]))
    for lo in range(0, m, step):
        sub = slice(lo, lo + step)
        ci = cand[sub]
        key = _reduced_key(np.einsum("pkd,pd->pk", x64[ci], x64[own[sub]]), method, st, own[sub], ci)
        key[ci == own[sub, None]] = -np.inf
        order = np.lexsort((ci, -key), axis=-1)[:, :k]
        top[sub] = np.take_along_axis(ci, order, axis=1)
        best[sub] = np.take_along_axis(key, order, axis=1)
    return top, best


def hubness_info(result: HubnessResult, of: str) -> dict[str, Any]:
    """The ``hubness`` block a TaskResult records."""
    return {"of": of, "n": len(result.k_occurrence), "k": int(result.k), "similarity": result.metric,
            "k_skewness": float(result.k_skewness), "robin_hood": float(result.robin_hood),
            "antihub_rate": float(result.antihub_rate), "hub_occurrence": float(result.hub_occurrence),
            "knn": result.knn_method,
            "knn_recall": None if result.knn_recall is None else float(result.knn_recall)}


# -- retrieval with hubness reduction --------------------------------------------------------


def hubness_retrieval(encode: Callable[[list[str]], np.ndarray], data: BeirData, method: str, *,
                      kappa: int = DEFAULT_KAPPA, codec: Any = None, k: int = DEPTH,
                      name: str | None = None, encode_queries: Any = None, bootstrap: int = DEFAULT_RESAMPLES,
                      seed: int = 0) -> TaskResult:
    """Retrieval ranked by a hubness-reduced similarity (every document scored for every query, exactly).

    The documents' statistics come from their ``kappa`` nearest documents (cosine),
    the queries' from their ``kappa`` nearest documents. A codec, when given, is
    fitted on the documents and applied to both first (as :func:`repspace.engines.eval.retrieval` does).
    Queries are embedded by their own side, as :func:`repspace.engines.eval.retrieval` does:
    ``encode_queries`` if given, else ``encode.encode_queries`` if it has one, else ``encode``.
    ``bootstrap`` resamples of the queries (seeded by ``seed``; 0: none) give the main
    score's interval, as :func:`repspace.engines.eval.retrieval` does.

    Returns
    -------
    TaskResult
        The scores of :func:`repspace.engines.eval.retrieval` (``k`` documents per
        query, 1000 by default: every document is scored, so the ranking is exact)
        and the interval of nDCG@10 over the queries;
        info ``index`` = ``exact`` and ``hubness_reduction`` = ``{"method", "kappa", "metric", "statistics"}``.

    Examples
    --------
    >>> data = BeirData(("d1", "d2", "d3"), ("a cat purrs", "stocks fell", "the dog barks"),
    ...                 ("q1",), ("a purring cat",), {"q1": {"d1": 1}}, "test", "toy")
    >>> r = hubness_retrieval(lambda t: np.array([[s.count("cat"), 1.0, len(s)] for s in t]), data, "csls", kappa=1)
    >>> r.main_score, r.info["hubness_reduction"]["method"]
    (1.0, 'csls')
    """
    method = parse_hubness(method) or "csls"
    t0 = time.perf_counter()
    docs = as_encode(encode)(list(data.corpus_texts))
    queries = as_query_encode(encode, encode_queries)(list(data.query_texts))
    if docs.shape[1] != queries.shape[1]:
        raise InputError(f"documents were encoded to {docs.shape[1]} dimensions but queries to {queries.shape[1]}")
    info: dict[str, Any] = {"n_queries": data.n_queries, "n_documents": data.n_documents, "index": "exact",
                            "depth": k, "dropped_qrels": data.dropped_qrels, "dropped_queries": data.dropped_queries}
    if codec is not None:
        codec.fit(docs)
        docs = np.asarray(codec.transform(docs), dtype=np.float32)
        queries = np.asarray(codec.transform(queries), dtype=np.float32)
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    _, rows = reduce_hubness(queries, docs, k, method, metric="cosine", kappa=kappa)
    ids = np.asarray(data.corpus_ids, dtype=object)
    run = {qid: ids[r].tolist() for qid, r in zip(data.query_ids, rows)}
    scores = retrieval_scores(run, data.qrels, k)
    per_query = query_scores(run, data.qrels, (10,))
    interval = None
    if bootstrap and len(per_query) > 1:
        interval = bootstrap_interval(mean_statistic, np.array([v[MAIN_METRIC] for v in per_query.values()]),
                                      n_resamples=bootstrap, seed=seed)
    info["hubness_reduction"] = {"method": method, "kappa": kappa, "metric": "cosine",
                                 "statistics": "kappa nearest corpus documents"}
    return TaskResult(name or f"retrieval:{data.name}", data.split, MAIN_METRIC, scores,
                      time.perf_counter() - t0, info, interval=interval, units=query_units(per_query, MAIN_METRIC))


def distinct(texts: Iterable[str]) -> list[str]:
    """The texts without repeats, in first-seen order."""
    return list(dict.fromkeys(texts))
