"""Text-to-concept (Moayeri et al. 2023, S280): zero-shot labels for a source space through a text encoder's space.

A linear map carries source vectors into the space of a text encoder (fitted on
items both hold, :mod:`repspace.engines.align.maps`); there each label's name
or prompt, encoded by that text encoder, is a concept vector, and a mapped item
takes the label whose vector it is nearest by cosine. No labelled source item
is used: the labels are read off text. A linear probe trained on labelled
source items (:func:`probe_accuracy`) is the supervised yardstick beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from repspace.core.arrays import as_matrix, unit_rows
from repspace.core.errors import InputError

__all__ = ["concept_scores", "probe_accuracy", "zero_shot_labels"]


def concept_scores(Z: Any, concepts: Any) -> np.ndarray:
    """Cosine of every row of ``Z`` to every concept vector; float64 ``(n, n_concepts)``.

    Examples
    --------
    >>> concept_scores([[1.0, 0.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]]).round(4).tolist()
    [[1.0, 0.0], [0.7071, 0.7071]]
    """
    z, c = as_matrix(Z, "Z", min_rows=0), as_matrix(concepts, "concepts")
    if z.shape[1] != c.shape[1]:
        raise InputError(f"the mapped rows have {z.shape[1]} dimensions and the concept vectors {c.shape[1]}; "
                         "both must be in the text encoder's space")
    return np.clip(unit_rows(np.asarray(z, np.float64)) @ unit_rows(np.asarray(c, np.float64)).T, -1.0, 1.0)


def zero_shot_labels(Z: Any, concepts: Any, labels: Any) -> np.ndarray:
    """The label of each row of ``Z``: that of its highest-cosine concept vector (first on ties).

    Examples
    --------
    >>> zero_shot_labels([[1.0, 0.1], [0.2, 1.0]], [[1.0, 0.0], [0.0, 1.0]], ["neg", "pos"]).tolist()
    ['neg', 'pos']
    """
    names = np.asarray(labels)
    scores = concept_scores(Z, concepts)
    if names.shape != (scores.shape[1],):
        raise InputError(f"{scores.shape[1]} concept vectors need as many labels, got {names.size}")
    return names[np.argmax(scores, axis=1)] if scores.shape[0] else names[:0]


def probe_accuracy(X_train: Any, y_train: Any, X_test: Any, y_test: Any, *, C: float = 1.0,
                   seed: int = 0) -> float:
    """Held-out accuracy of a linear probe: standardised features, multinomial logistic regression (L2, ``C``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> y = np.where(X[:, 0] > 0, "a", "b")
    >>> probe_accuracy(X[:100], y[:100], X[100:], y[100:]) > 0.9
    True
    """
    xtr, xte = as_matrix(X_train, "X_train"), as_matrix(X_test, "X_test")
    ytr, yte = np.asarray(y_train), np.asarray(y_test)
    if ytr.shape != (xtr.shape[0],) or yte.shape != (xte.shape[0],):
        raise InputError("probe_accuracy needs one label per row of X_train and of X_test")
    if np.unique(ytr).size < 2:
        raise InputError("the probe needs at least two classes among the training rows")
    probe = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000, random_state=seed))
    probe.fit(np.asarray(xtr, np.float64), ytr)
    return float(np.mean(probe.predict(np.asarray(xte, np.float64)) == yte))
