"""How well concept erasure and group maps work: held-out probe accuracy before and after, and displacement.

Owns :func:`evaluate_erasure` (:class:`ErasureReport`: linear probe accuracy
before and after LEACE, majority rate, how far points moved) and
:func:`compare_group_maps` (:class:`GroupMapComparison`: no map, the
mean-difference direction removed, LEACE and the Gaussian map, each scored by
linear and quadratic probes).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, block64
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.interpret.erasure.common import _class_ids
from repspace.engines.interpret.erasure.leace import LeaceEraser
from repspace.engines.interpret.erasure.transport import GaussianTransport

__all__ = ["GROUP_MAP_METHODS", "ErasureReport", "GroupMapComparison", "GroupMapScore", "compare_group_maps",
           "evaluate_erasure"]

#: The methods :func:`compare_group_maps` scores, in order.
GROUP_MAP_METHODS = ("none", "mean_direction", "leace", "gaussian_ot")


def _dense(X: Any, name: str) -> np.ndarray:
    arr = as_matrix(X, name, min_rows=0, scan=False)
    return block64(arr, slice(None), name)


def _probe_accuracy(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray) -> float:
    """Held-out accuracy of standardised L2 logistic regression (scikit-learn, lbfgs: deterministic)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    return float(clf.fit(X_train, y_train).score(X_test, y_test))


def _quadratic_accuracy(Z_train: np.ndarray, y_train: np.ndarray, Z_test: np.ndarray, y_test: np.ndarray,
                        reg: float = 1e-3) -> float:
    """Held-out accuracy of quadratic discriminant analysis: one Gaussian per class, ``(1 − reg)C + reg·I``.

    The same rule as scikit-learn's ``QuadraticDiscriminantAnalysis(reg_param=reg)`` (class priors from
    the training rows, covariances with ``n − 1``), on coordinates of unit spread; written out because
    it needs only a ``dims × dims`` eigendecomposition per class.
    """
    classes = np.unique(y_train)
    logp = np.empty((Z_test.shape[0], classes.shape[0]))
    for j, c in enumerate(classes):
        Zc = Z_train[y_train == c]
        C = (1 - reg) * np.cov(Zc.T, ddof=1).reshape(Z_train.shape[1], -1) + reg * np.eye(Z_train.shape[1])
        lam, V = np.linalg.eigh(C)
        proj = ((Z_test - Zc.mean(axis=0)) @ V) / np.sqrt(lam)
        logp[:, j] = -0.5 * (np.sum(proj**2, axis=1) + np.sum(np.log(lam))) + np.log(Zc.shape[0] / y_train.shape[0])
    return float(np.mean(classes[np.argmax(logp, axis=1)] == y_test))


def _split(y: np.ndarray, test_size: float, random_state: int) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.model_selection import train_test_split

    test_size = check_scalar(test_size, "test_size", float, low=0, high=1, include="neither")
    counts = np.bincount(y)
    if counts.min() < 2:
        raise InputError(f"every class needs at least 2 rows for a held-out split; the smallest has {counts.min()}")
    idx = np.arange(y.shape[0])
    try:
        train, test = train_test_split(idx, test_size=test_size, random_state=random_state, stratify=y)
    except ValueError as e:
        raise InputError(f"cannot split the rows: {str(e).splitlines()[0]}") from None
    return np.sort(train), np.sort(test)


def _majority(y_train: np.ndarray, y_test: np.ndarray) -> float:
    """Accuracy on the test rows of always predicting the most frequent training class."""
    return float(np.mean(y_test == np.bincount(y_train).argmax()))


