"""Linear, ridge and k-sparse probes, each reported beside the score of a control task.

A probe asks whether a property of the items can be read off their vectors by a
simple (linear) model. A high score alone proves little: a flexible enough
probe memorises any labelling. Hewitt & Liang (*Designing and interpreting
probes with control tasks*, EMNLP 2019) therefore score the same probe on a
*control task* — labels that carry no information about the vectors — and
report the **selectivity** ``score − control_score``. Here every probe is run
twice, on the real labels and on control labels, with the same folds recipe,
the same model and the same seed; :class:`ProbeResult` always carries both.

Kinds
-----
``logistic``
    Classification. ``StandardScaler → LogisticRegression`` (L2, lbfgs,
    multinomial for more than two classes) at a **fixed** ``C = 1.0`` on the
    standardised features (scikit-learn's default; a probe is meant to be a
    simple, comparable reader, and a fixed ``C`` keeps the control task on the
    same footing as the real one). Main metric: accuracy; also macro-F1.
``ridge``
    Regression of a numeric ``y``. ``StandardScaler → RidgeCV`` whose ``alpha``
    is **chosen by nested CV**: ``RidgeCV``'s efficient leave-one-out over
    :data:`RIDGE_ALPHAS`, run inside each training fold only (so the control
    task gets its own, usually large, ``alpha``). Main metric: ``R²``; also
    Spearman's ρ of the predictions with ``y``.
``sparse``
    A k-sparse probe (Gurnee et al., *Finding neurons in a haystack*, 2023):
    ``StandardScaler → SelectKBest(f_classif, k) → LogisticRegression``. The
    cheap filter is the ANOVA F statistic (for two classes the square of the
    standardised class-mean difference, Gurnee et al.'s ranking), computed by
    the pipeline on the training fold only, never on the test fold. ``k`` is
    swept over :data:`SPARSE_KS` capped at ``d`` unless given; the dimensions
    picked at each ``k`` are then ranked on the full data.

Cross-validation is stratified for classification
(``StratifiedKFold(shuffle=True, random_state=seed)``) and plain
``KFold(shuffle=True, random_state=seed)`` for regression; the scaler is
fitted inside each fold (a ``Pipeline``). Everything is seeded: the same input
gives the same result, and a 1e-6 perturbation of ``X`` does not move the
folds (they depend on ``y`` and the seed only) and moves the fitted models only
by about as much (the solvers run to a tight tolerance, so they land on the
unique optimum of the strictly convex, L2-penalised loss rather than on an
iteration-count-dependent point near it).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import ConstantInputWarning, spearmanr
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.feature_selection import SelectKBest, f_classif
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import KFold, StratifiedKFold, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.interpret._labels import label_codes, labels_per_row

__all__ = [
    "CONTROLS",
    "KINDS",
    "ProbeResult",
    "RIDGE_ALPHAS",
    "SPARSE_KS",
    "control_labels",
    "probe",
    "probe_pipeline",
]

#: The probe kinds of :func:`probe`.
KINDS = ("logistic", "ridge", "sparse")
#: The control tasks of :func:`probe` (Hewitt & Liang 2019).
CONTROLS = ("permute", "random-type")
#: The ``k`` swept by the sparse probe when none is given (capped at ``d``).
SPARSE_KS = (1, 2, 4, 8, 16, 32, 64)
#: The fixed inverse regularisation strength of the logistic and sparse probes (standardised features).
DEFAULT_C = 1.0
#: The ridge penalties ``RidgeCV`` chooses from inside each training fold: 1e-3 … 1e5, two per decade.
RIDGE_ALPHAS = tuple(float(a) for a in np.logspace(-3, 5, 17))
#: lbfgs stops when the projected gradient is below this (scikit-learn's 1e-4 stops early enough that a
#: 1e-6 change of the input can move the coefficients by far more than 1e-6).
_TOL = 1e-6
_MAX_ITER = 10_000


@dataclass(frozen=True, eq=False)
class ProbeResult:
    """A cross-validated probe score beside its control-task score.

    Attributes
    ----------
    kind : str
        ``logistic``, ``ridge`` or ``sparse``.
    metric : str
        The main metric: ``accuracy`` (logistic, sparse) or ``r2`` (ridge).
    score, score_std : float
        Its mean and standard deviation (``np.std``, ``ddof=0``) over the folds.
    fold_scores : tuple of float
        Its value on each test fold, in fold order.
    control : str
        ``permute`` or ``random-type``.
    control_score, control_std : float
        The same metric for the same probe on the control labels.
    control_fold_scores : tuple of float
    selectivity : float
        ``score − control_score``.
    secondary_metric : str
        ``macro_f1`` (classification) or ``spearman`` (ridge: ρ of the
        predictions with ``y`` on each test fold).
    secondary_score, secondary_control_score : float
        Its fold means on the real and on the control labels.
    n, d : int
        Items and dimensions.
    n_classes : int or None
        Distinct labels (``None`` for ridge).
    classes : tuple or None
        The labels, sorted (``None`` for ridge).
    chance : float or None
        The majority-class rate (the accuracy of always answering the most
        frequent label); ``None`` for ridge, whose ``R²`` is 0 for the mean.
    cv, seed : int
        Folds and seed.
    regularisation : dict
        ``{"C", "chosen_by"}`` for logistic and sparse; for ridge ``{"alphas",
        "alpha_per_fold", "control_alpha_per_fold", "chosen_by"}``.
    k : int or None
        Sparse probe: the ``k`` the main scores refer to (the given ``k``, or
        the one-standard-error choice of the sweep, see :func:`probe`).
    k_sweep : tuple of dict
        Sparse probe: one ``{"k", "score", "score_std", "control_score",
        "selectivity", "dimensions"}`` per ``k`` tried.
    dimensions : tuple of int or None
        Sparse probe: the ``k`` dimensions picked on the full data, most
        selective first (largest F).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> r = probe(X, X[:, 0] > 0)
    >>> r.metric, r.score > 0.9, abs(r.control_score - 0.5) < 0.15
    ('accuracy', True, True)
    >>> sorted(r.to_dict())[:5]
    ['chance', 'classes', 'control', 'control_fold_scores', 'control_score']
    """

    kind: str
    metric: str
    score: float
    score_std: float
    fold_scores: tuple[float, ...]
    control: str
    control_score: float
    control_std: float
    control_fold_scores: tuple[float, ...]
    selectivity: float
    secondary_metric: str
    secondary_score: float
    secondary_control_score: float
    n: int
    d: int
    n_classes: int | None
    classes: tuple[Any, ...] | None
    chance: float | None
    cv: int
    seed: int
    regularisation: dict[str, Any] = field(default_factory=dict)
    k: int | None = None
    k_sweep: tuple[dict[str, Any], ...] = ()
    dimensions: tuple[int, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (tuples become lists, numpy scalars Python numbers)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "metric": self.metric,
            "score": float(self.score),
            "score_std": float(self.score_std),
            "fold_scores": [float(s) for s in self.fold_scores],
            "control": self.control,
            "control_score": float(self.control_score),
            "control_std": float(self.control_std),
            "control_fold_scores": [float(s) for s in self.control_fold_scores],
            "selectivity": float(self.selectivity),
            "secondary_metric": self.secondary_metric,
            "secondary_score": float(self.secondary_score),
            "secondary_control_score": float(self.secondary_control_score),
            "n": int(self.n),
            "d": int(self.d),
            "n_classes": None if self.n_classes is None else int(self.n_classes),
            "classes": None if self.classes is None else list(self.classes),
            "chance": None if self.chance is None else float(self.chance),
            "cv": int(self.cv),
            "seed": int(self.seed),
            "regularisation": dict(self.regularisation),
            "k": None if self.k is None else int(self.k),
            "k_sweep": [dict(e, dimensions=list(e["dimensions"])) for e in self.k_sweep],
            "dimensions": None if self.dimensions is None else [int(i) for i in self.dimensions],
        }
        return out

    def __repr__(self) -> str:
        k = "" if self.k is None else f", k={self.k}"
        return (f"ProbeResult(kind={self.kind!r}{k}, {self.metric}={self.score:.4f}±{self.score_std:.4f}, "
                f"control[{self.control}]={self.control_score:.4f}, selectivity={self.selectivity:.4f}, "
                f"n={self.n}, d={self.d})")


def probe_pipeline(kind: str = "logistic", k: int | None = None, *, C: float = DEFAULT_C) -> Pipeline:
    """The unfitted scikit-learn pipeline :func:`probe` cross-validates for ``kind``.

    ``StandardScaler`` first (fitted inside each fold), then
    ``LogisticRegression(C)`` for ``logistic``, ``SelectKBest(f_classif, k) →
    LogisticRegression(C)`` for ``sparse`` and ``RidgeCV(RIDGE_ALPHAS)`` for
    ``ridge``.

    Examples
    --------
    >>> [name for name, _ in probe_pipeline("sparse", 3).steps]
    ['scale', 'select', 'probe']
    """
    _check_kind(kind)
    scale = ("scale", StandardScaler())
    if kind == "ridge":
        return Pipeline([scale, ("probe", RidgeCV(alphas=RIDGE_ALPHAS))])
    logistic = ("probe", LogisticRegression(C=C, tol=_TOL, max_iter=_MAX_ITER))
    if kind == "sparse":
        if k is None:
            raise InputError("the sparse pipeline needs k (the number of dimensions to keep)")
        return Pipeline([scale, ("select", SelectKBest(f_classif, k=int(k))), logistic])
    return Pipeline([scale, logistic])


def control_labels(y: Any, control: str = "permute", *, types: Sequence[Any] | None = None, seed: int = 0,
                   classification: bool = True) -> np.ndarray:
    """Control-task labels (Hewitt & Liang 2019): labels that carry no information about the items' vectors.

    ``permute`` shuffles ``y`` (``np.random.default_rng(seed).permutation``),
    keeping every label's count. ``random-type`` gives each distinct type (for
    example the word a token vector belongs to) one label drawn at random from
    the label distribution of ``y`` — the class frequencies for a
    classification, the empirical distribution of the values (drawn with
    replacement) for a regression — so that items of the same type share a
    control label, as in Hewitt & Liang. Without ``types`` each item is its own
    type (i.i.d. draws from the label distribution).

    Parameters
    ----------
    y : array of shape (n,)
        The real labels (any hashable values for a classification, numbers
        for a regression).
    control : ``permute`` or ``random-type``
    types : sequence of length n, optional
        The type of each item (``random-type`` only).
    seed : int
    classification : bool
        Whether ``y`` holds classes (draw by class frequency) or values.

    Returns
    -------
    ndarray of shape (n,)
        Values taken from ``y``.

    Examples
    --------
    >>> control_labels([0, 0, 1, 1, 1], seed=0).tolist()
    [1, 1, 1, 0, 0]
    >>> c = control_labels(["a", "b", "a", "b"], "random-type", types=["x", "y", "x", "y"], seed=1)
    >>> bool(c[0] == c[2] and c[1] == c[3])
    True
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise InputError(f"y must be 1-d (one label per item), got shape {arr.shape}")
    _check_control(control)
    rng = np.random.default_rng(_check_seed(seed))
    if control == "permute":
        if types is not None:
            raise InputError("types are used by control='random-type' only")
        return arr[rng.permutation(arr.size)]
    if types is None:
        inverse, n_types = np.arange(arr.size), arr.size
    else:
        t = np.asarray(types)
        if t.ndim != 1 or t.shape[0] != arr.size:
            raise InputError(f"types must give one type per item: got {t.shape[0] if t.ndim else 0} "
                             f"types for {arr.size} labels")
        try:
            _, inverse = np.unique(t.astype(str) if t.dtype == object else t, return_inverse=True)
        except TypeError as e:
            raise InputError(f"types must be comparable values (e.g. strings): {e}") from None
        inverse = inverse.ravel()
        n_types = int(inverse.max()) + 1 if inverse.size else 0
    if classification:
        values, counts = np.unique(arr, return_counts=True)
        draws = values[rng.choice(values.size, size=n_types, p=counts / counts.sum())]
    else:
        draws = arr[rng.integers(0, arr.size, size=n_types)]
    return draws[inverse]


