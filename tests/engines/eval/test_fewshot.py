"""Few-shot probes (FEET): the sampler draws exactly k per class, each probe is scikit-learn's own fit on the drawn
rows, and the probe on every label is the classification task's probe (its 2-fold score, fold by fold)."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval.fewshot import few_shot, parse_counts, sample_shots
from repspace.engines.eval.labels import LabelledTexts, classification

pytestmark = [pytest.mark.numerics, pytest.mark.usefixtures("one_blas_thread")]  # compares floats with scikit-learn's


def test_the_sampler_draws_exactly_k_of_each_class_without_repeats_and_is_seeded(digit_halves):
    _, y, _, _ = digit_halves
    for k in (1, 4, 16):
        rows = sample_shots(y, k, seed=(0, k, 3))
        assert len(set(rows.tolist())) == len(rows) == 10 * k
        assert np.bincount(y[rows], minlength=10).tolist() == [k] * 10
        assert np.array_equal(rows, sample_shots(y, k, seed=(0, k, 3)))
        assert not np.array_equal(rows, sample_shots(y, k, seed=(0, k, 4)))


def test_each_k_shot_probe_is_logistic_regression_fitted_on_the_drawn_rows(digit_halves):
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    x_tr, y_tr, x_te, y_te = digit_halves
    rows_4, rows_all = few_shot(x_te, y_te, train=(x_tr, y_tr), shots=4, draws=3, seed=7, bootstrap=0)
    acc, f1 = [], []
    for j in range(3):
        picked = sample_shots(y_tr, 4, seed=(7, 4, j))  # digits' labels sort as strings in numeric order
        pred = LogisticRegression(max_iter=1000).fit(x_tr[picked], y_tr[picked]).predict(x_te)
        acc.append(float(np.mean(pred == y_te)))
        f1.append(float(f1_score(y_te, pred, average="macro")))
    assert rows_4.info["accuracy_per_draw"] == acc  # the same fit: equal to the last bit
    assert rows_4.main_score == pytest.approx(np.mean(acc), abs=1e-12)
    assert rows_4.scores["f1_macro"] == pytest.approx(np.mean(f1), abs=1e-12)
    assert rows_4.scores["accuracy_std"] == pytest.approx(np.std(acc), abs=1e-12)
    assert (rows_4.scores["accuracy_draw_low"], rows_4.scores["accuracy_draw_high"]) == pytest.approx(
        tuple(np.percentile(acc, [2.5, 97.5])), abs=1e-12)
    # the test items' units: each one's share of right predictions, whose mean is the main score
    assert rows_4.units.value() == pytest.approx(rows_4.main_score, abs=1e-12)
    assert rows_4.info["n_shots_items"] == 40 and rows_all.info["shots"] == "all"


def test_the_probe_on_every_label_is_the_classification_tasks_probe(digit_halves):
    """classification(folds=2) fits the probe on one fold and scores the other; the full few-shot row on the same
    two splits gives the same two accuracies (floating-point noise of the mean only)."""
    from sklearn.model_selection import StratifiedKFold

    x, y = np.vstack([digit_halves[0], digit_halves[2]]), np.concatenate([digit_halves[1], digit_halves[3]])
    reference = classification(x, y, folds=2, seed=3, bootstrap=0)
    ours = []
    for train, test in StratifiedKFold(n_splits=2, shuffle=True, random_state=3).split(x, y):
        full = few_shot(x[test], y[test], train=(x[train], y[train]), shots=1, draws=1, bootstrap=0)[-1]
        ours.append(full.main_score)
    assert np.mean(ours) == pytest.approx(reference.main_score, abs=1e-12)


def test_the_interval_resamples_the_test_items_and_holds_the_score(digit_halves):
    x_tr, y_tr, x_te, y_te = digit_halves
    for r in few_shot(x_te, y_te, train=(x_tr, y_tr), shots="1,16", draws=4, bootstrap=300, seed=1):
        assert r.interval is not None and r.interval.n_resamples == 300
        assert r.interval.low <= r.main_score <= r.interval.high
        assert r.units.n_units == len(y_te)


def test_labelled_texts_with_an_encoder_name_the_tasks_after_the_data():
    table = {"good": [1.0, 0.1], "great": [0.9, 0.2], "fine": [0.8, 0.0], "bad": [0.1, 1.0], "awful": [0.0, 0.9],
             "poor": [0.2, 0.8]}
    encode = lambda texts: np.array([table[t] for t in texts])  # noqa: E731
    train = LabelledTexts(["good", "great", "bad", "awful"], ["pos", "pos", "neg", "neg"], "mood-train")
    test = LabelledTexts(["fine", "poor"], ["pos", "neg"], "mood")
    rows = few_shot(encode, test, train=train, shots=(1, 2), draws=2, bootstrap=0)
    assert [r.task_name for r in rows] == ["fewshot-1:mood", "fewshot-2:mood", "fewshot-all:mood"]
    assert [r.main_score for r in rows] == [1.0, 1.0, 1.0]


def test_bad_input_is_refused_before_any_fit(digit_halves):
    x_tr, y_tr, x_te, y_te = digit_halves
    with pytest.raises(InputError, match="needs a training split"):
        few_shot(x_te, y_te, train=None)
    with pytest.raises(InputError, match="the training split's labels hold 1 class"):
        few_shot(x_te, y_te, train=(x_tr[y_tr == 3], y_tr[y_tr == 3]))
    small = np.concatenate([np.flatnonzero(y_tr == 0)[:3], np.flatnonzero(y_tr == 1)])
    with pytest.raises(InputError, match="class '0' has 3 training items, fewer than the 4 shots per class"):
        few_shot(x_te, y_te, train=(x_tr[small], y_tr[small]), shots="1,4")
    with pytest.raises(InputError, match="draws"):
        few_shot(x_te, y_te, train=(x_tr, y_tr), draws=0)
    for bad in ("0,4", "a", "", "1.5"):
        with pytest.raises(InputError, match="shots"):
            parse_counts(bad)
