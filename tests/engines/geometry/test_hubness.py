"""Hubness metrics against scikit-hubness's formulas written out here, on real GloVe vectors and small cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from repspace.core.errors import InputError
from repspace.core.knn import KnnGraph, knn_graph
from repspace.engines.geometry.hubness import HubnessResult, gini, hubness, k_occurrence, robin_hood

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def glove(glove_vectors) -> np.ndarray:
    return np.asarray(glove_vectors[:2000], dtype=np.float64)


# -- scikit-hubness (skhubness.analysis.Hubness, v0.21/0.30) formulas, written out directly -------


def skh_k_occurrence(neigh_ind: np.ndarray, n: int) -> np.ndarray:
    occ = np.zeros(n, dtype=np.int64)
    for row in neigh_ind:
        for j in row:
            occ[j] += 1
    return occ


def skh_gini(k_occurrence: np.ndarray) -> float:
    # Hubness._calc_gini_index, limiting="time": the n² form
    n = k_occurrence.size
    numerator = np.sum(np.abs(k_occurrence.reshape(1, -1) - k_occurrence.reshape(-1, 1)))
    return float(numerator / (2 * n * np.sum(k_occurrence)))


def skh_robinhood(k_occurrence: np.ndarray) -> float:
    numerator = 0.5 * float(np.sum(np.abs(k_occurrence - k_occurrence.mean())))
    return numerator / float(np.sum(k_occurrence))


def skh_antihub_occurrence(k_occurrence: np.ndarray) -> float:
    return np.argwhere(k_occurrence == 0).ravel().size / k_occurrence.size


def skh_hub_occurrence(k: int, k_occurrence: np.ndarray, n_test: int, hub_size: float = 2) -> float:
    is_hub = np.argwhere(k_occurrence >= hub_size * k).ravel()
    return k_occurrence[is_hub].sum() / k / n_test


def brute_cosine_knn(X: np.ndarray, k: int) -> np.ndarray:
    x = np.asarray(X, dtype=np.float64)
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    sim = u @ u.T
    np.fill_diagonal(sim, -np.inf)
    return np.argsort(-sim, axis=1, kind="stable")[:, :k]


# -- tests ----------------------------------------------------------------------------------------


def test_k_occurrence_counts_rows():
    idx = np.array([[1, 2], [2, 0], [1, 0], [1, 2]])
    np.testing.assert_array_equal(k_occurrence(idx, 5), skh_k_occurrence(idx, 5))
    assert k_occurrence(idx, 5).tolist() == [2, 3, 3, 0, 0]
    assert k_occurrence(np.empty((0, 3), np.int64), 2).tolist() == [0, 0]


def test_glove_hubness_matches_the_scikit_hubness_formulas(glove):
    k = 10
    r = hubness(glove, k=k)  # cosine, exact
    neigh = brute_cosine_knn(glove, k)
    occ = skh_k_occurrence(neigh, len(glove))
    np.testing.assert_array_equal(r.k_occurrence, occ)
    assert r.k == k and r.metric == "cosine" and r.knn_method == "exact" and r.knn_recall is None
    assert r.k_skewness == pytest.approx(float(stats.skew(occ)), rel=1e-12)
    assert r.robin_hood == pytest.approx(skh_robinhood(occ), rel=1e-12)
    assert r.antihub_rate == pytest.approx(skh_antihub_occurrence(occ), abs=0)
    assert r.hub_occurrence == pytest.approx(skh_hub_occurrence(k, occ, len(glove)), rel=1e-12)
    assert r.gini == pytest.approx(skh_gini(occ), rel=1e-12)
    np.testing.assert_array_equal(r.hub_flag, occ >= 2 * k)
    # GloVe is a hubby space: a sanity check on the direction of the numbers
    assert r.k_skewness > 1.0 and r.antihub_rate > 0.01 and r.hub_flag.sum() > 0


def test_robin_hood_uses_k_which_is_the_mean():
    occ = np.array([5, 0, 1, 2, 2])  # sums to 10 = k·n with k = 2, n = 5
    assert robin_hood(occ, 2) == pytest.approx(skh_robinhood(occ))
    assert robin_hood(np.zeros(3), 1) == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gini_by_sorting_equals_the_n_squared_form(seed):
    occ = np.random.default_rng(seed).poisson(3.0, size=500)
    assert gini(occ) == pytest.approx(skh_gini(occ), rel=1e-12)
    assert gini(np.zeros(4)) == 0.0


def test_graph_input_equals_array_input_and_can_be_cut(glove):
    X = glove[:800]
    g = knn_graph(X, 20, metric="cosine")
    a = hubness(X, k=10)
    b = hubness(g, k=10)
    np.testing.assert_array_equal(a.k_occurrence, b.k_occurrence)
    assert a.to_dict() == b.to_dict()
    assert hubness(g).k == 20
    with pytest.raises(InputError, match=r"\[1, 20\]"):
        hubness(g, k=21)


def test_high_dimension_gives_more_hubness_than_low():
    rng = np.random.default_rng(0)
    low = hubness(rng.standard_normal((2000, 2)), k=10, metric="l2")
    high = hubness(rng.standard_normal((2000, 200)), k=10, metric="l2")
    assert high.k_skewness > low.k_skewness + 0.5
    assert high.antihub_rate > low.antihub_rate
    assert high.gini > low.gini


def test_even_graph_has_zero_skewness_not_nan():
    n = 7
    ring = np.stack([(np.arange(n) + 1) % n, (np.arange(n) + 2) % n], axis=1).astype(np.int64)
    g = KnnGraph(ring, np.ones((n, 2), np.float32), "l2", "exact")
    r = hubness(g)
    assert r.k_occurrence.tolist() == [2] * n
    assert (r.k_skewness, r.robin_hood, r.antihub_rate, r.hub_occurrence, r.gini) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert all(np.isfinite(v) for k, v in r.to_dict().items() if isinstance(v, float))


def test_duplicates_and_zero_vectors_are_finite():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 5))
    X = np.vstack([X, X[:10], np.zeros((3, 5))])
    r = hubness(X, k=5)
    assert r.k_occurrence.sum() == 5 * len(X)
    for key, v in r.to_dict().items():
        if isinstance(v, float):
            assert np.isfinite(v), key


def test_hnsw_hubness_is_close_to_exact(glove):
    exact = hubness(glove, k=10)
    approx = hubness(glove, k=10, exact=False)
    assert approx.knn_method == "hnsw" and approx.knn_recall >= 0.95
    assert approx.k_skewness == pytest.approx(exact.k_skewness, rel=0.05)
    assert approx.gini == pytest.approx(exact.gini, rel=0.05)
    assert approx.antihub_rate == pytest.approx(exact.antihub_rate, abs=0.01)


def test_to_dict_keys_and_per_item():
    r = hubness(np.eye(4), k=1)
    d = r.to_dict()
    assert set(d) == {"hubness.k", "hubness.k_skewness", "hubness.robin_hood", "hubness.antihub_rate",
                      "hubness.hub_occurrence", "hubness.gini", "hubness.hub_size", "hubness.n_hubs",
                      "hubness.knn"}
    assert d["hubness.knn"] == {"method": "exact", "metric": "cosine", "recall": None}
    full = r.to_dict(per_item=True)
    assert full["hubness.k_occurrence"] == [3, 1, 0, 0]
    assert full["hubness.hub_flag"] == [True, False, False, False]
    assert isinstance(r, HubnessResult) and "k_skewness" in repr(r)


def test_bad_input_raises_input_error():
    with pytest.raises(InputError, match=r"\[0, 3\)"):
        k_occurrence([[0, 3]], 3)
    with pytest.raises(InputError, match="2-d integer"):
        k_occurrence([[0.5, 1.0]], 3)
    with pytest.raises(InputError, match="at least 11 items"):
        hubness(np.random.default_rng(0).standard_normal((10, 3)))
    with pytest.raises(InputError, match="hub_size"):
        hubness(np.eye(4), k=1, hub_size=0)
    with pytest.raises(InputError, match="NaN"):
        hubness(np.array([[1.0, np.nan], [1.0, 2.0], [0.0, 1.0]]), k=1)
