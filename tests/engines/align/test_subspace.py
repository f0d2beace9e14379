"""Subspace-restricted maps: against scipy's orthogonal Procrustes and scikit-learn's PCA and Ridge on the
projected data, the full-rank case against the full map, state round trip, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import orthogonal_procrustes
from sklearn.decomposition import PCA
from sklearn.linear_model import Ridge

from repspace.core.errors import InputError
from repspace.engines.align import Procrustes, SubspaceMap


def _pair(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 12)) * np.linspace(3, 0.2, 12) + 1.5
    Y = X[:, :10] @ rng.normal(size=(10, 9)) + 0.1 * rng.normal(size=(n, 9)) - 2.0
    return X, Y


def test_procrustes_between_projections_equals_scipy_on_pca_projections():
    X, Y = _pair()
    m = SubspaceMap(rank=4).fit(X, Y)
    px, py = PCA(4, svd_solver="full").fit(X), PCA(4, svd_solver="full").fit(Y)
    # the same subspaces as scikit-learn's PCA (projectors agree, so bases agree up to sign and rotation)
    np.testing.assert_allclose(m.basis_x_ @ m.basis_x_.T, px.components_.T @ px.components_, atol=1e-10)
    np.testing.assert_allclose(m.basis_y_ @ m.basis_y_.T, py.components_.T @ py.components_, atol=1e-10)
    # on the projections with repspace's bases, the map is scipy's orthogonal Procrustes
    P, Q = (X - X.mean(0)) @ m.basis_x_, (Y - Y.mean(0)) @ m.basis_y_
    R, _ = orthogonal_procrustes(P, Q)
    np.testing.assert_allclose(m.W_sub_, R, atol=1e-10)
    expected = (((X - X.mean(0)) @ m.basis_x_) @ R) @ m.basis_y_.T + Y.mean(0)
    np.testing.assert_allclose(m.transform(X), expected, atol=1e-4)  # float32 output
    assert float(m.variance_x_) == pytest.approx(px.explained_variance_ratio_.sum(), abs=1e-12)


def test_ridge_between_projections_equals_sklearn_ridge_with_the_chosen_penalty():
    X, Y = _pair()
    m = SubspaceMap(rank=5, method="ridge").fit(X, Y)
    P, Q = (X - X.mean(0)) @ m.basis_x_, (Y - Y.mean(0)) @ m.basis_y_
    from repspace.engines.align import RidgeMap

    alpha = float(RidgeMap().fit(P, Q).alpha_)
    ref = Ridge(alpha=alpha).fit(P, Q)
    np.testing.assert_allclose(m.W_sub_, ref.coef_.T, atol=1e-9)


def test_given_directions_are_orthonormalised_and_full_rank_is_the_full_map():
    X, Y = _pair()
    Y = Y[:, :9]
    X9 = X[:, :9]
    full = Procrustes().fit(X9, Y)
    sub = SubspaceMap(basis_x=np.eye(9) + 0.1, basis_y=2 * np.eye(9)).fit(X9, Y)  # span everything
    np.testing.assert_allclose(sub.basis_x_.T @ sub.basis_x_, np.eye(9), atol=1e-12)
    np.testing.assert_allclose(sub.W_, full.W_, atol=1e-9)
    np.testing.assert_allclose(sub.transform(X9), full.transform(X9), atol=1e-4)
    assert float(sub.variance_x_) == pytest.approx(1.0)


def test_state_round_trip_transforms_the_same():
    X, Y = _pair()
    m = SubspaceMap(rank=3).fit(X, Y)
    back = SubspaceMap.from_state(m.get_params(), m.state())
    np.testing.assert_array_equal(back.transform(X[:20]), m.transform(X[:20]))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "needs rank"),
    ({"rank": 10}, "rank 10 is more than min(d_x, d_y, pairs − 1) = 9"),
    ({"rank": 2, "method": "cca"}, "method"),
    ({"basis_x": np.ones((2, 12)), "basis_y": np.eye(9)[:2]}, "not linearly independent"),
    ({"basis_x": np.eye(5)[:2], "basis_y": np.eye(9)[:2]}, "basis_x must be k directions of 12 numbers"),
])
def test_bad_input_is_one_clear_error(kwargs, message):
    X, Y = _pair()
    with pytest.raises(InputError) as e:
        SubspaceMap(**kwargs).fit(X, Y)
    assert message in str(e.value) and "\n" not in str(e.value)
