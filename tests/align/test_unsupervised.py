"""The unsupervised map: planted rotations found without pairs on real GloVe vectors, and its failure modes."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.align import Procrustes, Unsupervised, score_map, similarity_profiles
from repspace.errors import InputError


def _rotation(d: int, seed: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return q * np.sign(np.diag(r))


@pytest.fixture(scope="module")
def glove(glove_vectors):
    return np.asarray(glove_vectors[:2000], dtype=np.float64)


def _noisy_copy(X: np.ndarray, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Q = _rotation(X.shape[1], seed)
    return X @ Q + 0.5 + noise * X.std() * rng.normal(size=X.shape), Q


@pytest.mark.parametrize("init, n_init", [("profiles", None), ("gw", 400)])
def test_finds_a_planted_rotation_of_shuffled_glove(glove, init, n_init):
    X = glove[:800]
    Y, Q = _noisy_copy(glove, 0.1, 1)
    perm = np.random.default_rng(2).permutation(800)
    m = Unsupervised(init=init, n_init=n_init, patience=10, n_restarts=2).fit(X, Y[:800][perm])
    src, trg = m.pairs_[:, 0], m.pairs_[:, 1]
    assert np.mean(perm[trg] == src) > 0.98 and len(src) > 750  # the pairing it found is the hidden one
    assert np.abs(m.W_ - Q).max() < 0.05
    held = score_map(m.transform(glove[1500:]), Y[1500:])  # items it never saw
    assert held.top1 > 0.95 and held.mean_cosine > 0.98


def test_equals_procrustes_on_the_pairs_it_found(glove):
    X = glove[:400]
    Y, _ = _noisy_copy(X, 0.05, 3)
    perm = np.random.default_rng(4).permutation(400)
    m = Unsupervised(patience=5).fit(X, Y[perm])
    ref = Procrustes().fit(X[m.pairs_[:, 0]], Y[perm][m.pairs_[:, 1]])
    np.testing.assert_allclose(m.W_, ref.W_, atol=1e-10)
    np.testing.assert_allclose(m.transform(X[:20]), ref.transform(X[:20]), atol=1e-6)


def test_different_items_and_dimensions(glove):
    # source: words 0..699; target: words 200..899 in 40 of 50 rotated dimensions (500 words in common)
    Y, _ = _noisy_copy(glove, 0.05, 5)
    Y = Y[:, :40]
    m = Unsupervised(patience=10, n_restarts=3).fit(glove[:700], Y[200:900])
    assert m.W_.shape == (50, 40) and m.transform(glove[:3]).shape == (3, 40)
    src, trg = m.pairs_[:, 0], m.pairs_[:, 1] + 200
    assert np.mean(src == trg) > 0.9
    assert score_map(m.transform(glove[1500:]), Y[1500:]).top1 > 0.9


def test_unrelated_spaces_score_lower_than_related_ones(glove):
    X = glove[:600]
    Y, _ = _noisy_copy(X, 0.1, 6)
    noise = np.random.default_rng(7).normal(size=X.shape)
    related = Unsupervised(patience=5).fit(X, Y[::-1])
    unrelated = Unsupervised(patience=5).fit(X, noise)
    assert related.objective_ > unrelated.objective_ + 0.1


def test_seeded_and_state_round_trip(glove):
    X = glove[:500]
    Y, _ = _noisy_copy(X, 0.2, 8)
    a = Unsupervised(patience=5, random_state=3).fit(X, Y[::-1])
    b = Unsupervised(patience=5, random_state=3).fit(X, Y[::-1])
    np.testing.assert_array_equal(a.pairs_, b.pairs_)
    assert a.history_[0]["keep_prob"] == 0.1 and a.history_[-1]["keep_prob"] == 1.0
    c = Unsupervised.from_state(a.get_params(), a.state())
    np.testing.assert_array_equal(c.transform(X[:10]), a.transform(X[:10]))


def test_profiles_ignore_rotation_not_the_items():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(60, 5)) * [4, 3, 2, 1, 0.5]
    Q = _rotation(5, 1)
    np.testing.assert_allclose(similarity_profiles(A), similarity_profiles(A @ Q), atol=1e-5)
    assert not np.allclose(similarity_profiles(A), similarity_profiles(rng.normal(size=(60, 5))), atol=1e-2)


@pytest.mark.parametrize("kwargs, X, Y, message", [
    ({}, np.ones((5, 3)), np.ones((20, 3)), "at least 10 rows of X"),
    ({}, np.ones((20, 3)), np.random.default_rng(0).normal(size=(20, 3)), "every row of X is the same"),
    ({"init": "adversarial"}, None, None, "init must be one of"),
    ({"keep_prob": 0.0}, None, None, "keep_prob"),
    ({"max_rows": 5}, None, None, "max_rows must be an integer >= 10"),
    ({"dictionary": "both"}, None, None, "dictionary must be"),
    ({"n_restarts": 0}, None, None, "n_restarts must be an integer >= 1"),
    ({}, np.full((20, 3), np.nan), None, "NaN"),
])
def test_bad_input_is_one_clear_error(kwargs, X, Y, message):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3)) if X is None else X
    Y = rng.normal(size=(20, 3)) if Y is None else Y
    with pytest.raises(InputError, match=message) as e:
        Unsupervised(**kwargs).fit(X, Y)
    assert "\n" not in str(e.value)
