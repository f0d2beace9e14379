"""The intervals of analogy, classification and pair classification, each equal to ``bootstrap_interval``
run on the task's own units computed independently here (scikit-learn's predictions and average precision);
clustering has none."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval.labels import classification, clustering
from repspace.engines.eval.pairclass import PairLabels, pairclass
from repspace.engines.eval.uncertainty import (
    BATCH_ELEMENTS,
    average_precision_statistic,
    bootstrap_interval,
    mean_statistic,
)
from repspace.engines.eval.words import Analogies, WordVectors, analogy

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """One BLAS thread: on a busy runner, threaded BLAS makes the tiny logistic-regression fits much slower."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def _same(a, b) -> None:
    assert a is not None and b is not None
    assert a.low == pytest.approx(b.low, abs=1e-12) and a.high == pytest.approx(b.high, abs=1e-12)
    assert (a.level, a.n_resamples) == (b.level, b.n_resamples)


# ---------------------------------------------------------------------------- average precision


def test_average_precision_statistic_is_sklearns_row_by_row_with_ties():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, size=(30, 120))
    scores = np.round(rng.normal(size=(30, 120)) + labels, 1)  # rounded: many tied scores
    ours = average_precision_statistic(labels, scores, axis=-1)
    want = [average_precision_score(lab, s) for lab, s in zip(labels, scores)]
    np.testing.assert_allclose(ours, want, rtol=0, atol=1e-12)
    # along another axis, and on 1-d data
    np.testing.assert_allclose(average_precision_statistic(labels.T, scores.T, axis=0), want, rtol=0, atol=1e-12)
    assert average_precision_statistic(labels[0], scores[0]) == pytest.approx(want[0], abs=1e-12)
    assert math.isnan(average_precision_statistic(np.zeros(4), np.arange(4.0)))  # no positive: undefined


def test_many_units_are_resampled_in_batches_with_the_same_draws_on_both_paths():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(7)
    n = BATCH_ELEMENTS // 300 + 1  # 300 resamples do not fit in one batch
    labels = rng.integers(0, 2, n)
    scores = labels + rng.normal(0, 1.5, n)
    fast = bootstrap_interval(average_precision_statistic, labels, scores, n_resamples=300, seed=1)
    plain = bootstrap_interval(lambda lab, s: average_precision_score(lab, s), labels, scores, n_resamples=300,
                               seed=1)
    _same(fast, plain)
    assert fast.low < float(average_precision_statistic(labels, scores)) < fast.high


# ---------------------------------------------------------------------------- analogy


def test_analogy_resamples_the_answered_questions_right_or_wrong():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(30)]
    wv = WordVectors(words, rng.normal(size=(30, 4)))
    quads = [tuple(words[j] for j in rng.choice(30, 4, replace=False)) for _ in range(80)]
    # some questions made right: d = the nearest to b - a + c, found the slow way
    unit = wv.vectors / np.linalg.norm(wv.vectors, axis=1, keepdims=True)
    fixed = []
    for k, (a, b, c, d) in enumerate(quads):
        if k % 2 == 0:
            ia, ib, ic = (words.index(w) for w in (a, b, c))
            s = unit @ (unit[ib] - unit[ia] + unit[ic])
            s[[ia, ib, ic]] = -np.inf
            d = words[int(np.argmax(s))]
        fixed.append((a, b, c, d))
    questions = Analogies(fixed + [("w1", "w2", "w3", "missing")], ["s"] * 81, "toy")
    r = analogy(wv, questions, seed=4)
    # each answered question's 3CosAdd answer, right (1) or wrong (0), computed here
    correct = []
    for a, b, c, d in fixed:
        ia, ib, ic = (words.index(w) for w in (a, b, c))
        s = unit @ unit[ib] - unit @ unit[ia] + unit @ unit[ic]
        s[[ia, ib, ic]] = -np.inf
        correct.append(float(words[int(np.argmax(s))] == d))
    assert r.info["n_questions"] == 80 and r.main_score == pytest.approx(np.mean(correct), abs=1e-12)
    assert 0.4 < r.main_score < 1.0
    _same(r.interval, bootstrap_interval(mean_statistic, np.array(correct), seed=4))
    assert r.interval.low <= r.main_score <= r.interval.high
    off = analogy(wv, questions, bootstrap=0)
    assert off.interval is None and off.scores == r.scores
    with pytest.raises(InputError, match="bootstrap"):
        analogy(wv, questions, bootstrap=-1)


# ---------------------------------------------------------------------------- classification


def test_classification_resamples_each_items_held_out_prediction():
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    x, y = load_digits(return_X_y=True)
    x, y = x[:400].astype(np.float32), y[:400]
    r = classification(x, y, folds=4, seed=3)
    pred = cross_val_predict(LogisticRegression(max_iter=1000), x, y,
                             cv=StratifiedKFold(n_splits=4, shuffle=True, random_state=3))
    correct = (pred == y).astype(np.float64)
    # the pooled held-out accuracy is the mean over folds when they are the same size; stratified folds of
    # 400 items differ by an item or so, which moves it by less than an item's weight
    assert r.main_score == pytest.approx(correct.mean(), abs=1 / len(y))
    _same(r.interval, bootstrap_interval(mean_statistic, correct, seed=3))
    assert r.interval.low <= r.main_score <= r.interval.high < 1.0
    assert classification(x, y, folds=4, seed=3, bootstrap=0).interval is None
    with pytest.raises(InputError, match="bootstrap"):
        classification(x, y, bootstrap=-5)


def test_clustering_has_no_interval():
    x = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    r = clustering(x, ["a", "a", "b", "b"], seeds=1)
    assert r.interval is None and "ci_low" not in r.to_dict()["scores"]["test"][0]


# ---------------------------------------------------------------------------- pair classification


def test_pairclass_resamples_the_pairs_average_precision():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(2)
    n = 150
    labels = rng.integers(0, 2, n)
    angles = np.where(labels == 1, 0.6, 1.2) + rng.normal(0, 0.4, n)
    table = {}
    for i, angle in enumerate(angles):
        table[f"a{i}"], table[f"b{i}"] = [1.0, 0.0], [math.cos(angle), math.sin(angle)]
    pairs = PairLabels([f"a{i}" for i in range(n)], [f"b{i}" for i in range(n)], labels, "toy")
    encode = lambda texts: np.array([table[t] for t in texts])  # noqa: E731
    r = pairclass(encode, pairs, seed=6)
    cos = np.cos(angles)
    assert r.main_score == pytest.approx(average_precision_score(labels, cos), abs=1e-12)
    # the per-resample path with scikit-learn's own average precision draws the same pairs
    _same(r.interval, bootstrap_interval(lambda lab, c: average_precision_score(lab, c), labels, cos, seed=6))
    assert r.interval.low <= r.main_score <= r.interval.high
    entry = r.to_dict()["scores"]["test"][0]
    assert (entry["ci_low"], entry["ci_high"]) == (r.interval.low, r.interval.high)
    assert pairclass(encode, pairs, bootstrap=0).interval is None
    with pytest.raises(InputError, match="bootstrap"):
        pairclass(encode, pairs, bootstrap=-1)
