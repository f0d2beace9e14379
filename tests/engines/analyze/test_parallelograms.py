"""Concept-crystal parallelograms (repspace.engines.analyze.parallelograms) against the LDA written out with
scipy's generalised eigensolver, planted distractors, and Google's analogy questions on GloVe."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from repspace.core.errors import InputError
from repspace.engines.analyze import parallelograms
from repspace.engines.analyze.parallelograms import RIDGE

pytestmark = pytest.mark.numerics


def _written_out(Q: np.ndarray, k: int) -> np.ndarray:
    """Held-out residuals: for each quadruple, LDA on the others' two clusters of difference vectors."""
    out = []
    for i in range(len(Q)):
        R = np.delete(Q, i, axis=0)
        clusters = [np.stack([q[1] - q[0], q[3] - q[2]]) for q in R] + [np.stack([q[2] - q[0], q[3] - q[1]])
                                                                         for q in R]
        s_w = sum((c - c.mean(0)).T @ (c - c.mean(0)) for c in clusters) * 2  # Σ e eᵀ: each cluster holds ±e/2
        means = np.array([c.mean(0) for c in clusters])
        s_b = (means - means.mean(0)).T @ (means - means.mean(0))
        reg = s_b + RIDGE * np.trace(s_b) / Q.shape[2] * np.eye(Q.shape[2])
        vals, vecs = scipy.linalg.eigh(s_w, reg)
        patterns = reg @ vecs[:, np.argsort(vals)[::-1][:k]]
        P = np.eye(Q.shape[2]) - patterns @ np.linalg.pinv(patterns)
        a, b, c, d = Q[i] @ P
        out.append(np.linalg.norm((b - a) - (d - c)) / (np.linalg.norm(b - a) + np.linalg.norm(d - c)))
    return np.array(out)


@pytest.fixture(scope="module")
def capitals(glove_vectors):
    from _data_subsets import glove_words
    from _gensim_data import gensim_data

    ids, X = glove_words(50000)
    index = {w: i for i, w in enumerate(ids)}
    quads, section = [], None
    for line in gensim_data("questions-words.txt").read_text().splitlines():
        if line.startswith(":"):
            section = line[1:].strip()
        elif section == "capital-common-countries":
            words = line.lower().split()
            if all(w in index for w in words):
                quads.append(words)
    quads = quads[:60]
    return quads, X[[index[w] for q in quads for w in q]].astype(np.float64).reshape(len(quads), 4, -1)


def test_glove_capitals_equal_the_lda_written_out_and_beat_random_directions(capitals):
    quads, Q = capitals
    r = parallelograms(Q, quads, distractors=5, draws=10)
    before = np.array([np.linalg.norm((q[1] - q[0]) - (q[3] - q[2])) /
                       (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[3] - q[2])) for q in Q])
    assert np.allclose(r.before, before, atol=1e-8)
    assert np.allclose(r.after, _written_out(Q, 5), atol=1e-6)
    assert r.mean_after < r.mean_before - 0.05 and abs(r.mean_random - r.mean_before) < 0.03


def test_planted_distractors_are_removed():
    rng = np.random.default_rng(4)
    basis, _ = np.linalg.qr(rng.standard_normal((20, 20)))
    a, r1, r2 = (rng.standard_normal((3, 30, 16)) @ basis[:, :16].T)
    clean = np.stack([a, a + r1, a + r2, a + r1 + r2], axis=1)
    noisy = clean + rng.standard_normal((30, 4, 3)) @ basis[:, 16:19].T * 2
    r = parallelograms(noisy, distractors=3, draws=5)
    assert r.mean_before > 0.1 and r.mean_after < 1e-8 and r.mean_random > 0.1


@pytest.mark.parametrize("Q, k, fragment", [
    (np.zeros((1, 4, 5)), 1, "at least 2 quadruples"),
    (np.zeros((3, 3, 5)), 1, "shape"),
    (np.zeros((3, 4, 5)), 5, "distractors"),
])
def test_bad_input_is_one_clear_error(Q, k, fragment):
    with pytest.raises(InputError, match=fragment):
        parallelograms(Q, distractors=k)
