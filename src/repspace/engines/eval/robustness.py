"""Robustness: how much a task's score drops when its texts are perturbed without changing their meaning.

A task is scored on its texts as they are and again after each perturbation
of :mod:`repspace.engines.eval.perturb` (typos, casing, punctuation, WordNet
synonyms, clause order), on the same units. The drop (original minus
perturbed) comes with a paired bootstrap 95% interval and a paired
randomization test
(:func:`~repspace.engines.eval.uncertainty.paired_comparison`), the units
resampled or swapped jointly for both scores:

* STS (:func:`sts_robustness`): both sentences of every pair are perturbed;
  the units are the pairs, each a (gold score, cosine) row, and the figure is
  their Spearman correlation.
* Retrieval (:func:`retrieval_robustness`): the queries only are perturbed,
  the documents stay as they are (as PTEB perturbs retrieval: the corpus is
  what is searched, the query what a user types); the units are the judged
  queries, each with its nDCG@10, and the figure their mean.

Texts a perturbation leaves unchanged keep the vectors they had, so a
perturbation that changes nothing drops nothing, whatever the encoder's
numerics in another batch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._encode import EncodeFn, as_encode, as_query_encode
from repspace.engines.eval.perturb import DEFAULT_RATE, PERTURBATIONS, parse_perturbations, perturb
from repspace.engines.eval.ranking import query_scores
from repspace.engines.eval.retrieval import DEPTH, MAIN_METRIC, BeirData, _dense_rows
from repspace.engines.eval.sts import StsPairs, paired_cosine, sts_scores
from repspace.engines.eval.uncertainty import (
    DEFAULT_RESAMPLES,
    Interval,
    bootstrap_interval,
    mean_statistic,
    paired_comparison,
    spearman_statistic,
)

__all__ = ["PerturbedScore", "RobustnessResult", "retrieval_robustness", "sts_robustness"]


@dataclass(frozen=True)
class PerturbedScore:
    """A task's score under one perturbation, and its drop from the original.

    Attributes
    ----------
    perturbation : str
        A name of :data:`~repspace.engines.eval.perturb.PERTURBATIONS`.
    score : float
        The task's main score on the perturbed texts.
    drop : float
        The original score minus :attr:`score` (positive: the perturbation hurts).
    ci_low, ci_high : float or None
        The paired bootstrap 95% interval of the drop (``None`` without resampling).
    p_value : float or None
        Two-sided p-value of the paired randomization test of the drop (``None`` likewise).
    changed : int
        Texts the perturbation changed.
    texts : int
        Texts it was applied to.

    Examples
    --------
    >>> PerturbedScore("typos", 0.78, 0.04, 0.03, 0.05, 0.001, 2700, 2758).to_dict()["drop"]
    0.04
    """

    perturbation: str
    score: float
    drop: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    changed: int
    texts: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class RobustnessResult:
    """A task scored on its texts as they are and under each perturbation.

    Attributes
    ----------
    task_name : str
        ``sts:<data>`` or ``retrieval:<data>``.
    split : str
    main_metric : str
        ``spearman`` or ``ndcg_at_10``.
    original : float
        The main score on the texts as they are (equal to :func:`~repspace.engines.eval.sts.sts`'s
        or :func:`~repspace.engines.eval.retrieval.retrieval`'s).
    interval : Interval or None
        Its bootstrap 95% interval.
    perturbed : tuple of PerturbedScore
        One per perturbation, in the order asked for.
    evaluation_time : float
        Wall seconds, encoding included.
    info : dict
        ``units`` (``pairs``/``queries``), ``n_units``, ``texts_perturbed`` (what was
        perturbed), ``rate``, ``seed``, ``bootstrap``; the subject's description
        when run by the workflow.

    Examples
    --------
    >>> r = RobustnessResult("sts:toy", "test", "spearman", 0.8, None,
    ...                      (PerturbedScore("casing", 0.8, 0.0, 0.0, 0.0, 1.0, 3, 6),), 0.1)
    >>> r.drops(), r.to_dict()["perturbed"][0]["perturbation"]
    ({'casing': 0.0}, 'casing')
    """

    task_name: str
    split: str
    main_metric: str
    original: float
    interval: Interval | None
    perturbed: tuple[PerturbedScore, ...]
    evaluation_time: float
    info: dict[str, Any] = field(default_factory=dict)

    def drops(self) -> dict[str, float]:
        """Each perturbation's drop, by name."""
        return {p.perturbation: p.drop for p in self.perturbed}

    def with_info(self, **info: Any) -> RobustnessResult:
        """A copy whose :attr:`info` has these keys added or replaced.

        Examples
        --------
        >>> RobustnessResult("sts:toy", "test", "spearman", 0.8, None, (), 0.1).with_info(subject="x").info
        {'subject': 'x'}
        """
        return RobustnessResult(self.task_name, self.split, self.main_metric, self.original, self.interval,
                                self.perturbed, self.evaluation_time, {**self.info, **info})

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: ``task_name``, ``split``, ``main_metric``, ``original`` with ``ci_low``/``ci_high``,
        ``perturbed`` (a list of :meth:`PerturbedScore.to_dict`), ``evaluation_time`` and ``repspace`` (the info)."""
        ci = self.interval
        return {"task_name": self.task_name, "split": self.split, "main_metric": self.main_metric,
                "original": self.original, "ci_low": None if ci is None else ci.low,
                "ci_high": None if ci is None else ci.high, "perturbed": [p.to_dict() for p in self.perturbed],
                "evaluation_time": self.evaluation_time, "repspace": dict(self.info)}


def _check(perturbations: str | Sequence[str], rate: Any, seed: Any, bootstrap: Any) -> tuple[str, ...]:
    """The perturbations' names; a bad argument is one error line, before anything is embedded."""
    names = parse_perturbations(perturbations)
    check_scalar(rate, "rate", float, low=0, high=1, include="right")
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    check_scalar(bootstrap, "bootstrap", int, low=0)
    return names


def _reencoded(encode: EncodeFn, original: list[str], changed: list[str], vectors: np.ndarray) -> np.ndarray:
    """``vectors`` (of ``original``) with the rows of the texts that changed embedded again (each distinct one once)."""
    rows = [i for i, (a, b) in enumerate(zip(original, changed)) if a != b]
    if not rows:
        return vectors
    distinct = list(dict.fromkeys(changed[i] for i in rows))
    new = encode(distinct)
    if new.shape[1] != vectors.shape[1]:
        raise InputError(f"perturbed texts were encoded to {new.shape[1]} dimensions, the originals to "
                         f"{vectors.shape[1]}")
    at = {text: j for j, text in enumerate(distinct)}
    out = vectors.copy()
    out[rows] = new[[at[changed[i]] for i in rows]]
    return out


def _perturbed_score(name: str, score: float, original: float, comparison: Any, original_texts: list[str],
                     changed: list[str]) -> PerturbedScore:
    """One perturbation's row: its score, the drop, the comparison's interval and p-value (``None`` without one)."""
    return PerturbedScore(name, score, original - score, getattr(comparison, "ci_low", None),
                          getattr(comparison, "ci_high", None), getattr(comparison, "p_value", None),
                          sum(a != b for a, b in zip(original_texts, changed)), len(original_texts))


def sts_robustness(encode: Any, pairs: StsPairs, perturbations: str | Sequence[str] = PERTURBATIONS, *,
                   rate: float = DEFAULT_RATE, seed: int = 0, bootstrap: int = DEFAULT_RESAMPLES,
                   name: str | None = None) -> RobustnessResult:
    """Score STS pairs as they are and with both sentences perturbed; the drop of Spearman's correlation.

    Parameters
    ----------
    encode : callable or object with ``encode``
        Texts to vectors (as for :func:`~repspace.engines.eval.sts.sts`).
    pairs : StsPairs
    perturbations : str or sequence of str
        Names of :data:`~repspace.engines.eval.perturb.PERTURBATIONS` (``"typos,casing"``, ``"all"``).
    rate : float
        Share of each sentence's eligible sites changed (see :func:`~repspace.engines.eval.perturb.perturb`).
    seed : int
        Seeds the perturbations (sentence ``i`` of ``pairs.texts()``, first sides then second sides, is
        perturbed with the generator of ``(seed, i)``) and the bootstrap and test.
    bootstrap : int
        Resamples of the pairs behind the intervals and of the randomization test; 0: none.
    name : str, optional
        Task name; default ``sts:<data set name>``.

    Returns
    -------
    RobustnessResult
        ``original`` and each perturbed ``score`` are :func:`~repspace.engines.eval.sts.sts`'s main
        score on those sentences; ``drop`` their difference, with the paired bootstrap interval and
        randomization p-value of Spearman's correlation over the (gold, cosine) rows.

    Raises
    ------
    InputError
        A bad perturbation name, rate, seed or bootstrap count (before anything is embedded), or a
        correlation that is undefined (all gold scores equal, every cosine equal).

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> pairs = StsPairs(["A man is playing a guitar.", "A woman is slicing an onion.", "Stocks fell sharply."],
    ...                  ["A man plays the guitar.", "A woman is cutting an onion.", "The cat is sleeping."],
    ...                  np.array([4.8, 4.2, 0.0]), "toy")
    >>> r = sts_robustness(get_encoder("static"), pairs, "casing,punctuation", bootstrap=0)
    >>> r.task_name, round(r.original, 3), [(p.perturbation, p.changed, p.texts) for p in r.perturbed]
    ('sts:toy', 1.0, [('casing', 6, 6), ('punctuation', 6, 6)])
    """
    t0 = time.perf_counter()
    names = _check(perturbations, rate, seed, bootstrap)
    texts = pairs.texts()
    variants = [perturb(texts, kind, rate=rate, seed=seed) for kind in names]
    enc = as_encode(encode)
    n = len(pairs)
    gold = np.asarray(pairs.scores, dtype=np.float64)
    vectors = enc(texts)
    original = sts_scores(vectors[:n], vectors[n:], gold)["spearman"]
    cos = paired_cosine(vectors[:n], vectors[n:])
    interval = bootstrap_interval(spearman_statistic, gold, cos, n_resamples=bootstrap, seed=seed)
    out = []
    for kind, changed in zip(names, variants):
        moved = _reencoded(enc, texts, changed, vectors)
        score = sts_scores(moved[:n], moved[n:], gold)["spearman"]
        comparison = paired_comparison(spearman_statistic, (gold, cos), (gold, paired_cosine(moved[:n], moved[n:])),
                                       a="original", b=kind, n_resamples=bootstrap, seed=seed)
        out.append(_perturbed_score(kind, score, original, comparison, texts, changed))
    info = {"units": "pairs", "n_units": n, "texts_perturbed": "both sentences of each pair", "rate": float(rate),
            "seed": seed, "bootstrap": bootstrap}
    return RobustnessResult(name or f"sts:{pairs.name}", pairs.split, "spearman", original, interval, tuple(out),
                            time.perf_counter() - t0, info)


def _per_query_ndcg(queries: np.ndarray, docs: np.ndarray, data: BeirData) -> tuple[float, np.ndarray]:
    """The mean nDCG@10 over the judged queries (summed as :func:`retrieval` sums it) and each query's."""
    rows = _dense_rows(queries, docs, data, None, DEPTH)
    ids = np.asarray(data.corpus_ids, dtype=object)
    run = {qid: ids[r].tolist() for qid, r in zip(data.query_ids, rows)}
    values = [v[MAIN_METRIC] for v in query_scores(run, data.qrels, (10,)).values()]
    total = 0.0
    for v in values:
        total += v
    return float(total / len(values)), np.asarray(values, dtype=np.float64)


def retrieval_robustness(encode: Any, data: BeirData, perturbations: str | Sequence[str] = PERTURBATIONS, *,
                         rate: float = DEFAULT_RATE, seed: int = 0, bootstrap: int = DEFAULT_RESAMPLES,
                         encode_queries: Any = None, name: str | None = None) -> RobustnessResult:
    """Score retrieval with the queries as they are and perturbed; the drop of nDCG@10.

    The queries only are perturbed; the documents are embedded once and
    searched exactly (cosine, 1000 deep), as :func:`~repspace.engines.eval.retrieval.retrieval` does.

    Parameters
    ----------
    encode : callable or object with ``encode``
        The documents' side; queries go to ``encode_queries``, else
        ``encode.encode_queries``, else ``encode`` (as in :func:`~repspace.engines.eval.retrieval.retrieval`).
    data : BeirData
    perturbations : str or sequence of str
        Names of :data:`~repspace.engines.eval.perturb.PERTURBATIONS`.
    rate : float
        Share of each query's eligible sites changed.
    seed : int
        Seeds the perturbations (query ``i`` with the generator of ``(seed, i)``) and the bootstrap and test.
    bootstrap : int
        Resamples of the queries behind the intervals and of the randomization test; 0: none.
    encode_queries : callable or object with ``encode``, optional
        The query side, given explicitly.
    name : str, optional
        Task name; default ``retrieval:<data set name>``.

    Returns
    -------
    RobustnessResult
        ``original`` and each ``score`` are the mean nDCG@10 over the judged
        queries (:func:`~repspace.engines.eval.retrieval.retrieval`'s main score);
        ``drop`` their difference, with the paired bootstrap interval and
        randomization p-value over the per-query nDCG@10.

    Examples
    --------
    >>> data = BeirData(("d1", "d2", "d3"), ("a cat purrs", "stocks fell", "the dog barks"),
    ...                 ("q1", "q2"), ("a purring cat", "falling stocks"), {"q1": {"d1": 1}, "q2": {"d2": 1}},
    ...                 "test", "toy")

    A toy encoder that counts ``cat`` and ``st`` (case-sensitive) is hurt by casing (``A PURRING CAT``),
    not by these typos (``a purrnig cat``, ``fallnig stock``):

    >>> encode = lambda texts: np.array([[t.count("cat"), t.count("st"), 0.1] for t in texts])
    >>> r = retrieval_robustness(encode, data, "casing,typos", rate=1.0, bootstrap=0)
    >>> r.original, [(p.perturbation, round(p.score, 3), p.changed) for p in r.perturbed]
    (1.0, [('casing', 0.565, 2), ('typos', 1.0, 2)])
    """
    t0 = time.perf_counter()
    names = _check(perturbations, rate, seed, bootstrap)
    queries = list(data.query_texts)
    variants = [perturb(queries, kind, rate=rate, seed=seed) for kind in names]
    docs = as_encode(encode)(list(data.corpus_texts))
    query_side = as_query_encode(encode, encode_queries)
    vectors = query_side(queries)
    if docs.shape[1] != vectors.shape[1]:
        raise InputError(f"documents were encoded to {docs.shape[1]} dimensions but queries to {vectors.shape[1]}")
    original, per_query = _per_query_ndcg(vectors, docs, data)
    interval = (bootstrap_interval(mean_statistic, per_query, n_resamples=bootstrap, seed=seed)
                if len(per_query) > 1 else None)
    out = []
    for kind, changed in zip(names, variants):
        score, moved = _per_query_ndcg(_reencoded(query_side, queries, changed, vectors), docs, data)
        comparison = (paired_comparison(mean_statistic, per_query, moved, a="original", b=kind,
                                        n_resamples=bootstrap, seed=seed) if len(per_query) > 1 else None)
        out.append(_perturbed_score(kind, score, original, comparison, queries, changed))
    info = {"units": "queries", "n_units": len(per_query), "n_documents": data.n_documents,
            "texts_perturbed": "queries only (the documents as they are, as PTEB perturbs retrieval)",
            "rate": float(rate), "seed": seed, "bootstrap": bootstrap}
    return RobustnessResult(name or f"retrieval:{data.name}", data.split, MAIN_METRIC, original, interval,
                            tuple(out), time.perf_counter() - t0, info)
