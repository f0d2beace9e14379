"""Bootstrap intervals, paired comparisons and Holm's correction, each against an independent reference:
the normal theory of the mean, a plain numpy bootstrap loop, ranx's ``compare`` (Fisher's randomization test
and the paired t-test), scipy's ``spearmanr`` and ``ttest_rel``, and worked examples of Holm's procedure."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repspace.core.errors import InputError
from repspace.engines.eval import StsPairs, TaskResult, sts
from repspace.engines.eval.ranking import query_scores
from repspace.engines.eval.retrieval import BeirData, load_beir, retrieval
from repspace.engines.eval.uncertainty import (
    Comparison,
    Interval,
    bootstrap_interval,
    holm,
    mean_statistic,
    paired_comparison,
    spearman_statistic,
)
from repspace.engines.eval.words import WordPairs, WordVectors, wordsim

# ---------------------------------------------------------------------------- statistics


def test_spearman_statistic_is_scipys_spearmanr_row_by_row_with_ties():
    rng = np.random.default_rng(3)
    gold = np.round(rng.uniform(0, 5, size=(20, 300)) * 5) / 5  # many ties, as STS gold has
    pred = gold + rng.normal(0, 1.5, size=gold.shape)
    ours = spearman_statistic(gold, pred, axis=-1)
    want = [stats.spearmanr(g, p).statistic for g, p in zip(gold, pred)]
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-12)
    assert math.isnan(float(spearman_statistic(np.ones(5), np.arange(5.0))))  # undefined, not an error


def _ranked_each_draw(x, y, axis=-1):
    """Spearman ranking every draw with scipy: the same statistic without the counting fast path."""
    return spearman_statistic(x, y, axis=axis)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spearman_ranked_by_counting_gives_scipys_interval_and_comparison_to_1e_12(seed):
    rng = np.random.default_rng(seed)
    n = 257
    gold = np.round(rng.uniform(0, 5, n) * 5) / 5  # many ties
    a = np.round(gold + rng.normal(0, 1.0, n), 1)  # ties on the model side too
    b = gold + rng.normal(0, 2.0, n)
    fast = bootstrap_interval(spearman_statistic, gold, a, n_resamples=300, seed=seed)
    slow = bootstrap_interval(_ranked_each_draw, gold, a, n_resamples=300, seed=seed)
    assert fast.n_resamples == slow.n_resamples == 300
    assert fast.low == pytest.approx(slow.low, abs=1e-12) and fast.high == pytest.approx(slow.high, abs=1e-12)
    ra, rb = stats.rankdata(a), stats.rankdata(b)
    fast_c = paired_comparison(spearman_statistic, (gold, ra), (gold, rb), n_resamples=300, seed=seed)
    slow_c = paired_comparison(_ranked_each_draw, (gold, ra), (gold, rb), n_resamples=300, seed=seed)
    assert fast_c.p_value == slow_c.p_value
    assert fast_c.ci_low == pytest.approx(slow_c.ci_low, abs=1e-12)
    assert fast_c.ci_high == pytest.approx(slow_c.ci_high, abs=1e-12)


def test_spearman_with_a_missing_value_is_ranked_as_scipy_ranks_it():
    rng = np.random.default_rng(8)
    gold, pred = rng.normal(size=60), rng.normal(size=60)
    pred[3], gold[5] = np.nan, np.inf
    fast = bootstrap_interval(spearman_statistic, gold, pred, n_resamples=200)
    slow = bootstrap_interval(_ranked_each_draw, gold, pred, n_resamples=200)
    assert fast == slow and 0 < fast.n_resamples < 200  # draws holding the NaN are undefined, left out


# ---------------------------------------------------------------------------- bootstrap intervals


def test_the_mean_s_95_interval_covers_the_truth_95_percent_of_the_time_with_the_normal_width():
    mu, sigma, n, trials = 3.0, 2.0, 100, 400
    covered, widths = 0, []
    for t in range(trials):
        x = np.random.default_rng(10_000 + t).normal(mu, sigma, n)
        ci = bootstrap_interval(mean_statistic, x, seed=t)
        covered += ci.low <= mu <= ci.high
        widths.append(ci.high - ci.low)
    rate = covered / trials
    se = math.sqrt(0.95 * 0.05 / trials)
    assert abs(rate - 0.95) <= 3 * se, rate
    normal_width = 2 * 1.96 * sigma / math.sqrt(n)
    assert np.mean(widths) == pytest.approx(normal_width, rel=0.05)


def _loop_bootstrap(gold: np.ndarray, pred: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float, float]:
    """The percentile bootstrap written out: draw pairs with replacement, Spearman of each draw, percentiles."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n_resamples):
        i = rng.integers(0, len(gold), len(gold))
        values.append(stats.spearmanr(gold[i], pred[i]).statistic)
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi), float(np.std(values))


