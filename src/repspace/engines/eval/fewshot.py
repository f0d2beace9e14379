"""Frozen vectors, few labels: the linear probe on k examples per class beside the probe on every label (FEET, S078).

FEET (Lee, Lee & Chiang 2024, "FEET: A Framework for Evaluating Embedding
Techniques") asks how much of a frozen model's classification quality survives when only a
handful of labelled examples exist. :func:`few_shot` answers it on a task's
training and test splits: the same linear probe as
:func:`~repspace.engines.eval.labels.classification`
(:func:`~repspace.engines.eval.labels.linear_probe`) is fitted on all the
training items, and on ``k`` items per class drawn at random
(:func:`sample_shots`) for each ``k`` in ``shots``, each ``k`` repeated over
``draws`` seeded draws. Every setting is scored on the whole test split.
FEET's own few-shot scenario fine-tunes the model on the few examples; here
the model stays frozen and only the probe learns from them, so the curve
measures the vectors, not a training recipe.

Two spreads are reported for a k-shot setting, because they answer two
questions. Across draws: how much the score depends on *which* k examples
were labelled (the 2.5 and 97.5 percentiles of the per-draw accuracies,
``accuracy_draw_low`` / ``accuracy_draw_high``, and their standard deviation).
Over test items: how precisely the test split measures the mean accuracy (the
bootstrap interval of :attr:`TaskResult.interval`, each test item's unit the
fraction of the draws that predicted it right, whose mean is the main score).

Examples
--------
>>> rng = np.random.default_rng(0)
>>> x = np.vstack([rng.normal(0, 1, (30, 3)) + [4, 0, 0], rng.normal(0, 1, (30, 3)) + [0, 4, 0]])
>>> y = ["a"] * 30 + ["b"] * 30
>>> rows = few_shot(x[::2], y[::2], train=(x[1::2], y[1::2]), shots=(1, 4), draws=5, bootstrap=0)
>>> [(r.task_name, r.info["shots"], round(r.main_score, 2)) for r in rows]
[('fewshot-1', 1, 1.0), ('fewshot-4', 4, 1.0), ('fewshot-all', 'all', 1.0)]
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval._split import train_test
from repspace.engines.eval.labels import linear_probe
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval, mean_statistic
from repspace.engines.eval.units import Units

__all__ = ["DEFAULT_DRAWS", "DEFAULT_SHOTS", "few_shot", "parse_counts", "sample_shots"]

#: Examples per class of the few-shot settings: a curve from one labelled example per class to a small set.
DEFAULT_SHOTS = (1, 4, 16)
#: Seeded draws of each k-shot setting (as MTEB's 10 experiments).
DEFAULT_DRAWS = 10
#: The share of the per-draw accuracies between ``accuracy_draw_low`` and ``accuracy_draw_high``.
DRAW_LEVEL = 0.95


def parse_counts(value: str | int | Sequence[int], what: str = "shots") -> tuple[int, ...]:
    """Positive counts from ``"1,4,16"`` (or an int, or a sequence of ints): distinct, in increasing order.

    Examples
    --------
    >>> parse_counts("16, 1,4"), parse_counts(5), parse_counts([10, 1])
    ((1, 4, 16), (5,), (1, 10))
    >>> parse_counts("1,x")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: shots must be positive whole numbers such as 1,4,16, not '1,x'
    """
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",") if p.strip()]
        if not parts or not all(p.isdecimal() for p in parts):
            raise InputError(f"{what} must be positive whole numbers such as 1,4,16, not {value!r}")
        items: list[Any] = [int(p) for p in parts]
    else:
        items = [value] if isinstance(value, (int, np.integer)) else list(value)
    counts = sorted({check_scalar(v, what, int, low=1) for v in items})
    if not counts:
        raise InputError(f"give at least one count of {what}")
    return tuple(counts)


def sample_shots(labels: Sequence[Any] | np.ndarray, k: int, seed: int | Sequence[int] = 0,
                 names: Sequence[str] | None = None) -> np.ndarray:
    """Exactly ``k`` items of each class, drawn without replacement: their indices, in increasing order.

    ``numpy.random.default_rng(seed)`` draws the classes' members in the
    order of the sorted classes; the same seed gives the same items.

    Parameters
    ----------
    labels : sequence
        One label per training item.
    k : int
        Items drawn per class.
    seed : int or sequence of int
        The draw's seed (:func:`few_shot` passes ``(seed, k, draw)``).
    names : sequence of str, optional
        The classes' names in the error message (default: the labels themselves).

    Raises
    ------
    InputError
        When a class has fewer than ``k`` items: a k-shot probe on fewer
        examples of one class would not be a k-shot probe, so it is refused
        (lower the shots, or label more of that class).

    Examples
    --------
    >>> y = ["a", "a", "a", "b", "b", "c", "c", "c"]
    >>> picked = sample_shots(y, 2, seed=0)
    >>> sorted(y[i] for i in picked)
    ['a', 'a', 'b', 'b', 'c', 'c']
    >>> bool((sample_shots(y, 2, seed=0) == picked).all())
    True
    >>> sample_shots(y, 3)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: class 'b' has 2 training items, fewer than the 3 shots per class
    """
    k = check_scalar(k, "shots", int, low=1)
    y = np.asarray(labels)
    classes, counts = np.unique(y, return_counts=True)
    if counts.min() < k:
        i = int(np.argmin(counts))
        label = names[int(classes[i])] if names is not None else classes[i]
        raise InputError(f"class {str(label)!r} has {int(counts[i])} training item{'s' if counts[i] != 1 else ''}, "
                         f"fewer than the {k} shots per class")
    rng = np.random.default_rng(seed)
    picked = [rng.choice(np.flatnonzero(y == c), size=k, replace=False) for c in classes]
    return np.sort(np.concatenate(picked))


def _fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> tuple[np.ndarray, bool]:
    """The probe's predictions, and whether lbfgs stopped at its iteration cap (warned of in ``info``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = linear_probe().fit(x_train, y_train)
    stopped = any("converge" in str(w.message).lower() for w in caught)
    for w in caught:
        if "converge" not in str(w.message).lower():
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return clf.predict(x_test), stopped


