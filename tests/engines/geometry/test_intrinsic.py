"""Intrinsic dimension against direct n² formulas, scikit-dimension, and manifolds of known dimension."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.geometry.intrinsic import IntrinsicDimension, intrinsic_dimension, local_id, mle, twonn

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def glove(glove_vectors) -> np.ndarray:
    return np.asarray(glove_vectors[:3000], dtype=np.float64)


@pytest.fixture(scope="module")
def skdim():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import skdim  # scikit-dimension, the reference (a test dependency: missing, the tests fail)

        return skdim


def manifold(n: int, dim: int, ambient: int, seed: int) -> np.ndarray:
    """A ``dim``-d standard Gaussian linearly embedded in ``ambient`` dimensions."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, dim)) @ rng.standard_normal((dim, ambient))


# -- direct n² formulas -------------------------------------------------------------------------


def sorted_distances(X: np.ndarray) -> np.ndarray:
    x = np.asarray(X, dtype=np.float64)
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(d, np.inf)
    return np.sort(d, axis=1)


def direct_twonn(X: np.ndarray, discard: float = 0.1) -> float:
    d = sorted_distances(X)
    mu = np.sort(d[:, 1] / d[:, 0])
    n = len(mu)
    keep = int(n * (1 - discard))
    x = np.log(mu[:keep])
    y = -np.log(1 - np.arange(1, keep + 1) / n)
    return float((x * y).sum() / (x * x).sum())


def direct_local(X: np.ndarray, k: int) -> np.ndarray:
    """m_k(x) = [(1/(k−1)) Σ_{j<k} log(T_k/T_j)]⁻¹, one point at a time."""
    t = sorted_distances(X)[:, :k]
    return np.array([1.0 / (np.sum(np.log(row[-1] / row[:-1])) / (k - 1)) for row in t])


def direct_mle(X: np.ndarray, k: int) -> float:
    return float(1.0 / np.mean(1.0 / direct_local(X, k)))


# -- tests ----------------------------------------------------------------------------------------


def test_against_direct_formulas():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((400, 3)) @ rng.standard_normal((3, 7)) + 0.01 * rng.standard_normal((400, 7))
    assert twonn(X) == pytest.approx(direct_twonn(X), rel=1e-6)
    assert twonn(X, discard=0.3) == pytest.approx(direct_twonn(X, 0.3), rel=1e-6)
    assert mle(X, k=10) == pytest.approx(direct_mle(X, 10), rel=1e-6)
    np.testing.assert_allclose(local_id(X, k=10), direct_local(X, 10), rtol=1e-5)
    r = intrinsic_dimension(X, k=10)
    assert r.twonn == pytest.approx(direct_twonn(X), rel=1e-6)
    assert r.mle == pytest.approx(direct_mle(X, 10), rel=1e-6)
    np.testing.assert_allclose(r.local, direct_local(X, 10), rtol=1e-5)
    assert r.duplicates_removed == 0 and r.k == 10 and r.discard == 0.1


def test_glove_agrees_with_scikit_dimension(glove, skdim):
    X = glove[:2000]
    r = intrinsic_dimension(X)
    ref_twonn = skdim.id.TwoNN().fit(X).dimension_
    ref = skdim.id.MLE().fit(X)
    assert r.twonn == pytest.approx(ref_twonn, rel=0.01)
    assert r.mle == pytest.approx(ref.dimension_, rel=0.01)
    np.testing.assert_allclose(r.local, ref.dimension_pw_, rtol=0.01)
    assert twonn(X) == r.twonn and mle(X) == r.mle
    assert 5 < r.twonn < 20  # GloVe-50: a low intrinsic dimension


def test_known_dimension_manifold_and_scikit_dimension(skdim):
    X = manifold(2000, 5, 50, seed=1)
    r = intrinsic_dimension(X)
    assert r.twonn == pytest.approx(5.0, abs=0.4)
    assert r.mle == pytest.approx(5.0, abs=0.4)
    assert r.twonn == pytest.approx(skdim.id.TwoNN().fit(X).dimension_, rel=0.01)
    assert r.mle == pytest.approx(skdim.id.MLE().fit(X).dimension_, rel=0.01)
    # and a 12-d one is told apart
    Y = manifold(2000, 12, 50, seed=2)
    assert intrinsic_dimension(Y).twonn > 9


def test_hnsw_path_agrees_with_exact(glove):
    exact = intrinsic_dimension(glove)
    approx = intrinsic_dimension(glove, exact=False)
    assert exact.knn_method == "exact" and exact.knn_recall is None
    assert approx.knn_method == "hnsw" and approx.knn_recall >= 0.95
    assert approx.twonn == pytest.approx(exact.twonn, rel=0.02)
    assert approx.mle == pytest.approx(exact.mle, rel=0.02)
    assert np.median(np.abs(approx.local - exact.local)) < 1e-4  # same neighbours; float32 vs float64 distances


