"""Comparisons of several models' results on their per-unit scores: the units every task records, and the test
of two retrieval runs against ranx's ``compare`` (Fisher's randomization test, the paired t-test) on Cranfield."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _data_subsets import cranfield_head
from scipy import stats

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval import TaskResult, Units, compare_results
from repspace.engines.eval.labels import classification, clustering
from repspace.engines.eval.pairclass import PairLabels, pairclass
from repspace.engines.eval.retrieval import BeirData, load_beir, retrieval
from repspace.engines.eval.sts import StsPairs, sts
from repspace.engines.eval.uncertainty import holm
from repspace.engines.eval.words import Analogies, WordPairs, WordVectors, analogy, wordsim
from repspace.workflows.evaluate import hubness_retrieval

#: Permutations of both randomization tests (ours and ranx's).
PERMUTATIONS = 10_000


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory, shared_data):
    """Cranfield's first 500 documents and the 140 queries judged among them."""
    return load_beir(cranfield_head(shared_data, tmp_path_factory.mktemp("cran") / "cran500", 500,
                                    judged_queries_only=True))


def _table_model(data: BeirData, docs: np.ndarray, queries: np.ndarray):
    table = {**dict(zip(data.corpus_texts, docs)), **dict(zip(data.query_texts, queries))}
    return lambda texts: np.array([table[t] for t in texts], dtype=np.float32)


def _ranx_run(data: BeirData, docs: np.ndarray, queries: np.ndarray, depth: int = 100) -> dict:
    """Each query's top ``depth`` documents by cosine, with their cosines: the run as ranx takes it."""
    d, q = (np.asarray(x, dtype=np.float64) for x in (docs, queries))
    d = np.divide(d, np.linalg.norm(d, axis=1, keepdims=True), out=np.zeros_like(d), where=d.any(axis=1)[:, None])
    scores = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ d.T  # an empty document's zero vector: cosine 0
    top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
    return {qid: {data.corpus_ids[j]: float(scores[i, j]) for j in top[i]} for i, qid in enumerate(data.query_ids)}


def test_retrieval_comparisons_agree_with_ranx_compare_on_cranfield(cranfield):
    ranx = pytest.importorskip("ranx", reason="ranx is a test dependency (pyproject.toml, extra 'test')")
    data = cranfield
    enc = get_encoder("static")
    docs, queries = enc.encode(list(data.corpus_texts)), enc.encode(list(data.query_texts))
    # model B: the static model with its 3 top principal directions removed (all-but-the-top, fitted on the docs)
    mu = docs.mean(axis=0)
    top = np.linalg.svd(docs - mu, full_matrices=False)[2][:3]
    docs_b, queries_b = ((x - mu) - (x - mu) @ top.T @ top for x in (docs, queries))
    a = retrieval(_table_model(data, docs, queries), data, bootstrap=0).with_info(subject="static")
    b = retrieval(_table_model(data, docs_b, queries_b), data, bootstrap=0).with_info(subject="static-abtt3")
    qrels = ranx.Qrels.from_dict(data.qrels)
    runs = [ranx.Run.from_dict(_ranx_run(data, docs, queries), name="a"),
            ranx.Run.from_dict(_ranx_run(data, docs_b, queries_b), name="b")]
    # our per-query nDCG@10 (the units) is ranx's, query by query
    for result, run in zip((a, b), runs):
        ranx.evaluate(qrels, run, "ndcg@10")
        theirs = run.scores["ndcg@10"]
        assert result.units.ids == tuple(q for q in data.query_ids if q in theirs) and len(theirs) == 140
        np.testing.assert_allclose(result.units.arrays[0], [theirs[q] for q in result.units.ids], rtol=0, atol=1e-12)
        assert result.units.value() == pytest.approx(result.main_score, abs=1e-15)
    (ours,) = compare_results([a, b], n_resamples=PERMUTATIONS, seed=0)
    fisher = ranx.compare(qrels, runs, metrics=["ndcg@10"], stat_test="fisher", n_permutations=PERMUTATIONS,
                          random_seed=7)
    student = ranx.compare(qrels, runs, metrics=["ndcg@10"], stat_test="student")
    p_fisher = fisher.comparisons[("a", "b")]["ndcg@10"]["p_value"]
    assert 0.01 < p_fisher < 0.5  # a comparison that is neither certain nor hopeless: the test is a real check
    # two independent Monte Carlo estimates of one p-value from 10,000 permutations each: 4 standard errors of
    # their difference (binomial proportions), plus the (hits + 1) / (n + 1) convention's 1 / n
    tolerance = 4 * math.sqrt(2 * p_fisher * (1 - p_fisher) / PERMUTATIONS) + 2 / PERMUTATIONS
    assert ours.p_value == ours.p_raw  # one pair: Holm changes nothing
    assert abs(ours.p_value - p_fisher) <= tolerance, (ours.p_value, p_fisher, tolerance)
    assert ours.difference == pytest.approx(a.main_score - b.main_score, abs=1e-15)
    assert ours.ci_low < ours.difference < ours.ci_high
    # ranx's paired t-test is scipy's on our units
    p_student = student.comparisons[("a", "b")]["ndcg@10"]["p_value"]
    assert p_student == pytest.approx(stats.ttest_rel(a.units.arrays[0], b.units.arrays[0]).pvalue, rel=1e-9)