def test_the_spearman_interval_is_a_plain_numpy_loop_bootstraps_within_monte_carlo_error():
    rng = np.random.default_rng(5)
    gold = np.round(rng.uniform(0, 5, 500) * 5) / 5
    pred = gold + rng.normal(0, 2.0, 500)
    ours = bootstrap_interval(spearman_statistic, gold, pred, n_resamples=2000, seed=0)
    lo, hi, spread = _loop_bootstrap(gold, pred, 2000, seed=12345)
    # a 2.5% quantile of 2000 draws varies by about 0.06 standard errors; two independent ones by 0.085
    assert abs(ours.low - lo) <= 0.35 * spread and abs(ours.high - hi) <= 0.35 * spread, (ours, lo, hi, spread)
    assert ours.n_resamples == 2000 and ours.level == 0.95


def test_the_same_seed_gives_the_same_interval_bit_for_bit_and_another_seed_another():
    rng = np.random.default_rng(1)
    gold, pred = rng.normal(size=200), rng.normal(size=200)
    first = bootstrap_interval(spearman_statistic, gold, pred, seed=7)
    assert bootstrap_interval(spearman_statistic, gold, pred, seed=7) == first
    assert bootstrap_interval(spearman_statistic, gold, pred, seed=8) != first
    # the per-resample path (a statistic without axis) draws the same units as the vectorised one
    plain = bootstrap_interval(lambda g, p: stats.spearmanr(g, p).statistic, gold, pred, seed=7)
    assert plain.low == pytest.approx(first.low, abs=1e-12) and plain.high == pytest.approx(first.high, abs=1e-12)


def test_two_d_samples_resample_rows():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(80, 3))
    ci = bootstrap_interval(lambda m: float(m.sum(axis=1).mean()), x, seed=3)
    same = bootstrap_interval(mean_statistic, x.sum(axis=1), seed=3)  # the row sums are the units' values
    assert ci.low == pytest.approx(same.low, abs=1e-12) and ci.high == pytest.approx(same.high, abs=1e-12)


def test_zero_resamples_give_no_interval_and_bad_arguments_one_line():
    x = np.arange(10.0)
    assert bootstrap_interval(mean_statistic, x, n_resamples=0) is None
    for kwargs, words in [({"n_resamples": -1}, "n_resamples"), ({"n_resamples": 1.5}, "n_resamples"),
                          ({"level": 1.0}, "level"), ({"level": 0}, "level"), ({"seed": -1}, "seed")]:
        with pytest.raises(InputError, match=words) as info:
            bootstrap_interval(mean_statistic, x, **kwargs)
        assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="one unit count.*10, 9") as info:
        bootstrap_interval(spearman_statistic, x, x[:9])
    assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="at least 2 units"):
        bootstrap_interval(mean_statistic, x[:1])
    with pytest.raises(InputError):
        Interval(0.5, 0.4, 0.95, 10)
    assert Interval(0.1, 0.2, 0.95, 10).to_dict() == {"low": 0.1, "high": 0.2, "level": 0.95, "n_resamples": 10}


def test_resamples_where_the_correlation_is_undefined_are_left_out():
    gold, pred = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    ci = bootstrap_interval(spearman_statistic, gold, pred, n_resamples=500)
    assert 0 < ci.n_resamples < 500 and -1.0 <= ci.low <= ci.high <= 1.0


# ---------------------------------------------------------------------------- paired comparisons


