"""kNN classification by retrieval (MINERS): the votes are scikit-learn's KNeighborsClassifier on the same vectors,
a tied majority goes to the nearest tied label as MINERS' ``Counter.most_common`` does, and the scores are
scikit-learn's metrics of those predictions."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval.knn_classify import knn_classification, knn_predict

pytestmark = [pytest.mark.numerics, pytest.mark.usefixtures("one_blas_thread")]  # compares floats with scikit-learn's


def _miners_vote(x_train, y_train, x_test, k, metric):
    """MINERS' classification.py, written out: rank the training items by distance, Counter the k nearest labels,
    take most_common()[0] (a tie: the label met first down the ranking)."""
    from sklearn.metrics import pairwise_distances

    dist = pairwise_distances(x_test.astype(np.float64), x_train.astype(np.float64), metric=metric)
    return np.array([Counter(y_train[np.argsort(row, kind="stable")[:k]].tolist()).most_common()[0][0]
                     for row in dist])


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
@pytest.mark.parametrize("k", [1, 5, 10])
def test_majority_vote_is_sklearns_uniform_vote_and_miners_on_ties(digit_halves, metric, k):
    from sklearn.neighbors import KNeighborsClassifier

    x_tr, y_tr, x_te, _ = digit_halves
    pred, tied = knn_predict(x_tr, y_tr, x_te, k, metric=metric, return_ties=True)
    sk = KNeighborsClassifier(n_neighbors=k, metric=metric, algorithm="brute").fit(x_tr, y_tr).predict(x_te)
    assert np.array_equal(pred[~tied], sk[~tied])
    assert np.array_equal(pred, _miners_vote(x_tr, y_tr, x_te, k, metric))
    if k == 1:
        assert not tied.any()


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_distance_vote_is_sklearns_distance_weights(digit_halves, metric):
    from sklearn.neighbors import KNeighborsClassifier

    x_tr, y_tr, x_te, _ = digit_halves
    for k in (5, 10):
        sk = KNeighborsClassifier(n_neighbors=k, metric=metric, weights="distance", algorithm="brute")
        assert np.array_equal(knn_predict(x_tr, y_tr, x_te, k, metric=metric, vote="distance"),
                              sk.fit(x_tr, y_tr).predict(x_te))


def test_a_tie_goes_to_the_nearest_where_sklearn_takes_the_smallest_class():
    from sklearn.neighbors import KNeighborsClassifier

    x, y, query = np.array([[0.0], [1.0], [3.0]]), np.array([1, 0, 0]), np.array([[0.4]])
    pred, tied = knn_predict(x, y, query, 2, metric="euclidean", return_ties=True)
    assert pred.tolist() == [1] and tied.tolist() == [True]
    assert KNeighborsClassifier(n_neighbors=2).fit(x, y).predict(query).tolist() == [0]
    # an exact match takes the whole distance-weighted vote (as scikit-learn)
    assert knn_predict(x, np.array([1, 0, 0]), np.array([[1.0]]), 3, metric="euclidean", vote="distance") == [0]


def test_scores_are_sklearns_metrics_of_the_predictions_with_intervals_over_test_items(digit_halves):
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    x_tr, y_tr, x_te, y_te = digit_halves
    results = knn_classification(x_te, y_te, train=(x_tr, y_tr), ks="1,5", bootstrap=300, seed=2)
    assert [r.task_name for r in results] == ["knn-1", "knn-5"]
    for r, k in zip(results, (1, 5), strict=True):
        pred = knn_predict(x_tr, y_tr, x_te, k)
        assert r.main_score == pytest.approx(accuracy_score(y_te, pred), abs=1e-12)
        assert r.scores["f1_macro"] == pytest.approx(f1_score(y_te, pred, average="macro"), abs=1e-12)
        assert r.scores["precision_macro"] == pytest.approx(precision_score(y_te, pred, average="macro"), abs=1e-12)
        assert r.scores["recall_macro"] == pytest.approx(recall_score(y_te, pred, average="macro"), abs=1e-12)
        assert r.units.value() == pytest.approx(r.main_score, abs=1e-12) and r.units.n_units == len(y_te)
        assert r.interval.low <= r.main_score <= r.interval.high and r.interval.n_resamples == 300
        f1 = r.info["f1_macro_interval"]
        assert f1["low"] <= r.scores["f1_macro"] <= f1["high"]
        assert (r.info["k"], r.info["metric"], r.info["vote"], r.info["n_train"]) == (k, "cosine", "majority", 899)


def test_a_class_never_predicted_scores_zero_f1_as_sklearn(digit_halves):
    """The bootstrap's macro F1 is written out with bincount; scikit-learn's, on predictions that miss classes."""
    from sklearn.metrics import f1_score

    x_tr, y_tr, x_te, y_te = digit_halves
    keep = y_tr < 5  # the training split knows 5 of the 10 classes: the others are never predicted
    (r,) = knn_classification(x_te, y_te, train=(x_tr[keep], y_tr[keep]), ks=3, bootstrap=0)
    pred = knn_predict(x_tr[keep], y_tr[keep], x_te, 3)
    assert r.scores["f1_macro"] == pytest.approx(f1_score(y_te, pred, average="macro", zero_division=0), abs=1e-12)


def test_bad_input_is_one_error(digit_halves):
    x_tr, y_tr, x_te, y_te = digit_halves
    with pytest.raises(InputError, match="needs a training split"):
        knn_classification(x_te, y_te, train=None)
    with pytest.raises(InputError, match="1 class"):
        knn_classification(x_te, y_te, train=(x_tr[y_tr == 1], y_tr[y_tr == 1]))
    with pytest.raises(InputError, match="k=12 neighbours, but the training split holds 11 items"):
        knn_classification(x_te, y_te, train=(x_tr[:11], y_tr[:11]), ks="1,12")
    with pytest.raises(InputError, match="metric"):
        knn_classification(x_te, y_te, train=(x_tr, y_tr), metric="manhattan")
    with pytest.raises(InputError, match="vote"):
        knn_classification(x_te, y_te, train=(x_tr, y_tr), vote="softmax")
