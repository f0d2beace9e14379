"""The per-feature variance audit (repspace.engines.analyze.feature_audit) against scikit-learn's
LinearRegression on the one-hot or numeric design, scored by r2_score's variance-weighted R², on GloVe."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from repspace.core.errors import InputError
from repspace.engines.analyze import feature_audit, feature_r2

pytestmark = pytest.mark.numerics

#: Rows per block under ``small_blocks``: 37 rows of 50 dimensions.
SMALL_BLOCK_ELEMENTS = 37 * 50


def _sklearn_r2(Y: np.ndarray, values: list, categorical: bool) -> float:
    if categorical:
        levels = sorted(set(values))
        Z = np.array([[v == lv for lv in levels[1:]] for v in values], dtype=np.float64)
    else:
        Z = np.asarray(values, dtype=np.float64)[:, None]
    pred = LinearRegression().fit(Z, Y).predict(Z)
    return float(r2_score(Y, pred, multioutput="variance_weighted"))


@pytest.mark.parametrize("blocks", ["one", "many"])
def test_glove_features_equal_sklearn_linear_regression(glove_vectors, request, blocks):
    if blocks == "many":
        request.getfixturevalue("small_blocks")
    from _data_subsets import glove_words

    ids, X = glove_words(5000)
    X = X.astype(np.float64)
    features = {"log_rank": [math.log(i + 1) for i in range(len(ids))], "length": [len(w) for w in ids],
                "initial": [w[0] for w in ids], "alpha": [w.isalpha() for w in ids],
                "sparse": [len(w) if i % 3 == 0 else None for i, w in enumerate(ids)]}
    r = feature_audit(X, features)
    got = {f.feature: f for f in r.features}
    for name, values in features.items():
        rows = [i for i, v in enumerate(values) if v is not None]
        cat = name in ("initial", "alpha")
        ref = _sklearn_r2(X[rows], [values[i] for i in rows], cat)
        assert got[name].r2 == pytest.approx(ref, abs=1e-8), name
        assert got[name].kind == ("categorical" if cat else "numeric")
        assert got[name].n == len(rows)
    assert got["initial"].df == len({w[0] for w in ids}) - 1
    assert got["sparse"].chance_r2 == pytest.approx(1 / (got["sparse"].n - 1), abs=1e-9)
    assert [f.r2 for f in r.features] == sorted((f.r2 for f in r.features), reverse=True)
    assert got["log_rank"].r2 > 10 * got["log_rank"].chance_r2  # frequency is strongly represented in GloVe


def test_numeric_as_categorical_and_the_adjusted_r2():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, 200)
    X = rng.standard_normal((200, 6)) + np.eye(6)[labels] * 2.0
    r = feature_audit(X, {"k": labels.tolist()}, categorical=["k"])
    f = r.features[0]
    ref = _sklearn_r2(X, labels.tolist(), True)
    assert f.kind == "categorical" and f.levels == 4 and f.df == 3
    assert f.r2 == pytest.approx(ref, abs=1e-10)
    assert f.adjusted_r2 == pytest.approx(1 - (1 - ref) * 199 / 196, abs=1e-8)
    # As a number the same labels explain less: one slope cannot place four one-hot clusters.
    assert feature_audit(X, {"k": labels.tolist()}).features[0].r2 < f.r2


def test_random_features_sit_at_the_chance_level():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2000, 20))
    draws = [feature_r2(X, rng.integers(0, 10, 2000).astype(str).tolist(), categorical=True)[0] for _ in range(30)]
    assert np.mean(draws) == pytest.approx(9 / 1999, rel=0.15)


@pytest.mark.parametrize("features, kwargs, fragment", [
    ({}, {}, "at least one feature"),
    ({"a": [1.0, 2.0]}, {}, "2 values for 4 rows"),
    ({"a": [1.0, None, None, None]}, {}, "a fit needs 3"),
    ({"a": ["x", "x", "x", "x"]}, {}, "one value"),
    ({"a": [1.0, 1.0, 1.0, 1.0]}, {}, "one value"),
    ({"a": [1.0, "x", 2.0, 3.0]}, {}, "mixes numbers and text"),
    ({"a": [1.0, float("nan"), 2.0, 3.0]}, {}, "NaN"),
    ({"a": [1.0, 2.0, 2.0, 3.0]}, {"categorical": ["b"]}, "not one of the features"),
])
def test_bad_input_is_one_clear_error(features, kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        feature_audit(np.random.default_rng(0).standard_normal((4, 3)), features, **kwargs)
