"""repspace.engines.geometry.isotropy against direct all-pairs / PCA computations, real GloVe vectors and degenerate input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _reference_math import unit

from repspace.core.errors import InputError
from repspace.engines.geometry.isotropy import (
    isoscore,
    isotropy,
    mean_cosine,
    rogue_dimensions,
    top_pc_share,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


#: Elements per block under the ``small_blocks`` fixture (tests/engines/conftest.py): a few rows.
SMALL_BLOCK_ELEMENTS = 100


# Independent computations -----------------------------------------------------------------------------------------


def direct_mean_cosine(X: np.ndarray) -> float:
    U = unit(X)
    C = U @ U.T
    return float(C[np.triu_indices(len(X), 1)].mean())


def blocked_all_pairs_mean_cosine(X: np.ndarray, rows: int = 1000) -> float:
    """All n² cosines, one block of rows at a time, minus the diagonal."""
    U = unit(X)
    total = sum(float((U[a:a + rows] @ U.T).sum()) for a in range(0, len(U), rows))
    total -= float(np.einsum("ij,ij->", U, U))
    return total / (len(U) * (len(U) - 1))


def direct_shares(X: np.ndarray) -> np.ndarray:
    """c_j = mean over pairs i<k of x̂_ij x̂_kj, over the mean cosine, by looping the pairs."""
    U = unit(X)
    i, k = np.triu_indices(len(X), 1)
    per_dim = (U[i] * U[k]).mean(axis=0)
    return per_dim / per_dim.sum()


def reference_isoscore(X: np.ndarray) -> float:
    """The steps of bcbi-edu/p_eickhoff_isoscore's IsoScore.py on a (dim × points) array, as written there."""
    from sklearn.decomposition import PCA

    points = np.asarray(X, dtype=np.float64).T  # the reference takes columns as points
    pca = PCA(n_components=points.shape[0])
    points_pca = pca.fit_transform(points.T).T
    n = points_pca.shape[0]
    cov_diag = np.cov(points_pca)[np.diag_indices(n)]
    normal = cov_diag * np.sqrt(n) / np.linalg.norm(cov_diag)
    defect = np.linalg.norm(normal - np.ones(n)) / np.sqrt(2 * (n - np.sqrt(n)))
    return float(((n - defect**2 * (n - np.sqrt(n))) ** 2 - n) / (n * (n - 1)))


def cloud(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) * np.linspace(2.0, 0.2, d) + rng.standard_normal(d)


# Mean cosine ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d", [(2, 3), (57, 9), (300, 40)])
def test_mean_cosine_exact_matches_all_pairs(n: int, d: int, small_blocks: None) -> None:
    X = cloud(n, d)
    e = mean_cosine(X)
    assert e.exact and e.n_pairs == n * (n - 1) // 2
    assert e.value == pytest.approx(direct_mean_cosine(X), abs=1e-12)
    assert e.low == e.value == e.high


def test_mean_cosine_zero_rows_and_duplicates() -> None:
    X = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 3.0]])
    assert mean_cosine(X).value == pytest.approx(direct_mean_cosine(X), abs=1e-15)  # 1/6
    assert mean_cosine(np.tile([[2.0, -1.0]], (5, 1))).value == pytest.approx(1.0)
    assert mean_cosine(np.zeros((4, 3))).value == 0.0
    assert mean_cosine([[1.0], [-2.0], [3.0]]).value == pytest.approx(-1 / 3)  # d = 1


def test_mean_cosine_sampled_on_small_data() -> None:
    X = cloud(200, 10)
    e = mean_cosine(X, exact_max=0, pairs=20_000, seed=3)
    assert not e.exact and e.n_pairs == 20_000
    assert e.low < e.value < e.high and e.high - e.low < 0.05
    assert e.low <= direct_mean_cosine(X) <= e.high
    assert mean_cosine(X, exact_max=0, pairs=20_000, seed=3) == e  # seeded
    assert mean_cosine(X, exact_max=0, pairs=20_000, seed=4) != e


