"""A compatibility head: a linear map onto fixed d-simplex class prototypes, so that two models share one space.

CoReS (Biondi et al., *CoReS: Compatible Representations via Stationarity*, TPAMI 2023, S055) trains every model
of a chain of updates against the same *fixed* classifier whose K class prototypes are the vertices of a regular
simplex in ``K − 1`` dimensions (Pernici et al.'s d-simplex, S261): the features are pulled towards prototypes that
never move, so the space is stationary and a later model's features stay comparable with an earlier one's.

On frozen encoders the model is a head: :class:`CompatibilityHead` learns ``z = x W + b`` (``W`` of shape
``(d, K − 1)``) with the class logits ``z Pᵀ`` against the fixed prototypes ``P`` (:func:`simplex_prototypes`),
minimising the mean cross-entropy plus ``l2 / 2 · ‖W‖²`` with L-BFGS (the objective is convex, so the optimum is
unique and the fit deterministic). Fit one head on the old model's vectors and one on the new model's, over the
same classes: the old index re-expressed through its head (``transform``; nothing is re-embedded) and the new
model's queries through theirs then live in the one simplex space. Because ``P`` has orthogonal, equal-norm
columns (``PᵀP = K/(K−1) · I``), the logits ``x (W Pᵀ) + b Pᵀ`` are exactly a multinomial logistic regression with
an L2 penalty ``(K−1)/K · l2 / 2 · ‖W Pᵀ‖²``: the test checks the head against scikit-learn's.

Examples
--------
>>> import numpy as np
>>> P = simplex_prototypes(4)
>>> P.shape, np.round(P @ P.T, 3)[0].tolist()
((4, 3), [1.0, -0.333, -0.333, -0.333])
>>> rng = np.random.default_rng(0)
>>> y = np.repeat(["a", "b", "c"], 20)
>>> X = rng.normal(size=(60, 5)) + 2 * np.repeat(np.eye(3, 5), 20, axis=0)
>>> head = CompatibilityHead().fit(X, y)
>>> head.transform(X).shape, round(float(np.mean(head.predict(X) == y)), 2)
((60, 2), 0.92)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["CompatibilityHead", "simplex_prototypes"]

#: Default L2 penalty on the head's weights (on the mean cross-entropy's scale).
DEFAULT_L2 = 1e-3
#: L-BFGS iterations of a fit, and its default tolerance (on the gradient's largest entry, and on the relative
#: change of the objective at one tenth of it).
MAX_ITER, DEFAULT_TOL = 2000, 1e-6


def simplex_prototypes(k: int) -> np.ndarray:
    """The ``k`` unit vertices of a regular simplex centred at the origin of ``R^(k−1)``: pairwise cosine
    ``−1/(k−1)``.

    The Helmert basis of the centred subspace of ``R^k`` written in coordinates: row ``c`` is class ``c``'s
    prototype (a closed form, so every fit over ``k`` classes gets the same prototypes).

    Examples
    --------
    >>> simplex_prototypes(2).tolist()
    [[-1.0], [1.0]]
    >>> round(float(simplex_prototypes(3)[0] @ simplex_prototypes(3)[1]), 3)
    -0.5
    """
    check_scalar(k, "the number of classes", int, low=2)
    # Helmert rows j = 1..k-1: ones on the first j coordinates, -j on coordinate j, 0 after; scaled to unit norm
    H = np.zeros((k - 1, k))
    for j in range(1, k):
        H[j - 1, :j] = 1.0
        H[j - 1, j] = -float(j)
        H[j - 1] /= np.sqrt(j * (j + 1.0))
    return -H.T * np.sqrt(k / (k - 1.0))


class CompatibilityHead:
    """A linear head trained against fixed d-simplex prototypes (scikit-learn style: ``fit``, ``transform``).

    Parameters
    ----------
    l2 : float
        Penalty ``l2 / 2 · ‖W‖²`` added to the mean cross-entropy.
    classes : sequence, optional
        The classes in prototype order; give the old head's ``classes_`` when fitting the new one so that both
        use the same prototype for each class (default: the sorted labels seen by ``fit``).
    tol : float
        L-BFGS stops when the gradient's largest entry is below ``tol`` or the objective changes by less than
        ``tol / 10`` relatively.

    Attributes
    ----------
    classes_ : ndarray
    prototypes_ : (K, K − 1) ndarray
    coef_ : (d, K − 1) ndarray
        ``W``.
    intercept_ : (K − 1,) ndarray
        ``b``.
    n_iter_ : int
    loss_ : float
        The objective at the optimum.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> y = np.repeat([0, 1, 2], 10)
    >>> old = CompatibilityHead().fit(rng.normal(size=(30, 4)) + np.repeat(np.eye(3, 4), 10, axis=0) * 3, y)
    >>> new = CompatibilityHead(classes=old.classes_).fit(rng.normal(size=(30, 6)), y)
    >>> new.coef_.shape, np.array_equal(new.prototypes_, old.prototypes_)
    ((6, 2), True)
    """

    def __init__(self, l2: float = DEFAULT_L2, classes: Sequence[Any] | np.ndarray | None = None,
                 tol: float = DEFAULT_TOL) -> None:
        self.l2 = l2
        self.classes = classes
        self.tol = tol

    def fit(self, X: Any, y: Any) -> CompatibilityHead:
        """Fit ``W`` and ``b`` on vectors ``X`` (n × d) and labels ``y`` (n); an item of several classes is given
        once per class (its rows then share its weight)."""
        X = np.asarray(as_matrix(X, "X", min_rows=2), dtype=np.float64)
        y = np.asarray(y, dtype=object)
        check_scalar(self.l2, "l2", float, low=0.0)
        check_scalar(self.tol, "tol", float, low=0.0, include="neither")
        if y.shape != (len(X),):
            raise InputError(f"{len(y)} labels for {len(X)} vectors")
        classes = np.array(sorted(set(y.tolist())) if self.classes is None else list(self.classes), dtype=object)
        index = {c: i for i, c in enumerate(classes.tolist())}
        if len(index) < 2:
            raise InputError(f"a compatibility head needs at least 2 classes, not {len(index)}")
        if len(index) != len(classes):
            raise InputError("the classes must be distinct")
        unknown = [v for v in set(y.tolist()) if v not in index]
        if unknown:
            raise InputError(f"labels not among the classes: {sorted(map(str, unknown))[:5]}")
        codes = np.array([index[v] for v in y.tolist()])
        P = simplex_prototypes(len(classes))
        n, d = X.shape
        m = P.shape[1]
        onehot = np.zeros((n, len(classes)))
        onehot[np.arange(n), codes] = 1.0

        def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
            W, b = theta[:d * m].reshape(d, m), theta[d * m:]
            logp = log_softmax((X @ W + b) @ P.T, axis=1)
            loss = -float(np.sum(logp * onehot)) / n + 0.5 * self.l2 * float(np.sum(W * W))
            dZ = ((np.exp(logp) - onehot) / n) @ P
            grad = np.concatenate([(X.T @ dZ + self.l2 * W).ravel(), dZ.sum(axis=0)])
            return loss, grad

        res = minimize(objective, np.zeros(d * m + m), jac=True, method="L-BFGS-B",
                       options={"maxiter": MAX_ITER, "gtol": self.tol, "ftol": self.tol / 10})
        self.classes_, self.prototypes_ = classes, P
        self.coef_, self.intercept_ = res.x[:d * m].reshape(d, m), res.x[d * m:]
        self.n_iter_, self.loss_ = int(res.nit), float(res.fun)
        return self

    def _check(self, X: Any) -> np.ndarray:
        if not hasattr(self, "coef_"):
            raise InputError("the compatibility head is not fitted: call fit first")
        X = np.asarray(as_matrix(X, "X"), dtype=np.float64)
        if X.shape[1] != self.coef_.shape[0]:
            raise InputError(f"the head was fitted on {self.coef_.shape[0]}-d vectors, not {X.shape[1]}-d")
        return X

    def transform(self, X: Any) -> np.ndarray:
        """``X W + b``: the vectors in the simplex space (compare them by cosine)."""
        return self._check(X) @ self.coef_ + self.intercept_

    def fit_transform(self, X: Any, y: Any) -> np.ndarray:
        """``fit(X, y).transform(X)``."""
        return self.fit(X, y).transform(X)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities ``softmax(z Pᵀ)``, columns in ``classes_`` order."""
        return np.exp(log_softmax(self.transform(X) @ self.prototypes_.T, axis=1))

    def predict(self, X: Any) -> np.ndarray:
        """The class of the nearest prototype by inner product."""
        return self.classes_[np.argmax(self.transform(X) @ self.prototypes_.T, axis=1)]