def probe(X: Any, y: Any, kind: str = "logistic", k: int | None = None, cv: int = 5, control: str = "permute",
          *, types: Sequence[Any] | None = None, seed: int = 0, C: float = DEFAULT_C) -> ProbeResult:
    """Cross-validated probe of ``y`` from ``X``, with its control task and selectivity.

    Parameters
    ----------
    X : array of shape (n, d)
        The vectors (finite numbers).
    y : array of shape (n,)
        Labels (any sortable values, at least two classes, each with at least
        ``cv`` items) for ``logistic`` and ``sparse``; numbers (not all equal)
        for ``ridge``.
    kind : ``logistic``, ``ridge`` or ``sparse``
        See the module docstring for the pipelines and how they are
        regularised (fixed ``C``; ``RidgeCV`` nested in each training fold).
    k : int, optional
        ``sparse`` only: the number of dimensions, ``1 ≤ k ≤ d``. Without it
        ``k`` is swept over :data:`SPARSE_KS` (capped at ``d``) and the main
        scores are those of the **smallest k whose mean score is within one
        standard error of the best** (the one-standard-error rule, Hastie,
        Tibshirani & Friedman §7.10; the standard error is the fold scores'
        ``std(ddof=1)/√cv``): it favours the sparsest probe that does as well,
        and is less optimistic than the best of the sweep. Every ``k``'s
        scores are in :attr:`ProbeResult.k_sweep`.
    cv : int
        Folds, ``2 ≤ cv ≤ n``.
    control : ``permute`` or ``random-type``
        The control task (:func:`control_labels`). Its score uses the same
        pipeline and fold recipe (the folds are drawn on the control labels
        with the same seed).
    types : sequence of length n, optional
        Item types for ``random-type`` (each type gets one random label);
        without them every item is its own type.
    seed : int
        Seeds the folds and the control labels.
    C : float
        Inverse L2 strength of the logistic and sparse probes.

    Returns
    -------
    ProbeResult

    Raises
    ------
    InputError
        NaN / inf in ``X``, ``y`` of another length, a single class or a class
        with fewer than ``cv`` items, a constant ``y`` for ridge, fewer items
        than folds, ``k`` outside ``[1, d]`` or given for another kind, an
        unknown ``kind`` or ``control``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 10))
    >>> r = probe(X, X[:, 2] - X[:, 7] > 0, kind="sparse", k=2)
    >>> r.dimensions, r.score > 0.9, r.selectivity > 0.3
    ((2, 7), True, True)
    >>> r = probe(X, 2 * X[:, 0] + 0.5 * rng.standard_normal(300), kind="ridge")
    >>> round(r.score, 2), abs(r.control_score) < 0.05
    (0.93, True)
    >>> probe(X, np.zeros(300))
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: y has a single class (0.0): a classification probe needs at least two
    """
    _check_kind(kind)
    _check_control(control)
    seed = _check_seed(seed)
    cv = check_scalar(cv, "cv", int, low=2)
    C = check_scalar(C, "C", float, low=0, include="neither")
    X = as_matrix(X, "X")
    n, d = X.shape
    if n < cv:
        raise InputError(f"X has {n} items, fewer than cv={cv} folds")
    if k is not None:
        if kind != "sparse":
            raise InputError(f"k applies to kind='sparse' only, not kind={kind!r}")
        k = check_scalar(k, "k", int, low=1, high=d)
    if control == "permute" and types is not None:
        raise InputError("types are used by control='random-type' only")
    Xf = np.asarray(X, dtype=np.float64)
    classification = kind != "ridge"
    if classification:
        target, classes = _classes(y, n, cv)
        chance: float | None = float(np.bincount(target).max() / n)
        ctrl = control_labels(target, control, types=types, seed=seed)
        if np.unique(ctrl).size < 2:
            raise InputError("the random-type control drew the same label for every type; "
                             "give more types or use control='permute'")
        splitter: Any = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    else:
        target, classes, chance = _values(y, n), None, None
        ctrl = control_labels(target, control, types=types, seed=seed, classification=False)
        if np.ptp(ctrl) == 0:
            raise InputError("the random-type control drew the same value for every type; "
                             "give more types or use control='permute'")
        splitter = KFold(n_splits=cv, shuffle=True, random_state=seed)
    metric, secondary = ("accuracy", "macro_f1") if classification else ("r2", "spearman")
    scoring = {metric: metric, secondary: _MACRO_F1 if classification else _SPEARMAN}

    def run(pipe: Pipeline, labels: np.ndarray, is_control: bool) -> dict[str, Any]:
        return _cross_validate(pipe, Xf, labels, splitter, scoring, is_control, keep=kind == "ridge")

    common: dict[str, Any] = dict(kind=kind, metric=metric, control=control, secondary_metric=secondary, n=n, d=d,
                                  n_classes=None if classes is None else len(classes),
                                  classes=None if classes is None else tuple(classes), chance=chance, cv=cv,
                                  seed=seed)
    if kind != "sparse":
        pipe = probe_pipeline(kind, C=C)
        real, fake = run(pipe, target, False), run(pipe, ctrl, True)
        if kind == "ridge":
            reg: dict[str, Any] = {
                "chosen_by": "RidgeCV leave-one-out inside each training fold",
                "alphas": list(RIDGE_ALPHAS),
                "alpha_per_fold": [float(e["probe"].alpha_) for e in real["estimator"]],
                "control_alpha_per_fold": [float(e["probe"].alpha_) for e in fake["estimator"]],
            }
        else:
            reg = {"C": float(C), "chosen_by": "fixed"}
        return ProbeResult(**common, **_summary(real, fake, metric, secondary), regularisation=reg)

    ks = (int(k),) if k is not None else tuple(sorted({min(kk, d) for kk in SPARSE_KS}))
    runs = [(kk, run(probe_pipeline("sparse", kk, C=C), target, False),
             run(probe_pipeline("sparse", kk, C=C), ctrl, True)) for kk in ks]
    ranking = _full_data_ranking(Xf, target)
    sweep = []
    for kk, real, fake in runs:
        s = _summary(real, fake, metric, secondary)
        sweep.append({"k": kk, "score": s["score"], "score_std": s["score_std"], "control_score": s["control_score"],
                      "selectivity": s["selectivity"], "dimensions": ranking(kk)})
    means = np.array([e["score"] for e in sweep])
    best = int(np.argmax(means))
    se = float(np.std(runs[best][1]["test_" + metric], ddof=1) / np.sqrt(cv))
    chosen = int(np.flatnonzero(means >= means[best] - se)[0])
    kk, real, fake = runs[chosen]
    return ProbeResult(**common, **_summary(real, fake, metric, secondary),
                       regularisation={"C": float(C), "chosen_by": "fixed"}, k=kk, k_sweep=tuple(sweep),
                       dimensions=sweep[chosen]["dimensions"])


