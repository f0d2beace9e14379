"""Exact sparse search (SparseIndex) against scipy.sparse brute force, and the expected FLOPs against its formula.

The reference is ``X @ q`` with scipy in float64 (the order scipy sums a row in), its top k by
score then row; ours must give the same rows and the same scores (1e-6), with the MaxScore pruning
on (non-negative weights) and off (negative weights), for inner product and cosine, on random
rows with many ties and empty rows, and on a real sparse space: the BM25 term weights of the
Cranfield collection (bm25s's own index, so the weights are not ours), queried with its 225
queries, whose scores must also equal bm25s's own BM25 scores.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

from repspace.core.errors import InputError
from repspace.core.sparse import SparseRows, expected_flops
from repspace.engines.search.sparse import SparseIndex, sparse_query, top_k_by_score
from repspace.engines.search.sparse_stats import sparse_statistics

pytestmark = pytest.mark.numerics


def _reference(X: sps.csr_array, q_idx, q_val, k: int, cosine: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Brute force with scipy in float64: scores of every row, top k by score then row."""
    q = np.zeros(X.shape[1])
    q[np.asarray(q_idx)] = q_val
    X64 = X.astype(np.float64)
    scores = X64 @ q
    if cosine:
        norms = np.sqrt(X64.multiply(X64).sum(axis=1)) * np.linalg.norm(q)
        scores = np.where(norms > 0, scores / np.where(norms > 0, norms, 1), 0.0)
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]
    return order, scores[order]


def _random_rows(rng, n: int, n_features: int, per_row: int, levels: int | None = None) -> sps.csr_array:
    """Rows with ~per_row features drawn from a Zipf-like law; weights on a few levels make many ties."""
    p = 1.0 / np.arange(1, n_features + 1)
    p /= p.sum()
    cols = rng.choice(n_features, size=(n, per_row), p=p)
    rows = np.repeat(np.arange(n), per_row)
    vals = (rng.integers(1, levels + 1, n * per_row) / levels if levels else rng.uniform(0.1, 2.0, n * per_row))
    X = sps.coo_array((vals.astype(np.float32), (rows, cols.ravel())), shape=(n, n_features)).tocsr()
    X.sum_duplicates()  # a feature drawn twice in a row: its weights summed (still one entry)
    X.data[:] = np.where(X.data > 0, X.data, 0.5)
    empty = rng.choice(n, size=n // 50, replace=False)  # rows with no non-zero weight
    X = sps.csr_array(X)
    keep = np.ones(n, bool)
    keep[empty] = False
    X = sps.csr_array(sps.diags_array(keep.astype(np.float32)) @ X)
    X.eliminate_zeros()
    X.sort_indices()
    return X


def _check_equal(index: SparseIndex, X, queries, k: int, cosine: bool = False) -> None:
    for q_idx, q_val in queries:
        ref_rows, ref_scores = _reference(X, q_idx, q_val, k, cosine)
        scores, rows = index.search(q_idx, q_val, k=k)
        assert rows.tolist() == ref_rows.tolist()
        np.testing.assert_allclose(scores, ref_scores, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("levels", [None, 3])
@pytest.mark.parametrize("metric", ["ip", "cosine"])
def test_equals_scipy_brute_force_on_random_rows(metric, levels):
    rng = np.random.default_rng(7 if levels is None else 8)
    X = _random_rows(rng, 3000, 500, 12, levels)
    index = SparseIndex(SparseRows.from_scipy(X), metric=metric)
    assert index.nonnegative
    queries = [(X[[i]].indices, X[[i]].data.astype(np.float64)) for i in rng.integers(0, 3000, 25)]
    queries += [(np.unique(rng.choice(500, size=s, replace=False)), None) for s in (1, 3, 40)]
    queries = [(i, v if v is not None and len(v) else rng.uniform(0.1, 1.0, len(i))) for i, v in queries if len(i)]
    for k in (1, 10, 100):
        _check_equal(index, X, queries, k, cosine=metric == "cosine")


def test_a_stored_row_as_the_query_keeps_the_pruning(rng):
    """A stored row holds every feature of its own query: it fills the first entries of the seed's postings
    alone, and a θ taken over those entries (not over distinct rows) was 0, so every row was scored (120 ms
    against 0.5 ms on 30,000 rows). Each row's query must leave few candidates, and the same top k."""
    X = _random_rows(rng, 4000, 3000, 60)
    index = SparseIndex(SparseRows.from_scipy(X))
    for i in rng.integers(0, 4000, 10):
        if not X[[int(i)]].nnz:
            continue
        q = sparse_query(X[[int(i)]].indices, X[[int(i)]].data.astype(np.float64), 3000)
        cand = index._candidates(q, 10)
        assert len(cand) < 400, f"row {i}: {len(cand)} of 4,000 rows left as candidates"
        _check_equal(index, X, [(q.indices, q.values)], 10)


def test_fewer_matches_than_k_are_filled_with_zero_scores_by_row():
    X = sps.csr_array(np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 2, 0], [0, 0, 3]], dtype=np.float32))
    index = SparseIndex(SparseRows.from_scipy(X))
    scores, rows = index.search([2], [1.0], k=4)
    assert rows.tolist() == [4, 0, 1, 2] and scores.tolist() == [3.0, 1.0, 0.0, 0.0]
    assert index.search([2], [1.0], k=50)[1].tolist() == [4, 0, 1, 2, 3]