def test_units_align_by_query_id_whatever_the_order(cranfield):
    rng = np.random.default_rng(0)
    data = cranfield
    docs = rng.normal(size=(data.n_documents, 8))
    a = retrieval(_table_model(data, docs, rng.normal(size=(data.n_queries, 8))), data, bootstrap=0)
    b = retrieval(_table_model(data, docs, rng.normal(size=(data.n_queries, 8))), data, bootstrap=0)
    order = rng.permutation(b.units.n_units)
    shuffled = Units("mean", (b.units.arrays[0][order],), b.units.names, ids=[b.units.ids[i] for i in order])
    straight = compare_results([a, b], n_resamples=200, names=["a", "b"])
    assert compare_results([a, b.with_units(shuffled)], n_resamples=200, names=["a", "b"]) == straight
    fewer = Units("mean", (b.units.arrays[0][1:],), b.units.names, ids=b.units.ids[1:])
    with pytest.raises(InputError, match=r"results 'a' and 'b' were not scored on the same units \(140 and 139"):
        compare_results([a, b.with_units(fewer)], names=["a", "b"])


# ---------------------------------------------------------------------------- every task records its units


def _words() -> tuple[WordVectors, WordPairs, Analogies]:
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(30)]
    wv = WordVectors(words, rng.normal(size=(30, 6)))
    pairs = WordPairs(words[:12] + ["missing"], words[12:24] + ["w1"], rng.uniform(0, 10, 13), "toy")
    questions = Analogies([tuple(rng.choice(words, 4, replace=False)) for _ in range(12)] + [("w1", "w2", "w3", "zz")],
                          ["s"] * 13)
    return wv, pairs, questions