class _FieldsByName:
    """``to_dict`` for a result whose fields are all plain numbers and strings."""

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (JSON-able)."""
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class ErasureReport(_FieldsByName):
    """What :func:`evaluate_erasure` measured: held-out linear decodability before and after LEACE.

    Attributes
    ----------
    n_train, n_test : int
    n_classes : int
    rank : int
        Directions erased.
    majority_rate : float
        Test accuracy of always predicting the most frequent training class.
    accuracy_before, accuracy_after : float
        Held-out accuracy of a logistic probe trained on the (erased) training rows.
    displacement : float
        Mean ``‖r(x) − x‖²`` over the test rows.
    variance : float
        Mean ``‖x − μ‖²`` over the test rows (the scale ``displacement`` compares with).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, size=300)
    >>> X = rng.normal(size=(300, 4)) + np.outer(y, [2.0, 0.0, 0.0, 1.0])
    >>> r = evaluate_erasure(X, y)
    >>> r.n_train, r.n_test, r.n_classes, r.rank  # three classes: two directions erased
    (210, 90, 3, 2)
    >>> r.accuracy_before > 0.8, r.accuracy_after < 0.5, 0 < r.displacement < r.variance
    (True, True, True)
    >>> sorted(r.to_dict())[:3]
    ['accuracy_after', 'accuracy_before', 'displacement']
    """

    n_train: int
    n_test: int
    n_classes: int
    rank: int
    majority_rate: float
    accuracy_before: float
    accuracy_after: float
    displacement: float
    variance: float


def evaluate_erasure(X: Any, labels: Any, *, test_size: float = 0.3, random_state: int = 0,
                     tol: float = 1e-8) -> ErasureReport:
    """Fit LEACE on a stratified training split and probe the held-out rows before and after.

    The probe is a standardised L2 logistic regression (scikit-learn). On the
    training rows LEACE makes the class means equal, so the best linear probe
    there is a constant, and the held-out accuracy after erasure falls to about
    the majority rate.

    Parameters
    ----------
    X : (n, d) array
    labels : (n,) class ids
    test_size : float
        Share of rows held out (stratified by class).
    random_state : int
        Seed of the split.
    tol : float
        :class:`LeaceEraser`'s ``tol``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, size=600)
    >>> X = rng.normal(size=(600, 5)) + np.outer(y, [3.0, 0.0, 0.0, 0.0, 0.0])
    >>> r = evaluate_erasure(X, y)
    >>> r.accuracy_before > 0.9, r.accuracy_after <= r.majority_rate + 0.02
    (True, True)
    """
    arr = _dense(X, "X")
    _, codes = _class_ids(labels, arr.shape[0])
    train, test = _split(codes, test_size, random_state)
    eraser = LeaceEraser(tol=tol).fit(arr[train], codes[train])
    Xtr, Xte = arr[train], arr[test]
    Etr, Ete = eraser.transform(Xtr), eraser.transform(Xte)
    return ErasureReport(
        n_train=int(train.shape[0]), n_test=int(test.shape[0]), n_classes=int(codes.max() + 1), rank=eraser.rank_,
        majority_rate=_majority(codes[train], codes[test]),
        accuracy_before=_probe_accuracy(Xtr, codes[train], Xte, codes[test]),
        accuracy_after=_probe_accuracy(Etr, codes[train], Ete, codes[test]),
        displacement=float(np.mean(np.sum((Ete - Xte) ** 2, axis=1))),
        variance=float(np.mean(np.sum((Xte - eraser.mean_) ** 2, axis=1))),
    )


@dataclass(frozen=True)
class GroupMapScore(_FieldsByName):
    """One method of :func:`compare_group_maps`.

    Attributes
    ----------
    method : str
        ``none``, ``mean_direction`` (project out the difference of the group
        means), ``leace`` or ``gaussian_ot`` (:class:`GaussianTransport`, A moved to B).
    accuracy : float
        Held-out accuracy of a logistic probe for the group, trained on the mapped training rows.
    quadratic_accuracy : float
        The same with a quadratic discriminant (QDA, one Gaussian per group) on the ``dims`` PCA
        coordinates of the pooled training rows: what second-order differences give away.
    displacement : float
        Mean ``‖x' − x‖²`` over all rows of both groups (a row that is not moved counts 0).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = compare_group_maps(rng.normal(size=(200, 3)), rng.normal(size=(200, 3)) + [2.0, 0.0, 0.0], dims=3)
    >>> s = c.score("none")  # the identity: nothing moves and the shift is plain to see
    >>> s.method, s.displacement, s.accuracy > 0.8
    ('none', 0.0, True)
    >>> c.score("leace").accuracy < 0.65, c.score("leace").displacement > 0
    (True, True)
    >>> sorted(s.to_dict())
    ['accuracy', 'displacement', 'method', 'quadratic_accuracy']
    """

    method: str
    accuracy: float
    quadratic_accuracy: float
    displacement: float


@dataclass(frozen=True)
class GroupMapComparison:
    """What :func:`compare_group_maps` measured, one :class:`GroupMapScore` per method.

    Attributes
    ----------
    n_a, n_b : int
        Rows of each group.
    n_test : int
        Held-out rows (both groups).
    dims : int
    majority_rate : float
        Test accuracy of always predicting the larger training group.
    scores : tuple of GroupMapScore
        In the order of ``GROUP_MAP_METHODS``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = compare_group_maps(rng.normal(size=(200, 3)), rng.normal(size=(300, 3)) + [2.0, 0.0, 0.0], dims=3)
    >>> c.n_a, c.n_b, c.n_test, c.dims, c.majority_rate
    (200, 300, 150, 3, 0.6)
    >>> [s.method for s in c.scores]
    ['none', 'mean_direction', 'leace', 'gaussian_ot']
    >>> c.score("pca")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: method must be one of none, mean_direction, leace, gaussian_ot, not 'pca'
    """

    n_a: int
    n_b: int
    n_test: int
    dims: int
    majority_rate: float
    scores: tuple[GroupMapScore, ...]

    def score(self, method: str) -> GroupMapScore:
        """The score of one method by name."""
        check_choice(method, "method", [s.method for s in self.scores])
        return next(s for s in self.scores if s.method == method)

    def to_dict(self) -> dict[str, Any]:
        """The fields by name, ``scores`` as a list of dicts."""
        out = {k: v for k, v in asdict(self).items() if k != "scores"}
        out["scores"] = [s.to_dict() for s in self.scores]
        return out


def compare_group_maps(X_a: Any, X_b: Any, *, dims: int = 10, reg: float = 0.0, test_size: float = 0.3,
                       random_state: int = 0) -> GroupMapComparison:
    """How well each map makes two groups indistinguishable, and how far it moves the points.

    Each method is fitted on a stratified training split of the rows of both
    groups and applied to all rows:

    * ``none`` — the identity (the baseline);
    * ``mean_direction`` — remove one direction: ``x − ((x − c)·u)u`` with ``u``
      the unit difference of the group means and ``c`` the pooled mean;
    * ``leace`` — :class:`LeaceEraser` with the group as the concept (for two
      groups it also removes one direction, obliquely, moving points least);
    * ``gaussian_ot`` — :class:`GaussianTransport` (``dims``, ``reg``) applied
      to group A only; group B stays where it is.

    Then a logistic probe and a quadratic discriminant (one Gaussian per group,
    on the ``dims`` PCA coordinates of the pooled training rows, each divided
    by its standard deviation, covariances regularised as ``0.999C + 0.001I``
    so that a direction a map flattened stays usable) are trained on the mapped training rows and
    scored on the mapped held-out rows.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xa = rng.normal(size=(400, 4)) * [1.0, 3.0, 1.0, 1.0]
    >>> Xb = rng.normal(size=(600, 4)) * [3.0, 1.0, 1.0, 1.0] + [0.0, 0.0, 1.0, 0.0]
    >>> c = compare_group_maps(Xa, Xb, dims=4)
    >>> c.majority_rate
    0.6
    >>> for s in c.scores:
    ...     print(f"{s.method:15} {s.accuracy:.2f} {s.quadratic_accuracy:.2f} {s.displacement:.2f}")
    none            0.70 0.88 0.00
    mean_direction  0.60 0.83 1.45
    leace           0.60 0.83 1.34
    gaussian_ot     0.60 0.60 3.47
    """
    A, B = _dense(X_a, "X_a"), _dense(X_b, "X_b")
    if A.shape[1] != B.shape[1]:
        raise InputError(f"X_a has {A.shape[1]} dimensions and X_b {B.shape[1]}: both groups must live in one space")
    X = np.vstack([A, B])
    y = np.repeat([0, 1], [A.shape[0], B.shape[0]])
    train, test = _split(y, test_size, random_state)
    tr_a, tr_b = train[y[train] == 0], train[y[train] == 1]
    ot_map = GaussianTransport(dims=dims, reg=reg).fit(X[tr_a], X[tr_b])

    delta = X[tr_b].mean(axis=0) - X[tr_a].mean(axis=0)
    norm = float(np.linalg.norm(delta))
    u = delta / norm if norm > 0 else delta
    c = X[train].mean(axis=0)
    moved_ot = X.copy()
    moved_ot[y == 0] = ot_map.transform(X[y == 0])
    mapped = {
        "none": X,
        "mean_direction": X - np.outer((X - c) @ u, u),
        "leace": LeaceEraser().fit(X[train], y[train]).transform(X),
        "gaussian_ot": moved_ot,
    }

    ev = ot_map.explained_variance_
    unit = np.sqrt(np.where(ev > ev[0] * 1e-12, ev, ev[0]))  # PCA coordinates in units of their pooled spread
    scores = []
    for method in GROUP_MAP_METHODS:
        M = mapped[method]
        Z = ot_map.project(M) / unit
        scores.append(GroupMapScore(
            method=method,
            accuracy=_probe_accuracy(M[train], y[train], M[test], y[test]),
            quadratic_accuracy=_quadratic_accuracy(Z[train], y[train], Z[test], y[test]),
            displacement=float(np.mean(np.sum((M - X) ** 2, axis=1))),
        ))
    return GroupMapComparison(n_a=int(A.shape[0]), n_b=int(B.shape[0]), n_test=int(test.shape[0]), dims=int(dims),
                              majority_rate=_majority(y[train], y[test]), scores=tuple(scores))