def _f1(y_true: np.ndarray, pred: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y_true, pred, average="macro", zero_division=0))


def few_shot(vectors_or_encode: Any, labels: Any, texts: list[str] | None = None, *, train: Any,
             shots: str | int | Sequence[int] = DEFAULT_SHOTS, draws: int = DEFAULT_DRAWS, codec: Any = None,
             seed: int = 0, bootstrap: int = DEFAULT_RESAMPLES, name: str | None = None) -> list[TaskResult]:
    """The linear probe on ``k`` examples per class (each ``k`` of ``shots``) and on every training label.

    Parameters
    ----------
    vectors_or_encode, labels, texts
        The test split, as in :func:`~repspace.engines.eval.labels.classification`.
    train : LabelledTexts or (vectors or texts, labels)
        The training split the probes learn from (required).
    shots : str, int or sequence of int, optional
        Examples per class (:func:`parse_counts`: ``"1,4,16"``).
    draws : int, optional
        Seeded draws of each k-shot setting.
    codec : Codec, optional
        A compression fitted on both splits' vectors, applied before fitting.
    seed : int, optional
        Seed of the draws (draw ``j`` of ``k`` shots: ``sample_shots(..., seed=(seed, k, j))``) and of the bootstrap.
    bootstrap : int, optional
        Resamples of the test items behind each setting's interval; 0: none.
    name : str, optional
        The data set's name in the task names; default the test split's (a
        :class:`~repspace.engines.eval.labels.LabelledTexts`).

    Returns
    -------
    list of TaskResult
        One per setting, the k-shot ones in increasing ``k`` and then the
        probe on every label: task ``fewshot-<k>`` or ``fewshot-all`` (``:<data
        set>`` added), main metric ``accuracy`` with ``f1_macro`` beside it
        (means over the draws); k-shot settings also ``accuracy_std``,
        ``accuracy_draw_low`` and ``accuracy_draw_high`` (spread over the
        draws), and ``info["accuracy_per_draw"]``. :attr:`TaskResult.units`: each
        test item's fraction of right predictions (0 or 1 for ``all``).

    Raises
    ------
    InputError
        Without a training split, with a training split of one class, a class
        with fewer training items than a ``k`` (:func:`sample_shots`), ``draws
        < 1``, or mismatched vectors, texts and labels.

    Examples
    --------
    >>> x = np.array([[0.0, 1.0], [0.1, 0.9], [0.2, 1.0], [1.0, 0.0], [0.9, 0.1], [1.0, 0.2]])
    >>> y = ["neg", "neg", "neg", "pos", "pos", "pos"]
    >>> rows = few_shot(x, y, train=(x, y), shots="1,2", draws=3, bootstrap=0)
    >>> [(r.task_name, r.info["n_train"], r.scores["accuracy_draw_low"]) for r in rows[:2]]
    [('fewshot-1', 6, 1.0), ('fewshot-2', 6, 1.0)]
    >>> rows[2].task_name, rows[2].main_score, rows[2].units.n_units
    ('fewshot-all', 1.0, 6)
    """
    t0 = time.perf_counter()
    ks = parse_counts(shots)
    draws = check_scalar(draws, "draws", int, low=1)
    check_scalar(bootstrap, "bootstrap", int, low=0)
    check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    info: dict[str, Any] = {}
    s = train_test(vectors_or_encode, labels, texts, train, codec, info, "few-shot classification")
    for k in ks:  # every k checked before any fitting
        sample_shots(s.y_train, k, seed, names=s.classes)
    suffix = f":{name or info['dataset']}" if (name or info.get("dataset")) else ""
    setup = time.perf_counter() - t0
    results = []
    for k in ks:
        t1 = time.perf_counter()
        correct = np.zeros((draws, len(s.y_test)))
        acc, f1, stopped = [], [], 0
        for j in range(draws):
            rows = sample_shots(s.y_train, k, (seed, k, j))
            pred, at_cap = _fit_predict(s.x_train[rows], s.y_train[rows], s.x_test)
            stopped += at_cap
            correct[j] = pred == s.y_test
            acc.append(float(correct[j].mean()))
            f1.append(_f1(s.y_test, pred))
        tail = (1 - DRAW_LEVEL) / 2 * 100
        scores = {"accuracy": float(np.mean(acc)), "f1_macro": float(np.mean(f1)), "accuracy_std": float(np.std(acc)),
                  "accuracy_draw_low": float(np.percentile(acc, tail)),
                  "accuracy_draw_high": float(np.percentile(acc, 100 - tail))}
        extra = {"shots": k, "draws": draws, "n_shots_items": k * len(s.classes), "accuracy_per_draw": acc}
        results.append(_result(f"fewshot-{k}{suffix}", scores, correct.mean(axis=0), info, extra, stopped,
                               bootstrap, seed, setup + time.perf_counter() - t1))
    t1 = time.perf_counter()
    pred, stopped = _fit_predict(s.x_train, s.y_train, s.x_test)
    correct_all = (pred == s.y_test).astype(float)
    scores = {"accuracy": float(correct_all.mean()), "f1_macro": _f1(s.y_test, pred)}
    results.append(_result(f"fewshot-all{suffix}", scores, correct_all, info, {"shots": "all"}, int(stopped),
                           bootstrap, seed, setup + time.perf_counter() - t1))
    return results


def _result(task: str, scores: dict[str, float], units: np.ndarray, info: dict[str, Any], extra: dict[str, Any],
            stopped: int, bootstrap: int, seed: int, seconds: float) -> TaskResult:
    """One setting's result: the test items' bootstrap interval of the accuracy, and their units."""
    block = {**info, **extra, "seed": seed}
    if stopped:
        block["not_converged_fits"] = int(stopped)
    interval = bootstrap_interval(mean_statistic, units, n_resamples=bootstrap, seed=seed)
    return TaskResult(task, "test", "accuracy", scores, seconds, block, interval=interval,
                      units=Units("mean", (units,), ("correct",)))
