"""The compatibility engine against independent computations: scikit-learn's multinomial logistic regression for
the d-simplex head, a loop over pairs for Shen et al.'s strict criterion, scikit-learn's average precision."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score

from repspace.core.errors import InputError
from repspace.engines.analyze import (
    CompatibilityHead,
    compatibility,
    label_retrieval,
    pair_criterion,
    simplex_prototypes,
)

pytestmark = pytest.mark.numerics


@pytest.mark.parametrize("k", [2, 3, 7, 50])
def test_simplex_prototypes_are_a_regular_simplex(k):
    P = simplex_prototypes(k)
    G = P @ P.T
    # unit vertices, every pair at cosine -1/(k-1), centred; P^T P = k/(k-1) I (float64 sums of k terms)
    assert P.shape == (k, k - 1)
    assert np.allclose(np.diag(G), 1.0, atol=1e-12)
    assert np.allclose(G[~np.eye(k, dtype=bool)], -1.0 / (k - 1), atol=1e-12)
    assert np.allclose(P.sum(axis=0), 0.0, atol=1e-12)
    assert np.allclose(P.T @ P, k / (k - 1) * np.eye(k - 1), atol=1e-12)


def test_head_equals_sklearn_multinomial_logistic_regression(glove_vectors):
    """The head's logits x W Pᵀ + b Pᵀ are a multinomial logistic regression with penalty (K−1)/K · l2/2 ‖W Pᵀ‖²:
    scikit-learn's with C = K / (n · l2 · (K − 1)) reaches the same optimum (a strictly convex problem)."""
    X = np.asarray(glove_vectors[:600, :20], dtype=np.float64)
    y = np.argmax(X[:, :4], axis=1)  # 4 classes read off the first dimensions of real vectors
    n, k, l2 = len(X), 4, 1e-2
    head = CompatibilityHead(l2=l2, tol=1e-10).fit(X, y)
    ref = LogisticRegression(C=k / (n * l2 * (k - 1)), tol=1e-12, max_iter=10_000).fit(X, y)
    p_ours, p_ref = head.predict_proba(X), ref.predict_proba(X)
    # both solvers stop at gradient norms near 1e-8; probabilities are Lipschitz in the weights at that scale
    assert np.max(np.abs(p_ours - p_ref)) < 1e-5
    V = head.coef_ @ head.prototypes_.T  # (d, K) logit weights, centred across classes like scikit-learn's
    assert np.allclose(V, ref.coef_.T - ref.coef_.T.mean(axis=1, keepdims=True), atol=1e-4 * np.abs(V).max())
    assert list(head.classes_) == [0, 1, 2, 3] and head.n_iter_ > 0


def test_a_new_head_over_the_old_classes_shares_the_prototypes_and_refuses_bad_input(glove_vectors):
    X = np.asarray(glove_vectors[:200, :10], dtype=np.float64)
    y = np.where(X[:, 0] > 0, "pos", "neg")
    old = CompatibilityHead().fit(X, y)
    new = CompatibilityHead(classes=old.classes_).fit(X @ np.random.default_rng(0).normal(size=(10, 16)), y)
    assert np.array_equal(new.prototypes_, old.prototypes_) and new.transform(np.ones((3, 16))).shape == (3, 1)
    with pytest.raises(InputError, match="at least 2 classes"):
        CompatibilityHead().fit(X, ["a"] * 200)
    with pytest.raises(InputError, match="not among the classes"):
        CompatibilityHead(classes=["pos", "other"]).fit(X, y)
    with pytest.raises(InputError, match="fitted on 10-d"):
        old.transform(np.ones((2, 3)))
    with pytest.raises(InputError, match="not fitted"):
        CompatibilityHead().transform(X)