def test_identical_models_get_p_1_and_a_clearly_better_one_p_below_001():
    rng = np.random.default_rng(4)
    gold = rng.uniform(0, 5, 300)
    good, bad = gold + rng.normal(0, 1, 300), gold + rng.normal(0, 3, 300)
    same = paired_comparison(spearman_statistic, (gold, good), (gold, good), a="x", b="x2")
    assert same.p_value == 1.0 and same.difference == 0.0 and same.ci_low == same.ci_high == 0.0
    better = paired_comparison(spearman_statistic, (gold, good), (gold, bad), a="good", b="bad")
    assert better.p_value < 0.01 and 0 < better.ci_low < better.difference < better.ci_high
    assert better.difference == pytest.approx(stats.spearmanr(gold, good).statistic
                                              - stats.spearmanr(gold, bad).statistic, abs=1e-12)
    assert list(better.to_dict()) == ["a", "b", "difference", "ci_low", "ci_high", "p_value"]
    assert better.to_dict()["a"] == "good"


def test_the_paired_interval_of_a_mean_difference_is_a_numpy_loops():
    rng = np.random.default_rng(6)
    a = rng.uniform(0, 1, 150)
    b = np.clip(a - 0.05 + rng.normal(0, 0.2, 150), 0, 1)
    ours = paired_comparison(mean_statistic, a, b, n_resamples=4000, seed=1)
    loop_rng = np.random.default_rng(99)
    diffs = [(a[i] - b[i]).mean() for i in (loop_rng.integers(0, 150, 150) for _ in range(4000))]
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    assert abs(ours.ci_low - lo) <= 0.3 * np.std(diffs) and abs(ours.ci_high - hi) <= 0.3 * np.std(diffs)
    # the randomization test of the mean difference and the paired t-test agree on a large sample
    assert ours.p_value == pytest.approx(stats.ttest_rel(a, b).pvalue, abs=0.02)


def test_paired_comparison_checks_its_inputs():
    x = np.arange(10.0)
    with pytest.raises(InputError, match="one unit count"):
        paired_comparison(mean_statistic, x, x[:8])
    with pytest.raises(InputError, match="has 2 arrays but"):
        paired_comparison(spearman_statistic, (x, x), x)
    c = paired_comparison(mean_statistic, x, x - 1, n_resamples=0, a="p", b="q")
    assert c == Comparison("p", "q", 1.0, None, None, None)


def _synthetic_run(data: BeirData, strength: float, seed: int) -> dict[str, dict[str, float]]:
    """Scores = noise + strength × judged gain, top 100 per query: a retrieval system of known quality."""
    rng = np.random.default_rng(seed)
    position = {doc: i for i, doc in enumerate(data.corpus_ids)}
    run = {}
    for q in data.query_ids:
        s = rng.normal(size=data.n_documents)
        for doc, gain in data.qrels[q].items():
            s[position[doc]] += strength * gain
        top = np.argsort(-s)[:100]
        run[q] = {data.corpus_ids[i]: float(s[i]) for i in top}
    return run


def _per_query_ndcg(run: dict[str, dict[str, float]], data: BeirData) -> np.ndarray:
    ranked = {q: sorted(scores, key=lambda d: -scores[d]) for q, scores in run.items()}
    return np.array([v["ndcg_at_10"] for v in query_scores(ranked, data.qrels, (10,)).values()])


