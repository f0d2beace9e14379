"""Rank fusion: RRF and weighted sums against hand computations and an exact-fraction reference; Cranfield hybrid."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.search.fusion import rrf, weighted_sum

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def test_rrf_hand_example():
    s, r = rrf([np.array([[1, 2, 3]]), np.array([[3, 1, -1]])], k=4)
    assert r.tolist() == [[1, 3, 2, -1]]
    np.testing.assert_allclose(s[0, :3], [1 / 61 + 1 / 62, 1 / 61 + 1 / 63, 1 / 62], rtol=1e-15)
    assert s[0, 3] == 0 and s.dtype == np.float64 and r.dtype == np.int64


def test_rrf_exact_ties_go_to_the_lower_row_whatever_the_order():
    # Rows 9, 4 and 7 are each once at rank 1, once at 2 and once at 7 (rows 10+ fill the rest):
    # mathematically equal sums, which naive left-to-right float addition makes unequal.
    a, b, g = 1 / 61, 1 / 62, 1 / 67
    assert len({(a + b) + g, (b + g) + a, (g + a) + b}) > 1  # so this test can fail
    fill = [[10, 11, 12, 13], [20, 21, 22, 23], [30, 31, 32, 33]]
    rankings = [np.array([[9, 4] + fill[0] + [7]]), np.array([[4, 7] + fill[1] + [9]]),
                np.array([[7, 9] + fill[2] + [4]])]
    s, r = rrf(rankings, k=3)
    assert r.tolist() == [[4, 7, 9]]
    assert s[0, 0] == s[0, 1] == s[0, 2]
    for perm in ([2, 0, 1], [1, 2, 0], [2, 1, 0]):
        s2, r2 = rrf([rankings[i] for i in perm], k=3)
        assert np.array_equal(s, s2) and np.array_equal(r, r2)


def test_rrf_weights_constant_padding_duplicates_and_1d():
    s, r = rrf([np.array([5, 6]), np.array([6, -1, -1])], k=3, c=1, weights=[3, 1])
    # 5: 3/2; 6: 3/3 + 1/2
    assert r.tolist() == [5, 6, -1] and s.tolist() == [1.5, 1.5, 0.0]
    # A row repeated within one ranking counts once, at its first place.
    s, r = rrf([np.array([[2, 2, 1]])], k=3, c=0)
    assert r.tolist() == [[2, 1, -1]] and s[0, :2].tolist() == [1.0, 1 / 3]
    # A ranking of weight 0 adds no rows.
    s, r = rrf([np.array([[2, 3]]), np.array([[8, 9]])], k=4, weights=[1, 0])
    assert r.tolist() == [[2, 3, -1, -1]]
    # Nothing at all.
    s, r = rrf([np.full((2, 3), -1)], k=2)
    assert r.tolist() == [[-1, -1]] * 2 and (s == 0).all()


def reference_rrf(rankings, k, c, weights):
    """One query at a time with exact fractions (c and weights integers)."""
    m = rankings[0].shape[0]
    out = []
    for q in range(m):
        total: dict[int, Fraction] = {}
        for rows, w in zip(rankings, weights):
            seen = set()
            for rank, row in enumerate(rows[q].tolist(), start=1):
                if row < 0 or row in seen or w == 0:
                    continue
                seen.add(row)
                total[row] = total.get(row, Fraction(0)) + Fraction(w, c + rank)
        best = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        out.append(best)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_rrf_matches_exact_reference_on_random_rankings(seed):
    rng = np.random.default_rng(seed)
    m = 40
    rankings = []
    for _ in range(rng.integers(1, 5)):
        kk = int(rng.integers(1, 15))
        rows = np.array([rng.permutation(25)[:kk] for _ in range(m)])
        rows[rng.random(rows.shape) < 0.15] = -1  # padding anywhere
        rankings.append(rows)
    weights = [int(w) for w in rng.integers(0, 4, len(rankings))]
    c = int(rng.integers(0, 70))
    k = int(rng.integers(1, 20))
    s, r = rrf(rankings, k, c=c, weights=weights)
    ref = reference_rrf(rankings, k, c, weights)
    for q in range(m):
        assert r[q, : len(ref[q])].tolist() == [row for row, _ in ref[q]]
        np.testing.assert_allclose(s[q, : len(ref[q])], [float(v) for _, v in ref[q]], rtol=1e-12)
        assert (r[q, len(ref[q]):] == -1).all()


def test_weighted_sum_hand_example():
    bm25 = (np.array([[9.0, 5.0, 1.0], [2.0, -1.0, 0.0]]), np.array([[4, 2, 8], [1, -1, -1]]))
    dense = (np.array([[0.9, 0.8, 0.2], [0.5, 0.3, 0.0]]), np.array([[2, 6, 4], [3, 1, -1]]))
    s, r = weighted_sum([bm25, dense], k=4, weights=[1.0, 2.0])
    # Query 0: bm25 → 4: 1, 2: 0.5, 8: 0; dense → 2: 1, 6: 6/7, 4: 0
    #   2: 0.5 + 2·1 = 2.5; 6: 2·6/7; 4: 1 + 0 = 1; 8: 0
    assert r[0].tolist() == [2, 6, 4, 8]
    np.testing.assert_allclose(s[0], [2.5, 12 / 7, 1.0, 0.0], rtol=1e-12)
    # Query 1: bm25 has one row (normalised to 1); dense → 3: 1, 1: 0
    #   1: 1 + 0 = 1; 3: 2·1 = 2
    assert r[1].tolist() == [3, 1, -1, -1]
    np.testing.assert_allclose(s[1, :2], [2.0, 1.0])


def test_weighted_sum_raw_scores_ties_and_1d():
    a = (np.array([3.0, 1.0]), np.array([7, 2]))
    b = (np.array([1.0, 3.0]), np.array([7, 2]))
    s, r = weighted_sum([a, b], k=2, normalize=None)
    assert r.tolist() == [2, 7] and s.tolist() == [4.0, 4.0]  # tie: lower row first
    s, r = weighted_sum([a, b], k=2)  # min-max: 7 → 1 + 0, 2 → 0 + 1
    assert r.tolist() == [2, 7] and s.tolist() == [1.0, 1.0]


def test_weighted_sum_single_query_equals_per_query_calls():
    rng = np.random.default_rng(5)
    lists = []
    for _ in range(3):
        rows = np.array([rng.permutation(30)[:8] for _ in range(6)])
        rows[rng.random(rows.shape) < 0.2] = -1
        lists.append((rng.standard_normal(rows.shape), rows))
    s, r = weighted_sum(lists, k=5, weights=[1, 0.5, 2])
    for q in range(6):
        sq, rq = weighted_sum([(sc[q], rw[q]) for sc, rw in lists], k=5, weights=[1, 0.5, 2])
        assert np.array_equal(rq, r[q]) and np.array_equal(sq, s[q])


@pytest.mark.parametrize("call,match", [
    (lambda: rrf([np.array([[1, 2]])], k=0), "positive integer"),
    (lambda: rrf([], k=3), "non-empty list"),
    (lambda: rrf([np.array([[1.0, 2.0]])], k=3), "integer rows"),
    (lambda: rrf([np.array([[1, 2]]), np.array([[1], [2]])], k=3), "different numbers of queries"),
    (lambda: rrf([np.array([1, 2]), np.array([[1, 2]])], k=3), "mix of 1-d and 2-d"),
    (lambda: rrf([np.array([[1, -2]])], k=3), "negative row"),
    (lambda: rrf([np.array([[1, 2]])], k=3, c=-1), "constant c"),
    (lambda: rrf([np.array([[1, 2]])], k=3, weights=[1, 2]), "2 weights for 1 rankings"),
    (lambda: rrf([np.array([[1, 2]])], k=3, weights=[-1]), "weights must be"),
    (lambda: weighted_sum([(np.array([[1.0]]), np.array([[1, 2]]))], k=1), "scores have shape"),
    (lambda: weighted_sum([(np.array([[np.nan]]), np.array([[1]]))], k=1), "NaN"),
    (lambda: weighted_sum((np.array([1.0]), np.array([1])), k=1), "list of \\(scores, rows\\) pairs"),
    (lambda: weighted_sum([np.array([1, 2, 3])], k=1), "not a \\(scores, rows\\) pair"),
    (lambda: weighted_sum([(np.array([1.0]), np.array([1]))], k=1, normalize="z"), "normalize"),
])
def test_errors(call, match):
    with pytest.raises(InputError, match=match):
        call()


# ------------------------------------------------------------ Cranfield, real data
@pytest.fixture(scope="module")
def cranfield_runs(shared_data):
    """BM25 and dense (static encoder, cosine) top-100 of every Cranfield query."""
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import load_beir
    from repspace.engines.search.lexical import LexicalIndex
    from repspace.workflows.search import exact_search

    data = load_beir(shared_data / "cranfield-beir")
    ix = LexicalIndex.build(list(data.corpus_texts), np.arange(data.n_documents))
    bm25 = ix.search(list(data.query_texts), k=100)
    enc = get_encoder("static")
    dense = exact_search(enc.encode(list(data.query_texts)), enc.encode(list(data.corpus_texts)), 100,
                         metric="cosine")
    return data, bm25, dense


def ndcg10(data, rows):
    from repspace.engines.eval.ranking import ranking_scores

    run = {qid: [data.corpus_ids[j] for j in row[:10] if j >= 0] for qid, row in zip(data.query_ids, rows)}
    return ranking_scores(run, data.qrels, ks=(10,))["ndcg_at_10"]


def test_cranfield_hybrid(cranfield_runs):
    data, (bs, br), (ds, dr) = cranfield_runs
    lexical, dense = ndcg10(data, br), ndcg10(data, dr)
    hybrid = ndcg10(data, rrf([br, dr], k=10)[1])
    weighted = ndcg10(data, weighted_sum([(bs, br), (ds, dr)], k=10)[1])
    # Measured: BM25 0.3732, dense (static, 64-d) 0.1432, RRF (c=60, top-100 each) 0.2785,
    # min-max weighted sum 0.3042. The static encoder is much weaker than BM25 here, so an
    # equal-weight fusion lands between the two.
    assert 0.35 <= lexical <= 0.40
    assert 0.11 <= dense <= 0.18
    assert dense + 0.08 <= hybrid <= lexical
    assert dense + 0.08 <= weighted <= lexical
    # Down-weighting the dense ranking recovers most of BM25 (measured 0.3525 at 1 : 0.25).
    assert ndcg10(data, rrf([br, dr], k=10, weights=[1, 0.25])[1]) > hybrid + 0.04
    # A dense ranking of weight 0 leaves exactly the BM25 ranking.
    assert np.array_equal(rrf([br, dr], k=10, weights=[1, 0])[1], br[:, :10])
