"""Anchor growth for relative representations: the objective against numpy written out, the greedy steps
against a brute-force greedy search, monotone growth, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.align import grow_anchors, relative_agreement


def _reference(X, Y, ax, ay, objective, center):
    """The objective from its definition, with nothing of the engine: cosines as products over outer norms."""
    def cosines(A, B):
        return A @ B.T / np.outer(np.linalg.norm(A, axis=1), np.linalg.norm(B, axis=1))

    def rel(A, anchors):
        cos = cosines(A, anchors)
        return cos - cos.mean(axis=1, keepdims=True) if center else cos

    rx, ry = rel(X, ax), rel(Y, ay)
    n = len(X)
    pair = cosines(rx, ry)  # pair[i, j]: source item i's relative vector against target item j's
    value = np.trace(pair) / n
    return value - pair.mean() if objective == "gap" else value


def _spaces(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) + 0.4
    Y = np.tanh(X @ rng.normal(size=(5, 7))) + 0.3 * rng.normal(size=(n, 7))
    return X, Y


@pytest.mark.parametrize("objective", ["agreement", "gap"])
@pytest.mark.parametrize("center", [False, True])
def test_objective_equals_its_definition_written_out(objective, center):
    X, Y = _spaces(40)
    got = relative_agreement(X[8:], Y[8:], X[:8], Y[:8], center=center, objective=objective)
    # float32 relative vectors (relative_representation's output): 1e-6
    assert got == pytest.approx(_reference(X[8:], Y[8:], X[:8], Y[:8], objective, center), abs=1e-6)


@pytest.mark.parametrize("objective", ["agreement", "gap"])
@pytest.mark.parametrize("center", [False, True])
def test_growth_is_the_brute_force_greedy_search_and_never_lowers_the_objective(objective, center):
    X, Y = _spaces(80, seed=1)
    seed, cand, fit = [0, 1, 2], list(range(3, 40)), list(range(40, 80))
    g = grow_anchors(X, Y, seed, cand, fit, grow=6, center=center, objective=objective)
    chosen, trace = list(seed), [_reference(X[fit], Y[fit], X[seed], Y[seed], objective, center)]
    for _ in range(g.added.size):  # try every remaining candidate, recomputing the objective from scratch
        values = {c: _reference(X[fit], Y[fit], X[chosen + [c]], Y[chosen + [c]], objective, center)
                  for c in cand if c not in chosen}
        best = max(values, key=values.get)
        chosen.append(best)
        trace.append(values[best])
    assert g.anchors.tolist() == chosen
    np.testing.assert_allclose(g.trace, trace, atol=1e-12)
    assert np.all(np.diff(g.trace) > 0)
    if g.stopped_early:  # no remaining candidate raises it
        rest = [c for c in cand if c not in chosen]
        assert max(_reference(X[fit], Y[fit], X[chosen + [c]], Y[chosen + [c]], objective, center)
                   for c in rest) <= g.trace[-1] + 1e-12


def test_glove_growth_raises_held_out_retrieval_over_random_anchors(glove_vectors):
    """GloVe against a noisy nonlinear image of itself (a tanh of a random map): grown anchors beat random."""
    rng = np.random.default_rng(0)
    X = np.asarray(glove_vectors[:2000], np.float64)
    Y = np.tanh(X @ rng.normal(size=(50, 64)) / 4) + 0.05 * rng.normal(size=(2000, 64))
    order = rng.permutation(2000)
    seed, cand, fit, held = order[:10], order[10:810], order[810:1210], order[1210:1710]
    calls = []
    g = grow_anchors(X, Y, seed, cand, fit, grow=60, center=True, progress=lambda *a: calls.append(a))
    assert calls == [("grow anchors", i + 1, 60) for i in range(g.added.size)]
    rand = np.concatenate([seed, rng.choice(cand, g.added.size, replace=False)])
    grown = relative_agreement(X[held], Y[held], X[g.anchors], Y[g.anchors], center=True, objective="gap")
    random = relative_agreement(X[held], Y[held], X[rand], Y[rand], center=True, objective="gap")
    assert g.trace[-1] > g.trace[0] and grown > random + 0.02, (grown, random)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"seed": [0], "grow": 2}, "fewer anchors than the 5 dimensions"),
    ({"seed": [0, 1], "grow": 3, "candidates": [1, 5, 6]}, "must be different rows"),
    ({"seed": [0, 1], "grow": 4, "fit": [5, 20]}, "must be different rows"),
    ({"seed": [0, 1], "grow": 50}, "cannot grow 50 anchors from 20 candidate(s)"),
    ({"seed": [0], "grow": 4, "center": True}, "at least 2 seed anchor(s)"),
    ({"seed": [0, 99], "grow": 4}, "outside 0..79"),
    ({"seed": [0, 1], "grow": 4, "objective": "mrr"}, "objective"),
    ({"seed": [0, 1], "grow": 0}, "grow"),
])
def test_bad_input_is_one_clear_error(kwargs, message):
    X, Y = _spaces(80)
    args = {"candidates": list(range(10, 30)), "fit": list(range(40, 80)), **kwargs}
    with pytest.raises(InputError) as e:
        grow_anchors(X, Y[:, :5], **args)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_one_round_of_discovery_is_the_mutual_nearest_neighbours_by_scipy_cdist():
    """Round 1 against a brute-force mutual-neighbour search on centred relative vectors (scipy's cdist)."""
    from scipy.spatial.distance import cdist

    from repspace.engines.align import discover_anchors

    X, Y = _spaces(120, seed=2)
    rng = np.random.default_rng(0)
    perm = rng.permutation(np.arange(10, 120))
    m = discover_anchors(X[10:], Y[perm], X[:10], Y[:10], rounds=1, per_round=1000)
    rx, ry = 1 - cdist(X[10:], X[:10], "cosine"), 1 - cdist(Y[perm], Y[:10], "cosine")
    rx, ry = rx - rx.mean(1, keepdims=True), ry - ry.mean(1, keepdims=True)
    sim = 1 - cdist(rx, ry, "cosine")
    expected = {(i, int(np.argmax(sim[i]))) for i in range(len(rx)) if np.argmax(sim[:, np.argmax(sim[i])]) == i}
    assert set(map(tuple, m.pairs.tolist())) == expected
    np.testing.assert_allclose(m.scores, [sim[i, j] for i, j in m.pairs], atol=1e-12)
    assert np.all(np.diff(m.scores) <= 0)  # adopted best first


def test_discovery_recovers_a_planted_rotation_of_shuffled_glove(glove_vectors):
    from repspace.engines.align import discover_anchors

    X = np.asarray(glove_vectors[:1200], np.float64)
    rng = np.random.default_rng(0)
    R, _ = np.linalg.qr(rng.normal(size=(50, 50)))
    perm = rng.permutation(np.arange(60, 1200))
    Y = X[perm] @ R + 0.01 * rng.normal(size=(1140, 50))
    m = discover_anchors(X[60:], Y, X[:60], X[:60] @ R, rounds=3, per_round=100)
    assert len(m.pairs) == 300 and m.rounds.tolist() == [1] * 100 + [2] * 100 + [3] * 100
    assert np.mean(perm[m.pairs[:, 1]] - 60 == m.pairs[:, 0]) == 1.0


def test_discovery_bad_input_is_one_clear_error():
    from repspace.engines.align import discover_anchors

    X, Y = _spaces(40)
    for call, message in ((lambda: discover_anchors(X, Y, X[:1], Y[:1]), "at least 2 pairs"),
                          (lambda: discover_anchors(X, Y, Y[:3], X[:3]), "must live in the spaces of X and Y"),
                          (lambda: discover_anchors(X, Y, X[:3], Y[:3], rounds=0), "rounds")):
        with pytest.raises(InputError) as e:
            call()
        assert message in str(e.value) and "\n" not in str(e.value)