@pytest.mark.parametrize("strength_b", [0.95, 0.98])
def test_the_randomization_test_agrees_with_ranx_compare_on_cranfield(shared_data, strength_b):
    ranx = pytest.importorskip("ranx", reason="ranx is a test dependency (pyproject.toml, extra 'test')")
    data = load_beir(shared_data / "cranfield-beir")
    run_a, run_b = _synthetic_run(data, 1.0, 1), _synthetic_run(data, strength_b, 2)
    qrels = ranx.Qrels.from_dict(data.qrels)
    runs = [ranx.Run.from_dict(run_a, name="a"), ranx.Run.from_dict(run_b, name="b")]
    fisher = ranx.compare(qrels, runs, metrics=["ndcg@10"], stat_test="fisher", n_permutations=10_000,
                          random_seed=7)
    student = ranx.compare(qrels, runs, metrics=["ndcg@10"], stat_test="student")
    ndcg_a, ndcg_b = _per_query_ndcg(run_a, data), _per_query_ndcg(run_b, data)
    # the units are ranx's: the same per-query nDCG@10, the same means, the same paired t-test
    np.testing.assert_allclose(np.sort(ranx.evaluate(qrels, runs[0], "ndcg@10", return_mean=False)),
                               np.sort(ndcg_a), atol=1e-12)
    assert fisher.results["a"]["ndcg@10"] == pytest.approx(ndcg_a.mean(), abs=1e-12)
    assert student.comparisons[("a", "b")]["ndcg@10"]["p_value"] == pytest.approx(
        stats.ttest_rel(ndcg_a, ndcg_b).pvalue, rel=1e-9)
    ours = paired_comparison(mean_statistic, ndcg_a, ndcg_b, n_resamples=10_000, seed=0)
    theirs = fisher.comparisons[("a", "b")]["ndcg@10"]["p_value"]
    # Monte Carlo error of two independent estimates from 10,000 permutations each
    tolerance = 4 * math.sqrt(2 * theirs * (1 - theirs) / 10_000) + 2 / 10_000
    assert abs(ours.p_value - theirs) <= tolerance, (ours.p_value, theirs)
    assert ours.difference == pytest.approx(ndcg_a.mean() - ndcg_b.mean(), abs=1e-12)


# ---------------------------------------------------------------------------- Holm


