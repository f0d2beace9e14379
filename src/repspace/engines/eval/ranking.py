"""Ranking metrics of a retrieval run against relevance judgements, as trec_eval defines them.

Every definition follows trec_eval (https://github.com/usnistgov/trec_eval),
the way ``pytrec_eval`` computes its measures; the names map as follows.

=================  =========================  ==============================================
repspace key       trec_eval measure          definition
=================  =========================  ==============================================
``ndcg_at_k``      ``ndcg_cut_k``             DCG@k / ideal DCG@k; gain = the judgement's
                                              score (0 for an unjudged document or a score
                                              ≤ 0), discount log₂(rank + 1); the ideal
                                              ranking is the judgements' positive scores
                                              sorted descending, cut at k
``recall_at_k``    ``recall_k``               relevant documents in the top k / all relevant
``precision_at_k`` ``P_k``                    relevant documents in the top k / k
``mrr_at_k``       ``recip_rank`` on a run    1 / rank of the first relevant document in
                   cut at k                   the top k, else 0
``map_at_k``       ``map_cut_k``              sum of precision@r over the ranks r ≤ k that
                                              hold a relevant document, / all relevant
=================  =========================  ==============================================

A document is *relevant* when its judgement is ≥ 1 (trec_eval's default
``relevance_level``). A run is the ranked list of document ids of each query,
best first: the order is the run's, so ties in the scores behind it must
already be broken (trec_eval breaks them by document id).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from repspace.core.checks import positive_int
from repspace.core.errors import InputError

#: The measures :func:`ranking_scores` reports, each at every cutoff.
MEASURES = ("ndcg", "recall", "precision", "mrr", "map")
#: Judgement at or above which a document counts as relevant (trec_eval's ``relevance_level``).
RELEVANCE_LEVEL = 1


def _check_unique(ranking: Sequence[str], query: str | None = None) -> None:
    if len(set(ranking)) != len(ranking):
        seen: set[str] = set()
        doc = next(d for d in ranking if d in seen or seen.add(d))  # type: ignore[func-returns-value]
        where = f"query {query!r}: " if query is not None else ""
        raise InputError(f"{where}document {doc!r} appears more than once in the ranking")


def _cut(ranking: Sequence[str], k: Any) -> tuple[Sequence[str], int]:
    """The top ``k`` of ``ranking``, and ``k``, once ``k`` is a positive integer and no document repeats."""
    k = positive_int(k, "a rank cutoff")
    _check_unique(ranking)
    return ranking[:k], k


def _n_relevant(judgements: Mapping[str, float]) -> int:
    return sum(1 for s in judgements.values() if s >= RELEVANCE_LEVEL)


def _dcg(gains: Iterable[float]) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1) if g > 0)


def ndcg_at_k(ranking: Sequence[str], judgements: Mapping[str, float], k: int = 10) -> float:
    """Normalised discounted cumulative gain of one ranking at cutoff ``k`` (trec_eval ``ndcg_cut``).

    Parameters
    ----------
    ranking : sequence of str
        Document ids, best first (distinct).
    judgements : mapping of str to int
        The query's judged documents and their scores (higher = more relevant).
    k : int
        Cutoff.

    Returns
    -------
    float
        DCG@k / ideal DCG@k with gain = score (0 for unjudged documents and
        scores ≤ 0) and discount log₂(rank + 1); 0 when no judgement is positive.

    Examples
    --------
    Gains 0, 2 at ranks 1, 2; the ideal ranking has gains 2, 1:
    (2/log₂3) / (2 + 1/log₂3).

    >>> round(ndcg_at_k(["x", "a"], {"a": 2, "b": 1}, k=10), 4)
    0.4796
    >>> ndcg_at_k(["a", "b"], {"a": 2, "b": 1}, k=10)
    1.0
    """
    top, k = _cut(ranking, k)
    ideal = _dcg(sorted((s for s in judgements.values() if s > 0), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return _dcg(judgements.get(doc, 0) for doc in top) / ideal


def recall_at_k(ranking: Sequence[str], judgements: Mapping[str, float], k: int = 10) -> float:
    """Share of the query's relevant documents found in the top ``k`` (trec_eval ``recall_k``).

    The parameters are those of :func:`ndcg_at_k`; the documents judged ≥ 1
    are the relevant ones. 0 when none is relevant.

    Examples
    --------
    >>> recall_at_k(["a", "x", "c"], {"a": 1, "b": 2, "c": 1, "d": 0}, k=2)
    0.3333333333333333
    """
    top, _ = _cut(ranking, k)
    n_rel = _n_relevant(judgements)
    if n_rel == 0:
        return 0.0
    return sum(1 for doc in top if judgements.get(doc, 0) >= RELEVANCE_LEVEL) / n_rel


def precision_at_k(ranking: Sequence[str], judgements: Mapping[str, float], k: int = 10) -> float:
    """Relevant documents in the top ``k``, divided by ``k`` (trec_eval ``P_k``).

    The divisor is ``k`` even when the ranking is shorter, as in trec_eval.

    Examples
    --------
    >>> precision_at_k(["a", "x"], {"a": 3}, k=10)
    0.1
    """
    top, k = _cut(ranking, k)
    return sum(1 for doc in top if judgements.get(doc, 0) >= RELEVANCE_LEVEL) / k


def reciprocal_rank_at_k(ranking: Sequence[str], judgements: Mapping[str, float], k: int = 10) -> float:
    """1 / rank of the first relevant document within the top ``k``, else 0.

    trec_eval's ``recip_rank`` computed on the ranking cut at ``k`` (MRR@k).

    Examples
    --------
    >>> reciprocal_rank_at_k(["x", "y", "a"], {"a": 1}, k=10)
    0.3333333333333333
    >>> reciprocal_rank_at_k(["x", "y", "a"], {"a": 1}, k=2)
    0.0
    """
    top, _ = _cut(ranking, k)
    for rank, doc in enumerate(top, start=1):
        if judgements.get(doc, 0) >= RELEVANCE_LEVEL:
            return 1.0 / rank
    return 0.0


def average_precision_at_k(ranking: Sequence[str], judgements: Mapping[str, float], k: int = 100) -> float:
    """Average precision cut at ``k`` (trec_eval ``map_cut_k``).

    The sum of precision@r over the ranks r ≤ k holding a relevant document,
    divided by the number of *all* the query's relevant documents (not only
    those retrievable in k), as trec_eval does.

    Examples
    --------
    Relevant at ranks 1 and 3, three relevant in all: (1/1 + 2/3) / 3.

    >>> round(average_precision_at_k(["a", "x", "b"], {"a": 1, "b": 2, "c": 1}, k=100), 4)
    0.5556
    """
    top, _ = _cut(ranking, k)
    n_rel = _n_relevant(judgements)
    if n_rel == 0:
        return 0.0
    found, total = 0, 0.0
    for rank, doc in enumerate(top, start=1):
        if judgements.get(doc, 0) >= RELEVANCE_LEVEL:
            found += 1
            total += found / rank
    return total / n_rel


def ranking_scores(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    ks: Sequence[int] = (10, 100),
) -> dict[str, float]:
    """Mean ranking metrics of a run over the judged queries, as trec_eval computes them.

    Parameters
    ----------
    run : mapping of str to sequence of str
        Query id to the ranked document ids, best first (distinct per query).
    qrels : mapping of str to mapping of str to int
        Query id to ``{document id: score}``; a score ≥ 1 is relevant, higher
        scores are the graded gains of nDCG.
    ks : sequence of int
        Cutoffs; every measure is reported at each.

    Returns
    -------
    dict of str to float
        ``{measure}_at_{k}`` for measure in ``ndcg``, ``recall``, ``precision``,
        ``mrr``, ``map`` (see the module docstring), each the mean over the
        queries of ``qrels`` that have at least one relevant document.
        A judged query missing from ``run`` (or with an empty ranking) scores
        0 on every measure (trec_eval's ``-c``); queries of ``run`` absent from
        ``qrels``, and queries whose judgements are all < 1, are ignored.

    Raises
    ------
    InputError
        When no query has a relevant document, a cutoff is not a positive
        integer, a judgement is not a finite number, or a ranking repeats a
        document.

    Examples
    --------
    q1 finds its relevant doc at rank 2, q2 at rank 1; q3 has no results:

    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 1}}
    >>> run = {"q1": ["x", "a"], "q2": ["b"]}
    >>> s = ranking_scores(run, qrels, ks=(10,))
    >>> s["mrr_at_10"]  # (1/2 + 1 + 0) / 3
    0.5
    >>> s["recall_at_10"]  # (1 + 1 + 0) / 3
    0.6666666666666666
    """
    per_query = query_scores(run, qrels, ks)
    sums = {f"{m}_at_{int(k)}": 0.0 for m in MEASURES for k in ks}
    for values in per_query.values():
        for key, value in values.items():
            sums[key] += value
    return {key: total / len(per_query) for key, total in sums.items()}


def query_scores(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, float]],
    ks: Sequence[int] = (10, 100),
) -> dict[str, dict[str, float]]:
    """Each judged query's ranking metrics: the units whose means :func:`ranking_scores` reports.

    The parameters, the queries counted and the errors are those of
    :func:`ranking_scores`, whose values are the means of these (to the last
    bit): the per-query scores behind a bootstrap interval or a paired test.

    Returns
    -------
    dict of str to dict of str to float
        Query id (in the order of ``qrels``, only queries with a relevant
        document) to ``{"{measure}_at_{k}": value}``.

    Examples
    --------
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 0}}
    >>> per_query = query_scores({"q1": ["x", "a"], "q2": ["b"]}, qrels, ks=(10,))
    >>> list(per_query), per_query["q1"]["mrr_at_10"], per_query["q2"]["ndcg_at_10"]
    (['q1', 'q2'], 0.5, 1.0)
    """
    ks = tuple(positive_int(k, "a rank cutoff") for k in ks)
    if not ks:
        raise InputError("ranking_scores needs at least one cutoff")
    judged = []
    for qid, judgements in qrels.items():
        for doc, score in judgements.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise InputError(f"query {qid!r}: the judgement of document {doc!r} is not a finite number: {score!r}")
        if _n_relevant(judgements) > 0:
            judged.append(qid)
    if not judged:
        raise InputError("no query in the qrels has a relevant document (score >= 1): there is nothing to average")
    out: dict[str, dict[str, float]] = {}
    for qid in judged:
        ranking = list(run.get(qid, ()))
        _check_unique(ranking, qid)
        out[qid] = _query_scores(ranking, qrels[qid], ks)
    return out


def _query_scores(ranking: Sequence[str], judgements: Mapping[str, float], ks: Sequence[int]) -> dict[str, float]:
    """Every measure of :data:`MEASURES` at every cutoff for one query, in one pass over its ranking.

    The sums run in the order the per-measure functions run theirs (rank by
    rank), so each value equals theirs to the last bit (tested).
    """
    depth = max(ks)
    n_rel = _n_relevant(judgements)
    positive = sorted((s for s in judgements.values() if s > 0), reverse=True)
    # running values after each rank: DCG, relevant found, sum of precision at relevant ranks
    dcg, found, ap_sum, first = [0.0], [0], [0.0], 0
    for rank, doc in enumerate(ranking[:depth], start=1):
        gain = judgements.get(doc, 0)
        dcg.append(dcg[-1] + gain / math.log2(rank + 1) if gain > 0 else dcg[-1])
        hit = gain >= RELEVANCE_LEVEL
        found.append(found[-1] + hit)
        ap_sum.append(ap_sum[-1] + found[-1] / rank if hit else ap_sum[-1])
        if hit and not first:
            first = rank
    out: dict[str, float] = {}
    for k in ks:
        n = min(k, len(dcg) - 1)
        ideal = _dcg(positive[:k])
        out[f"ndcg_at_{k}"] = dcg[n] / ideal if ideal > 0 else 0.0
        out[f"recall_at_{k}"] = found[n] / n_rel if n_rel else 0.0
        out[f"precision_at_{k}"] = found[n] / k
        out[f"mrr_at_{k}"] = 1.0 / first if first and first <= k else 0.0
        out[f"map_at_{k}"] = ap_sum[n] / n_rel if n_rel else 0.0
    return out
