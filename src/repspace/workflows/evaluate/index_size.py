"""Index-size stress test: how retrieval quality falls as distractor documents join the index.

A retrieval collection is scored as it is, then again with unrelated documents
(distractors, never judged relevant) added until the index holds ``factor``
times its documents. A system whose top 10 fills with distractors as the
index grows has a false-positive problem that the collection's own size hides:
Reimers & Gurevych (2021, "The Curse of Dense Low-Dimensional Information
Retrieval for Large Index Sizes") show dense retrieval falls faster than BM25
as the index grows. Each point reports precision@10 and nDCG@10 with
percentile bootstrap intervals over the judged queries, the mean number of
distractors in a query's top 10, and the paired drop from the distractor-free
point (bootstrap interval and randomization test,
:func:`~repspace.engines.eval.uncertainty.paired_comparison`).

The indexes are nested: the ``x2`` index holds the ``x1`` documents and the
first distractors, ``x5`` those and the next, so the drops are the cost of the
added documents alone. Dense ranking is exact cosine search; lexical ranking is
BM25 (bm25s, Lucene variant, English stemming and stop words), the same as
:func:`~repspace.engines.eval.retrieval.retrieval` with ``lexical="bm25"``.

The paper's argument is about dimension (fewer dimensions, more room for false
positives), so the dense vectors can also be ranked at reduced widths: a system
``dense-prefix<w>`` keeps the first ``w`` coordinates (a Matryoshka prefix; for an
encoder not trained that way only a stand-in), ``dense-pca<w>`` projects on the top
``w`` principal axes of the largest index's documents (one projection for every
index size, so a drop is still the added documents' alone); both re-normalised
and ranked by exact cosine. The texts are encoded once for every dense system.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import exact_search, normalize_rows
from repspace.engines.eval import as_encode, as_query_encode
from repspace.engines.eval.ranking import query_scores
from repspace.engines.eval.retrieval import BeirData
from repspace.engines.eval.uncertainty import (
    DEFAULT_RESAMPLES,
    Comparison,
    Interval,
    bootstrap_interval,
    mean_statistic,
    paired_comparison,
)

#: The index sizes measured by default, as multiples of the collection's own documents.
DEFAULT_FACTORS = (1, 2, 5, 10)
#: The rankers compared: exact cosine over the encoder's vectors, and BM25 over the texts.
SYSTEMS = ("dense", "bm25")
#: A dense ranker at a reduced width: ``dense-prefix<w>`` or ``dense-pca<w>``.
REDUCED = re.compile(r"dense-(prefix|pca)([1-9][0-9]*)")
#: The cut-off of both measures (precision@10, nDCG@10).
CUTOFF = 10
#: The prefix of a distractor's document id in the runs.
DISTRACTOR_PREFIX = "distractor:"


@dataclass(frozen=True)
class IndexSizePoint:
    """One ranker's scores at one index size.

    Attributes
    ----------
    system : str
        ``dense`` or ``bm25``.
    factor : int
        The index size as a multiple of the collection's documents (1: no distractor).
    n_documents, n_distractors : int
        Documents indexed, of which distractors.
    precision_at_10, ndcg_at_10 : float
        Means over the judged queries (trec_eval definitions).
    precision_interval, ndcg_interval : Interval or None
        Their bootstrap intervals over the queries (``None`` without resampling).
    distractors_in_top10 : float
        Mean number of distractors in a query's top 10: the false positives the growth brought.
    ndcg_drop : Comparison or None
        nDCG@10 at factor 1 minus here, paired over the queries (``None`` at factor 1 or with one query).

    Examples
    --------
    >>> IndexSizePoint("bm25", 1, 1400, 0, 0.3, 0.4, None, None, 0.0, None).to_dict()["ndcg_at_10"]
    0.4
    """

    system: str
    factor: int
    n_documents: int
    n_distractors: int
    precision_at_10: float
    ndcg_at_10: float
    precision_interval: Interval | None
    ndcg_interval: Interval | None
    distractors_in_top10: float
    ndcg_drop: Comparison | None

    def to_dict(self) -> dict[str, Any]:
        """The fields, intervals and the drop as nested dicts (JSON-ready)."""
        return {"system": self.system, "factor": self.factor, "n_documents": self.n_documents,
                "n_distractors": self.n_distractors, "precision_at_10": self.precision_at_10,
                "ndcg_at_10": self.ndcg_at_10,
                "precision_interval": None if self.precision_interval is None else self.precision_interval.to_dict(),
                "ndcg_interval": None if self.ndcg_interval is None else self.ndcg_interval.to_dict(),
                "distractors_in_top10": self.distractors_in_top10,
                "ndcg_drop": None if self.ndcg_drop is None else self.ndcg_drop.to_dict()}


@dataclass(frozen=True)
class IndexSizeResult:
    """The stress test's points, by ranker then index size.

    Attributes
    ----------
    data : str
        The collection's name.
    n_queries, n_collection : int
        Judged queries; the collection's own documents.
    points : tuple of IndexSizePoint
    bootstrap, seed : int
        Resamples behind the intervals and tests, and their seed.

    Examples
    --------
    >>> p = IndexSizePoint("bm25", 1, 3, 0, 0.1, 1.0, None, None, 0.0, None)
    >>> IndexSizeResult("toy", 1, 3, (p,), 0, 0).to_dict()["points"][0]["factor"]
    1
    """

    data: str
    n_queries: int
    n_collection: int
    points: tuple[IndexSizePoint, ...]
    bootstrap: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """The settings and every point (JSON-ready)."""
        return {"data": self.data, "n_queries": self.n_queries, "n_collection": self.n_collection,
                "bootstrap": self.bootstrap, "seed": self.seed, "points": [p.to_dict() for p in self.points]}


def _check(data: BeirData, distractors: Sequence[str], factors: Sequence[int],
           systems: Sequence[str]) -> tuple[list[str], tuple[int, ...], tuple[str, ...]]:
    texts = [str(t) for t in distractors]
    factors = tuple(check_scalar(f, "factor", int, low=1) for f in factors)
    if not factors or list(factors) != sorted(set(factors)):
        raise InputError(f"factors must be increasing and distinct, not {list(factors)}")
    systems = tuple(systems)
    unknown = [s for s in systems if s not in SYSTEMS and not REDUCED.fullmatch(str(s))]
    if not systems or unknown or len(set(systems)) < len(systems):
        raise InputError(f"systems must be distinct, among {', '.join(SYSTEMS)}, dense-prefix<width> and "
                         f"dense-pca<width>, not {list(systems)}")
    needed = (factors[-1] - 1) * data.n_documents
    if len(texts) < needed:
        raise InputError(f"factor {factors[-1]} needs {needed} distractors for {data.n_documents} documents, "
                         f"but {len(texts)} were given")
    if any(i.startswith(DISTRACTOR_PREFIX) for i in data.corpus_ids):
        raise InputError(f"a document id of {data.name!r} starts with {DISTRACTOR_PREFIX!r}, the distractors' prefix")
    return texts[:needed], factors, systems


def _interval(values: np.ndarray, bootstrap: int, seed: int) -> Interval | None:
    """The bootstrap interval of the mean of ``values`` (``None`` without resampling or with one query)."""
    if not bootstrap or len(values) < 2:
        return None
    return bootstrap_interval(mean_statistic, values, n_resamples=bootstrap, seed=seed)


def _encoded(encode: Any, encode_queries: Any, data: BeirData, distractors: list[str]
             ) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
    """A function giving the (documents + distractors, queries) vectors, encoded on its first call only."""
    held: list[tuple[np.ndarray, np.ndarray]] = []

    def vectors() -> tuple[np.ndarray, np.ndarray]:
        if not held:
            docs = np.asarray(as_encode(encode)(list(data.corpus_texts) + distractors), dtype=np.float64)
            queries = np.asarray(as_query_encode(encode, encode_queries)(list(data.query_texts)), dtype=np.float64)
            if docs.shape[1] != queries.shape[1]:
                raise InputError(f"documents were encoded to {docs.shape[1]} dimensions but queries to "
                                 f"{queries.shape[1]}")
            held.append((docs, queries))
        return held[0]

    return vectors


def reduce_width(docs: np.ndarray, queries: np.ndarray, method: str, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents and queries at ``width`` dimensions: their first coordinates (``prefix``) or their projections
    on the documents' top principal axes (``pca``, centred on the documents' mean), rows not yet normalised.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> d, q = reduce_width(rng.standard_normal((50, 6)), rng.standard_normal((3, 6)), "pca", 2)
    >>> d.shape, q.shape, bool(abs(d[:, 0] @ d[:, 1]) < 1e-9)  # principal coordinates are uncorrelated
    ((50, 2), (3, 2), True)
    >>> reduce_width(np.eye(3), np.ones((1, 3)), "prefix", 2)[1].tolist()
    [[1.0, 1.0]]
    """
    dim = docs.shape[1]
    if not 1 <= width < dim:
        raise InputError(f"a reduced width must be between 1 and {dim - 1} (the encoder's dimension is {dim}), "
                         f"not {width}")
    if method == "prefix":
        return docs[:, :width], queries[:, :width]
    mean = docs.mean(axis=0)
    _, _, vt = np.linalg.svd(docs - mean, full_matrices=False)
    axes = vt[:width].T
    return (docs - mean) @ axes, (queries - mean) @ axes


