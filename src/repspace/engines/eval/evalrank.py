"""EvalRank: can a space find each similar pair's partner among everything else?

Wang, Kuo & Li (2022, "Just Rank: Rethinking Evaluation with Word and
Sentence Similarities") replace the correlation of a similarity task with a
ranking: for each *positive* pair (two items that people judged very similar)
the query's partner is ranked, by cosine, among every item of a pool, the
query itself left out. The figures are those of a ranking: the mean
reciprocal rank (MRR, the main score) and Hits@k, the share of queries whose
partner ranks within the first k. Unlike a correlation over every pair, this
rewards a space for putting similar items *nearest*, which is what search,
clustering and nearest-neighbour classifiers rely on, and is blind to how the
dissimilar pairs are ordered among themselves.

Protocol, as in the paper's toolkit (``BinWang28/EvalRank-Embedding-Evaluation``):

- Positive pairs: the top quarter of a data set by gold score (``top_share=0.25``,
  the toolkit's ``--ws_pos_ratio``/``--ss_pos_ratio``), the pairs sorted by
  score, highest first, ties in file order. For STS data the default here is the
  absolute cut ``gold >= 4.0`` of 5 instead (on STS-B test the top 24.5%: about
  the same quarter, but a property of each pair rather than of the file). A pair
  of an item with itself is dropped; a pair listed twice (either way round) counts once.
- Both directions: a positive pair ``(a, b)`` is two queries, ``a -> b`` and
  ``b -> a`` (the toolkit adds ``[w2, w1]`` for every ``[w1, w2]``); every score is
  the mean over these queries.
- Rank: 1 + the number of pool items other than the query that are *strictly*
  more similar to the query than its partner (the toolkit's ``searchsorted(...,
  side='right')``: a tie goes to the partner).
- Pool: every distinct item of the data (both sides of every pair, not only
  the positives); for a vocabulary, optionally its first ``background`` words
  too (the paper adds the 20,000 most frequent Wikipedia words).

The uncertainty is a seeded bootstrap over the positive pairs (each pair's
two reciprocal ranks stay together).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from repspace.core.arrays import unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._encode import as_encode
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.sts import StsPairs
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic
from repspace.engines.eval.words import WordPairs, WordVectors

__all__ = ["HITS_AT", "STS_MIN_SCORE", "TOP_SHARE", "evalrank", "partner_ranks", "positive_rows"]

#: The default cut of STS data (gold scores 0 to 5): pairs scored at least 4.
STS_MIN_SCORE = 4.0
#: The default cut of word-similarity data (scales differ: 0-4, 0-10, 0-50): the top quarter by score.
TOP_SHARE = 0.25
#: The k of the Hits@k scores.
HITS_AT = (1, 3, 10)

#: Queries x pool items scored at once at most (float64: 32 MiB).
_BLOCK_ELEMENTS = 1 << 22


def positive_rows(gold: np.ndarray, *, min_score: float | None = None, top_share: float | None = None) -> np.ndarray:
    """Which pairs are positive: those scored at least ``min_score``, or the top ``top_share`` by score.

    Parameters
    ----------
    gold : (n,) array
        The gold similarity of each pair.
    min_score : float, optional
        An absolute cut: pairs with ``gold >= min_score``.
    top_share : float, optional
        A relative cut in (0, 1] (when ``min_score`` is not given): the first
        ``int(n * top_share)`` pairs with the pairs sorted by score, highest
        first, ties in the given order (as the EvalRank toolkit takes them).

    Returns
    -------
    (n,) bool array

    Raises
    ------
    InputError
        Neither or both cuts given, or a share outside (0, 1].

    Examples
    --------
    >>> gold = np.array([4.5, 1.0, 4.0, 3.9, 5.0, 4.0, 2.0, 0.5])
    >>> positive_rows(gold, min_score=4.0).tolist()
    [True, False, True, False, True, True, False, False]
    >>> positive_rows(gold, top_share=0.25).tolist()
    [True, False, False, False, True, False, False, False]
    """
    gold = np.asarray(gold, dtype=np.float64)
    if (min_score is None) == (top_share is None):
        raise InputError("give one cut for the positive pairs: a minimum score or a top share")
    if min_score is not None:
        check_scalar(min_score, "min_score", float)
        return gold >= float(min_score)
    share = check_scalar(top_share, "top_share", float, low=0, high=1, include="right")
    keep = np.zeros(len(gold), dtype=bool)
    keep[np.argsort(-gold, kind="stable")[: int(len(gold) * share)]] = True
    return keep


def partner_ranks(vectors: np.ndarray, queries: np.ndarray, partners: np.ndarray, *,
                  block: int | None = None) -> np.ndarray:
    """The rank of each query's partner among all rows of ``vectors`` by cosine, the query itself left out.

    Parameters
    ----------
    vectors : (m, d) array
        The pool (a zero row has cosine 0 with everything).
    queries, partners : (q,) int arrays
        Row numbers: query ``i`` is row ``queries[i]``, its partner row ``partners[i]``.
    block : int, optional
        Query x pool cosines computed at once at most (memory); the ranks do not depend on it.

    Returns
    -------
    (q,) int64 array
        1 + the number of rows, the query excluded, whose cosine with the query
        is strictly greater than the partner's (a tie goes to the partner).

    Raises
    ------
    InputError
        A row number outside the pool, or a query that is its own partner.

    Examples
    --------
    >>> pool = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.6, 0.8]])
    >>> partner_ranks(pool, np.array([0, 0, 2]), np.array([1, 2, 3])).tolist()
    [1, 3, 1]
    """
    queries = np.asarray(queries, dtype=np.int64).ravel()
    partners = np.asarray(partners, dtype=np.int64).ravel()
    m = len(vectors)
    if queries.shape != partners.shape:
        raise InputError(f"one partner per query: {len(queries)} queries, {len(partners)} partners")
    for what, rows in (("query", queries), ("partner", partners)):
        if len(rows) and (rows.min() < 0 or rows.max() >= m):
            raise InputError(f"a {what} row is outside the pool of {m} items")
    if (queries == partners).any():
        raise InputError("a query is its own partner: its rank is undefined")
    unit = unit_rows(np.asarray(vectors))
    step = max(1, (block or _BLOCK_ELEMENTS) // max(m, 1))
    ranks = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), step):
        q, p = queries[start:start + step], partners[start:start + step]
        rows = np.arange(len(q))
        sims = unit[q] @ unit.T
        target = sims[rows, p].copy()
        sims[rows, q] = -np.inf  # the query itself is not a candidate
        ranks[start:start + len(q)] = 1 + (sims > target[:, None]).sum(axis=1)
    return ranks


def _distinct_pairs(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The distinct pairs of items ``first[i]``, ``second[i]`` in order of first appearance (a pair listed either
    way round is one pair, kept as first listed); pairs of an item with itself dropped (their count returned)."""
    same = first == second
    first, second = first[~same], second[~same]
    if len(first):
        key = np.stack([np.minimum(first, second), np.maximum(first, second)], axis=1)
        _, at = np.unique(key, axis=0, return_index=True)
        at = np.sort(at)
        first, second = first[at], second[at]
    return first, second, int(same.sum())


