"""The Seismic index (sparse,seismic) against the exact sparse index: equal when nothing is pruned, recall when it is.

With ``lambda=all, alpha=1, heap=1, cut=all`` a block is skipped only when its summary bounds
every row in it below the k-th score found, so the result must equal
:class:`~repspace.engines.search.sparse.SparseIndex`'s (itself checked against scipy brute force
in test_sparse.py): same rows, scores to 1e-6. With its default pruning, recall@10 against the
exact top 10 is measured on two data sets (printed with ``-s``): Cranfield's BM25 term weights
(bm25s's index, its 225 queries) and synthetic Zipf rows with idf-like weights. The recall floors
asserted sit below the figures measured (Cranfield 0.982 at lambda=200, alpha=0.8; Zipf 0.934 at
n = 20,000, alpha=0.5) by a margin for another draw of centroids: the pruning still finds most neighbours.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

from repspace.core.errors import InputError
from repspace.core.sparse import SparseRows
from repspace.engines.search.seismic import SeismicIndex, SeismicParams, parse_seismic_spec
from repspace.engines.search.sparse import SparseIndex

pytestmark = pytest.mark.numerics

NO_PRUNING = "sparse,seismic,lambda=all,alpha=1,heap=1,cut=all"


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
@pytest.mark.parametrize("blocks", ["beta=0.1", "beta=0,block=7"])
def test_no_pruning_equals_the_exact_index(rng, metric, blocks):
    X = _zipf_rows(rng, 3000, 400, 12)
    X.data[rng.random(X.nnz) < 0.3] = 1.0  # many equal weights: ties must go to the lower row on both sides
    rows = SparseRows.from_scipy(X)
    exact = SparseIndex(rows, metric=metric)
    index = SeismicIndex(rows, parse_seismic_spec(f"{NO_PRUNING},{blocks}"), metric=metric)
    assert index.n_blocks > 400  # the lists are cut into blocks, not kept whole
    for i in rng.integers(0, 3000, 40):
        idx, val = X[[int(i)]].indices, X[[int(i)]].data.astype(np.float64)
        for k in (1, 10, 50):
            s_ref, r_ref = exact.search(idx, val, k=k)
            s, r = index.search(idx, val, k=k)
            assert r.tolist() == r_ref.tolist()
            np.testing.assert_allclose(s, s_ref, rtol=1e-6, atol=1e-7)


def test_pruning_scores_fewer_rows_and_loses_little_on_zipf_rows(rng):
    X = _zipf_rows(rng, 20_000, 5000, 40)
    rows = SparseRows.from_scipy(X)
    exact = SparseIndex(rows)
    queries = [(X[[int(i)]].indices, X[[int(i)]].data.astype(np.float64)) for i in rng.integers(0, 20_000, 50)]
    index = SeismicIndex(rows, parse_seismic_spec("sparse,seismic,lambda=2000,alpha=0.5,heap=0.9,cut=20"))
    recall = _recall(index, exact, queries)
    print(f"\nZipf 20,000 x 40 nnz: recall@10 {recall:.3f} ({index.n_blocks} blocks)")
    assert recall >= 0.85
    loose = SeismicIndex(rows, parse_seismic_spec("sparse,seismic,lambda=100,alpha=0.2,heap=0.5,cut=3"))
    assert _recall(loose, exact, queries) < recall  # pruning harder loses neighbours: the knobs act


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
    print(f"\nCranfield BM25 ({len(queries)} queries): recall@10 {recall:.3f} ({index.n_blocks} blocks)")
    assert recall >= 0.95
    assert _recall(SeismicIndex(rows, parse_seismic_spec(NO_PRUNING)), exact, queries) == 1.0


@pytest.mark.parametrize("spec, message", [
    ("sparse,seismic,alpha=0", "seismic alpha must be in (0, 1], not 0.0"),
    ("sparse,seismic,heap=1.5", "seismic heap must be in (0, 1], not 1.5"),
    ("sparse,seismic,lambda=0", "seismic lambda must be at least 1 (or 'all'), not 0"),
    ("sparse,seismic,lambda=many", "seismic lambda must be an integer or 'all', not 'many'"),
    ("sparse,seismic,beta=nan", "seismic beta must be in [0, 1], not nan"),
    ("sparse,seismic,cut=2,cut=3", "seismic parameter cut is given twice"),
    ("sparse,seismic,gamma=1", "seismic parameter 'gamma=1' is not one of lambda=..., beta=..., block=..., "
                               "alpha=..., heap=..., cut=..., seed=..."),
    ("sparse,exact", "a Seismic spec begins with 'sparse,seismic', not 'sparse,exact'"),
])
def test_bad_parameters_are_one_line(spec, message):
    with pytest.raises(InputError) as e:
        parse_seismic_spec(spec)
    assert str(e.value) == message and "\n" not in str(e.value)


def test_spec_round_trips_and_negative_weights_are_refused():
    p = parse_seismic_spec("sparse,seismic,lambda=all,beta=0,block=16,cut=5")
    assert parse_seismic_spec(p.spec()) == p
    rows = SparseRows.from_pairs([([0], [1.0]), ([1], [-2.0])], n_features=2)
    with pytest.raises(InputError, match="non-negative weights"):
        SeismicIndex(rows)
