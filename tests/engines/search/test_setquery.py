"""SetCSE scores (:mod:`repspace.engines.search.setquery`) against a per-example loop of cosines on real GloVe
vectors, and their refusals."""

from __future__ import annotations

import numpy as np
import pytest
from _data_subsets import glove_rows

from repspace.core.errors import InputError
from repspace.engines.search.setquery import set_query_vector, set_scores

pytestmark = pytest.mark.numerics


def _loop(x: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """The paper's operation series with one set per example: Σ cos(x, b) - Σ cos(x, c), one pair at a time."""
    def cos(a: np.ndarray, b: np.ndarray) -> float:
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        return 0.0 if na == 0 else float(np.dot(a, b) / (na * nb))

    x, pos, neg = (np.asarray(a, dtype=np.float64) for a in (x, pos, neg))
    return np.array([sum(cos(r, b) for b in pos) - sum(cos(r, c) for c in neg) for r in x])


@pytest.mark.parametrize("n_pos, n_neg", [(1, 0), (2, 1), (3, 2), (0, 2)])
def test_scores_equal_the_loop_on_glove(n_pos, n_neg) -> None:
    """500 GloVe words against examples drawn from 100 others; float64 throughout: 1e-12."""
    x = glove_rows(1000, 500)
    examples = glove_rows(2000, 100)
    pick = np.random.default_rng(n_pos * 10 + n_neg).choice(100, n_pos + n_neg, replace=False)
    pos, neg = examples[pick[:n_pos]], examples[pick[n_pos:]]
    np.testing.assert_allclose(set_scores(x, pos, neg), _loop(x, pos, neg), rtol=0, atol=1e-12)


def test_zero_items_score_zero_and_scale_does_not_matter() -> None:
    x = glove_rows(0, 20)
    x[3] = 0
    pos, neg = glove_rows(50, 2), glove_rows(60, 1)
    s = set_scores(x, pos, neg)
    assert s[3] == 0.0
    # powers of two scale float32 exactly: only the norms' float64 rounding differs
    np.testing.assert_allclose(set_scores(x * 8.0, pos * 2.0**-7, neg * 256.0), s, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("pos, neg, fragment", [
    (np.zeros((0, 4)), np.zeros((0, 4)), "at least one example"),
    (np.array([[1.0, 0, 0, 0], [0, 0, 0, 0]]), None, "all-of example 1 is all zeros"),
    (np.array([[1.0, 0, 0, 0]]), np.array([[2.0, 0, 0, 0]]), "cancel out"),
    (np.array([[1.0, 0, 0]]), None, "dimension 4"),
    (np.array([[np.nan, 0, 0, 0]]), None, "NaN"),
    ([["a", "b", "c", "d"]], None, "numeric"),
])
def test_bad_examples_are_one_error(pos, neg, fragment) -> None:
    with pytest.raises(InputError) as e:
        set_query_vector(pos, neg, dim=4)
    assert fragment in str(e.value) and "\n" not in str(e.value)
