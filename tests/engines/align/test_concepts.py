"""Text-to-concept scoring: cosines against scipy's cdist, labels by argmax, the probe against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from repspace.core.errors import InputError
from repspace.engines.align import concept_scores, probe_accuracy, zero_shot_labels


def test_scores_are_one_minus_scipy_cosine_distances_and_labels_their_argmax():
    rng = np.random.default_rng(0)
    Z, C = rng.normal(size=(50, 8)), rng.normal(size=(3, 8))
    np.testing.assert_allclose(concept_scores(Z, C), 1.0 - cdist(Z, C, "cosine"), atol=1e-12)
    names = np.array(["a", "b", "c"])
    expected = names[np.argmin(cdist(Z, C, "cosine"), axis=1)]
    assert zero_shot_labels(Z, C, names).tolist() == expected.tolist()


def test_probe_equals_standardised_sklearn_logistic_regression():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 6))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, "pos", "neg")
    scaler = StandardScaler().fit(X[:200])
    clf = LogisticRegression(max_iter=2000).fit(scaler.transform(X[:200]), y[:200])
    expected = np.mean(clf.predict(scaler.transform(X[200:])) == y[200:])
    assert probe_accuracy(X[:200], y[:200], X[200:], y[200:]) == pytest.approx(expected)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: concept_scores(np.ones((2, 3)), np.ones((2, 4))), "both must be in the text encoder's space"),
    (lambda: zero_shot_labels(np.ones((2, 3)), np.ones((2, 3)), ["a"]), "need as many labels"),
    (lambda: probe_accuracy(np.ones((4, 2)), ["a"] * 4, np.ones((2, 2)), ["a", "b"]), "two classes"),
])
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(InputError) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value)