def test_pair_criterion_equals_a_loop_over_pairs(glove_vectors):
    G = np.asarray(glove_vectors[:150], dtype=np.float64)
    rng = np.random.default_rng(1)
    q_old = G[:40] + 0.3 * rng.normal(size=(40, 50))
    q_new = G[:40] + 0.3 * rng.normal(size=(40, 50))
    rel = rng.random((40, 150)) < 0.05
    rel[np.arange(40), np.arange(40)] = True
    p = pair_criterion(q_old, q_new, G, rel)
    cos = lambda a, b: float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))  # noqa: E731
    closer = farther = n_rel = 0
    for i in range(40):
        for j in range(150):
            s_new, s_old = cos(q_new[i], G[j]), cos(q_old[i], G[j])
            if rel[i, j]:
                n_rel += 1
                closer += s_new >= s_old
            else:
                farther += s_new <= s_old
    assert (p.n_relevant, p.n_irrelevant) == (n_rel, 40 * 150 - n_rel)
    # a pair whose two cosines agree to rounding could fall either way: one pair's share of slack
    assert p.relevant_closer == pytest.approx(closer / n_rel, abs=1.5 / n_rel)
    assert p.irrelevant_farther == pytest.approx(farther / (6000 - n_rel), abs=1.5 / (6000 - n_rel))
    assert 0.2 < p.relevant_closer < 0.8 and not p.strict
    same = pair_criterion(q_old, q_old, G, rel)  # an unchanged model meets every inequality with equality
    assert same.strict and same.relevant_closer == same.irrelevant_farther == 1.0


def test_pair_criterion_does_not_flip_on_rounding(glove_vectors):
    """The same queries computed in another order (rotated and back: float64 rounding only) meet every
    inequality, as the unchanged queries do; a real change of 1e-9 is still counted."""
    G = np.asarray(glove_vectors[:200], dtype=np.float64)
    rng = np.random.default_rng(2)
    q = G[:50] + 0.3 * rng.normal(size=(50, 50))
    R = np.linalg.qr(rng.normal(size=(50, 50)))[0]
    again = (q @ R) @ R.T
    assert 0 < np.abs(again - q).max() < 1e-13
    rel = rng.random((50, 200)) < 0.05
    p = pair_criterion(q, again, G, rel)
    assert p.strict and p.relevant_closer == p.irrelevant_farther == 1.0
    moved = pair_criterion(q, q + 1e-9 * rng.normal(size=q.shape), G, rel)
    assert 0.2 < moved.relevant_closer < 0.8 and not moved.strict


def test_empirical_criterion_and_update_gain():
    p = pair_criterion(np.eye(2), np.eye(2), np.eye(2), np.eye(2))
    c = compatibility(0.30, 0.36, p, new=0.42)
    assert c.compatible and c.update_gain == pytest.approx(0.5, abs=1e-12)
    assert not compatibility(0.3, 0.3, p).compatible and compatibility(0.3, 0.3, p).update_gain is None
    assert compatibility(0.3, 0.2, p, new=0.3).update_gain is None  # no re-indexing gain to share


def test_label_retrieval_equals_sklearn_average_precision(glove_vectors):
    X = np.asarray(glove_vectors[:300], dtype=np.float64)
    labels = np.argmax(X[:, :5], axis=1)
    q, g, yq, yg = X[:60], X[60:], labels[:60], labels[60:]
    r = label_retrieval(q, g, yq, yg)
    S = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (g / np.linalg.norm(g, axis=1, keepdims=True)).T
    aps = [average_precision_score(yg == yq[i], S[i]) for i in range(60) if (yg == yq[i]).any()]
    top1 = [float(yg[np.argmax(S[i])] == yq[i]) for i in range(60) if (yg == yq[i]).any()]
    assert r.n_scored == len(aps) and r.map == pytest.approx(np.mean(aps), abs=1e-12)
    assert r.top1 == pytest.approx(np.mean(top1), abs=1e-12)
    with pytest.raises(InputError, match="no query has an item of its label"):
        label_retrieval(q, g, ["z"] * 60, yg)
