"""Ranking metrics: hand-computed values, degenerate runs, and agreement with pytrec_eval (trec_eval)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import pytrec_eval

from repspace.core.errors import InputError
from repspace.engines.eval.ranking import (
    MEASURES,
    average_precision_at_k,
    ndcg_at_k,
    precision_at_k,
    ranking_scores,
    recall_at_k,
    reciprocal_rank_at_k,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

L3 = math.log2(3)  # discount of rank 2
L5 = math.log2(5)  # discount of rank 4


# Graded: a=3, b=2, c=1 relevant; d judged 0 (not relevant, no gain); x unjudged.
GRADED = {"a": 3, "b": 2, "c": 1, "d": 0}
GRADED_RUN = ["d", "b", "x", "a"]


def test_graded_by_hand():
    # DCG@10 = 0 (d) + 2/log2(3) (b, rank 2) + 0 (x) + 3/log2(5) (a, rank 4) = 1.26186 + 1.29203 = 2.55389
    # ideal  = 3/1 + 2/log2(3) + 1/log2(4) = 3 + 1.26186 + 0.5 = 4.76186 ; nDCG = 0.536322
    assert ndcg_at_k(GRADED_RUN, GRADED, 10) == pytest.approx((2 / L3 + 3 / L5) / (3 + 2 / L3 + 0.5), abs=1e-15)
    assert ndcg_at_k(GRADED_RUN, GRADED, 10) == pytest.approx(0.5363218250, abs=1e-9)
    # @2: DCG = 2/log2(3) = 1.26186 ; ideal cut at 2 = 3 + 2/log2(3) = 4.26186 ; nDCG = 0.296082
    assert ndcg_at_k(GRADED_RUN, GRADED, 2) == pytest.approx(0.2960819110, abs=1e-9)
    # recall: b, a found of {a, b, c} -> 2/3 ; in the top 2 only b -> 1/3
    assert recall_at_k(GRADED_RUN, GRADED, 10) == pytest.approx(2 / 3)
    assert recall_at_k(GRADED_RUN, GRADED, 2) == pytest.approx(1 / 3)
    # precision@10 = 2 relevant / 10 ; @4 = 2/4
    assert precision_at_k(GRADED_RUN, GRADED, 10) == pytest.approx(0.2)
    assert precision_at_k(GRADED_RUN, GRADED, 4) == pytest.approx(0.5)
    # first relevant (b) at rank 2
    assert reciprocal_rank_at_k(GRADED_RUN, GRADED, 10) == 0.5
    assert reciprocal_rank_at_k(GRADED_RUN, GRADED, 1) == 0.0
    # AP@100 = (P@2 + P@4) / 3 relevant = (1/2 + 2/4) / 3 = 1/3 ; AP@3 = (1/2) / 3 = 1/6 (divided by all relevant)
    assert average_precision_at_k(GRADED_RUN, GRADED, 100) == pytest.approx(1 / 3)
    assert average_precision_at_k(GRADED_RUN, GRADED, 3) == pytest.approx(1 / 6)


def test_binary_by_hand():
    qrels = {"a": 1, "b": 1}
    run = ["a", "x", "b"]
    # DCG = 1/1 + 1/log2(4) = 1.5 ; ideal = 1 + 1/log2(3) = 1.63093 ; nDCG = 0.919721
    assert ndcg_at_k(run, qrels, 10) == pytest.approx(1.5 / (1 + 1 / L3))
    assert ndcg_at_k(run, qrels, 10) == pytest.approx(0.9197207891, abs=1e-9)
    # AP = (1/1 + 2/3) / 2 = 0.8333
    assert average_precision_at_k(run, qrels, 100) == pytest.approx(5 / 6)
    assert recall_at_k(run, qrels, 2) == 0.5
    assert reciprocal_rank_at_k(run, qrels, 10) == 1.0


def test_ranking_scores_averages_by_hand():
    qrels = {
        "q1": {"a": 1},  # found at rank 2
        "q2": {"b": 2, "c": 1},  # b at rank 1, c not found
        "q3": {"d": 1},  # no results at all: every measure 0
        "q4": {"e": 0},  # nothing relevant: ignored
    }
    run = {"q1": ["x", "a"], "q2": ["b", "y"], "q5": ["a"]}  # q5 has no judgements: ignored
    s = ranking_scores(run, qrels, ks=(10,))
    assert sorted(s) == sorted(f"{m}_at_10" for m in MEASURES)
    # mrr = (1/2 + 1 + 0) / 3
    assert s["mrr_at_10"] == pytest.approx(0.5)
    # recall = (1 + 1/2 + 0) / 3
    assert s["recall_at_10"] == pytest.approx(0.5)
    # ndcg: q1 = (1/log2 3) / 1 ; q2 = 2 / (2 + 1/log2 3) ; q3 = 0
    assert s["ndcg_at_10"] == pytest.approx((1 / L3 + 2 / (2 + 1 / L3)) / 3)
    # map: q1 = (1/2)/1 ; q2 = (1/1)/2 ; q3 = 0
    assert s["map_at_10"] == pytest.approx(1 / 3)
    # precision@10: (1 + 1 + 0) / 10 / 3
    assert s["precision_at_10"] == pytest.approx(2 / 30)


def test_query_with_no_results_scores_zero():
    for fn in (ndcg_at_k, recall_at_k, precision_at_k, reciprocal_rank_at_k, average_precision_at_k):
        assert fn([], {"a": 2}, 10) == 0.0
    s = ranking_scores({"q1": []}, {"q1": {"a": 1}})
    assert all(v == 0.0 for v in s.values())
    assert ranking_scores({}, {"q1": {"a": 1}}) == s


def test_fewer_results_than_k():
    # one result, the only relevant document: perfect nDCG, recall, AP and MRR; P@10 still divides by 10
    assert ndcg_at_k(["a"], {"a": 3}, 10) == 1.0
    assert recall_at_k(["a"], {"a": 3}, 100) == 1.0
    assert average_precision_at_k(["a"], {"a": 3}, 100) == 1.0
    assert reciprocal_rank_at_k(["a"], {"a": 3}, 10) == 1.0
    assert precision_at_k(["a"], {"a": 3}, 10) == 0.1
    # two relevant, one retrieved: ideal has both -> DCG 1 / (1 + 1/log2 3)
    assert ndcg_at_k(["a"], {"a": 1, "b": 1}, 10) == pytest.approx(1 / (1 + 1 / L3))


def test_all_documents_relevant_and_k_beyond_the_corpus():
    docs = [f"d{i}" for i in range(5)]
    qrels = {d: 1 for d in docs}
    for k in (1, 5, 10, 1000):  # k beyond the 5-document corpus
        assert ndcg_at_k(docs, qrels, k) == pytest.approx(1.0)
        assert average_precision_at_k(docs, qrels, k) == pytest.approx(min(k, 5) / 5)
        assert recall_at_k(docs, qrels, k) == pytest.approx(min(k, 5) / 5)
        assert precision_at_k(docs, qrels, k) == pytest.approx(min(k, 5) / k)
    # graded, all relevant, best-first order is the ideal one
    graded = {"a": 3, "b": 2, "c": 1}
    assert ndcg_at_k(["a", "b", "c"], graded, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["c", "b", "a"], graded, 10) < 1.0


def test_scores_stay_in_range_and_finite():
    rng = np.random.default_rng(5)
    for _ in range(50):
        docs = [f"d{i}" for i in range(rng.integers(1, 20))]
        qrels = {d: int(rng.integers(-1, 4)) for d in docs if rng.random() < 0.5}
        run = list(rng.permutation(docs)[: rng.integers(0, len(docs) + 1)])
        for fn in (ndcg_at_k, recall_at_k, precision_at_k, reciprocal_rank_at_k, average_precision_at_k):
            v = fn(run, qrels, int(rng.integers(1, 25)))
            assert 0.0 <= v <= 1.0 + 1e-12 and math.isfinite(v)


def test_bad_input():
    with pytest.raises(InputError, match="no query in the qrels has a relevant document"):
        ranking_scores({"q1": ["a"]}, {"q1": {"a": 0}})
    with pytest.raises(InputError, match="no query in the qrels has a relevant document"):
        ranking_scores({"q1": ["a"]}, {})
    with pytest.raises(InputError, match=r"query 'q1': document 'a' appears more than once"):
        ranking_scores({"q1": ["a", "b", "a"]}, {"q1": {"a": 1}})
    with pytest.raises(InputError, match="positive integer"):
        ranking_scores({"q1": ["a"]}, {"q1": {"a": 1}}, ks=(0,))
    with pytest.raises(InputError, match="positive integer"):
        ndcg_at_k(["a"], {"a": 1}, k=2.5)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not a finite number"):
        ranking_scores({"q1": ["a"]}, {"q1": {"a": float("nan")}})


# ---------------------------------------------------------------------------- pytrec_eval


def _random_case(seed: int, n_queries: int = 50, n_docs: int = 300):
    """Random graded qrels (every query has a relevant doc, some docs judged 0) and a run with distinct scores."""
    rng = np.random.default_rng(seed)
    docs = [f"D{i:04d}" for i in range(n_docs)]
    qrels, run_scores = {}, {}
    for q in range(n_queries):
        qid = f"Q{q}"
        judged = rng.choice(n_docs, size=int(rng.integers(1, 40)), replace=False)
        grades = rng.integers(0, 5, size=len(judged))
        grades[0] = max(grades[0], 1)
        qrels[qid] = {docs[j]: int(g) for j, g in zip(judged, grades)}
        # Run: a random share of the judged docs plus random others, some runs shorter than 100.
        size = int(rng.integers(1, 160))
        pool = np.unique(np.concatenate([judged[rng.random(len(judged)) < 0.6], rng.choice(n_docs, size)]))
        chosen = rng.permutation(pool)[:size]
        scores = rng.permutation(len(chosen)).astype(float) + rng.random()  # distinct scores
        run_scores[qid] = {docs[j]: float(s) for j, s in zip(chosen, scores)}
    run = {q: sorted(d, key=lambda doc: -d[doc]) for q, d in run_scores.items()}
    return qrels, run_scores, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_pytrec_eval(seed):
    qrels, run_scores, run = _random_case(seed)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10,100", "recall.10,100", "P.10,100", "map_cut.10,100"})
    ref = ev.evaluate(run_scores)
    # MRR@k: trec_eval's recip_rank on the run cut at k.
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
    for k in (10, 100):
        cut = {q: {d: run_scores[q][d] for d in run[q][:k]} for q in run}
        for q, v in rr.evaluate(cut).items():
            ref[q][f"recip_rank_{k}"] = v["recip_rank"]
    assert set(ref) == set(qrels)
    names = {"ndcg": "ndcg_cut_{k}", "recall": "recall_{k}", "precision": "P_{k}", "map": "map_cut_{k}",
             "mrr": "recip_rank_{k}"}
    fns = {"ndcg": ndcg_at_k, "recall": recall_at_k, "precision": precision_at_k, "map": average_precision_at_k,
           "mrr": reciprocal_rank_at_k}
    # per query
    for q in qrels:
        for m, fn in fns.items():
            for k in (10, 100):
                assert fn(run[q], qrels[q], k) == pytest.approx(ref[q][names[m].format(k=k)], abs=1e-12), (q, m, k)
    # means
    ours = ranking_scores(run, qrels, ks=(10, 100))
    for m in MEASURES:
        for k in (10, 100):
            want = np.mean([ref[q][names[m].format(k=k)] for q in qrels])
            assert ours[f"{m}_at_{k}"] == pytest.approx(want, abs=1e-12), (m, k)


def test_negative_judgements_give_no_gain_like_trec_eval():
    qrels = {"q": {"a": 2, "b": -1, "c": 1}}
    run = {"q": {"b": 3.0, "a": 2.0, "x": 1.0}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)["q"]["ndcg_cut_10"]
    assert ndcg_at_k(["b", "a", "x"], qrels["q"], 10) == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("seed", [3, 4])
def test_means_equal_the_per_query_functions_to_the_last_bit(seed):
    """ranking_scores makes one pass per query; each mean is still the mean of the per-measure functions exactly."""
    qrels, _, run = _random_case(seed)
    qrels["Qneg"] = {"D0001": 2, "D0002": -1, "D0003": 0}
    run["Qneg"] = ["D0002", "D0003", "D0009", "D0001"]
    ks = (1, 3, 5, 10, 20, 100, 1000)
    ours = ranking_scores(run, qrels, ks=ks)
    fns = {"ndcg": ndcg_at_k, "recall": recall_at_k, "precision": precision_at_k, "map": average_precision_at_k,
           "mrr": reciprocal_rank_at_k}
    for m, fn in fns.items():
        for k in ks:
            per_query = [fn(run.get(q, []), qrels[q], k) for q in qrels]
            assert ours[f"{m}_at_{k}"] == sum(per_query) / len(per_query), (m, k)