def test_mean_cosine_sampled_intervals_cover_the_exact_value_on_glove(glove8000: np.ndarray) -> None:
    exact = mean_cosine(glove8000, exact_max=10_000)
    assert exact.exact and exact.n_pairs == 8000 * 7999 // 2
    assert exact.value == pytest.approx(blocked_all_pairs_mean_cosine(glove8000), abs=1e-9)
    covered = 0
    for seed in range(20):
        e = mean_cosine(glove8000, seed=seed)  # n > 5000: sampled by default
        assert not e.exact and e.n_pairs == 100_000
        assert e.high - e.low < 0.01
        covered += e.low <= exact.value <= e.high
    assert covered >= 16  # a 95% interval; P(≤ 15 of 20) < 0.3%


# Top PC share and IsoScore ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n, d", [(400, 12), (6, 12)])
def test_top_pc_share_matches_covariance_eigenvalues(n: int, d: int, small_blocks: None) -> None:
    X = cloud(n, d)
    lam = np.linalg.eigvalsh(np.cov(X.T))
    assert top_pc_share(X) == pytest.approx(lam.max() / lam.sum(), rel=1e-9)


@pytest.mark.parametrize("n, d", [(300, 2), (300, 7), (1000, 50)])
def test_isoscore_matches_the_reference_steps(n: int, d: int) -> None:
    X = cloud(n, d, seed=d)
    assert isoscore(X) == pytest.approx(reference_isoscore(X), abs=1e-9)


def test_isoscore_on_real_vectors_matches_the_reference(glove8000: np.ndarray) -> None:
    assert isoscore(glove8000[:3000]) == pytest.approx(reference_isoscore(glove8000[:3000]), abs=1e-9)


def test_isoscore_isotropic_gaussian_is_near_one_and_rank_one_near_zero() -> None:
    rng = np.random.default_rng(5)
    assert isoscore(rng.standard_normal((20_000, 10))) > 0.97
    line = rng.standard_normal((2000, 1)) @ rng.standard_normal((1, 10)) + rng.standard_normal(10)
    assert isoscore(line) < 1e-6
    assert isoscore(line + 1e-3 * rng.standard_normal((2000, 10))) < 0.01


def test_isoscore_with_fewer_points_than_dimensions_counts_unused_dimensions() -> None:
    X = cloud(5, 20)  # 4 non-zero eigenvalues among 20
    lam = np.zeros(20)
    lam[:4] = np.sort(np.linalg.eigvalsh(np.cov(X.T)))[::-1][:4]
    d = 20
    sigma = math.sqrt(d) * lam / np.linalg.norm(lam)
    delta2 = np.sum((sigma - 1) ** 2) / (2 * (d - math.sqrt(d)))
    expected = ((d - delta2 * (d - math.sqrt(d))) ** 2 - d) / (d * (d - 1))
    assert isoscore(X) == pytest.approx(expected, abs=1e-9)
    assert 0.0 <= isoscore(X) < 0.2


def test_degenerate_covariance() -> None:
    const = np.tile([[1.0, 2.0, 3.0]], (4, 1))
    assert isoscore(const) == 0.0 and top_pc_share(const) == 1.0
    assert isoscore([[1.0, 2.0]]) == 0.0 and top_pc_share([[1.0, 2.0]]) == 1.0  # n = 1
    col = np.arange(6.0)[:, None]
    assert isoscore(col) == 1.0 and top_pc_share(col) == 1.0  # d = 1
    assert isoscore(np.zeros((3, 1))) == 0.0


# Rogue dimensions ---------------------------------------------------------------------------------------------


def test_rogue_shares_match_the_pairwise_definition(small_blocks: None) -> None:
    X = cloud(80, 6)
    r = rogue_dimensions(X)
    np.testing.assert_allclose(r.shares, direct_shares(X), rtol=1e-9, atol=1e-12)
    assert r.threshold == 0.5
    expected = [j for j in np.argsort(-direct_shares(X), kind="stable") if direct_shares(X)[j] > 0.5]
    assert [d.dim for d in r.dimensions] == expected
    for d in r.dimensions:
        assert d.variance == pytest.approx(np.var(X[:, d.dim]), rel=1e-10)


