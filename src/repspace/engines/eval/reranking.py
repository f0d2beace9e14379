"""Reranking: does cosine similarity put each query's positive candidates above its negatives?

Data comes in MTEB's reranking layout: a JSON-lines file, one query per line,
``{"query": "...", "positive": ["...", ...], "negative": ["...", ...]}``
(AskUbuntuDupQuestions, SciDocsRR and StackOverflowDupQuestions are published
so). Each query ranks only its own candidates, by the cosine of their vectors
with the query's (the query embedded with the encoder's query side, the
candidates as documents), and the run is scored as MTEB's reranking tasks
score it: MTEB turns every query into a retrieval query whose judged
documents are its candidates (positives relevant, negatives not), ranks them
by similarity, breaks ties by document id descending (trec_eval's rule, with
MTEB's ids ``apositive_<query>_<i>`` and ``negative_<query>_<i>``, so a
negative wins a tie), and computes trec_eval's measures at its cut-offs
(:mod:`repspace.engines.eval.ranking`). ``map_at_1000`` (MAP over the whole
candidate list) is the main score, as in MTEB's reranking tasks; ``mrr_at_10``
and nDCG, recall and precision at 1 to 1000 are beside it.

As MTEB does, a query without a negative candidate is left out (there is
nothing to rerank) and counted; a query without a positive is an error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.arrays import unit_rows
from repspace.core.files import read_jsonl
from repspace.engines.eval._encode import as_encode, as_query_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.ranking import query_scores
from repspace.engines.eval.retrieval import CUTOFFS, SCORE_KEYS
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic

#: The headline score: MAP over each query's whole candidate list (MTEB's main score of its reranking tasks).
MAIN_METRIC = "map_at_1000"


@dataclass(frozen=True, eq=False)
class RerankingData:
    """Queries, each with its own candidates: positives (relevant) and negatives.

    Attributes
    ----------
    queries : tuple of str
        The queries kept (those with at least one negative), in file order.
    positives, negatives : tuple of tuple of str
        Each query's relevant and non-relevant candidates.
    name : str
        The data set's name (the file's stem).
    split : str
        ``test``, ``dev`` or ``train`` when the name ends so, else ``test``.
    dropped_queries : int
        Queries of the file without a negative candidate (left out, as MTEB does).

    Examples
    --------
    >>> data = RerankingData(("cats",), (("a cat purrs",),), (("stocks fell", "the dog barks"),), "toy")
    >>> len(data), data.n_candidates, data.texts()
    (1, 3, ['a cat purrs', 'stocks fell', 'the dog barks'])
    >>> r = reranking(lambda texts: np.array([[t.count("cat"), 1.0] for t in texts]), data)
    >>> r.task_name, r.main_metric, r.main_score
    ('reranking:toy', 'map_at_1000', 1.0)
    """

    queries: tuple[str, ...]
    positives: tuple[tuple[str, ...], ...]
    negatives: tuple[tuple[str, ...], ...]
    name: str = "reranking"
    split: str = "test"
    dropped_queries: int = 0

    def __post_init__(self) -> None:
        if not (len(self.queries) == len(self.positives) == len(self.negatives)):
            raise InputError(f"reranking data needs one candidate list per query: {len(self.queries)} queries, "
                             f"{len(self.positives)} positive and {len(self.negatives)} negative lists")
        if not self.queries:
            raise InputError("reranking data holds no query with both a positive and a negative candidate")
        for i, pos in enumerate(self.positives):
            if not pos:
                raise InputError(f"query {i + 1} ({self.queries[i][:60]!r}) has no positive candidate: "
                                 "reranking needs at least one per query")

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def n_candidates(self) -> int:
        """Candidates over all queries (a text repeated across queries counts each time)."""
        return sum(len(p) + len(n) for p, n in zip(self.positives, self.negatives))

    def texts(self) -> list[str]:
        """Every distinct candidate text, in order of first appearance (what is embedded as documents)."""
        return list(dict.fromkeys(t for p, n in zip(self.positives, self.negatives) for t in (*p, *n)))


def _texts(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InputError(f"{where}: {key!r} must be a list of strings")
    return tuple(value)


def load_reranking(path: str | Path) -> RerankingData:
    """Read a reranking file in MTEB's layout: JSON lines ``{"query", "positive": [...], "negative": [...]}``.

    Parameters
    ----------
    path : str or Path
        A UTF-8 JSON-lines file, one query per line (blank lines skipped);
        other keys of a line are ignored.

    Returns
    -------
    RerankingData
        Queries without a negative are left out and counted in
        :attr:`RerankingData.dropped_queries` (MTEB leaves them out too).

    Raises
    ------
    InputError
        If the file is missing or holds no query, a line lacks ``query``,
        ``positive`` or ``negative`` or gives them the wrong type, a query has
        no positive candidate (its line is named), or no query has a negative.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("toy-dev.jsonl", '{"query": "cats", "positive": ["a cat"], "negative": ["a car", "a dog"]}\\n'
    ...                                   '{"query": "dogs", "positive": ["a dog"], "negative": []}\\n')
    >>> data = load_reranking(p)
    >>> data.queries, data.negatives[0], data.dropped_queries, data.split
    (('cats',), ('a car', 'a dog'), 1, 'dev')
    """
    path = Path(path)
    rows = read_jsonl(path, "reranking file")
    queries, positives, negatives = [], [], []
    dropped = 0
    for line, row in rows:
        where = f"{path}:{line}"
        missing = [k for k in ("query", "positive", "negative") if k not in row]
        if missing:
            raise InputError(f"{where}: missing {', '.join(repr(k) for k in missing)} (MTEB's reranking layout is "
                             '{"query": ..., "positive": [...], "negative": [...]})')
        if not isinstance(row["query"], str):
            raise InputError(f"{where}: 'query' must be a string")
        pos = _texts(row["positive"], "positive", where)
        neg = _texts(row["negative"], "negative", where)
        if not pos:
            raise InputError(f"{where}: the query has no positive candidate (reranking needs at least one per query)")
        if not neg:
            dropped += 1
            continue
        queries.append(row["query"])
        positives.append(pos)
        negatives.append(neg)
    if not rows:
        raise InputError(f"reranking file {path} holds no query")
    if not queries:
        raise InputError(f"no query of {path} has a negative candidate: there is nothing to rerank")
    stem = path.stem
    split = next((s for s in ("test", "dev", "train") if stem.endswith(s)), "test")
    return RerankingData(tuple(queries), tuple(positives), tuple(negatives), stem, split, dropped)


def _candidate_ids(query: int, n_positive: int, n_negative: int, split: str = "test") -> list[str]:
    """MTEB's document ids of one query's candidates (positives first): they break tied similarities."""
    qid = f"{split}_query{query}"
    return ([f"apositive_{qid}_{i:05d}" for i in range(n_positive)]
            + [f"negative_{qid}_{i:05d}" for i in range(n_negative)])


def _per_query(query_vectors: np.ndarray, candidate_vectors: Sequence[np.ndarray],
               n_positives: Sequence[int]) -> list[dict[str, float]]:
    """Each query's scores at every cut-off: its candidates ranked by cosine, ties by MTEB's id descending."""
    q = np.asarray(query_vectors, dtype=np.float64)
    if q.ndim != 2 or len(q) != len(candidate_vectors) or len(q) != len(n_positives):
        raise InputError(f"reranking needs a (q, d) array of queries and one candidate array and one positive count "
                         f"per query: queries of shape {q.shape}, {len(candidate_vectors)} candidate arrays, "
                         f"{len(n_positives)} counts")
    q = unit_rows(q)
    run: dict[str, list[str]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for j, (vectors, n_pos) in enumerate(zip(candidate_vectors, n_positives)):
        c = np.asarray(vectors, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != q.shape[1]:
            raise InputError(f"query {j + 1}: candidates of shape {c.shape} for {q.shape[1]}-d queries")
        n_pos = int(n_pos)
        if not 1 <= n_pos <= len(c):
            raise InputError(f"query {j + 1} has {n_pos} positives among {len(c)} candidates: it needs at least one")
        sims = unit_rows(c) @ q[j]
        ids = _candidate_ids(j, n_pos, len(c) - n_pos)
        order = sorted(range(len(c)), key=lambda i: (sims[i], ids[i]), reverse=True)
        run[str(j)] = [ids[i] for i in order]
        qrels[str(j)] = {doc: int(i < n_pos) for i, doc in enumerate(ids)}
    per_query = query_scores(run, qrels, CUTOFFS)
    return [per_query[str(j)] for j in range(len(q))]


def reranking_scores(query_vectors: np.ndarray, candidate_vectors: Sequence[np.ndarray],
                     n_positives: Sequence[int]) -> dict[str, float]:
    """MTEB's reranking scores of candidate lists ranked by cosine similarity to their query.

    Parameters
    ----------
    query_vectors : (q, d) array
        One vector per query.
    candidate_vectors : sequence of (k_i, d) arrays
        Each query's candidates, its positives first.
    n_positives : sequence of int
        How many of each query's candidates (the first ones) are positive; at least 1.

    Returns
    -------
    dict
        :data:`~repspace.engines.eval.retrieval.SCORE_KEYS` (nDCG, MAP, recall,
        precision and MRR at 1, 3, 5, 10, 20, 100 and 1000, trec_eval's
        definitions), each the mean over the queries; ``map_at_1000`` is MTEB's
        main score of a reranking task.

    Examples
    --------
    The positive ranks second of three: average precision 1/2, reciprocal rank 1/2.

    >>> s = reranking_scores(np.array([[1.0, 0.0]]), [np.array([[0.6, 0.8], [1.0, 0.1], [0.0, 1.0]])], [1])
    >>> s["map_at_1000"], s["mrr_at_10"], s["recall_at_1"]
    (0.5, 0.5, 0.0)
    """
    per_query = _per_query(query_vectors, candidate_vectors, n_positives)
    return {key: float(np.mean([p[key] for p in per_query])) for key in SCORE_KEYS}


def reranking(encode: Any, data: RerankingData | str | Path, *, codec: Any = None, name: str | None = None,
              encode_queries: Any = None, bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """Score an encoder on reranking data: rank each query's candidates by cosine similarity.

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors; the distinct candidate texts go to it in one call,
        the queries to its query side (``encode.encode_queries`` when it has
        one, as for retrieval) in another.
    data : RerankingData, str or Path
        From :func:`load_reranking`, or a file to load.
    codec : Codec, optional
        A compression: fitted on the candidate vectors, then applied to
        candidates and queries before ranking.
    name : str, optional
        Task name; default ``reranking:<data set name>``.
    encode_queries : callable or object with ``encode``, optional
        The query side, given explicitly (it wins over ``encode.encode_queries``).
    bootstrap : int
        Resamples of the queries behind the main score's interval (the mean of
        the per-query average precision, percentile, 95%); 0: none.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``map_at_1000``; the scores of :func:`reranking_scores`;
        info with ``n_queries``, ``n_candidates``, ``n_texts`` (distinct
        candidate texts), ``dropped_queries`` (and ``codec``, ``bytes_per_vector``).

    Examples
    --------
    >>> data = RerankingData(("cats", "stocks"), (("a cat purrs",), ("stocks fell",)),
    ...                      (("stocks fell", "a dog"), ("a cat purrs", "a dog")), "toy")
    >>> r = reranking(lambda texts: np.array([[t.count("cat"), t.count("stock"), 1.0] for t in texts]), data)
    >>> r.main_score, r.scores["mrr_at_10"], r.info["n_candidates"], r.info["n_texts"]
    (1.0, 1.0, 6, 3)
    """
    t0 = time.perf_counter()
    check_scalar(bootstrap, "bootstrap", int, low=0)
    if not isinstance(data, RerankingData):
        data = load_reranking(data)
    texts = data.texts()
    docs = as_encode(encode)(texts)
    queries = as_query_encode(encode, encode_queries)(list(data.queries))
    if docs.shape[1] != queries.shape[1]:
        raise InputError(f"candidates were encoded to {docs.shape[1]} dimensions but queries to {queries.shape[1]}")
    info: dict[str, Any] = {"n_queries": len(data), "n_candidates": data.n_candidates, "n_texts": len(texts),
                            "dropped_queries": data.dropped_queries}
    if codec is not None:
        codec.fit(docs)
        docs, queries = _transformed(codec, docs), _transformed(codec, queries)
        info.update(codec=codec.to_dict(), bytes_per_vector=int(codec.bytes_per_vector))
    row = {t: i for i, t in enumerate(texts)}
    candidates = [docs[[row[t] for t in (*p, *n)]] for p, n in zip(data.positives, data.negatives)]
    per_query = _per_query(queries, candidates, [len(p) for p in data.positives])
    scores = {key: float(np.mean([p[key] for p in per_query])) for key in SCORE_KEYS}
    interval = None
    if len(per_query) >= 2:
        interval = bootstrap_interval(mean_statistic, np.array([p[MAIN_METRIC] for p in per_query]),
                                      n_resamples=bootstrap, seed=seed)
    return TaskResult(name or f"reranking:{data.name}", data.split, MAIN_METRIC, scores, time.perf_counter() - t0,
                      info, interval=interval)


def _transformed(codec: Any, x: np.ndarray) -> np.ndarray:
    out = np.asarray(codec.transform(x), dtype=np.float32)
    if out.ndim != 2 or len(out) != len(x):
        raise InputError(f"codec {getattr(codec, 'name', codec)!r} turned {x.shape} vectors into shape {out.shape}")
    return out
