"""Circular features (repspace.engines.analyze.circular) against the projection and resultant written out with
numpy's SVD and complex exponentials, planted circles, and every ordering of a small cycle enumerated."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.analyze import circularity

pytestmark = pytest.mark.numerics


def _planted(n: int, d: int, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    plane, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    t = 2 * np.pi * np.arange(n) / n
    return np.c_[np.cos(t), np.sin(t)] @ plane.T * 5 + rng.standard_normal((n, d)) * noise + rng.standard_normal(d)


def _resultant(theta: np.ndarray) -> float:
    n = len(theta)
    ks = np.arange(n)
    best = 0.0
    for s in (1, -1):
        c = np.sum(np.cos(theta - s * 2 * np.pi * ks / n)) / n
        si = np.sum(np.sin(theta - s * 2 * np.pi * ks / n)) / n
        best = max(best, math.hypot(c, si))
    return best


def test_glove_days_equal_the_statistic_written_out(glove_vectors):
    from _data_subsets import glove_words

    ids, X = glove_words(20000)
    days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    V = X[[ids.index(d) for d in days]].astype(np.float64)
    c = circularity(V, days, permutations=0)
    Vc = V - V.mean(axis=0)
    _, S, Wt = np.linalg.svd(Vc)
    P = Vc @ Wt[:2].T
    theta = np.arctan2(P[:, 1], P[:, 0])
    assert c.explained_variance == pytest.approx((S[:2] ** 2).sum() / (S ** 2).sum(), abs=1e-9)
    assert c.resultant == pytest.approx(_resultant(theta), abs=1e-9)
    assert np.allclose(np.abs(c.coords), np.abs(P), atol=1e-9)  # the same axes up to sign


def test_a_planted_circle_is_found_and_a_scrambled_order_is_not():
    X = _planted(12, 50, 0.3, 0)
    c = circularity(X, permutations=500, seed=1)
    assert c.resultant > 0.95 and c.order_agreement == 1.0 and c.p_value < 0.01
    assert max(abs(e) for e in c.angle_errors) < 15
    scrambled = circularity(X[5 * np.arange(12) % 12], permutations=500, seed=1)  # around the circle 5 times
    assert scrambled.resultant < 0.1 and scrambled.p_value > 0.5


def test_the_p_value_approaches_the_exact_share_of_orderings():
    # a perfect 6-cycle: of all 720 orderings, only the 12 rotations and reflections reach R = 1
    X = _planted(6, 4, 0.0, 5)
    theta = np.arctan2(*(np.linalg.svd(X - X.mean(0))[0][:, 1::-1].T))
    exact = np.mean([_resultant(theta[list(p)]) >= 1 - 1e-9 for p in itertools.permutations(range(6))])
    assert exact == pytest.approx(12 / 720)
    c = circularity(X, permutations=20000, seed=0)
    sd = math.sqrt(exact * (1 - exact) / 20000)
    assert c.resultant == pytest.approx(1.0, abs=1e-9)
    assert c.p_value == pytest.approx(exact, abs=5 * sd + 1 / 20001)


@pytest.mark.parametrize("X, fragment", [
    (np.eye(3), "at least 4"),
    (np.ones((5, 3)), "two dimensions"),
])
def test_bad_input_is_one_clear_error(X, fragment):
    with pytest.raises(InputError, match=fragment):
        circularity(X)
