"""Feature universality and feature flow: correlations against numpy, matchings against brute force, planted cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from repspace.core.errors import InputError
from repspace.engines.compare import feature_correlations, feature_flow, feature_universality, match_features, svcca


def _sparse_codes(rng: np.random.Generator, n: int, m: int, density: float = 0.3) -> np.ndarray:
    return rng.exponential(size=(n, m)) * (rng.random((n, m)) < density)


def _corrcoef(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """numpy's corrcoef of the columns, with a constant column's NaNs as 0."""
    ma = A.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        C = np.corrcoef(A.T, B.T)[:ma, ma:]
    return np.nan_to_num(C, nan=0.0)


@pytest.mark.parametrize("sparse_a, sparse_b", [(False, False), (True, True), (True, False), (False, True)])
def test_correlations_equal_numpy_corrcoef(sparse_a: bool, sparse_b: bool) -> None:
    rng = np.random.default_rng(0)
    A, B = _sparse_codes(rng, 300, 7), _sparse_codes(rng, 300, 5)
    A[:, 3] = 0.0  # a dead latent
    B[:, 1] = 0.1  # a constant one (0.1 is not exact in binary: E[x²] − E[x]² leaves a rounding residue)
    C, live_a, live_b = feature_correlations(sp.csr_matrix(A) if sparse_a else A, sp.csr_matrix(B) if sparse_b else B)
    assert np.allclose(C, _corrcoef(A, B), atol=1e-12)  # float64 products of O(1) values over 300 rows
    assert live_a.tolist() == [True, True, True, False, True, True, True]
    assert live_b.tolist() == [True, False, True, True, True]


def test_hungarian_equals_brute_force_over_every_permutation() -> None:
    rng = np.random.default_rng(1)
    A = _sparse_codes(rng, 80, 6, 0.5)
    B = A @ rng.random((6, 6)) + 0.5 * _sparse_codes(rng, 80, 6, 0.5)
    C = _corrcoef(A, B)
    best = max(itertools.permutations(range(6)), key=lambda p: sum(C[i, p[i]] for i in range(6)))
    m = match_features(A, B)
    assert m.rows.tolist() == list(range(6)) and m.cols.tolist() == list(best)
    assert np.allclose(m.correlations, C[np.arange(6), list(best)], atol=1e-12)
    assert m.share_unique == 1.0


def test_max_equals_the_argmax_of_corrcoef_and_counts_shared_targets() -> None:
    rng = np.random.default_rng(2)
    A, B = _sparse_codes(rng, 200, 9, 0.5), _sparse_codes(rng, 200, 4, 0.5)
    B[:, 0] += A[:, 0] + A[:, 1]  # two features of A best matched by B's feature 0
    m = match_features(A, B, method="max")
    C = _corrcoef(A, B)
    assert m.cols.tolist() == np.argmax(C, axis=1).tolist()
    counts = np.bincount(m.cols, minlength=4)
    assert m.share_unique == pytest.approx(np.mean(counts[m.cols] == 1))


def test_a_planted_permutation_is_recovered_exactly() -> None:
    """Dictionary B is A's features permuted, each rescaled, with a little noise: the matching is the permutation."""
    rng = np.random.default_rng(3)
    n, m = 2000, 64
    A = _sparse_codes(rng, n, m, 0.1)
    perm = rng.permutation(m)  # A's feature i is B's feature perm[i]
    B = np.empty_like(A)
    B[:, perm] = A * rng.uniform(0.5, 3.0, size=m) + 0.01 * rng.random((n, m))
    for method in ("hungarian", "max"):
        match = match_features(sp.csr_matrix(A), sp.csr_matrix(B), method=method)
        assert match.cols.tolist() == perm.tolist(), method
        assert match.mean_correlation > 0.99


def test_universality_of_a_planted_permutation_and_its_random_baseline() -> None:
    rng = np.random.default_rng(4)
    n, m, d_a, d_b = 1500, 96, 16, 24
    A = _sparse_codes(rng, n, m, 0.15)
    perm = rng.permutation(m)
    B = np.empty_like(A)
    B[:, perm] = A
    Wa = rng.standard_normal((m, d_a))
    Wb = np.empty((m, d_b))
    Wb[perm] = Wa @ rng.standard_normal((d_a, d_b))  # the same feature directions, another model's basis
    u = feature_universality(A, B, Wa, Wb, n_random=10, seed=0)
    assert u.decoder is not None and u.decoder.value == pytest.approx(1.0, abs=1e-8)
    # the value is SVCCA of the matched rows, as the compare engine computes it
    assert u.decoder.value == pytest.approx(svcca(Wa, Wb[perm]).value, abs=1e-12)
    assert u.activations.value == pytest.approx(svcca(A, B[:, perm]).value, abs=1e-12)
    d = u.to_dict()
    assert d["decoder_random_mean"] < 0.6 and d["decoder_random_p"] == pytest.approx(1 / 11)
    assert d["n_random"] == 10 and d["match"]["n_pairs"] == m