@pytest.mark.parametrize("bootstrap", [0, 50])
def test_every_task_with_an_interval_records_units_giving_its_main_score(bootstrap):
    rng = np.random.default_rng(1)
    vectors = {f"t{i}": v for i, v in enumerate(rng.normal(size=(40, 5)))}
    encode = lambda texts: np.array([vectors[t] for t in texts])  # noqa: E731
    texts = list(vectors)
    gold = rng.uniform(0, 5, 20)
    r = sts(encode, StsPairs(texts[:20], texts[20:], gold, "toy"), bootstrap=bootstrap)
    assert r.units.names == ("gold", "cosine") and r.units.shared == ("gold",) and r.units.ids is None
    np.testing.assert_array_equal(r.units.array("gold"), gold)
    assert r.units.value() == pytest.approx(stats.spearmanr(gold, r.units.array("cosine")).statistic, abs=1e-12)
    assert r.units.value() == pytest.approx(r.main_score, abs=1e-12)
    labels = (gold > 2.5).astype(int)
    p = pairclass(encode, PairLabels(texts[:20], texts[20:], labels, "toy"), bootstrap=bootstrap)
    assert p.units.statistic == "average_precision" and p.units.value() == pytest.approx(p.main_score, abs=1e-12)
    x = np.vstack([rng.normal(0, 1, (20, 3)) + [2, 0, 0], rng.normal(0, 1, (20, 3))])
    c = classification(x, ["a"] * 20 + ["b"] * 20, bootstrap=bootstrap)  # 5 folds of 8: pooled = mean over folds
    assert c.units.statistic == "mean" and c.units.value() == pytest.approx(c.main_score, abs=1e-12)
    wv, pairs, questions = _words()
    w = wordsim(wv, pairs, bootstrap=bootstrap)
    assert w.units.ids == tuple(str(i) for i in range(12))  # the 13th pair is out of the vocabulary
    assert w.units.value() == pytest.approx(w.main_score, abs=1e-12)
    an = analogy(wv, questions, bootstrap=bootstrap)
    assert an.units.ids == tuple(str(i) for i in range(12)) and an.units.value() == pytest.approx(an.main_score)
    assert clustering(x, ["a"] * 20 + ["b"] * 20, seeds=1).units is None


def test_hubness_reduced_retrieval_records_its_queries(cranfield):
    rng = np.random.default_rng(2)
    data = cranfield
    encode = _table_model(data, rng.normal(size=(data.n_documents, 8)), rng.normal(size=(data.n_queries, 8)))
    r = hubness_retrieval(encode, data, "csls", bootstrap=0)
    assert r.units.ids is not None and r.units.n_units == 140
    assert r.units.value() == pytest.approx(r.main_score, abs=1e-15)


def test_units_round_trip_through_to_dict_and_mteb_still_reads_it():
    mteb_results = pytest.importorskip("mteb.results", reason="mteb is a test dependency")
    rng = np.random.default_rng(3)
    vectors = {f"t{i}": v for i, v in enumerate(rng.normal(size=(30, 4)))}
    texts = list(vectors)
    r = sts(lambda t: np.array([vectors[x] for x in t]), StsPairs(texts[:15], texts[15:], rng.uniform(0, 5, 15),
                                                                    "toy"), bootstrap=100)
    d = r.to_dict()
    assert "units" in d["repspace"] and not any(isinstance(v, (list, dict)) and k != "languages"
                                                for k, v in d["scores"]["test"][0].items())
    back = TaskResult.from_dict(d)
    assert back.units == r.units and back.interval == r.interval and back.to_dict() == d
    assert "units" not in r.to_mteb()["scores"]["test"][0]["repspace"]  # MTEB's files stay lean
    loaded = mteb_results.TaskResult.from_dict(d)
    assert loaded.scores["test"][0]["main_score"] == r.main_score


# ---------------------------------------------------------------------------- refusals


def _sts_result(name: str, gold: np.ndarray, cosine: np.ndarray, task: str = "sts:toy") -> TaskResult:
    units = Units("spearman", (gold, cosine), ("gold", "cosine"), shared=("gold",))
    return TaskResult(task, "test", "spearman", {"spearman": units.value()}, 0.0, {"subject": name}, units=units)


def test_three_models_are_every_pair_holm_corrected():
    rng = np.random.default_rng(5)
    gold = rng.uniform(0, 5, 200)
    rs = [_sts_result(n, gold, gold + rng.normal(0, s, 200)) for n, s in (("x", 1.0), ("y", 1.3), ("z", 3.0))]
    cs = compare_results(rs, n_resamples=500, seed=1)
    assert [(c.a, c.b) for c in cs] == [("x", "y"), ("x", "z"), ("y", "z")]
    np.testing.assert_array_equal([c.p_value for c in cs], holm([c.p_raw for c in cs]))
    assert [c.difference for c in cs] == pytest.approx([rs[0].main_score - rs[1].main_score,
                                                         rs[0].main_score - rs[2].main_score,
                                                         rs[1].main_score - rs[2].main_score], abs=1e-12)
    off = compare_results(rs, n_resamples=0)
    assert all(c.ci_low is None and c.p_value is None and "p_raw" not in c.to_dict() for c in off)
    twice = compare_results([rs[0], rs[0]], n_resamples=0)
    assert (twice[0].a, twice[0].b, twice[0].difference) == ("x #1", "x #2", 0.0)