def _holm_step_down(p: list[float], alpha: float) -> list[bool]:
    """Holm's (1979) sequentially rejective procedure as stated: reject the smallest p while p_(i) <= α / (m - i)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected = [False] * len(p)
    for rank, i in enumerate(order):
        if p[i] > alpha / (len(p) - rank):
            break
        rejected[i] = True
    return rejected


def test_holm_matches_worked_examples():
    # Wikipedia's worked example of the Holm-Bonferroni method (m = 4)
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02], atol=1e-15)
    # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") = 0.05 0.08 0.09 0.09 0.09 (monotone)
    np.testing.assert_allclose(holm([0.01, 0.02, 0.03, 0.04, 0.05]), [0.05, 0.08, 0.09, 0.09, 0.09], atol=1e-15)
    # capped at 1, ties kept, a single p unchanged
    np.testing.assert_allclose(holm([0.5, 0.5, 0.01]), [1.0, 1.0, 0.03], atol=1e-15)
    assert holm([0.2]).tolist() == [0.2]


def test_holm_rejects_exactly_where_the_step_down_procedure_does():
    rng = np.random.default_rng(0)
    for _ in range(300):
        p = (rng.uniform(0, 0.1, rng.integers(1, 9)) ** rng.uniform(0.5, 2)).tolist()
        adjusted = holm(p)
        for alpha in (0.01, 0.05, 0.1):
            assert (adjusted <= alpha).tolist() == _holm_step_down(p, alpha)
        assert (adjusted >= np.asarray(p)).all() and (adjusted <= 1).all()


def test_holm_rejects_what_is_not_a_p_value():
    for bad in ([0.1, 1.2], [-0.1], [float("nan")]):
        with pytest.raises(InputError, match="p-values"):
            holm(bad)


# ---------------------------------------------------------------------------- the tasks


def _sts_pairs(n: int = 60) -> tuple[StsPairs, dict[str, list[float]]]:
    rng = np.random.default_rng(8)
    gold = rng.uniform(0, 5, n)
    table, s1, s2 = {}, [], []
    for i, g in enumerate(gold):
        a, b = f"left {i}", f"right {i}"
        angle = (5 - g) / 5 * 1.4 + rng.normal(0, 0.3)
        table[a], table[b] = [1.0, 0.0], [math.cos(angle), math.sin(angle)]
        s1.append(a)
        s2.append(b)
    return StsPairs(s1, s2, gold, "toy"), table


def test_sts_carries_the_spearman_interval_over_pairs_and_writes_it_beside_the_main_score():
    pairs, table = _sts_pairs()
    encode = lambda texts: np.array([table[t] for t in texts])  # noqa: E731
    r = sts(encode, pairs, seed=3)
    vectors = encode(pairs.texts())
    cos = np.einsum("ij,ij->i", vectors[:60], vectors[60:]) / np.linalg.norm(vectors[60:], axis=1)
    assert r.interval.to_dict() == bootstrap_interval(spearman_statistic, pairs.scores, cos, seed=3).to_dict()
    assert r.interval.low <= r.main_score <= r.interval.high and r.interval.n_resamples == 1000
    entry = r.to_dict()["scores"]["test"][0]
    assert list(entry)[:3] == ["main_score", "ci_low", "ci_high"] and entry["ci_low"] == r.interval.low
    assert r.to_dict()["repspace"]["interval"]["level"] == 0.95
    off = sts(encode, pairs, bootstrap=0)
    assert off.interval is None and "ci_low" not in off.to_dict()["scores"]["test"][0]
    assert off.scores == r.scores  # the bootstrap changes no score
    with pytest.raises(InputError, match="bootstrap"):
        sts(encode, pairs, bootstrap=-1)


def test_wordsim_resamples_the_scored_pairs_only():
    rng = np.random.default_rng(9)
    words = [f"w{i}" for i in range(40)]
    wv = WordVectors(words, rng.normal(size=(40, 5)))
    w1, w2 = words[:20] + ["missing"], words[20:] + ["w1"]
    pairs = WordPairs(w1, w2, rng.uniform(0, 10, 21), "toy")
    r = wordsim(wv, pairs, seed=2)
    unit = wv.vectors / np.linalg.norm(wv.vectors, axis=1, keepdims=True)
    cos = np.einsum("ij,ij->i", unit[:20], unit[20:])
    want = bootstrap_interval(spearman_statistic, pairs.scores[:20], cos, seed=2)
    assert r.info["n_pairs"] == 20 and r.interval.to_dict() == want.to_dict()
    assert wordsim(wv, pairs, bootstrap=0).interval is None


def test_retrieval_resamples_queries_of_their_ndcg_at_10():
    rng = np.random.default_rng(11)
    n_docs, n_queries = 40, 25
    doc_vectors = rng.normal(size=(n_docs, 6))
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(1, 3)) for j in rng.choice(n_docs, 3, replace=False)}
             for i in range(n_queries)}
    query_vectors = np.array([doc_vectors[[int(d[1:]) for d in qrels[f"q{i}"]]].mean(axis=0)
                              + rng.normal(0, 0.8, 6) for i in range(n_queries)])
    data = BeirData(tuple(f"d{j}" for j in range(n_docs)), tuple(f"doc {j}" for j in range(n_docs)),
                    tuple(qrels), tuple(f"query {i}" for i in range(n_queries)), qrels, "test", "toy")
    table = {f"doc {j}": doc_vectors[j] for j in range(n_docs)}
    table.update({f"query {i}": query_vectors[i] for i in range(n_queries)})
    r = retrieval(lambda texts: np.array([table[t] for t in texts]), data, seed=5)
    order = np.argsort(-(query_vectors / np.linalg.norm(query_vectors, axis=1, keepdims=True))
                       @ (doc_vectors / np.linalg.norm(doc_vectors, axis=1, keepdims=True)).T, axis=1, kind="stable")
    run = {q: [f"d{j}" for j in order[i]] for i, q in enumerate(qrels)}
    per_query = np.array([v["ndcg_at_10"] for v in query_scores(run, qrels, (10,)).values()])
    assert r.main_score == pytest.approx(per_query.mean(), abs=1e-12)
    want = bootstrap_interval(mean_statistic, per_query, seed=5)
    assert r.interval.low == pytest.approx(want.low, abs=1e-12) and r.interval.high == pytest.approx(want.high,
                                                                                                   abs=1e-12)
    assert retrieval(lambda texts: np.array([table[t] for t in texts]), data, bootstrap=0).interval is None


def test_results_with_an_interval_still_load_in_mteb():
    mteb_results = pytest.importorskip("mteb.results", reason="mteb is a test dependency")
    r = TaskResult("sts:toy", "test", "spearman", {"spearman": 0.8, "cosine_spearman": 0.8}, 1.0,
                   mteb_task="STSBenchmark", mteb_main_metric="cosine_spearman",
                   interval=Interval(0.75, 0.84, 0.95, 1000))
    for written in (r.to_dict(), r.to_mteb()):
        loaded = mteb_results.TaskResult.from_dict(written)
        assert loaded.scores["test"][0]["main_score"] == 0.8
        assert loaded.scores["test"][0]["ci_low"] == 0.75
