"""The Seismic index (sparse,seismic, pyseismic-lsr underneath) against the exact sparse index.

With ``lambda=all, alpha=1, heap=0, cut=all`` every row sharing a feature with the query is scored
by Seismic, and with ``rescore=2`` its 2k best are scored again from the float32 weights, so the
result must equal :class:`~repspace.engines.search.sparse.SparseIndex`'s (itself checked against
scipy brute force in test_sparse.py): same rows, scores to 1e-6. With ``rescore=0`` the scores are
Seismic's own, over float16 weights: each within ``2^-11 Σ q_j x_j`` (plus float32 sums) of the
exact one. With pruning, recall@10 against the exact top 10 is measured on two data sets (printed
with ``-s``): Cranfield's BM25 term weights (bm25s's index, its 225 queries) and synthetic Zipf
rows with idf-like weights; the floors asserted sit below the figures measured (Cranfield 1.000 at
lambda=200, alpha=0.8; Zipf 0.996 at n = 20,000, lambda=2000, alpha=0.5) by a margin.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

from repspace.core.errors import InputError
from repspace.core.sparse import SparseRows
from repspace.engines.search.seismic import U16_FEATURES, SeismicIndex, SeismicParams, parse_seismic_spec
from repspace.engines.search.sparse import SparseIndex, sparse_query, top_k_by_score

pytestmark = pytest.mark.numerics

NO_PRUNING = "sparse,seismic,lambda=all,alpha=1,heap=0,cut=all,rescore=2"
#: float16's unit roundoff: Seismic stores every weight to this relative precision.
F16_EPS = 2.0 ** -11


def _zipf_rows(rng: np.random.Generator, n: int, n_features: int, per_row: int) -> sps.csr_array:
    """Rows of ~per_row Zipf-drawn features (exponent 1), weights idf x uniform[0.5, 1.5] (BM25's shape)."""
    p = 1.0 / np.arange(1, n_features + 1)
    p /= p.sum()
    cols = rng.choice(n_features, size=(n, per_row), p=p)
    X = sps.coo_array((np.ones(n * per_row, np.float32), (np.repeat(np.arange(n), per_row), cols.ravel())),
                      shape=(n, n_features)).tocsr()
    X.data[:] = 1.0  # a repeated feature is one entry
    df = np.bincount(X.indices, minlength=n_features)
    idf = np.log1p(n / np.maximum(df, 1)).astype(np.float32)
    X.data = idf[X.indices] * rng.uniform(0.5, 1.5, X.nnz).astype(np.float32)
    X.sort_indices()
    return sps.csr_array(X)


def _recall(index: SeismicIndex, exact: SparseIndex, queries, k: int = 10) -> float:
    hits = 0
    for idx, val in queries:
        _, ref = exact.search(idx, val, k=k)
        _, got = index.search(idx, val, k=k)
        hits += len(set(ref.tolist()) & set(got.tolist()))
    return hits / (k * len(queries))


@pytest.mark.parametrize("metric", ["ip", "cosine"])
def test_no_pruning_equals_the_exact_index(rng, metric):
    X = _zipf_rows(rng, 3000, 400, 12)
    X.data[rng.random(X.nnz) < 0.3] = 1.0  # many equal weights: ties must go to the lower row on both sides
    rows = SparseRows.from_scipy(X)
    exact = SparseIndex(rows, metric=metric)
    index = SeismicIndex(rows, parse_seismic_spec(NO_PRUNING), metric=metric)
    for i in rng.integers(0, 3000, 40):
        idx, val = X[[int(i)]].indices, X[[int(i)]].data.astype(np.float64)
        for k in (1, 10, 50):
            s_ref, r_ref = exact.search(idx, val, k=k)
            s, r = index.search(idx, val, k=k)
            assert r.tolist() == r_ref.tolist()
            np.testing.assert_allclose(s, s_ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("metric", ["ip", "cosine"])
def test_rescoring_equals_exact_scores_of_seismics_rows_ranked_in_numpy(rng, metric):
    """rescore=1 returns the rows Seismic found (rescore=0) scored by :meth:`SeismicIndex.scores` and ranked by
    ``top_k_by_score`` over the rows in ascending order (ties to the lower row), to the last bit."""
    X = _zipf_rows(rng, 2000, 300, 10)
    X.data[rng.random(X.nnz) < 0.4] = 1.0  # equal weights: equal scores among the found rows
    rows = SparseRows.from_scipy(X)
    base = SeismicIndex(rows, parse_seismic_spec("sparse,seismic,lambda=200,cut=5"), metric=metric)
    raw, rescoring = (base.with_params(parse_seismic_spec(f"sparse,seismic,lambda=200,cut=5,rescore={r}"))
                      for r in (0, 1))
    for i in rng.integers(0, 2000, 40):
        idx, val = X[[int(i)]].indices, X[[int(i)]].data.astype(np.float64)
        for k in (1, 5, 20):
            found = np.sort(raw.search(idx, val, k=k)[1])
            scores = base.scores(found, sparse_query(idx, val, 300))
            top = top_k_by_score(scores, k)
            s, r = rescoring.search(idx, val, k=k)
            assert r.tolist() == found[top].tolist()
            assert s.dtype == np.float32 and s.tolist() == scores[top].astype(np.float32).tolist()


def test_seismic_scores_are_within_float16_rounding_of_the_exact_ones(rng):
    X = _zipf_rows(rng, 2000, 300, 12)
    rows = SparseRows.from_scipy(X)
    index = SeismicIndex(rows, parse_seismic_spec("sparse,seismic,lambda=all,alpha=1,heap=0,cut=all,rescore=0"))
    dense = X.toarray().astype(np.float64)
    for i in rng.integers(0, 2000, 20):
        idx, val = X[[int(i)]].indices, X[[int(i)]].data.astype(np.float64)
        s, r = index.search(idx, val, k=10)
        q = np.zeros(300)
        q[idx] = val
        exact = dense[r] @ q
        # each weight rounded to float16 (relative F16_EPS), the query and the sum in float32 (a few 2^-24)
        bound = (np.abs(dense[r]) @ np.abs(q)) * (F16_EPS + 64 * 2.0 ** -24)
        assert (np.abs(s - exact) <= bound).all()


def test_pruning_scores_fewer_rows_and_loses_little_on_zipf_rows(rng):
    X = _zipf_rows(rng, 20_000, 5000, 40)
    rows = SparseRows.from_scipy(X)
    exact = SparseIndex(rows)
    queries = [(X[[int(i)]].indices, X[[int(i)]].data.astype(np.float64)) for i in rng.integers(0, 20_000, 50)]
    index = SeismicIndex(rows, parse_seismic_spec("sparse,seismic,lambda=2000,alpha=0.5,heap=0.9,cut=20"))
    recall = _recall(index, exact, queries)
    print(f"\nZipf 20,000 x 40 nnz: recall@10 {recall:.3f}")
    assert recall >= 0.9
    loose = SeismicIndex(rows, parse_seismic_spec("sparse,seismic,lambda=20,alpha=0.1,heap=1,cut=2"))
    assert _recall(loose, exact, queries) < recall  # pruning harder loses neighbours: the knobs reach Seismic


def test_cranfield_bm25_recall_against_the_exact_index(cranfield_bm25):
    model, X, q_tokens = cranfield_bm25
    vocab = model.vocab_dict
    rows = SparseRows.from_scipy(X)
    exact = SparseIndex(rows)
    queries = []
    for tokens in q_tokens:
        ids, counts = np.unique([vocab[t] for t in tokens if t in vocab], return_counts=True)
        if len(ids):
            queries.append((ids, counts.astype(np.float64)))
    index = SeismicIndex(rows, SeismicParams(lambda_=200, alpha=0.8, heap=0.9, cut=10))
    recall = _recall(index, exact, queries)
    print(f"\nCranfield BM25 ({len(queries)} queries): recall@10 {recall:.3f}")
    assert recall >= 0.95
    assert _recall(SeismicIndex(rows, parse_seismic_spec(NO_PRUNING)), exact, queries) == 1.0


def test_saved_index_loads_and_answers_the_same(rng, tmp_path):
    X = _zipf_rows(rng, 2000, 300, 12)
    rows = SparseRows.from_scipy(X)
    params = parse_seismic_spec("sparse,seismic,lambda=50,alpha=0.5,heap=0.9,cut=5")
    index = SeismicIndex(rows, params, metric="cosine")
    index.save(tmp_path / "s.seismic")
    again = SeismicIndex.load(tmp_path / "s.seismic", rows, params, metric="cosine")
    rebuilt = SeismicIndex(rows, params, metric="cosine")  # Seismic seeds its clustering: the same index
    for i in rng.integers(0, 2000, 20):
        idx, val = X[[int(i)]].indices, X[[int(i)]].data
        want = index.search(idx, val, k=10)
        for other in (again, rebuilt):
            got = other.search(idx, val, k=10)
            assert got[1].tolist() == want[1].tolist() and got[0].tolist() == want[0].tolist()
    with pytest.raises(ValueError, match="holds 2000 rows, not 10"):
        SeismicIndex.load(tmp_path / "s.seismic", rows.take(range(10)), params)


def test_a_vocabulary_beyond_uint16_is_indexed(rng):
    n_features = U16_FEATURES + 5000
    X = _zipf_rows(rng, 500, 400, 10)
    X = sps.csr_array((X.data, X.indices * 160, X.indptr), shape=(500, U16_FEATURES))  # ids up to 63,840 ...
    X = sps.csr_array(sps.hstack([X, sps.csr_array(([2.0], ([0], [4999])), shape=(500, 5000))]).tocsr())
    rows = SparseRows.from_scipy(X)  # ... and one row holding feature 70,535
    index = SeismicIndex(rows, parse_seismic_spec(NO_PRUNING))
    s, r = index.search([n_features - 1], [1.0], k=1)
    assert r.tolist() == [0] and s.tolist() == [2.0]
    s_ref, r_ref = SparseIndex(rows).search(X[[3]].indices, X[[3]].data, k=10)
    s, r = index.search(X[[3]].indices, X[[3]].data, k=10)
    assert r.tolist() == r_ref.tolist()


@pytest.mark.parametrize("spec, message", [
    ("sparse,seismic,alpha=0", "seismic alpha must be in (0, 1], not 0.0"),
    ("sparse,seismic,heap=1.5", "seismic heap must be in [0, 1], not 1.5"),
    ("sparse,seismic,lambda=0", "seismic lambda must be at least 1 (or 'all'), not 0"),
    ("sparse,seismic,lambda=-5", "seismic lambda must be at least 1 (or 'all'), not -5"),
    ("sparse,seismic,lambda=many", "seismic lambda must be an integer or 'all', not 'many'"),
    ("sparse,seismic,beta=nan", "seismic beta must be in (0, 1], not nan"),
    ("sparse,seismic,rescore=-1", "seismic rescore must be in [0, 100], not -1"),
    ("sparse,seismic,cut=2,cut=3", "seismic parameter cut is given twice"),
    ("sparse,seismic,cut=2,query_cut=3", "seismic parameter cut is given twice"),
    ("sparse,seismic,gamma=1", "seismic parameter 'gamma=1' is not one of lambda=..., beta=..., alpha=..., "
                               "heap=..., cut=..., rescore=..."),
    ("sparse,exact", "a Seismic spec begins with 'sparse,seismic', not 'sparse,exact'"),
])
def test_bad_parameters_are_one_line(spec, message):
    with pytest.raises(InputError) as e:
        parse_seismic_spec(spec)
    assert str(e.value) == message and "\n" not in str(e.value)


def test_spec_round_trips_and_negative_weights_are_refused():
    p = parse_seismic_spec("sparse,seismic,lambda=all,beta=0.2,heap_factor=0.7,query_cut=5")
    assert (p.heap, p.cut) == (0.7, 5)
    assert parse_seismic_spec(p.spec()) == p
    rows = SparseRows.from_pairs([([0], [1.0]), ([1], [-2.0])], n_features=2)
    with pytest.raises(InputError, match="non-negative weights"):
        SeismicIndex(rows)
