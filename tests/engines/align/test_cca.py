"""fit_cca: a planted shared signal, agreement with scikit-learn's CCA, whitening, signs, regularisation, errors."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.align import CCAResult, fit_cca

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def planted(n: int = 800, shared: int = 2, dx: int = 10, dy: int = 6, noise: float = 0.3, seed: int = 0):
    """Two spaces mixing ``shared`` common latent signals (plus noise) with private ones."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, shared))
    X = np.hstack([z + noise * rng.normal(size=(n, shared)), rng.normal(size=(n, dx - shared))])
    Y = np.hstack([z + noise * rng.normal(size=(n, shared)), rng.normal(size=(n, dy - shared))])
    return z, X @ rng.normal(size=(dx, dx)) + 5.0, Y @ rng.normal(size=(dy, dy)) - 2.0


def test_recovers_a_planted_shared_signal():
    z, X, Y = planted()
    r = fit_cca(X, Y)
    assert isinstance(r, CCAResult) and r.n_components == 6
    assert r.Wx.shape == (10, 6) and r.Wy.shape == (6, 6) and r.mean_x.shape == (10,)
    # latent signals have variance 1 and noise 0.09 on each side: corr = 1 / 1.09
    assert np.all(np.abs(r.correlations[:2] - 1 / 1.09) < 0.03)
    assert np.all(r.correlations[2:] < 0.15)
    assert np.all(np.diff(r.correlations) <= 0)
    # the top two canonical variates of each side span the latent signals
    for U in (r.transform_x(X, n_components=2), r.transform_y(Y, n_components=2)):
        U64 = U.astype(np.float64)
        coef, *_ = np.linalg.lstsq(np.c_[U64, np.ones(len(U64))], z, rcond=None)
        resid = z - np.c_[U64, np.ones(len(U64))] @ coef
        assert 1 - resid.var(axis=0).max() / z.var(axis=0).min() > 0.85


def test_agrees_with_scikit_learn_cca_on_a_small_problem():
    from sklearn.cross_decomposition import CCA

    _, X, Y = planted(n=400, shared=2, dx=4, dy=3, noise=0.5, seed=3)
    ours = fit_cca(X, Y, reg=0.0, n_components=2)
    sk = CCA(n_components=2, max_iter=20000, tol=1e-15).fit(X, Y)
    xs, ys = sk.transform(X, Y)
    theirs = [abs(np.corrcoef(xs[:, k], ys[:, k])[0, 1]) for k in range(2)]
    np.testing.assert_allclose(ours.correlations, theirs, atol=1e-6)
    # the same directions, up to sign and scale
    u = ours.transform_x(X).astype(np.float64)
    for k in range(2):
        assert abs(np.corrcoef(u[:, k], xs[:, k])[0, 1]) > 1 - 1e-5


def test_variates_are_whitened_and_correlate_pairwise_only():
    _, X, Y = planted(seed=1)
    r = fit_cca(X, Y, reg=0.0)
    u = (X - r.mean_x) @ r.Wx
    v = (Y - r.mean_y) @ r.Wy
    n = len(X)
    np.testing.assert_allclose(u.T @ u / (n - 1), np.eye(6), atol=1e-9)
    np.testing.assert_allclose(v.T @ v / (n - 1), np.eye(6), atol=1e-9)
    np.testing.assert_allclose(u.T @ v / (n - 1), np.diag(r.correlations), atol=1e-9)
    assert r.transform_x(X).dtype == np.float32
    np.testing.assert_allclose(r.transform_x(X), u, rtol=1e-5, atol=1e-5)


def test_signs_are_deterministic_and_follow_the_x_side():
    _, X, Y = planted(seed=2)
    a, b = fit_cca(X, Y), fit_cca(X.copy(), Y.copy())
    assert a.Wx.tobytes() == b.Wx.tobytes() and a.Wy.tobytes() == b.Wy.tobytes()
    cols = np.arange(a.n_components)
    assert np.all(a.Wx[np.abs(a.Wx).argmax(axis=0), cols] > 0)
    flipped = fit_cca(X, -Y)  # the Y side's directions flip; the X side (which fixes the sign) does not
    np.testing.assert_allclose(flipped.Wx, a.Wx, atol=1e-9)
    np.testing.assert_allclose(flipped.Wy, -a.Wy, atol=1e-9)
    assert not a.Wx.flags.writeable and not a.correlations.flags.writeable


def test_reg_is_relative_to_the_scale_and_shrinks_the_correlations():
    _, X, Y = planted(n=300, seed=4)
    base = fit_cca(X, Y, reg=1e-2)
    np.testing.assert_allclose(fit_cca(1000.0 * X, Y, reg=1e-2).correlations, base.correlations, atol=1e-10)
    assert np.all(base.correlations <= fit_cca(X, Y, reg=0.0).correlations + 1e-12)
    r = base.recipe
    assert r["method"] == "cca" and r["reg"] == 1e-2 and r["n"] == 300 and (r["d_x"], r["d_y"]) == (10, 6)
    assert r["ridge_x"] == pytest.approx(1e-2 * np.trace(np.cov(X, rowvar=False)) / 10)
    assert r["numpy_version"] == np.__version__ and len(r["x_fingerprint"]) == 64
    assert base.to_dict()["recipe"]["n_components"] == 6 and "6 components" in repr(base)


def test_fewer_items_than_dimensions_needs_reg():
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(8, 20)), rng.normal(size=(8, 5))
    with pytest.raises(InputError, match="covariance of X is singular.*reg > 0"):
        fit_cca(X, Y, reg=0.0)
    r = fit_cca(X, Y, reg=1e-3)
    assert r.n_components == 5 and np.isfinite(r.Wx).all()
    assert fit_cca(X[:4], Y[:4], reg=1e-3).n_components == 3  # at most n - 1


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((np.zeros((5, 2)), np.zeros((4, 2))), {}, "X has 5 rows and Y has 4"),
    ((np.ones((1, 2)), np.ones((1, 2))), {}, "CCA needs at least 2 shared items, got 1"),
    ((np.array([[1.0, np.nan], [0.0, 1.0], [2.0, 2.0]]), np.eye(3)), {}, "X has NaN or infinite values"),
    ((np.ones((4, 2)), np.arange(8.0).reshape(4, 2)), {}, "every row of X is the same"),
    ((np.eye(4), np.eye(4)), {"n_components": 4}, r"n_components must be an integer in \[1, 3\]"),
    ((np.eye(4), np.eye(4)), {"n_components": 0}, r"n_components must be an integer in \[1, 3\]"),
    ((np.eye(4), np.eye(4)), {"reg": -1.0}, "reg must be a non-negative number"),
    ((np.eye(4), np.eye(4)), {"reg": float("nan")}, "reg must be a non-negative number"),
])
def test_bad_input_is_one_input_error_line(args, kwargs, message):
    with pytest.raises(InputError, match=message) as info:
        fit_cca(*args, **kwargs)
    assert "\n" not in str(info.value)


def test_transform_checks_dimensions():
    _, X, Y = planted(n=100, seed=6)
    r = fit_cca(X, Y)
    with pytest.raises(InputError, match="fitted on 6 dimensions for Y; Y has 10"):
        r.transform_y(X)
    with pytest.raises(InputError, match=r"n_components must be an integer in \[1, 6\]"):
        r.transform_x(X, n_components=7)