def test_negative_weights_score_every_row():
    rng = np.random.default_rng(3)
    X = _random_rows(rng, 800, 100, 8)
    X.data = (X.data - 1.0).astype(np.float32)  # about half negative
    X.eliminate_zeros()
    index = SparseIndex(SparseRows.from_scipy(X))
    assert not index.nonnegative
    queries = [(np.array([0, 1, 5, 50]), np.array([1.0, -0.5, 0.25, 2.0])), (np.array([3]), np.array([-1.0]))]
    _check_equal(index, X, queries, 10)
    pos_index = SparseIndex(SparseRows.from_scipy(abs(X)))  # non-negative rows, a query with a negative weight
    _check_equal(pos_index, abs(X), queries, 10)


@pytest.mark.parametrize("metric", ["ip", "cosine"])
@pytest.mark.parametrize("direct", [True, False])
def test_allowed_positions_restrict_the_search(monkeypatch, metric, direct):
    """A filter equals brute force over its rows alone, scored row by row (a small filter) or over the
    inverted index with the other rows masked out (a large one; the limit set to 0 forces that path)."""
    from repspace.engines.search import sparse as sparse_module

    if not direct:
        monkeypatch.setattr(sparse_module, "FILTER_DIRECT_ENTRIES", 0)
    rng = np.random.default_rng(5)
    X = _random_rows(rng, 3000, 200, 10, levels=3 if direct else None)
    index = SparseIndex(SparseRows.from_scipy(X), metric=metric)
    queries = [(X[[i]].indices, X[[i]].data.astype(np.float64)) for i in rng.integers(0, 3000, 8)]
    queries += [(np.array([0, 1, 2, 7]), np.array([1.0, 0.5, 0.5, 2.0])), (np.array([150]), np.array([1.0]))]
    for share in (0.003, 0.1, 0.6):
        allowed = np.flatnonzero(rng.random(3000) < share)
        assert index.plan(sparse_query([0], [1.0], 200), len(allowed)).startswith(
            "the filter's" if direct else "inverted index")
        for q_idx, q_val in queries:
            if not len(q_idx):
                continue
            for k in (1, 10, 50):
                ref_rows, ref_scores = _reference(X[allowed], q_idx, q_val, min(k, len(allowed)),
                                                  cosine=metric == "cosine")
                scores, rows = index.search(q_idx, q_val, k=k, allowed=allowed)
                assert rows.tolist() == allowed[ref_rows].tolist()
                np.testing.assert_allclose(scores, ref_scores, rtol=1e-6, atol=1e-6)


def test_exact_scores_are_scipys_to_the_last_bit():
    """Rows scored from the index's own gather sum each row in scipy's order: the very same float64 numbers."""
    rng = np.random.default_rng(12)
    X = _random_rows(rng, 2000, 300, 30)
    index = SparseIndex(SparseRows.from_scipy(X))
    q = sparse_query(np.arange(0, 300, 3), rng.uniform(0.1, 3.0, 100), 300)
    dense = np.zeros(300)
    dense[q.indices] = q.values
    positions = np.sort(rng.choice(2000, 700, replace=False))
    assert index.exact_scores(positions, q).tolist() == (X[positions] @ dense).tolist()
    assert index.exact_scores(np.zeros(0, np.int64), q).tolist() == []


def test_bad_queries_are_one_line():
    for idx, val, message in (([9], [1.0], "beyond the vocabulary of 5"), ([1, 1], [1.0, 2.0], "given twice"),
                              ([1], [float("nan")], "NaN or infinite"), ([1], [0.0], "no non-zero weight"),
                              ([1, 2], [1.0], "2 feature ids and 1 weights")):
        with pytest.raises(InputError, match=message):
            sparse_query(idx, val, 5)


def test_top_k_ties_go_to_the_lower_position():
    scores = np.array([1.0, 3.0, 1.0, 3.0, 2.0, 1.0])
    assert top_k_by_score(scores, 4).tolist() == [1, 3, 4, 0]
    assert top_k_by_score(scores, 10).tolist() == [1, 3, 4, 0, 2, 5]


def test_expected_flops_equals_the_formula_written_out():
    """Σ_j p_j² with p_j = share of rows where feature j is non-zero, computed from the dense matrix."""
    rng = np.random.default_rng(11)
    X = _random_rows(rng, 400, 60, 6)
    dense = X.toarray()
    p = (dense != 0).mean(axis=0)
    direct = sum(float(pj) ** 2 for pj in p)
    rows = SparseRows.from_scipy(X)
    assert expected_flops(rows) == pytest.approx(direct, rel=1e-12)
    st = sparse_statistics(rows)
    assert (st.nnz, st.empty_rows, st.features_used) == (X.nnz, int(((dense != 0).sum(1) == 0).sum()),
                                                         int((p > 0).sum()))
    # the statistic is the mean number of shared non-zero features over all (query, row) pairs
    nz = (dense != 0).astype(np.float64)
    assert expected_flops(rows) == pytest.approx((nz @ nz.T).sum() / len(dense) ** 2, rel=1e-12)


def test_cranfield_bm25_weights_equal_brute_force_and_bm25s(cranfield_bm25):
    model, X, q_tokens = cranfield_bm25
    vocab = model.vocab_dict
    index = SparseIndex(SparseRows.from_scipy(X))
    assert X.shape[0] == 1400 and expected_flops(SparseRows.from_scipy(X)) > 1
    checked = 0
    for tokens in q_tokens:
        ids, counts = np.unique([vocab[t] for t in tokens if t in vocab], return_counts=True)
        if not len(ids):
            continue
        ref_rows, ref_scores = _reference(X, ids, counts.astype(np.float64), 10)
        scores, rows = index.search(ids, counts.astype(np.float64), k=10)
        assert rows.tolist() == ref_rows.tolist()
        np.testing.assert_allclose(scores, ref_scores, rtol=1e-6)
        bm25 = model.get_scores([t for t in tokens if t in vocab])  # bm25s's own BM25 scores
        np.testing.assert_allclose(scores, bm25[rows], rtol=1e-5)
        checked += 1
    assert checked >= 220