def test_min_correlation_drops_weak_pairs_and_too_few_pairs_are_refused() -> None:
    rng = np.random.default_rng(5)
    A = _sparse_codes(rng, 400, 5)
    B = np.column_stack([A[:, 0], A[:, 1], _sparse_codes(rng, 400, 3)])
    m = match_features(A, B, min_correlation=0.9)
    assert m.rows.tolist() == [0, 1] and m.cols.tolist() == [0, 1]
    with pytest.raises(InputError, match="1 feature pair"):
        feature_universality(A, np.column_stack([A[:, 0], _sparse_codes(rng, 400, 4)]), min_correlation=0.9)


def test_bad_input_is_one_clear_error() -> None:
    rng = np.random.default_rng(6)
    A = _sparse_codes(rng, 50, 4)
    with pytest.raises(InputError, match="50 rows and B 49"):
        match_features(A, A[:49])
    with pytest.raises(InputError, match="NaN"):
        match_features(A, np.full((50, 2), np.nan))
    with pytest.raises(InputError, match="hungarian, max"):
        match_features(A, A, method="greedy")
    with pytest.raises(InputError, match="no feature that varies"):
        match_features(A, np.zeros((50, 3)))
    with pytest.raises(InputError, match="both dictionaries' decoders"):
        feature_universality(A, A, np.eye(4))
    with pytest.raises(InputError, match="one row per feature"):
        feature_universality(A, A, np.eye(4), np.eye(3))


# ----------------------------------------------------------------------------- feature flow


def _planted_layers(rng: np.random.Generator) -> list[np.ndarray]:
    """Three layers: of layer 0's 10 features, 6 persist into layer 1 (permuted, rescaled), 4 die; layer 1 adds
    3 born; layer 1's features 0..4 persist into layer 2, one splits into two, 2 new are born."""
    n = 1500
    L0 = _sparse_codes(rng, n, 10, 0.2)
    born1 = _sparse_codes(rng, n, 3, 0.2)
    L1 = np.column_stack([L0[:, [5, 2, 7, 0, 9, 1]] * 2.0, born1])          # 9 features
    born2 = _sparse_codes(rng, n, 2, 0.2)
    L2 = np.column_stack([L1[:, [0, 1, 2, 3, 4]], L1[:, [8]], L1[:, [8]] + 0.05 * rng.random((n, 1)), born2])
    return [L0, L1, L2]


def test_flow_of_planted_layers_counts_and_edges() -> None:
    layers = _planted_layers(np.random.default_rng(7))
    f = feature_flow(layers, threshold=0.5, labels=["l2", "l4", "l6"])
    s0, s1 = f.steps
    assert (s0.persists, s0.dies, s0.born, s0.n_edges) == (6, 4, 3, 6)
    # layer 1 → 2: features 0..4 and 8 persist (8 into two successors), 5, 6, 7 die; 2 born
    assert (s1.persists, s1.dies, s1.born, s1.n_edges) == (6, 3, 2, 7)
    first = {(e.source[1], e.target[1]) for e in f.edges if e.source[0] == 0}
    assert first == {(5, 0), (2, 1), (7, 2), (0, 3), (9, 4), (1, 5)}
    top1 = feature_flow(layers, threshold=0.5, mode="top1")
    assert top1.steps[1].n_edges == 6 and top1.steps[1].born == 3  # the split keeps one successor
    d = f.to_dict()
    status = {n["id"]: n["status"] for n in d["nodes"]}
    assert status["0:3"] == "dies" and status["0:5"] == "persists" and status["1:0"] == "passes"
    assert status["1:8"] == "born"  # born at layer 1, it goes on (split) into layer 2
    assert status["1:6"] == "isolated" and status["2:7"] == "born" and status["1:5"] == "dies"
    assert d["n_edges"] == 13 and len(d["edges"]) == 13 and d["labels"] == ["l2", "l4", "l6"]


def test_flow_edges_equal_a_direct_thresholding_of_corrcoef() -> None:
    rng = np.random.default_rng(8)
    L0 = _sparse_codes(rng, 300, 12, 0.4)
    L1 = L0 @ (rng.random((12, 9)) < 0.2) + 0.3 * _sparse_codes(rng, 300, 9, 0.4)
    f = feature_flow([L0, L1], threshold=0.3)
    C = _corrcoef(L0, L1)
    expected = sorted((int(i), int(j)) for i, j in zip(*np.nonzero(C >= 0.3), strict=True))
    assert [(e.source[1], e.target[1]) for e in f.edges] == expected
    assert all(abs(e.weight - C[e.source[1], e.target[1]]) < 1e-12 for e in f.edges)


def test_flow_bad_input() -> None:
    L = np.random.default_rng(9).random((20, 3))
    with pytest.raises(InputError, match="at least two layers"):
        feature_flow([L])
    with pytest.raises(InputError, match="2 labels for 3 layers"):
        feature_flow([L, L, L], labels=["a", "b"])
    with pytest.raises(InputError, match="threshold"):
        feature_flow([L, L], threshold=2.0)
    with pytest.raises(InputError, match="20 rows and B 19"):
        feature_flow([L, L[:19]])