def test_what_cannot_be_compared_is_one_clear_line():
    rng = np.random.default_rng(6)
    gold = rng.uniform(0, 5, 50)
    a, b = _sts_result("a", gold, rng.normal(size=50)), _sts_result("b", gold, rng.normal(size=50))
    cases = [
        ([a], "comparing needs at least 2 models, got 1"),
        ([a, _sts_result("c", gold, rng.normal(size=50), task="sts:other")],
         r"results of different tasks cannot be compared: sts:toy \(test\), sts:other \(test\)"),
        ([a, _sts_result("c", gold[::-1].copy(), rng.normal(size=50))],
         r"results 'a' and 'c' were not scored on the same units \(their gold arrays differ\)"),
        ([a, _sts_result("c", gold[:40], rng.normal(size=40))], r"not scored on the same units \(50 and 40 units\)"),
        ([a, b, b.with_units(None).with_info(subject="old")], r"no per-unit scores to compare on for 'old'"),
    ]
    for results, message in cases:
        with pytest.raises(InputError, match=message) as info:
            compare_results(results)
        assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="n_resamples"):
        compare_results([a, b], n_resamples=-1)


def test_units_refuse_what_they_cannot_hold():
    for args, message in [
        (("median", ([1.0, 2.0],), ("x",)), "unknown statistic 'median'"),
        (("mean", ([1.0, 2.0], [1.0]), ("x", "y")), "1-d arrays of one length"),
        (("mean", ([1.0, np.nan],), ("x",)), "finite"),
        (("mean", ([1.0, 2.0],), ("x", "y")), "one distinct name per array"),
        (("mean", (["a", "b"],), ("x",)), "numbers"),
    ]:
        with pytest.raises(InputError, match=message):
            Units(*args)
    with pytest.raises(InputError, match="one distinct id each"):
        Units("mean", ([1.0, 2.0],), ("x",), ids=["q", "q"])
    with pytest.raises(InputError, match="statistic, names and arrays"):
        Units.from_dict({"statistic": "mean"})


def test_under_the_null_the_test_rejects_at_its_level_whatever_the_models_scales():
    """Two equally good models, one with its cosines squashed into [0.3, 0.9]: p <= 0.05 about 5% of the time."""
    trials, p_values = 300, []
    for t in range(trials):
        rng = np.random.default_rng(1000 + t)
        gold = rng.uniform(0, 5, 100)
        a, b = gold + rng.normal(0, 2, 100), np.tanh((gold + rng.normal(0, 2, 100)) / 10) * 0.3 + 0.6
        (c,) = compare_results([_sts_result("a", gold, a), _sts_result("b", gold, b)], n_resamples=200, seed=t)
        p_values.append(c.p_value)
    rate = np.mean(np.asarray(p_values) <= 0.05)
    assert abs(rate - 0.05) <= 3 * math.sqrt(0.05 * 0.95 / trials), rate  # 3 standard errors of a proportion
    # a rank statistic is compared on ranks: a monotone rescaling of one model's scores changes nothing
    gold = rng.uniform(0, 5, 80)
    a, b = gold + rng.normal(0, 1, 80), gold + rng.normal(0, 2, 80)
    plain = compare_results([_sts_result("a", gold, a), _sts_result("b", gold, b)], n_resamples=300)
    squashed = compare_results([_sts_result("a", gold, a), _sts_result("b", gold, np.exp(b / 5))], n_resamples=300)
    assert squashed == plain