def _scores(ranks: np.ndarray) -> dict[str, float]:
    out = {"mrr": float(np.mean(1.0 / ranks))}
    out.update({f"hits_at_{k}": float(np.mean(ranks <= k)) for k in HITS_AT})
    out["mean_rank"] = float(np.mean(ranks))
    return out


def _word_pool(vectors: WordVectors, words: list[str], lowercase: bool,
               background: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Pool rows of a vocabulary: each word's pool index (-1 when missing) and the pool's vectors."""
    rows = vectors.lookup(words, lowercase=lowercase)
    found = rows[rows >= 0]
    extra = np.zeros(0, dtype=np.int64)
    if background:
        n = min(background, len(vectors))
        canon = vectors.canonical_rows(lowercase=lowercase, restrict_vocab=n)
        extra = np.flatnonzero(canon == np.arange(n))  # one row per distinct (lower-cased) word
    pool_rows, inverse = np.unique(np.concatenate([found, extra]), return_inverse=True)
    index = np.full(len(words), -1, dtype=np.int64)
    index[rows >= 0] = inverse[: len(found)]
    info = {"oov_items": int((rows < 0).sum())}
    if background:
        info["background"] = int(background)
    return index, np.asarray(vectors.vectors[pool_rows]), info


def evalrank(vectors: WordVectors | Any, data: StsPairs | WordPairs, *, min_score: float | None = None,
             top_share: float | None = None, lowercase: bool = True, background: int = 0, name: str | None = None,
             bootstrap: int = DEFAULT_RESAMPLES, seed: int = 0) -> TaskResult:
    """EvalRank: MRR and Hits@1/3/10 of each positive pair's partner among every item of the data.

    Parameters
    ----------
    vectors : WordVectors or encoder
        For word pairs, a vocabulary table or anything
        :func:`~repspace.engines.eval._encode.as_encode` accepts; for sentence
        pairs, an encoder (every distinct sentence goes to it in one call).
    data : StsPairs or WordPairs
        From :func:`~repspace.engines.eval.sts.load_sts` or
        :func:`~repspace.engines.eval.words.load_word_pairs`.
    min_score : float, optional
        Positive pairs are those with a gold score at least this.
    top_share : float, optional
        Without ``min_score``: positive pairs are this share of the pairs,
        highest scores first (:func:`positive_rows`). Default without either:
        ``gold >= 4.0`` (:data:`STS_MIN_SCORE`) for sentence pairs, the top
        quarter (:data:`TOP_SHARE`, the paper's choice) for word pairs, whose
        scales differ between data sets.
    lowercase : bool
        Word pairs: words are lower-cased (the paper's loader lower-cases
        them), and looked up in a vocabulary through their lower-cased forms.
    background : int
        With a :class:`WordVectors` vocabulary: its first ``background`` words
        join the pool as distractors (the paper adds 20,000 frequent words).
    name : str, optional
        Task name; default ``evalrank:<data set name>``.
    bootstrap : int
        Resamples of the positive pairs behind the MRR's 95% interval
        (:func:`~repspace.engines.eval.uncertainty.bootstrap_interval`); 0: none.
    seed : int
        The bootstrap's seed.

    Returns
    -------
    TaskResult
        Main metric ``mrr``; ``hits_at_1``, ``hits_at_3``, ``hits_at_10`` and
        ``mean_rank`` beside it, all over the queries (two per positive pair).
        Info: ``n_pairs`` (positive pairs ranked), ``n_queries``, ``pool_size``,
        the cut (``min_score`` or ``top_share``), ``identical_pairs`` (an item
        with itself, dropped); for a vocabulary ``oov_pairs`` (positive pairs
        dropped for a missing word) and ``oov_items`` (distinct words missing,
        left out of the pool).

    Raises
    ------
    InputError
        No positive pair (after the cut and the out-of-vocabulary words),
        sentence pairs with a :class:`WordVectors`, ``background`` with an
        encoder, or a bad argument.

    Examples
    --------
    >>> table = {"cat": [1.0, 0.1], "kitten": [0.9, 0.2], "car": [0.1, 1.0], "truck": [0.3, 0.9],
    ...          "dog": [0.8, 0.5]}
    >>> pairs = WordPairs(["cat", "car", "cat", "dog"], ["kitten", "truck", "car", "kitten"],
    ...                   np.array([9.5, 9.0, 1.0, 6.0]), "toy")
    >>> r = evalrank(lambda words: np.array([table[w] for w in words]), pairs, min_score=9.0)
    >>> r.task_name, r.main_metric, round(r.main_score, 3), r.scores["hits_at_1"], r.info["pool_size"]
    ('evalrank:toy', 'mrr', 1.0, 1.0, 5)
    """
    t0 = time.perf_counter()
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(background, "background", int, low=0)
    words = isinstance(data, WordPairs)
    if not words and not isinstance(data, StsPairs):
        raise InputError(f"EvalRank takes STS pairs or word pairs, not {type(data).__name__}")
    if background and not (words and isinstance(vectors, WordVectors)):
        raise InputError("background words come from a vocabulary (a word table or a space) and join word pairs")
    if min_score is None and top_share is None:
        cut: dict[str, float] = {"top_share": TOP_SHARE} if words else {"min_score": STS_MIN_SCORE}
    else:
        cut = {"min_score": min_score} if min_score is not None else {"top_share": top_share}  # type: ignore[dict-item]
    positive = positive_rows(data.scores, **cut)
    if not positive.any():
        why = (f"none of its {len(data)} pairs has a score >= {cut['min_score']:g}" if "min_score" in cut else
               f"the top {cut['top_share']:.0%} of its {len(data)} pairs rounds down to none")
        raise InputError(f"no positive pair in {data.name}: {why}")
    info: dict[str, Any] = {"dataset": data.name, **cut}
    if words:
        norm = (lambda w: w.lower()) if lowercase else (lambda w: w)
        first, second = [norm(w) for w in data.word1], [norm(w) for w in data.word2]
    else:
        if isinstance(vectors, WordVectors):
            raise InputError("sentence pairs need an encoder (or a space that holds their texts), not a word table")
        first, second = list(data.sentences1), list(data.sentences2)
    items = list(dict.fromkeys(first + second))
    position = {t: i for i, t in enumerate(items)}
    if isinstance(vectors, WordVectors):
        index, matrix, pool_info = _word_pool(vectors, items, lowercase, background)
        info.update(pool_info)
    else:
        index, matrix = np.arange(len(items)), as_encode(vectors)(items)
    a = index[[position[t] for t in np.asarray(first, dtype=object)[positive]]]
    b = index[[position[t] for t in np.asarray(second, dtype=object)[positive]]]
    if isinstance(vectors, WordVectors):
        found = (a >= 0) & (b >= 0)
        info["oov_pairs"] = int((~found).sum())
        a, b = a[found], b[found]
    a, b, identical = _distinct_pairs(a, b)  # each positive pair once, in file order: the bootstrap's units
    info["identical_pairs"] = identical
    if not len(a):
        missing = " has a word missing from the vocabulary or" if info.get("oov_pairs") else ""
        raise InputError(f"no positive pair to rank in {data.name}: each of its {int(positive.sum())} positive "
                         f"pairs{missing} pairs an item with itself")
    ranks = partner_ranks(matrix, np.concatenate([a, b]), np.concatenate([b, a]))
    n = len(a)
    info.update(n_pairs=n, n_queries=2 * n, pool_size=int(len(matrix)))
    per_pair = (1.0 / ranks[:n] + 1.0 / ranks[n:]) / 2  # the units: each positive pair, both directions
    interval = bootstrap_interval(mean_statistic, per_pair, n_resamples=bootstrap, seed=seed) if n > 1 else None
    split = "test" if words else data.split
    return TaskResult(name or f"evalrank:{data.name}", split, "mrr", _scores(ranks), time.perf_counter() - t0, info,
                      interval=interval)
