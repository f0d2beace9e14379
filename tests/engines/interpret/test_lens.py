"""The lens's arithmetic against independent references on real vectors (GloVe 6B 50d): the vocabulary projection
against a full argsort, the ridge translator against scikit-learn's ``Ridge`` and numpy's ``lstsq``, the fit's R²
against ``r2_score`` and its KL against ``scipy.stats.entropy``."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.core.limits import LENS_BLOCK_ENTRIES
from repspace.engines.interpret.lens import (
    TranslatorMoments,
    fit_translator,
    project_vocabulary,
    softmax_kl,
    translator_fit,
    vocabulary_logits,
)
from tests._data_subsets import glove_rows

pytestmark = pytest.mark.numerics


@pytest.fixture(scope="module")
def glove() -> np.ndarray:
    return glove_rows(0, 20_000).astype(np.float64)


def test_projection_equals_a_full_argsort_across_blocks(glove):
    E, vocab = glove, [f"w{i}" for i in range(glove.shape[0])]
    queries = glove_rows(30_000, 600).astype(np.float64)
    assert queries.shape[0] > LENS_BLOCK_ENTRIES // E.shape[0]  # more rows than one block holds
    for score in ("dot", "cosine"):
        p = project_vocabulary(queries, E, vocab, k=7, score=score)
        q = queries / np.linalg.norm(queries, axis=1, keepdims=True) if score == "cosine" else queries
        e = E / np.linalg.norm(E, axis=1, keepdims=True) if score == "cosine" else E
        full = q @ e.T
        expected = np.argsort(-full, axis=1, kind="stable")[:, :7]
        assert (p.token_ids == expected).all()
        np.testing.assert_allclose(p.scores, np.take_along_axis(full, expected, axis=1), rtol=1e-12, atol=1e-12)
        assert p.tokens[0][0] == f"w{expected[0, 0]}"


def test_zero_pass_projection_of_a_vocabulary_row_is_its_own_token(glove):
    p = project_vocabulary(glove[:1000], glove, [str(i) for i in range(glove.shape[0])], k=1, score="cosine")
    assert (p.token_ids[:, 0] == np.arange(1000)).all()


def test_ridge_translator_equals_sklearn_ridge_and_lstsq(glove):
    from sklearn.linear_model import Ridge

    X, Y = glove[:3000], glove[5000:8000] @ np.linspace(-1, 1, 50 * 30).reshape(50, 30) + 0.5
    for ridge in (1e-3, 0.5):
        t = fit_translator(X, Y, ridge=ridge)
        ref = Ridge(alpha=t.alpha, fit_intercept=True, solver="cholesky").fit(X, Y)
        # float64 normal equations of a well-conditioned 50-d problem: agreement far inside 1e-8
        np.testing.assert_allclose(t.weight, ref.coef_.T, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(t.bias, ref.intercept_, rtol=1e-8, atol=1e-10)
        assert t.alpha == pytest.approx(ridge * np.trace(np.cov(X.T, bias=True)) * X.shape[0] / X.shape[1])
    ols = fit_translator(X, Y, ridge=0.0)
    coef, *_ = np.linalg.lstsq(np.hstack([X, np.ones((X.shape[0], 1))]), Y, rcond=None)
    np.testing.assert_allclose(ols.weight, coef[:-1], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ols.bias, coef[-1], rtol=1e-8, atol=1e-10)


def test_streamed_moments_equal_one_fit(glove):
    X, Y = glove[:2000], glove[2000:4000]
    m = TranslatorMoments(50, 50)
    for start in range(0, 2000, 300):
        m.add(X[start:start + 300], Y[start:start + 300])
    whole, streamed = fit_translator(X, Y, ridge=0.01), m.translator(0.01)
    np.testing.assert_allclose(streamed.weight, whole.weight, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(streamed.bias, whole.bias, rtol=1e-9, atol=1e-12)


def test_fit_r2_and_kl_equal_sklearn_and_scipy(glove):
    from scipy.special import softmax
    from scipy.stats import entropy
    from sklearn.metrics import r2_score

    E = glove[:500]
    X, Y = glove[1000:2500], glove[3000:4500]
    t = fit_translator(X[:1200], Y[:1200], ridge=0.1)
    f = translator_fit(t, X[1200:], Y[1200:], E, layer=2, n_train=1200)
    pred = t.apply(X[1200:])
    assert f.r2 == pytest.approx(r2_score(Y[1200:], pred, multioutput="variance_weighted"), abs=1e-10)
    p = softmax(Y[1200:] @ E.T, axis=1)
    kl_tuned = np.mean([entropy(p[i], softmax(pred[i] @ E.T)) for i in range(len(p))])
    kl_plain = np.mean([entropy(p[i], softmax(X[1200 + i] @ E.T)) for i in range(len(p))])
    assert f.kl_tuned == pytest.approx(kl_tuned, rel=1e-8) and f.kl_plain == pytest.approx(kl_plain, rel=1e-8)
    assert f.top1_plain == pytest.approx(np.mean((X[1200:] @ E.T).argmax(1) == (Y[1200:] @ E.T).argmax(1)))
    assert (f.n_train, f.n_test, f.layer) == (1200, 300, 2)


def test_softmax_kl_is_zero_on_itself_and_shift_invariant(glove):
    logits = glove[:20] @ glove[:300].T
    assert np.allclose(softmax_kl(logits, logits), 0.0, atol=1e-12)
    np.testing.assert_allclose(softmax_kl(logits, logits[::-1] + 7.0), softmax_kl(logits, logits[::-1]), rtol=1e-9)


def test_bad_input_is_one_clear_error(glove):
    with pytest.raises(InputError, match="dimension 3, the vocabulary matrix 50"):
        vocabulary_logits(np.ones((2, 3)), glove[:10])
    with pytest.raises(InputError, match="vocabulary has 2 tokens"):
        project_vocabulary(glove[:1], glove[:10], ["a", "b"])
    with pytest.raises(InputError, match="k"):
        project_vocabulary(glove[:1], glove[:10], list("abcdefghij"), k=11)
    with pytest.raises(InputError, match="score"):
        project_vocabulary(glove[:1], glove[:10], list("abcdefghij"), score="l2")
    with pytest.raises(InputError, match="at least 2 tokens"):
        fit_translator(glove[:1], glove[:1])
    with pytest.raises(InputError, match="rank-deficient"):
        fit_translator(np.zeros((10, 3)), glove[:10], ridge=0.0)
