"""Similarity thresholds against independent references: the random-pair quantile against numpy.quantile,
Youden's cut against scikit-learn's ROC curve (argmax of TPR - FPR), and the bootstrap intervals' coverage of
the true thresholds of two normal distributions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from repspace import InputError
from repspace.evaluate import SimilarityThreshold, similarity_threshold

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _sklearn_youden(related: np.ndarray, random: np.ndarray) -> tuple[float, float, float, float]:
    from sklearn.metrics import roc_curve

    y = np.r_[np.ones(len(related)), np.zeros(len(random))]
    fpr, tpr, thresholds = roc_curve(y, np.r_[related, random])
    i = int(np.argmax(tpr - fpr))
    return float(thresholds[i]), float(tpr[i] - fpr[i]), float(tpr[i]), float(fpr[i])


@pytest.mark.parametrize("seed", range(40))
def test_the_cuts_equal_numpy_s_quantile_and_sklearn_s_roc_argmax(seed):
    rng = np.random.default_rng(seed)
    # rounded to 2 decimals: many tied similarities, within and across the two kinds
    related = np.round(rng.normal(0.5, 0.2, rng.integers(2, 200)), 2)
    random = np.round(rng.normal(0.25, 0.2, rng.integers(2, 300)), 2)
    q = float(rng.uniform(0.05, 0.99))
    t = similarity_threshold(related, random, quantile=q, n_resamples=0)
    assert t.random_cut == np.quantile(random, q)  # bit for bit: numpy's own interpolation
    assert t.related_above == np.mean(related > np.quantile(random, q))
    assert (t.youden_cut, t.youden_j, t.youden_tpr, t.youden_fpr) == _sklearn_youden(related, random)
    assert (t.n_related, t.n_random) == (len(related), len(random))
    assert t.random_cut_interval is t.related_above_interval is t.youden_cut_interval is None


def test_a_hand_computed_example():
    # cut 0.8: TPR 2/4, FPR 0 (J 0.5); 0.7: 3/4, 0 (J 0.75); 0.5: 3/4, 1/5; 0.45: 4/4, 1/5 (J 0.8, the best)
    t = similarity_threshold([0.9, 0.8, 0.7, 0.45], [0.1, 0.2, 0.3, 0.5, 0.0], quantile=0.5, n_resamples=0)
    assert t.youden_cut == 0.45 and t.youden_j == pytest.approx(0.8) and (t.youden_tpr, t.youden_fpr) == (1.0, 0.2)
    assert t.random_cut == 0.2 and t.related_above == 1.0  # the median of 0, .1, .2, .3, .5; all related above


def test_intervals_are_seeded_and_hold_the_estimates():
    rng = np.random.default_rng(3)
    related, random = rng.normal(0.5, 0.12, 150), rng.normal(0.15, 0.1, 400)
    a = similarity_threshold(related, random, n_resamples=300, seed=7)
    b = similarity_threshold(related, random, n_resamples=300, seed=7)
    c = similarity_threshold(related, random, n_resamples=300, seed=8)
    assert a == b and a.random_cut_interval != c.random_cut_interval
    for est, ci in ((a.random_cut, a.random_cut_interval), (a.related_above, a.related_above_interval),
                    (a.youden_cut, a.youden_cut_interval)):
        assert ci.low <= est <= ci.high and ci.low < ci.high and ci.n_resamples == 300 and ci.level == 0.95
    d = a.to_dict()
    assert d["random_quantile"]["ci_low"] == a.random_cut_interval.low
    assert d["youden"]["ci_high"] == a.youden_cut_interval.high
    assert d["bootstrap"] == {"level": 0.95, "n_resamples": 300}
    assert isinstance(a, SimilarityThreshold) and "youden cut" in repr(a)


def test_the_intervals_cover_the_true_thresholds_of_two_normals():
    """Related ~ N(0.35, 0.1), random ~ N(0.1, 0.1): the random 95% quantile is 0.1 + 0.1 z(0.95), the share of
    related pairs above it 1 - Φ((cut - 0.35) / 0.1), and (equal variances) Youden's cut the midpoint 0.225. Over
    150 seeded samples each nominal 95% interval should hold its true value about 95% of the time: with 150
    samples a binomial's standard deviation is 1.8 points, so [0.88, 0.99] allows about 4 of them below."""
    true_cut = 0.1 + 0.1 * stats.norm.ppf(0.95)
    truth = (true_cut, stats.norm.sf((true_cut - 0.35) / 0.1), 0.225)
    hits = np.zeros(3)
    reps = 150
    for rep in range(reps):
        rng = np.random.default_rng(1000 + rep)
        t = similarity_threshold(rng.normal(0.35, 0.1, 150), rng.normal(0.1, 0.1, 300), n_resamples=200, seed=rep)
        cis = (t.random_cut_interval, t.related_above_interval, t.youden_cut_interval)
        hits += [ci.low <= true <= ci.high for ci, true in zip(cis, truth, strict=True)]
    coverage = hits / reps
    assert ((0.88 <= coverage) & (coverage <= 0.99)).all(), coverage


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"related": [0.9], "random": [0.1, 0.2]}, "at least 2 related pairs"),
    ({"related": [0.9, 0.8], "random": []}, "at least 2 random pairs"),
    ({"related": [0.9, np.nan], "random": [0.1, 0.2]}, "NaN or infinite"),
    ({"related": [[0.9, 0.8]], "random": [0.1, 0.2]}, "1-d"),
    ({"related": ["a", "b"], "random": [0.1, 0.2]}, "not numbers"),
    ({"related": [0.9, 0.8], "random": [0.1, 0.2], "quantile": 1.0}, "quantile"),
    ({"related": [0.9, 0.8], "random": [0.1, 0.2], "n_resamples": -1}, "n_resamples"),
])
def test_bad_input_is_one_clear_error(kwargs, match):
    with pytest.raises(InputError, match=match):
        similarity_threshold(**kwargs)
