"""Bootstrap intervals on cosine comparisons against scipy.stats.bootstrap (percentile method, same seed), and the
spread-out statistics against a brute-force all-pairs computation and the closed form for random directions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap

from repspace.core.errors import InputError
from repspace.engines.analyze import similarity_ci, spread_out


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def _unit(X: np.ndarray) -> np.ndarray:
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.fixture()
def sets(glove_vectors) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three word sets of real GloVe vectors (rows 0-7, 100-111, 200-205), unit rows."""
    X = _unit(np.asarray(glove_vectors[:300], np.float64))
    return X[0:8], X[100:112], X[200:206]


def test_items_intervals_equal_scipy_bootstrap_percentile(sets):
    A, B, C = sets
    r = similarity_ci(A, B, C, resamples=400, level=0.9, seed=7)

    def stat_ab(ia, ib, ic):  # scipy resamples every sample, in order: c's draw is made though unused
        return _cos(A[ia].mean(0), B[ib].mean(0))

    def stat_ac(ia, ib, ic):
        return _cos(A[ia].mean(0), C[ic].mean(0))

    def stat_diff(ia, ib, ic):
        return stat_ab(ia, ib, ic) - stat_ac(ia, ib, ic)

    data = (np.arange(len(A)), np.arange(len(B)), np.arange(len(C)))
    for stat, got in ((stat_ab, r.cos_ab), (stat_ac, r.cos_ac), (stat_diff, r.difference)):
        ref = bootstrap(data, stat, vectorized=False, paired=False, n_resamples=400, confidence_level=0.9,
                        method="percentile", rng=np.random.default_rng(7))
        lo, hi = ref.confidence_interval
        assert got.low == pytest.approx(lo, abs=1e-10)
        assert got.high == pytest.approx(hi, abs=1e-10)
        assert got.std == pytest.approx(ref.standard_error, abs=1e-10)
        assert got.estimate == pytest.approx(stat(*data), abs=1e-12)
    # the flip share from scipy's own bootstrap distribution of the difference
    dist = bootstrap(data, stat_diff, vectorized=False, paired=False, n_resamples=400, method="percentile",
                     rng=np.random.default_rng(7)).bootstrap_distribution
    assert r.flip_share == pytest.approx(float(np.mean(np.sign(dist) != np.sign(r.difference.estimate))),
                                         abs=1e-12)


def test_dimension_intervals_equal_scipy_bootstrap_over_coordinates(sets):
    A, B, _ = sets
    a, b = A.mean(0), B.mean(0)
    r = similarity_ci(a, b, over="dimensions", resamples=300, seed=3)
    ref = bootstrap((np.arange(len(a)),), lambda j: _cos(a[j], b[j]), vectorized=False, n_resamples=300,
                    method="percentile", rng=np.random.default_rng(3))
    assert (r.cos_ab.low, r.cos_ab.high) == pytest.approx(tuple(ref.confidence_interval), abs=1e-10)


def test_fixed_vectors_are_not_resampled_and_identical_sets_have_zero_width():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 5))
    r = similarity_ci(A, np.ones(5), A[0], resamples=100)
    assert r.sizes == (6, 1, 1)
    same = similarity_ci(np.tile(A[0], (4, 1)), A[1], resamples=50)  # every resample is the same mean
    assert same.cos_ab.low == same.cos_ab.high == same.cos_ab.estimate
    assert same.cos_ab.std == 0.0


def test_coverage_of_a_known_mean_direction():
    """Sets drawn around known directions: the 95% interval on cos(ā, b̄) covers the population value (the cosine
    of the true means, approached as the sets grow) in most of 60 repetitions."""
    rng = np.random.default_rng(1)
    mu_a, mu_b = np.array([1.0, 0.0, 0.0]), np.array([0.6, 0.8, 0.0])
    covered = 0
    for _ in range(60):
        A = mu_a + 0.2 * rng.standard_normal((200, 3))
        B = mu_b + 0.2 * rng.standard_normal((200, 3))
        r = similarity_ci(A, B, resamples=300, seed=int(rng.integers(1 << 30)), normalize=False)
        covered += r.cos_ab.low <= _cos(mu_a, mu_b) <= r.cos_ab.high
    assert covered >= 50  # about 57 expected; fails when the interval is centred wrongly or far too narrow


def test_spread_out_equals_all_pairs_and_closed_form(glove_vectors):
    X = np.asarray(glove_vectors[:400], np.float64)
    s = spread_out(X)
    U = _unit(X)
    cos = (U @ U.T)[np.triu_indices(len(U), 1)]
    assert s.exact and s.n_pairs == len(cos)
    assert s.mean == pytest.approx(cos.mean(), abs=1e-10)
    assert s.second_moment == pytest.approx((cos ** 2).mean(), abs=1e-10)
    assert s.d_second_moment == pytest.approx(50 * (cos ** 2).mean(), abs=1e-9)
    # random directions: E[cos] = 0, E[cos²] = 1/d exactly; sampled estimate within 4 standard errors
    d = 128
    R = np.random.default_rng(2).standard_normal((3000, d))
    r = spread_out(R, pairs=100_000, seed=1)
    assert not r.exact and r.n_pairs == 100_000
    se_m2 = np.sqrt(2 * (d - 1) / (d * d * (d + 2)) / 100_000) * 2  # Var(cos²) of the Beta law; pairs share rows
    assert abs(r.second_moment - 1 / d) < 4 * se_m2
    assert abs(r.mean) < 4 / np.sqrt(d * 100_000)
    # GloVe is anisotropic: its d · E[cos²] is well above 1
    assert s.d_second_moment > 2


@pytest.mark.parametrize("call, fragment", [
    (lambda: similarity_ci(np.ones((3, 4)), np.ones((3, 5))), "dimensions"),
    (lambda: similarity_ci(np.ones((3, 4)), np.ones((3, 4)), over="words"), "over must be one of"),
    (lambda: similarity_ci(np.ones((3, 4)), np.ones((3, 4)), resamples=1), "resamples"),
    (lambda: similarity_ci(np.ones((3, 4)), np.ones((3, 4)), level=1.0), "level"),
    (lambda: similarity_ci(np.full((3, 4), np.nan), np.ones((3, 4))), "finite"),
    (lambda: spread_out(np.zeros((5, 3))), "at least 2 items"),
])
def test_bad_input_is_one_error_line(call, fragment):
    with pytest.raises(InputError, match=fragment) as e:
        call()
    assert "\n" not in str(e.value)
