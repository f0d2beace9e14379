"""Hierarchical orthogonality (repspace.engines.analyze.hierarchy) against Park et al.'s estimator written out with
scikit-learn's Ledoit-Wolf, numpy's pseudo-inverse and scipy's matrix square root, on GloVe and WordNet."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from sklearn.covariance import ledoit_wolf

from repspace.core.errors import InputError
from repspace.engines.analyze import concept_vector, hierarchy_orthogonality
from repspace.engines.analyze.hierarchy import ledoit_wolf_covariance, whitening

pytestmark = pytest.mark.numerics


def _park(G: np.ndarray) -> np.ndarray:
    """Their estimate_single_dir_from_embeddings: LDA direction of the Ledoit-Wolf covariance, scaled."""
    mean = G.mean(axis=0)
    lda = np.linalg.pinv(ledoit_wolf(G)[0]) @ mean
    lda /= np.linalg.norm(lda)
    return (mean @ lda) * lda


@pytest.mark.parametrize("n", [5, 40, 400])
def test_ledoit_wolf_equals_scikit_learn(n):
    E = np.random.default_rng(n).standard_normal((n, 50)) @ np.diag(np.linspace(0.5, 3, 50))
    assert np.allclose(ledoit_wolf_covariance(E), ledoit_wolf(E)[0], atol=1e-12)


def test_whitening_equals_the_inverse_matrix_square_root(glove_vectors):
    X = np.asarray(glove_vectors[:5000], dtype=np.float64)
    mean, W = whitening(X)
    ref = np.real(scipy.linalg.inv(scipy.linalg.sqrtm(np.cov(X.T))))
    assert np.allclose(mean, X.mean(axis=0), atol=1e-12)
    assert np.allclose(W, ref, atol=1e-8 * np.abs(ref).max())


def test_wordnet_pairs_on_glove_equal_the_estimator_written_out(glove_vectors):
    from _data_subsets import glove_words

    from repspace.workflows.analyze import hierarchy_tree

    ids, X = glove_words(30000)
    X = X.astype(np.float64)
    index = {w: i for i, w in enumerate(ids)}
    lemmas, edges = hierarchy_tree("animal.n.01", 2)
    sets = {n: sorted({index[w] for w in ws if w in index}) for n, ws in lemmas.items()}
    sets = {n: r for n, r in sets.items() if len(r) >= 10}
    edges = [(p, c) for p, c in edges if p in sets and c in sets and sets[p] != sets[c]]
    assert len(edges) >= 5
    r = hierarchy_orthogonality(X, sets, edges, shuffles=0)
    G = (X - X.mean(axis=0)) @ np.real(scipy.linalg.inv(scipy.linalg.sqrtm(np.cov(X.T))))
    for pair in r.pairs:
        lp, lc = _park(G[sets[pair.parent]]), _park(G[sets[pair.child]])
        diff = lc - lp
        assert pair.cosine == pytest.approx(lp @ diff / np.linalg.norm(lp) / np.linalg.norm(diff), abs=1e-6)
        assert pair.parent_child_cosine == pytest.approx(lp @ lc / np.linalg.norm(lp) / np.linalg.norm(lc),
                                                         abs=1e-6)
    cos = np.array([p.cosine for p in r.pairs])
    assert r.mean_cosine == pytest.approx(cos.mean(), abs=1e-8)
    assert r.mean_abs_cosine == pytest.approx(np.abs(cos).mean(), abs=1e-8)


def test_the_shuffled_baseline_is_the_statistic_on_permuted_rows():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 6))
    sets = {"p": list(range(200)), "c": list(range(60))}
    r = hierarchy_orthogonality(X, sets, [("p", "c")], whiten=False, shuffles=3, seed=7)
    perm_rng = np.random.default_rng(7)
    G = X - X.mean(axis=0)
    cos = []
    for _ in range(3):
        perm = perm_rng.permutation(400)
        lp, lc = concept_vector(G[perm[:200]]), concept_vector(G[perm[:60]])
        cos.append((lp @ (lc - lp)) / np.linalg.norm(lp) / np.linalg.norm(lc - lp))
    assert r.baseline["mean_cosine"] == pytest.approx(np.mean(cos), abs=1e-8)
    assert r.baseline["shuffles"] == 3 and not r.whitened


@pytest.mark.parametrize("sets, edges, fragment", [
    ({"p": [0, 1, 2]}, [("p", "c")], "no word set"),
    ({"p": [0, 1, 2], "c": [1]}, [("p", "c")], "a concept vector needs 2"),
    ({"p": [0, 1, 2], "c": [1, 99]}, [("p", "c")], "outside"),
    ({"p": [0, 1]}, [], "no (parent, child) pair"),
    ({"p": [0, 1, 2], "c": [2, 1, 0]}, [("p", "c")], "the same words"),
])
def test_bad_input_is_one_clear_error(sets, edges, fragment):
    with pytest.raises(InputError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        hierarchy_orthogonality(np.random.default_rng(0).standard_normal((10, 3)), sets, edges)
