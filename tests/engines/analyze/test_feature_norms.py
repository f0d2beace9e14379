"""Feature-norm prediction (repspace.engines.analyze.feature_norms) against scikit-learn's cross_val_predict of
the same PLSRegression and standardised RidgeCV, and on a synthetic norm set of known linear structure."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cross_decomposition import PLSRegression
from sklearn.linear_model import RidgeCV
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from repspace.core.errors import InputError
from repspace.engines.analyze import feature_norm_prediction
from repspace.engines.analyze.feature_norms import DEFAULT_ALPHAS

pytestmark = pytest.mark.numerics


def _planted(n: int = 300, d: int = 40, k: int = 6, rank: int = 3, seed: int = 0):
    """Word vectors and norms that are a rank-``rank`` linear map of them plus noise of known share."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((d, rank)) @ rng.standard_normal((rank, k))
    signal = X @ W
    noise = rng.standard_normal((n, k)) * signal.std(axis=0)  # signal and noise of equal variance: R² ≈ 0.5
    return X, signal + noise, signal


def test_equals_sklearn_cross_val_predict():
    X, Y, _ = _planted()
    r = feature_norm_prediction(X, Y, [f"f{j}" for j in range(6)], components=3, folds=5, seed=4)
    cv = KFold(5, shuffle=True, random_state=4)
    pls = cross_val_predict(PLSRegression(n_components=3), X, Y, cv=cv)
    ridge = cross_val_predict(make_pipeline(StandardScaler(), RidgeCV(alphas=DEFAULT_ALPHAS, alpha_per_target=True)),
                              X, Y, cv=cv)
    ref_pls = r2_score(Y, pls, multioutput="raw_values")
    ref_ridge = r2_score(Y, ridge, multioutput="raw_values")
    assert [s.pls_r2 for s in r.norms] == pytest.approx(ref_pls.tolist(), abs=1e-8)
    assert [s.ridge_r2 for s in r.norms] == pytest.approx(ref_ridge.tolist(), abs=1e-8)
    assert r.mean_pls_r2 == pytest.approx(ref_pls.mean(), abs=1e-8)
    assert r.pls_wins == int((ref_pls > ref_ridge).sum())


def test_known_linear_structure_is_recovered_to_its_noise_ceiling():
    X, Y, signal = _planted(n=1200)
    r = feature_norm_prediction(X, Y, components=3, folds=5)
    ceiling = 1 - ((Y - signal) ** 2).sum(axis=0) / ((Y - Y.mean(axis=0)) ** 2).sum(axis=0)  # the true map's R²
    for s, c in zip(r.norms, ceiling):
        assert s.ridge_r2 == pytest.approx(c, abs=0.05) and s.pls_r2 == pytest.approx(c, abs=0.05)
    clean = feature_norm_prediction(X, signal, components=8, folds=5)
    assert clean.mean_ridge_r2 > 0.999 and clean.mean_pls_r2 > 0.99  # PLS2's components only near the rank-3 map
    unrelated = feature_norm_prediction(X, np.random.default_rng(9).standard_normal((1200, 6)), folds=5)
    assert unrelated.mean_ridge_r2 < 0.01 and unrelated.mean_pls_r2 < 0.01


@pytest.mark.parametrize("Y, kwargs, fragment", [
    (np.ones((5, 2)), {}, "one row per word"),
    (np.full((10, 1), np.nan), {}, "NaN"),
    (np.ones((10, 1)), {}, "one value on every word"),
    (np.arange(10.0), {"norms": ["a", "b"]}, "2 norm names for 1"),
    (np.arange(10.0), {"folds": 1}, "folds"),
    (np.arange(10.0), {"alphas": []}, "penalty"),
])
def test_bad_input_is_one_clear_error(Y, kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        feature_norm_prediction(np.random.default_rng(0).standard_normal((10, 3)), Y, **kwargs)
