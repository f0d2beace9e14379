"""The k-NN graph against direct n² numpy kNN, on ties, duplicates, zero vectors and real GloVe vectors."""

from __future__ import annotations

import numpy as np
import pytest

import repspace.core.knn as knn_mod
from repspace.core.errors import InputError
from repspace.core.knn import EXACT_MAX, KnnGraph, knn_graph

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def glove(glove_vectors) -> np.ndarray:
    return np.asarray(glove_vectors[:3000], dtype=np.float32)


def brute_knn(X: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair in float64; self excluded; sorted by (distance, row)."""
    x = np.asarray(X, dtype=np.float64)
    if metric == "cosine":
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        u = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
        dist = 1.0 - u @ u.T
    elif metric == "ip":
        dist = -(x @ x.T)
    else:
        dist = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))
    n = len(x)
    idx = np.empty((n, k), np.int64)
    for i in range(n):
        others = np.array([j for j in range(n) if j != i])
        order = np.lexsort((others, dist[i, others]))[:k]
        idx[i] = others[order]
    return idx, np.take_along_axis(dist, idx, axis=1)


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_exact_graph_matches_brute_force(metric):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 12))
    g = knn_graph(X, 7, metric=metric)
    idx, dist = brute_knn(X, 7, metric)
    assert g.method == "exact" and g.recall is None
    assert g.indices.dtype == np.int64 and g.distances.dtype == np.float32
    assert g.indices.shape == (150, 7)
    np.testing.assert_array_equal(g.indices, idx)
    np.testing.assert_allclose(g.distances, dist, rtol=1e-5, atol=1e-5)
    assert (np.diff(g.distances, axis=1) >= 0).all()


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_ties_go_to_the_lower_row(metric):
    # small integer coordinates: many exactly equal distances
    rng = np.random.default_rng(5)
    X = rng.integers(-2, 3, size=(60, 3)).astype(np.float64)
    X = X[np.abs(X).sum(axis=1) > 0]
    idx, dist = brute_knn(X, 5, metric)
    g = knn_graph(X, 5, metric=metric)
    np.testing.assert_allclose(g.distances, dist, atol=1e-6)
    if metric != "cosine":
        # integer dot products and squared distances are exact in float32 and float64: the ties are
        # real, and both sides break them by the lower row
        np.testing.assert_array_equal(g.indices, idx)
    else:
        # equal cosines of different directions (1/√2 vs 2/√8) differ by rounding in either
        # computation; identical rows, though, are exact ties and keep row order
        checked = 0
        for i in range(len(X)):
            for first in g.indices[i]:
                same = [j for j in g.indices[i] if (X[j] == X[first]).all()]
                assert same == sorted(same)
                checked += len(same) > 1
        assert checked > 0


def test_exact_duplicates_remove_self_by_index_not_position():
    base = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    X = np.vstack([base[[0]]] * 5 + [base[1:]])  # rows 0..4 identical
    g = knn_graph(X, 3, metric="l2")
    for i in range(5):
        assert i not in g.indices[i]
        expected = [j for j in range(5) if j != i][:3]
        assert g.indices[i].tolist() == expected
        assert g.distances[i].tolist() == [0.0, 0.0, 0.0]
    # cosine: scaled copies are the same direction
    Y = np.vstack([base[0] * s for s in (1.0, 2.0, 3.0, 0.5)] + [base[1:]])
    gc = knn_graph(Y, 2, metric="cosine")
    for i in range(4):
        assert i not in gc.indices[i]
        assert set(gc.indices[i]) <= {0, 1, 2, 3}
        np.testing.assert_allclose(gc.distances[i], 0.0, atol=1e-6)


def test_zero_vectors_under_cosine_are_defined():
    X = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0]])
    g = knn_graph(X, 2, metric="cosine")
    assert np.isfinite(g.distances).all()
    assert g.indices[0].tolist() == [1, 2]  # cosine 0 with every row: the lowest rows
    np.testing.assert_allclose(g.distances[0], [1.0, 1.0])
    assert g.indices[2].tolist() == [0, 1]
    assert g.indices[1].tolist() == [4, 0]  # 1 − 1/√2, then the zero row 0 at distance 1
    idx, dist = brute_knn(X, 2, "cosine")
    np.testing.assert_array_equal(g.indices, idx)
    np.testing.assert_allclose(g.distances, dist, atol=1e-6)


def test_float32_and_float64_inputs_agree(glove):
    X = glove[:500]
    a = knn_graph(X, 5, metric="cosine")
    b = knn_graph(X.astype(np.float64), 5, metric="cosine")
    np.testing.assert_array_equal(a.indices, b.indices)


def test_hnsw_on_glove_agrees_with_exact_and_reports_its_recall(glove):
    exact = knn_graph(glove, 10, metric="cosine")
    approx = knn_graph(glove, 10, metric="cosine", exact=False, recall_sample=500, seed=1)
    assert approx.method == "hnsw" and approx.recall_sample == 500
    assert approx.recall is not None and approx.recall >= 0.95
    # the recall over every item, computed here independently
    overall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approx.indices, exact.indices)])
    assert overall >= 0.95
    assert abs(approx.recall - overall) < 0.02
    assert not (approx.indices == np.arange(len(glove))[:, None]).any()
    # re-scored exactly: where an item's list is complete, the distances equal the exact ones
    same = (approx.indices == exact.indices).all(axis=1)
    assert same.mean() >= 0.9
    np.testing.assert_allclose(approx.distances[same], exact.distances[same], atol=1e-6)
    assert (np.diff(approx.distances, axis=1) >= 0).all()


def test_hnsw_l2_with_duplicates(glove):
    X = np.vstack([glove[:1500], glove[:100]])  # 100 duplicated rows
    g = knn_graph(X, 5, metric="l2", exact=False)
    n = len(X)
    assert not (g.indices == np.arange(n)[:, None]).any()
    assert (g.indices >= 0).all() and (g.indices < n).all()
    # each duplicated row finds its copy at distance 0
    for i in range(100):
        assert g.distances[i, 0] == 0.0 and g.indices[i, 0] == 1500 + i
        assert g.distances[1500 + i, 0] == 0.0 and g.indices[1500 + i, 0] == i
    assert g.recall >= 0.95


def test_default_switches_to_hnsw_above_exact_max(monkeypatch):
    assert EXACT_MAX == 50_000
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 8))
    monkeypatch.setattr(knn_mod, "EXACT_MAX", 299)
    assert knn_graph(X, 3).method == "hnsw"
    assert knn_graph(X, 3, exact=True).method == "exact"
    monkeypatch.setattr(knn_mod, "EXACT_MAX", 300)
    assert knn_graph(X, 3).method == "exact"


def test_to_dict_and_repr():
    g = knn_graph(np.arange(12.0).reshape(6, 2), 2, metric="l2")
    assert g.to_dict() == {"method": "exact", "metric": "l2", "k": 2, "n": 6, "recall": None,
                           "recall_sample": 0}
    assert "KnnGraph(n=6, k=2" in repr(g)
    assert isinstance(g, KnnGraph)


def test_bad_input_raises_input_error():
    X = np.ones((5, 3))
    with pytest.raises(InputError, match="at least 6 items"):
        knn_graph(X, 5)
    with pytest.raises(InputError, match="positive integer"):
        knn_graph(X, 0)
    with pytest.raises(InputError, match="positive integer"):
        knn_graph(X, 2.5)
    with pytest.raises(InputError, match="unknown metric"):
        knn_graph(X, 2, metric="manhattan")
    bad = np.ones((5, 3))
    bad[2, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        knn_graph(bad, 2)
    bad[2, 1] = np.inf
    with pytest.raises(InputError, match="NaN or infinite"):
        knn_graph(bad, 2)
    with pytest.raises(InputError, match="2-d"):
        knn_graph(np.ones(5), 2)
    with pytest.raises(InputError, match="too large"):
        knn_graph(np.full((5, 3), 1e30), 2, metric="l2")
    with pytest.raises(InputError, match="recall_sample"):
        knn_graph(X, 2, recall_sample=0)


def test_huge_values_are_fine_for_cosine():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 4))
    a = knn_graph(X, 3)
    b = knn_graph(X * 1e200, 3)
    c = knn_graph(X * 1e-200, 3)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.indices, c.indices)
    np.testing.assert_allclose(a.distances, c.distances, atol=1e-6)


def test_hnsw_beam_is_raised_until_the_sampled_recall_reaches_the_target(glove_vectors, monkeypatch):
    from repspace.core import knn as _knn

    x = np.ascontiguousarray(glove_vectors[:4000], np.float32)
    used = []
    real = _knn._search_graph

    def spy(index, xx, k, metric, ef):
        used.append(ef)
        return real(index, xx, k, metric, ef)

    monkeypatch.setattr(_knn, "_search_graph", spy)
    monkeypatch.setattr(_knn, "HNSW_EF_SEARCH", 4)
    monkeypatch.setattr(_knn, "RECALL_TARGET", 0.99)
    g = knn_graph(x, 10, metric="cosine", exact=False, recall_sample=500)
    assert used[0] == 11 and used == sorted(used) and len(used) >= 2  # k + 1 first, then doubled
    assert g.recall >= 0.99 or used[-1] == _knn.HNSW_EF_MAX
    exact = knn_graph(x, 10, metric="cosine", exact=True)
    rows = np.arange(0, 4000, 7)
    hit = np.mean([len(set(g.indices[r]) & set(exact.indices[r])) / 10 for r in rows])
    assert hit >= 0.97
