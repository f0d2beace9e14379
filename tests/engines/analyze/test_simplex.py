"""Categorical simplices (repspace.engines.analyze.simplex) against the Cayley-Menger determinant, numpy's
matrix rank, and the held-out nearest-vertex test written out with scikit-learn's Ledoit-Wolf and scipy's
matrix square root, on GloVe and WordNet."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
from sklearn.covariance import ledoit_wolf

from repspace.core.errors import InputError
from repspace.engines.analyze import categorical_simplex, simplex_shape, simplex_volume

pytestmark = pytest.mark.numerics


def _cayley_menger(V: np.ndarray) -> float:
    """Volume² of a simplex from its squared edge lengths: (−1)^k / (2^(k−1) ((k−1)!)²) det(CM)."""
    k = len(V)
    D = ((V[:, None] - V[None]) ** 2).sum(axis=-1)
    CM = np.ones((k + 1, k + 1))
    CM[0, 0] = 0.0
    CM[1:, 1:] = D
    return (-1) ** k * np.linalg.det(CM) / (2 ** (k - 1) * math.factorial(k - 1) ** 2)


@pytest.mark.parametrize("k, d", [(2, 3), (3, 3), (4, 10), (5, 7)])
def test_volume_equals_the_cayley_menger_determinant(k, d):
    V = np.random.default_rng(k * d).standard_normal((k, d))
    assert simplex_volume(V) == pytest.approx(math.sqrt(_cayley_menger(V)), rel=1e-9)
    shape = simplex_shape(V)
    assert shape["rank"] == np.linalg.matrix_rank(V[1:] - V[0]) == k - 1 and shape["affinely_independent"]
    s = np.linalg.svd(V[1:] - V[0], compute_uv=False)
    assert shape["condition"] == pytest.approx(s.max() / s.min(), rel=1e-8)


def test_a_regular_simplex_has_regularity_one_and_a_flat_one_is_dependent():
    k = 5
    V = np.eye(k) * 3.0  # regular, edge 3√2
    shape = simplex_shape(V)
    assert shape["regularity"] == pytest.approx(1.0, abs=1e-9)
    assert shape["condition"] == pytest.approx(math.sqrt(k), abs=1e-8)
    flat = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [5.0, 1.0, 0.0]])  # 4 points in a plane
    f = simplex_shape(flat)
    assert f["rank"] == np.linalg.matrix_rank(flat[1:] - flat[0]) == 2
    assert not f["affinely_independent"] and f["condition"] is None and f["volume"] < 1e-12


def _park(G: np.ndarray) -> np.ndarray:
    mean = G.mean(axis=0)
    lda = np.linalg.pinv(ledoit_wolf(G)[0]) @ mean
    lda /= np.linalg.norm(lda)
    return (mean @ lda) * lda


def test_glove_animal_simplex_equals_the_test_written_out():
    from _data_subsets import glove_words

    from repspace.workflows.analyze import category_words

    ids, X = glove_words(30000)
    X = X.astype(np.float64)
    index = {w: i for i, w in enumerate(ids)}
    cats = ["mammal.n.01", "bird.n.01", "fish.n.01", "reptile.n.01"]
    words = category_words(cats)
    sets = {c: sorted({index[w] for w in ws if w in index}) for c, ws in words.items()}
    r = categorical_simplex(X, sets, folds=4, seed=3)
    # Written out: shared words dropped, whitening by scipy's sqrtm, one loop per fold and per word.
    owner: dict[int, list[str]] = {}
    for c, rows in sets.items():
        for i in rows:
            owner.setdefault(i, []).append(c)
    own = {c: [i for i in rows if len(owner[i]) == 1] for c, rows in sets.items()}
    assert r.sizes == tuple(len(own[c]) for c in cats) and r.shared == sum(len(v) > 1 for v in owner.values())
    W = np.real(scipy.linalg.inv(scipy.linalg.sqrtm(np.cov(X.T))))
    G = {c: (X[rows] - X.mean(axis=0)) @ W for c, rows in own.items()}
    V = np.stack([_park(G[c]) for c in cats])
    assert np.allclose(r.vertices, V, atol=1e-6)
    assert r.affinely_independent and r.rank == 3
    assert r.volume == pytest.approx(math.sqrt(_cayley_menger(V)), rel=1e-5)
    rng = np.random.default_rng(3)
    folds = {c: rng.permutation(len(own[c])) % 4 for c in cats}
    hits, recall = 0, {c: 0 for c in cats}
    for f in range(4):
        verts = [_park(G[c][folds[c] != f]) for c in cats]
        for truth, c in enumerate(cats):
            for g in G[c][folds[c] == f]:
                best = min(range(len(cats)), key=lambda j: float(((g - verts[j]) ** 2).sum()))
                hits += best == truth
                recall[c] += best == truth
    total = sum(len(own[c]) for c in cats)
    assert r.accuracy == pytest.approx(hits / total, abs=1e-9)
    assert r.balanced_accuracy == pytest.approx(np.mean([recall[c] / len(own[c]) for c in cats]), abs=1e-9)
    assert r.chance == pytest.approx(max(len(v) for v in own.values()) / total, abs=1e-9)


def test_planted_categories_are_found():
    rng = np.random.default_rng(0)
    centres = np.eye(4, 6) * 5.0
    X = np.concatenate([rng.normal(c, 0.3, (25, 6)) for c in centres] + [rng.standard_normal((400, 6))])
    sets = {f"c{i}": range(25 * i, 25 * (i + 1)) for i in range(4)}
    r = categorical_simplex(X, sets, folds=5)
    assert r.affinely_independent and r.accuracy == 1.0 and r.balanced_accuracy == 1.0
    assert r.regularity > 0.9  # four equidistant centres: nearly a regular tetrahedron


@pytest.mark.parametrize("sets, kwargs, fragment", [
    ({"a": [0, 1, 2]}, {}, "at least 2 categories"),
    ({"a": [0, 1, 2], "b": [3, 99]}, {"folds": 2}, "outside"),
    ({"a": [0, 1, 2], "b": [3]}, {"folds": 2}, "needs 2"),
    ({"a": [0, 1, 2, 3], "b": [3, 4, 5, 6]}, {"folds": 4}, "of its own"),
    ({"a": [0, 1], "b": [2, 3]}, {"folds": 1}, "folds"),
])
def test_bad_input_is_one_clear_error(sets, kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        categorical_simplex(np.random.default_rng(0).standard_normal((10, 3)), sets, **kwargs)