# -- helpers ----------------------------------------------------------------------------------------------------


def _spearman_score(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Spearman's ρ of predictions with the truth; 0 when either is constant (ρ undefined)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        rho = float(spearmanr(y_true, y_pred).statistic)
    return rho if np.isfinite(rho) else 0.0


_SPEARMAN = make_scorer(_spearman_score)
_MACRO_F1 = make_scorer(f1_score, average="macro", zero_division=0.0)


def _cross_validate(pipe: Pipeline, X: np.ndarray, y: np.ndarray, splitter: Any, scoring: dict[str, Any],
                    is_control: bool, keep: bool) -> dict[str, Any]:
    with warnings.catch_warnings():
        # f_classif on a constant column (F undefined; SelectKBest ranks it last), and on control labels a class
        # rarer than the folds or never predicted: expected, and handled (zero_division=0).
        warnings.filterwarnings("ignore", message=r"Features .* are constant", category=UserWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"sklearn\.feature_selection")
        if is_control:
            warnings.filterwarnings("ignore", message=r"The least populated class", category=UserWarning)
            warnings.simplefilter("ignore", UndefinedMetricWarning)
        try:
            return cross_validate(pipe, X, y, cv=splitter, scoring=scoring, error_score="raise",
                                  return_estimator=keep)
        except ValueError as e:
            if is_control:
                raise InputError(f"the control labels leave a training fold unusable ({e}); "
                                 "use control='permute' or more types") from None
            raise


def _summary(real: dict[str, Any], fake: dict[str, Any], metric: str, secondary: str) -> dict[str, Any]:
    s, c = real["test_" + metric], fake["test_" + metric]
    score, control = float(np.mean(s)), float(np.mean(c))
    return dict(score=score, score_std=float(np.std(s)), fold_scores=tuple(float(v) for v in s),
                control_score=control, control_std=float(np.std(c)), control_fold_scores=tuple(float(v) for v in c),
                selectivity=score - control, secondary_score=float(np.mean(real["test_" + secondary])),
                secondary_control_score=float(np.mean(fake["test_" + secondary])))


def _full_data_ranking(X: np.ndarray, y: np.ndarray) -> Any:
    """``k ↦`` the ``k`` dimensions ``SelectKBest(f_classif, k)`` keeps on the full data, largest F first."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Features .* are constant", category=UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        f = np.nan_to_num(f_classif(X, y)[0], nan=-np.inf)

    def top(k: int) -> tuple[int, ...]:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Features .* are constant", category=UserWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            keep = np.flatnonzero(SelectKBest(f_classif, k=k).fit(X, y).get_support())
        return tuple(int(i) for i in keep[np.lexsort((keep, -f[keep]))])

    return top


def _classes(y: Any, n: int, cv: int) -> tuple[np.ndarray, list[Any]]:
    """Integer codes of the labels, and the labels (sorted, as Python values)."""
    labels, codes, counts = label_codes(labels_per_row(y, n, "y"), "y")
    values = labels.tolist()
    if len(values) < 2:
        raise InputError(f"y has a single class ({values[0]!r}): a classification probe needs at least two")
    if counts.min() < cv:
        i = int(np.argmin(counts))
        raise InputError(f"class {values[i]!r} has {int(counts[i])} items, fewer than cv={cv} folds")
    return codes, values


def _values(y: Any, n: int) -> np.ndarray:
    arr = labels_per_row(y, n, "y")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"a ridge probe needs numeric y, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise InputError(f"y has NaN or infinite values (item {int(np.flatnonzero(~np.isfinite(arr))[0])})")
    if np.ptp(arr) == 0:
        raise InputError("y is constant: there is nothing for a ridge probe to predict")
    return arr


def _check_kind(kind: str) -> None:
    check_choice(kind, "kind", KINDS)


def _check_control(control: str) -> None:
    check_choice(control, "control", CONTROLS)


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise InputError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    return int(seed)