def test_rogue_dimension_injected_with_a_large_mean_is_found_first() -> None:
    rng = np.random.default_rng(6)
    X = rng.standard_normal((2000, 64))
    X[:, 41] += 8.0
    X[:, 3] += 3.0
    r = rogue_dimensions(X)
    assert [d.dim for d in r.dimensions] == [41, 3]
    assert r.dimensions[0].share > 0.8 > r.dimensions[1].share > 3 / 64
    assert r.shares.sum() == pytest.approx(1.0)
    assert r.dimensions[0].variance == pytest.approx(1.0, abs=0.1)
    assert rogue_dimensions(X, threshold=0.5).dimensions == r.dimensions[:1]


def test_rogue_dimensions_on_glove_are_few_and_sorted(glove8000: np.ndarray) -> None:
    r = rogue_dimensions(glove8000)
    shares = [d.share for d in r.dimensions]
    assert 0 < len(shares) < 10 and shares == sorted(shares, reverse=True)


def test_rogue_with_zero_mean_cosine_lists_nothing() -> None:
    r = rogue_dimensions([[1.0, 0.0], [0.0, 1.0]])
    assert r.dimensions == () and (r.shares == 0).all()
    assert rogue_dimensions(np.zeros((3, 4))).dimensions == ()


def test_rogue_with_negative_mean_cosine_still_sums_to_one() -> None:
    X = np.array([[1.0, 0.1], [-1.0, 0.1]])
    r = rogue_dimensions(X)
    np.testing.assert_allclose(r.shares, direct_shares(X), rtol=1e-12)
    assert r.shares.sum() == pytest.approx(1.0)


# The bundle ----------------------------------------------------------------------------------------------------------


def test_isotropy_bundle_matches_the_functions_and_serialises(glove8000: np.ndarray) -> None:
    X = glove8000[:3000]
    r = isotropy(X)
    assert r.mean_cosine == mean_cosine(X)
    assert r.top_pc_share == pytest.approx(top_pc_share(X), rel=1e-12)
    assert r.isoscore == pytest.approx(isoscore(X), rel=1e-12)
    assert r.rogue_dimensions == rogue_dimensions(X)
    np.testing.assert_allclose(r.variances, X.astype(np.float64).var(axis=0), rtol=1e-9)
    d = r.to_dict()
    assert set(d) == {"isotropy.mean_cosine", "isotropy.top_pc_share", "isotropy.isoscore",
                      "isotropy.rogue_dimensions", "isotropy.rogue_threshold", "isotropy.dimension_variances"}
    assert set(d["isotropy.mean_cosine"]) == {"value", "low", "high", "exact", "n_pairs"}
    json.dumps(d, allow_nan=False)
    assert "isoscore=" in repr(r)
    big = isotropy(glove8000)  # sampled mean cosine above 5000 rows
    assert not big.mean_cosine.exact and big.mean_cosine == mean_cosine(glove8000)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_extreme_scales(scale: float) -> None:
    X = cloud(100, 8)
    a, b = isotropy(X), isotropy(X * scale)
    assert b.mean_cosine.value == pytest.approx(a.mean_cosine.value, rel=1e-9)
    assert b.isoscore == pytest.approx(a.isoscore, rel=1e-9)
    assert b.top_pc_share == pytest.approx(a.top_pc_share, rel=1e-9)
    assert np.isfinite(b.variances).all()
    json.dumps(b.to_dict(), allow_nan=False)


def test_errors() -> None:
    with pytest.raises(InputError, match="at least 2"):
        mean_cosine([[1.0, 2.0]])
    with pytest.raises(InputError, match="at least 2"):
        isotropy([[1.0, 2.0]])
    with pytest.raises(InputError, match="pairs"):
        mean_cosine(np.eye(3), pairs=1)
    with pytest.raises(InputError, match="exact_max"):
        mean_cosine(np.eye(3), exact_max=-1)
    with pytest.raises(InputError, match="threshold"):
        rogue_dimensions(np.eye(3), threshold=float("nan"))
    with pytest.raises(InputError, match="NaN"):
        isoscore([[1.0, np.nan], [0.0, 1.0]])
