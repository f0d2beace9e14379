"""exact_search against a float64 brute force, including blocking and the tie rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from _search_reference import duplicated_rows
from hypothesis import strategies as st

import repspace.core.exact as exact_mod
from repspace import InputError
from repspace.workflows.search import exact_search, normalize_rows

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

METRICS = ["cosine", "ip", "l2"]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("m,n,k", [(1, 50, 5), (37, 200, 10), (5, 20, 20), (5, 20, 35), (300, 64, 1), (3, 1, 4)])
def test_matches_brute_force(brute, rng, metric, m, n, k):
    d = 24
    x = rng.standard_normal((n, d)).astype(np.float32)
    q = rng.standard_normal((m, d)).astype(np.float32)
    s, i = exact_search(q, x, k, metric)
    assert s.shape == (m, min(k, n))
    brute.check(s, i, q, x, k, metric)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("block_entries", [1, 7, 50, 333])
def test_blocked_mode_matches_brute_force(brute, rng, monkeypatch, metric, block_entries):
    monkeypatch.setattr(exact_mod, "EXACT_BLOCK_ENTRIES", block_entries)
    m, n, d, k = 9, 157, 12, 6
    x = rng.standard_normal((n, d)).astype(np.float32)
    q = rng.standard_normal((m, d)).astype(np.float32)
    s, i = exact_search(q, x, k, metric)
    brute.check(s, i, q, x, k, metric)
    # Blocked and unblocked give identical answers.
    monkeypatch.setattr(exact_mod, "EXACT_BLOCK_ENTRIES", 64 * 1024 * 1024)
    s2, i2 = exact_search(q, x, k, metric)
    assert np.array_equal(i, i2)
    np.testing.assert_allclose(s, s2, rtol=1e-5, atol=1e-5)


def _tie_violations(pattern, s, i):
    """Duplicate rows that did not get one score, or equal scores not in ascending row order."""
    bad = []
    for r in range(i.shape[0]):
        for u in np.unique(pattern[i[r]]):
            pos = np.flatnonzero(pattern[i[r]] == u)
            if len(set(s[r, pos].tolist())) > 1:
                bad.append(("unequal scores for duplicates", r, int(u), i[r, pos].tolist()))
        for a in range(i.shape[1] - 1):
            if s[r, a] == s[r, a + 1] and i[r, a] > i[r, a + 1]:
                bad.append(("tie not by row", r, a, int(i[r, a]), int(i[r, a + 1])))
    return bad


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("block_entries", [1, 5, 64 * 1024 * 1024])
def test_ties_go_to_the_lower_row_exact_scores(rng, monkeypatch, metric, block_entries):
    """Duplicates of small-integer vectors score exactly equal: lower rows first, whatever the blocking."""
    monkeypatch.setattr(exact_mod, "EXACT_BLOCK_ENTRIES", block_entries)
    d = 8
    uniq = rng.integers(-3, 4, (6, d)).astype(np.float32)
    uniq[0] = [1, 0, 0, 0, 0, 0, 0, 0]  # a unit vector: its cosine scores are exact too
    pattern = rng.integers(0, 6, 90)
    x = uniq[pattern]
    q = rng.integers(-3, 4, (4, d)).astype(np.float32)
    if metric == "cosine":
        q = np.repeat(uniq[:1] * 2, 4, axis=0)  # cosine against a unit vector direction
    s, i = exact_search(q, x, 90, metric)
    assert _tie_violations(pattern, s, i) == []
    for r in range(4):
        assert np.all(np.diff(s[r]) >= 0) if metric == "l2" else np.all(np.diff(s[r]) <= 0)
    # With k smaller than the group of best-scored rows, the k lowest rows of that group win.
    best_rows = np.sort(i[0, s[0] == s[0, 0]])
    assert len(best_rows) >= 3
    for k in (1, 2, 3):
        s2, i2 = exact_search(q[:1], x, k, metric)
        assert i2[0].tolist() == best_rows[:k].tolist()


@pytest.mark.parametrize("metric", METRICS)
def test_duplicate_float_vectors_tie_to_the_lower_row(metric):
    violations = []
    for seed in range(8):
        pattern, x, q = duplicated_rows(seed, dims=(3, 40), sizes=(20, 300), groups=5, queries=16)
        s, i = exact_search(q, x, len(x), metric)
        violations += _tie_violations(pattern, s, i)
    assert violations == []


@pytest.mark.parametrize("metric", METRICS)
def test_duplicates_cut_by_k_tie_to_the_lower_row(metric):
    """k smaller than a group of duplicate float vectors: the lowest rows of the group win.

    That group crowds the tie band and is settled pair by pair; a BLAS matrix-vector product
    there rounded a row by where it sat (and by CPU), so copies scored unequally (66 of 1,440
    queries with AVX-512 kernels, 138 with Sandy Bridge ones, before).
    """
    bad = []
    for seed in range(12):
        pattern, x, q = duplicated_rows(seed, dims=(3, 60), sizes=(20, 300), groups=5, queries=4)
        for k in (1, 3, 7):
            s, i = exact_search(q, x, k, metric)
            for row in range(len(q)):
                group = np.flatnonzero(pattern == pattern[i[row, 0]])[:k]
                if i[row, : len(group)].tolist() != group.tolist() or len(set(s[row, : len(group)].tolist())) > 1:
                    bad.append((seed, k, row, i[row].tolist(), group.tolist()))
    assert bad == []


def test_ties_across_block_boundary(monkeypatch):
    # Identical vectors everywhere: the answer must be rows 0..k-1 whatever the blocking.
    x = np.ones((50, 3), np.float32)
    for block_entries in (1, 3, 7, 1000):
        monkeypatch.setattr(exact_mod, "EXACT_BLOCK_ENTRIES", block_entries)
        for metric in METRICS:
            s, i = exact_search(np.ones((2, 3)), x, 10, metric)
            assert i.tolist() == [list(range(10))] * 2, (block_entries, metric)


def _int_data(draw, shape):
    return np.array(draw(st.lists(st.integers(-3, 3), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))),
                    dtype=np.float32).reshape(shape)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hypothesis_integer_data_exact_order(brute, data):
    """Small integers make every score exact in float32, so indices must equal the reference exactly."""
    m = data.draw(st.integers(1, 6), label="m")
    n = data.draw(st.integers(1, 40), label="n")
    d = data.draw(st.integers(1, 6), label="d")
    k = data.draw(st.integers(1, 45), label="k")
    metric = data.draw(st.sampled_from(["ip", "l2"]), label="metric")
    block_entries = data.draw(st.sampled_from([1, 2, 5, 17, 1 << 26]), label="block")
    x = _int_data(data.draw, (n, d))
    q = _int_data(data.draw, (m, d))
    old = exact_mod.EXACT_BLOCK_ENTRIES
    exact_mod.EXACT_BLOCK_ENTRIES = block_entries
    try:
        s, i = exact_search(q, x, k, metric)
    finally:
        exact_mod.EXACT_BLOCK_ENTRIES = old
    exp_s, exp_i = brute.topk(q, x, k, metric)
    assert i.tolist() == exp_i.tolist()
    np.testing.assert_allclose(s, exp_s, rtol=1e-6, atol=1e-6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hypothesis_cosine_random_data(brute, data):
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    m = data.draw(st.integers(1, 8), label="m")
    n = data.draw(st.integers(1, 60), label="n")
    k = data.draw(st.integers(1, 70), label="k")
    block_entries = data.draw(st.sampled_from([1, 3, 64, 1 << 26]), label="block")
    r = np.random.default_rng(seed)
    x = r.standard_normal((n, 5)).astype(np.float32)
    q = r.standard_normal((m, 5)).astype(np.float32)
    old = exact_mod.EXACT_BLOCK_ENTRIES
    exact_mod.EXACT_BLOCK_ENTRIES = block_entries
    try:
        s, i = exact_search(q, x, k, "cosine")
    finally:
        exact_mod.EXACT_BLOCK_ENTRIES = old
    brute.check(s, i, q, x, k, "cosine", exact_order=False)
    assert np.all(np.diff(s, axis=1) <= 0)


def test_one_dimensional_query_and_shapes():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    s, i = exact_search(np.array([1.0, 0.2]), x, 2, "cosine")
    assert s.shape == (1, 2) and i.tolist() == [[0, 2]]
    s, i = exact_search(np.empty((0, 2)), x, 2, "ip")
    assert s.shape == (0, 0) and i.shape == (0, 0)
    s, i = exact_search(np.ones((3, 2)), np.empty((0, 2)), 5, "l2")
    assert s.shape == (3, 0) and i.dtype == np.int64


def test_scores_by_metric_against_numpy(rng):
    x = rng.standard_normal((100, 10)).astype(np.float32) * 3
    q = rng.standard_normal((20, 10)).astype(np.float32) * 3
    s, i = exact_search(q, x, 100, "cosine")
    assert np.all(s <= 1.0 + 1e-6) and np.all(s >= -1.0 - 1e-6)
    assert np.all(np.diff(s, axis=1) <= 0)
    s, i = exact_search(q, x, 100, "ip")
    np.testing.assert_allclose(s, np.take_along_axis(q @ x.T, i, 1), rtol=1e-5, atol=1e-4)
    assert np.all(np.diff(s, axis=1) <= 0)
    s, i = exact_search(q, x, 100, "l2")
    dist = np.linalg.norm(q[:, None, :].astype(np.float64) - x[None].astype(np.float64), axis=2)
    np.testing.assert_allclose(s, np.take_along_axis(dist, i, 1), rtol=1e-4, atol=1e-3)
    assert np.all(np.diff(s, axis=1) >= 0)
    np.testing.assert_allclose(s[:, 0], dist.min(axis=1), rtol=1e-4)
    # Not squared: a point at distance 5.
    s, _ = exact_search(np.array([[3.0, 4.0]]), np.zeros((1, 2)), 1, "l2")
    assert s[0, 0] == pytest.approx(5.0)


def test_zero_vectors_under_cosine():
    x = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    s, i = exact_search(np.array([[2.0, 0.0]]), x, 3, "cosine")
    assert i.tolist() == [[1, 0, 2]] and s.tolist() == [[1.0, 0.0, -1.0]]
    s, i = exact_search(np.zeros((1, 2)), x, 3, "cosine")
    assert i.tolist() == [[0, 1, 2]] and np.all(s == 0)


def test_normalize_rows():
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0], [0.0, -2.0]]))
    assert out.dtype == np.float32
    assert out.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 0.0], [0.0, -1.0]]


def test_unknown_metric():
    with pytest.raises(InputError):
        exact_search(np.ones((1, 2)), np.ones((2, 2)), 1, "hamming")


def test_l2_distances_accurate_far_from_origin(rng):
    x = (1000.0 + rng.standard_normal((200, 16))).astype(np.float32)
    q = x[:20] + np.float32(0.01)
    s, i = exact_search(q, x, 1, "l2")
    assert i[:, 0].tolist() == list(range(20))
    true = np.linalg.norm(q.astype(np.float64) - x[:20].astype(np.float64), axis=1)
    np.testing.assert_allclose(s[:, 0], true, rtol=0.05)


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_faiss_batch_path_equals_blocked_path(monkeypatch, metric):
    """Batches take FAISS's candidates; the result must equal the numpy blocked path exactly,
    duplicates and ties included."""
    import repspace.core.exact as ex

    rng = np.random.default_rng(7)
    base = rng.standard_normal((3000, 24)).astype(np.float32)
    base[1500:1600] = base[100:200]  # exact duplicates far apart
    base[2999] = base[5]
    queries = np.concatenate([base[:40] + 0.01, rng.standard_normal((60, 24)).astype(np.float32)])
    assert len(queries) >= ex.FAISS_MIN_QUERIES
    fast = ex.exact_search(queries, base, 10, metric)
    monkeypatch.setattr(ex, "FAISS_MIN_QUERIES", 10**9)
    slow = ex.exact_search(queries, base, 10, metric)
    np.testing.assert_array_equal(fast[1], slow[1])
    np.testing.assert_array_equal(fast[0], slow[0])


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_one_query_scan_equals_blocked_path(monkeypatch, metric):
    """One query takes FAISS's one-thread scan; every answer equals the numpy blocked path's,
    duplicates, ties and copies perturbed by 1e-6 included."""
    import faiss

    import repspace.core.exact as ex

    rng = np.random.default_rng(11)
    base = rng.standard_normal((2000, 24)).astype(np.float32)
    base[1000:1100] = base[100:200]  # exact duplicates far apart
    base[1999] = base[5]
    queries = np.concatenate([base[:30] + 0.01, base[:30] + 1e-6, rng.standard_normal((30, 24)).astype(np.float32)])
    before = faiss.omp_get_max_threads()
    fast = [ex.exact_search(q, base, k, metric) for q in queries for k in (1, 10)]
    assert faiss.omp_get_max_threads() == before  # the calling thread's setting is restored
    monkeypatch.setattr(ex, "ONE_QUERY_SCAN_MAX", 0)
    slow = [ex.exact_search(q, base, k, metric) for q in queries for k in (1, 10)]
    for (fs, fi), (ss, si) in zip(fast, slow):
        np.testing.assert_array_equal(fi, si)
        np.testing.assert_array_equal(fs, ss)