def test_duplicates_are_removed_and_counted():
    X = manifold(600, 3, 10, seed=3)
    base = intrinsic_dimension(X, k=10)
    dup_rows = [0, 5, 5, 17, 100]
    Y = np.vstack([X, X[dup_rows]])
    r = intrinsic_dimension(Y, k=10)
    assert r.duplicates_removed == 5
    assert r.twonn == pytest.approx(base.twonn, rel=1e-12)
    assert r.mle == pytest.approx(base.mle, rel=1e-12)
    assert len(r.local) == len(Y)
    np.testing.assert_array_equal(r.local[600:], base.local[dup_rows])
    np.testing.assert_array_equal(r.local[:600], base.local)
    assert twonn(Y) == pytest.approx(base.twonn, rel=1e-12)
    # duplicates first: the first occurrence is the one kept, order does not matter
    Z = np.vstack([X[dup_rows], X])
    rz = intrinsic_dimension(Z, k=10)
    assert rz.duplicates_removed == 5 and rz.twonn == pytest.approx(base.twonn, rel=1e-9)
    # -0.0 equals 0.0; zero vectors are ordinary (duplicate) points
    W = np.vstack([X, np.zeros((3, 10)), -np.zeros((1, 10))])
    assert intrinsic_dimension(W, k=10).duplicates_removed == 3


@pytest.mark.parametrize("scale", [1e-30, 1e-3, 1e6, 1e30])
def test_scale_invariant_even_at_extreme_magnitudes(scale):
    X = manifold(500, 4, 12, seed=4)
    a = intrinsic_dimension(X, k=10)
    b = intrinsic_dimension(X * scale, k=10)
    assert b.twonn == pytest.approx(a.twonn, rel=1e-4)
    assert b.mle == pytest.approx(a.mle, rel=1e-4)
    assert np.isfinite(b.local).all()


def test_one_dimensional_data():
    x = np.random.default_rng(5).random((1000, 1))
    r = intrinsic_dimension(x)
    assert r.twonn == pytest.approx(1.0, abs=0.15)
    assert r.mle == pytest.approx(1.0, abs=0.15)


def test_constant_dimensions_do_not_matter():
    X = manifold(500, 3, 6, seed=6)
    Y = np.hstack([X, np.full((500, 4), 7.0)])
    assert twonn(Y) == pytest.approx(twonn(X), rel=1e-5)
    assert mle(Y, k=10) == pytest.approx(mle(X, k=10), rel=1e-5)


def test_degenerate_inputs():
    # a regular 1-d grid: every kept ratio r₂/r₁ is 1, the TwoNN slope is infinite
    grid = np.arange(20.0)[:, None]
    with pytest.raises(InputError, match="TwoNN is undefined"):
        twonn(grid)
    # simplex vertices: every neighbour at the same distance
    simplex = np.eye(25)
    with pytest.raises(InputError, match="MLE is undefined"):
        mle(simplex)
    loc = local_id(simplex)
    assert loc.tolist() == [25.0] * 25  # the documented stand-in: the ambient dimension
    # too few distinct points
    with pytest.raises(InputError, match="at least 3 distinct points, got 2"):
        twonn(np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]))
    with pytest.raises(InputError, match="at least 21 distinct points, got 20"):
        mle(np.random.default_rng(0).standard_normal((20, 3)))
    with pytest.raises(InputError, match="at least 3 distinct points, got 1"):
        intrinsic_dimension(np.zeros((50, 4)), k=2)
    with pytest.raises(InputError, match="k must be an integer >= 2"):
        mle(np.random.default_rng(0).standard_normal((30, 3)), k=1)
    with pytest.raises(InputError, match=r"\[0, 1\)"):
        twonn(np.random.default_rng(0).standard_normal((30, 3)), discard=1.0)
    bad = np.random.default_rng(0).standard_normal((30, 3))
    bad[4, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        intrinsic_dimension(bad)


def test_discard_zero_keeps_all_but_the_last():
    X = manifold(300, 2, 5, seed=7)
    d = sorted_distances(X)
    mu = np.sort(d[:, 1] / d[:, 0])[:-1]
    n = len(mu) + 1
    y = -np.log(1 - np.arange(1, n) / n)
    x = np.log(mu)
    assert twonn(X, discard=0.0) == pytest.approx(float((x * y).sum() / (x * x).sum()), rel=1e-6)


def test_to_dict_and_repr():
    X = manifold(300, 2, 5, seed=8)
    r = intrinsic_dimension(X, k=10)
    d = r.to_dict()
    assert set(d) == {"intrinsic_dimension.twonn", "intrinsic_dimension.mle",
                      "intrinsic_dimension.duplicates_removed", "intrinsic_dimension.k",
                      "intrinsic_dimension.discard", "intrinsic_dimension.knn"}
    assert d["intrinsic_dimension.knn"] == {"method": "exact", "metric": "l2", "recall": None}
    full = r.to_dict(per_item=True)
    assert len(full["intrinsic_dimension.local"]) == 300
    assert isinstance(r, IntrinsicDimension) and "twonn=" in repr(r)