def _dense_rows(vectors: Callable[[], tuple[np.ndarray, np.ndarray]], system: str) -> Any:
    """A function ``n -> top-10 rows of each query among the first n documents``, by exact cosine."""
    docs, queries = vectors()
    reduced = REDUCED.fullmatch(system)
    if reduced:
        docs, queries = reduce_width(docs, queries, reduced.group(1), int(reduced.group(2)))
    docs, queries = normalize_rows(docs), normalize_rows(queries)
    return lambda n: list(exact_search(queries, docs[:n], CUTOFF, "ip")[1])


def _bm25_rows(data: BeirData, distractors: list[str]) -> Any:
    """A function ``n -> top-10 rows of each query among the first n documents``, by BM25."""
    from repspace.engines.search.lexical import LexicalIndex

    texts = list(data.corpus_texts) + distractors

    def rows(n: int) -> list[np.ndarray]:
        index = LexicalIndex.build(texts[:n], np.arange(n))
        _, found = index.search(list(data.query_texts), min(CUTOFF, n))
        return [r[r >= 0] for r in found]

    return rows


def index_size_stress(
    encode: Any,
    data: BeirData,
    distractors: Sequence[str],
    factors: Sequence[int] = DEFAULT_FACTORS,
    *,
    systems: Sequence[str] = SYSTEMS,
    encode_queries: Any = None,
    bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> IndexSizeResult:
    """Score dense and BM25 retrieval as distractors grow the index to ``factor`` x the collection.

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors (documents and distractors in one call; queries through
        its ``encode_queries`` when it has one). Not called when ``systems`` is ``("bm25",)``.
    data : BeirData
        The collection (:func:`~repspace.engines.eval.retrieval.load_beir`).
    distractors : sequence of str
        Unrelated texts, used in the order given (shuffle them first to mix their
        sources); ``(max(factors) - 1) * data.n_documents`` of them are needed.
    factors : sequence of int
        Index sizes, increasing, as multiples of ``data.n_documents``; 1 is the collection alone.
    systems : sequence of str
        Among ``dense``, ``bm25``, ``dense-prefix<w>`` and ``dense-pca<w>`` (the dense vectors at ``w``
        dimensions, :func:`reduce_width`; ``w`` below the encoder's dimension).
    encode_queries : callable, optional
        The query side, as in :func:`~repspace.engines.eval.retrieval.retrieval`.
    bootstrap : int
        Resamples of the queries behind the intervals and the drop's test (0: none).
    seed : int
        Their seed.

    Returns
    -------
    IndexSizeResult
        At factor 1 the scores equal :func:`~repspace.engines.eval.retrieval.retrieval`'s.

    Examples
    --------
    >>> data = BeirData(("d1", "d2"), ("a cat purrs", "stocks fell"), ("q1", "q2"), ("cat", "stocks"),
    ...                 {"q1": {"d1": 1}, "q2": {"d2": 1}})
    >>> r = index_size_stress(None, data, ["a cat sat", "cat food", "the cat"], (1, 2), systems=("bm25",),
    ...                       bootstrap=0)
    >>> [(p.factor, p.n_documents, round(p.ndcg_at_10, 3), p.distractors_in_top10) for p in r.points]
    [(1, 2, 1.0, 0.0), (2, 4, 1.0, 1.0)]
    >>> vec = {"a cat purrs": [1, 0, 0], "stocks fell": [0, 1, 0], "cat": [1, 0.1, 0], "stocks": [0.1, 1, 0],
    ...        "a cat sat": [1, 0.1, 1], "cat food": [0, 0, 1], "the cat": [0.5, 0.5, 1]}
    >>> enc = lambda texts: np.array([vec[t] for t in texts], dtype=float)
    >>> r = index_size_stress(enc, data, ["a cat sat", "cat food"], (1, 2), systems=("dense", "dense-prefix2"),
    ...                       bootstrap=0)
    >>> [(p.system, p.factor, round(p.ndcg_at_10, 3)) for p in r.points]
    [('dense', 1, 1.0), ('dense', 2, 1.0), ('dense-prefix2', 1, 1.0), ('dense-prefix2', 2, 0.815)]
    """
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0)
    texts, factors, systems = _check(data, distractors, factors, systems)
    n0 = data.n_documents
    ids = np.asarray(list(data.corpus_ids) + [f"{DISTRACTOR_PREFIX}{i}" for i in range(len(texts))], dtype=object)
    points = []
    vectors = _encoded(encode, encode_queries, data, texts)
    for system in systems:
        rows_of = _bm25_rows(data, texts) if system == "bm25" else _dense_rows(vectors, system)
        base = None
        for factor in factors:
            n = factor * n0
            rows = rows_of(n)
            run = {qid: ids[r].tolist() for qid, r in zip(data.query_ids, rows)}
            per_query = query_scores(run, data.qrels, (CUTOFF,))
            ndcg = np.array([v[f"ndcg_at_{CUTOFF}"] for v in per_query.values()])
            precision = np.array([v[f"precision_at_{CUTOFF}"] for v in per_query.values()])
            judged = set(per_query)
            false = np.mean([np.count_nonzero(r[:CUTOFF] >= n0) for q, r in zip(data.query_ids, rows) if q in judged])
            drop = None
            if base is None:
                base = ndcg
            elif len(ndcg) >= 2:
                drop = paired_comparison(mean_statistic, base, ndcg, a="x1", b=f"x{factor}", n_resamples=bootstrap,
                                         seed=seed)
            points.append(IndexSizePoint(
                system, factor, n, n - n0, float(precision.mean()), float(ndcg.mean()),
                _interval(precision, bootstrap, seed), _interval(ndcg, bootstrap, seed), float(false), drop))
    return IndexSizeResult(data.name, len(per_query), n0, tuple(points), bootstrap, seed)
