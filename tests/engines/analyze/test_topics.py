"""Topic geometry (repspace.engines.analyze.topics) against the full Gram matrix averaged with numpy masks."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.analyze import topic_geometry

pytestmark = pytest.mark.numerics


def _brute(X: np.ndarray, labels: np.ndarray) -> tuple[float, float, float, dict[str, tuple[float, float]]]:
    K = X @ X.T
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(len(X), dtype=bool)
    per = {}
    for t in np.unique(labels):
        m = labels == t
        block = K[np.ix_(m, m)]
        w = (block.sum() - np.trace(block)) / (m.sum() * (m.sum() - 1)) if m.sum() > 1 else None
        per[str(t)] = (w, K[np.ix_(m, ~m)].mean())
    return K[same & off].mean(), K[~same].mean(), K[off].mean(), per


@pytest.mark.parametrize("normalize, center", [(False, False), (True, False), (False, True), (True, True)])
def test_glove_words_by_first_letter_equal_the_gram_matrix(glove_vectors, normalize, center):
    from _data_subsets import glove_words

    ids, X = glove_words(1500)
    labels = np.array([w[0] for w in ids])
    g = topic_geometry(X, labels, normalize=normalize, center=center)
    Y = X.astype(np.float64)
    if normalize:
        Y = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    if center:
        Y = Y - Y.mean(axis=0)
    within, across, every, per = _brute(Y, labels)
    scale = float(np.abs(Y @ Y.T).max())
    assert g.within == pytest.approx(within, abs=1e-9 * scale)
    assert g.across == pytest.approx(across, abs=1e-9 * scale)
    assert g.all_pairs == pytest.approx(every, abs=1e-9 * scale)
    for t in g.topics:
        w, a = per[t["topic"]]
        assert t["across"] == pytest.approx(a, abs=1e-9 * scale)
        assert (t["within"] is None) == (w is None) and (w is None or t["within"] == pytest.approx(w, abs=1e-9 * scale))


def test_planted_topics_separate_and_random_labels_do_not():
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((4, 32)) * 2
    labels = np.repeat(np.arange(4), 50)
    X = centres[labels] + rng.standard_normal((200, 32))
    planted = topic_geometry(X, labels, center=True).separation
    assert planted > 100  # ‖centre difference‖² ≈ 2 · 4 · 32 / 2 per pair of topics
    assert abs(topic_geometry(X, rng.permutation(labels), center=True).separation) < 0.05 * planted


@pytest.mark.parametrize("labels, fragment", [(["a"] * 4, "at least 2 topics"), (list("abcd"), "single item"),
                                              (["a"] * 3, "3 labels for 4")])
def test_bad_input_is_one_clear_error(labels, fragment):
    with pytest.raises(InputError, match=fragment):
        topic_geometry(np.eye(4), labels)
