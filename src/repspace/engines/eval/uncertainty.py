"""Uncertainty of evaluation figures: seeded bootstrap intervals, paired comparisons, Holm's correction.

An evaluation figure (a Spearman correlation over sentence pairs, a mean
nDCG@10 over queries, an accuracy over items) is computed from the task's
*units*. Its uncertainty is estimated by resampling those units with
replacement (Efron's bootstrap) and taking the percentiles of the resampled
figures: :func:`bootstrap_interval`. Two models scored on the *same* units are
compared on the difference of their figures, with a paired bootstrap interval
and a paired randomization test (each unit's two results swapped at random
between the models, Fisher's randomization test as ranx and trec tools run it):
:func:`paired_comparison`. Several comparisons are corrected with
:func:`holm`.

The resampling is scipy's (:func:`scipy.stats.bootstrap`, ``paired=True``,
``method='percentile'``; :func:`scipy.stats.permutation_test`,
``permutation_type='samples'``) seeded with ``numpy.random.default_rng(seed)``:
the same seed gives the same interval bit for bit.

A *statistic* is a function of the task's arrays, units along axis 0:
``statistic(gold, predicted) -> float``. When it also takes an ``axis``
keyword and reduces along it as numpy does (:func:`spearman_statistic`,
:func:`mean_statistic`, ``np.mean``), every resample is computed in one call
on 1-d samples (``vectorized``); otherwise it is called once per resample
with the resampled rows, which also allows 2-d samples (rows are units).
The vectorised Spearman is there for speed: it computes all resamples in one
call (its cost is in BENCHMARKS.md, "Figures behind the defaults").
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = [
    "BATCH_ELEMENTS",
    "Comparison",
    "DEFAULT_RESAMPLES",
    "Interval",
    "STATISTICS",
    "average_precision_statistic",
    "bootstrap_interval",
    "holm",
    "mean_statistic",
    "paired_comparison",
    "spearman_statistic",
]

#: Resamples of an evaluation's bootstrap interval and randomization test when not given.
DEFAULT_RESAMPLES = 1000

Statistic = Callable[..., Any]

#: Resamples x units drawn at once at most: bounds the memory of the resampled arrays (32 MiB of float64 each).
BATCH_ELEMENTS = 2**22


@dataclass(frozen=True)
class Interval:
    """A bootstrap confidence interval of one figure.

    Attributes
    ----------
    low, high : float
        The interval's ends (``low <= high``).
    level : float
        Its confidence level (0.95: a 95% interval).
    n_resamples : int
        The resamples it was computed from (those on which the statistic was
        defined; see :func:`bootstrap_interval`).

    Examples
    --------
    >>> Interval(0.71, 0.79, 0.95, 1000).to_dict()
    {'low': 0.71, 'high': 0.79, 'level': 0.95, 'n_resamples': 1000}
    """

    low: float
    high: float
    level: float
    n_resamples: int

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.low > self.high:
            raise InputError(f"an interval needs finite ends with low <= high, not [{self.low}, {self.high}]")

    def to_dict(self) -> dict[str, Any]:
        """``{"low", "high", "level", "n_resamples"}`` (JSON-ready)."""
        return asdict(self)


@dataclass(frozen=True)
class Comparison:
    """Two models' figures on the same units, their difference and its tests.

    Attributes
    ----------
    a, b : str
        The models' names (the caller's).
    difference : float
        ``statistic(a) - statistic(b)``.
    ci_low, ci_high : float or None
        The paired bootstrap interval of the difference (``None`` when no
        resampling was asked for).
    p_value : float or None
        Two-sided p-value of the paired randomization test (``None`` likewise);
        corrected for the other comparisons made with it when :attr:`p_raw` is set.
    p_raw : float or None
        The p-value before a correction for multiple comparisons (Holm's, by
        :func:`repspace.engines.eval.comparisons.compare_results`); ``None`` when
        none was applied.

    Examples
    --------
    >>> Comparison("e5", "minilm", 0.02, 0.01, 0.03, 0.004).to_dict()
    {'a': 'e5', 'b': 'minilm', 'difference': 0.02, 'ci_low': 0.01, 'ci_high': 0.03, 'p_value': 0.004}
    >>> Comparison("e5", "minilm", 0.02, 0.01, 0.03, 0.008, p_raw=0.004).to_dict()["p_raw"]
    0.004
    """

    a: str
    b: str
    difference: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_raw: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"a", "b", "difference", "ci_low", "ci_high", "p_value"}`` and ``p_raw`` when a correction was
        applied (JSON-ready)."""
        out = asdict(self)
        if self.p_raw is None:
            del out["p_raw"]
        return out


# ----------------------------------------------------------------------------- statistics


def spearman_statistic(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray | float:
    """Spearman's rank correlation of ``x`` and ``y`` along ``axis`` (ties get their average rank).

    Equals :func:`scipy.stats.spearmanr` on 1-d data; vectorised: a
    ``(resamples, n)`` pair of arrays gives ``(resamples,)`` correlations in
    one call. ``NaN`` where a side is constant (the correlation is undefined).

    Examples
    --------
    >>> float(spearman_statistic(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])))
    0.8
    >>> spearman_statistic(np.array([[1, 2, 3], [3, 2, 1]]), np.array([[1, 2, 3], [1, 2, 3]])).tolist()
    [1.0, -1.0]
    """
    return _rank_correlation(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis)


def _rank_correlation(rx: np.ndarray, ry: np.ndarray, axis: int = -1) -> np.ndarray | float:
    """Pearson's correlation of two arrays of ranks along ``axis``, clipped to [-1, 1]; NaN where a side is constant."""
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (rx * ry).sum(axis=axis) / np.sqrt((rx * rx).sum(axis=axis) * (ry * ry).sum(axis=axis))
    return np.clip(r, -1.0, 1.0) if np.ndim(r) else float(np.clip(r, -1.0, 1.0))


def mean_statistic(x: np.ndarray, axis: int = -1) -> np.ndarray | float:
    """The mean along ``axis``: the figure of per-unit scores (per-query nDCG, per-item accuracy).

    Examples
    --------
    >>> mean_statistic(np.array([[1.0, 0.0], [1.0, 1.0]])).tolist()
    [0.5, 1.0]
    """
    m = np.mean(x, axis=axis)
    return m if np.ndim(m) else float(m)


def average_precision_statistic(labels: np.ndarray, scores: np.ndarray, axis: int = -1) -> np.ndarray | float:
    """Average precision of ``scores`` for the 0/1 ``labels`` along ``axis``, as scikit-learn computes it.

    Equals :func:`sklearn.metrics.average_precision_score` on 1-d data: the
    precision at each distinct score (tied scores form one threshold), weighted
    by the recall gained there. Vectorised like :func:`spearman_statistic`;
    ``NaN`` where no label is 1 (undefined).

    Examples
    --------
    >>> float(average_precision_statistic(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.3, 0.1])))
    0.8333333333333333
    >>> average_precision_statistic(np.array([[1, 0], [0, 0]]), np.array([[0.2, 0.1], [0.2, 0.1]])).tolist()
    [1.0, nan]
    """
    labels = np.moveaxis(np.asarray(labels), axis, -1)
    scores = np.moveaxis(np.asarray(scores, dtype=np.float64), axis, -1)
    order = np.argsort(-scores, axis=-1, kind="stable")
    s = np.take_along_axis(scores, order, axis=-1)
    lab = np.take_along_axis(labels, order, axis=-1).astype(np.float64)
    n = s.shape[-1]
    tp = np.cumsum(lab, axis=-1)
    # the last position of each run of tied scores: the threshold every item of the run is counted at
    is_end = np.concatenate([s[..., 1:] != s[..., :-1], np.ones(s.shape[:-1] + (1,), dtype=bool)], axis=-1)
    end_at = np.where(is_end, np.arange(n), n)
    run_end = np.minimum.accumulate(end_at[..., ::-1], axis=-1)[..., ::-1]
    precision = np.take_along_axis(tp, run_end, axis=-1) / (run_end + 1)
    n_pos = tp[..., -1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = (lab * precision).sum(axis=-1) / n_pos
    ap = np.where(n_pos > 0, ap, np.nan)
    return ap if np.ndim(ap) else float(ap)


#: The statistics a result's per-unit data names (:class:`repspace.engines.eval.units.Units`), by name.
STATISTICS: dict[str, Statistic] = {
    "spearman": spearman_statistic,
    "mean": mean_statistic,
    "average_precision": average_precision_statistic,
}


# ----------------------------------------------------------------------------- checks


def _check_resampling(n_resamples: Any, seed: Any, level: Any = 0.95) -> tuple[int, int, float]:
    n = check_scalar(n_resamples, "n_resamples", int, low=0)
    s = check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    lv = check_scalar(level, "level", float, low=0, high=1, include="neither")
    return n, s, lv


def _units(samples: Sequence[Any], what: str = "samples") -> tuple[list[np.ndarray], int]:
    """The samples as arrays (units along axis 0) and their common unit count, or one InputError line."""
    if not samples:
        raise InputError(f"no {what} given: a statistic needs at least one array of units")
    arrays = [np.asarray(s) for s in samples]
    if any(a.ndim not in (1, 2) for a in arrays):
        raise InputError(f"{what} must be 1-d or 2-d arrays (rows are units), got shapes "
                         f"{[a.shape for a in arrays]}")
    counts = [len(a) for a in arrays]
    if len(set(counts)) != 1:
        raise InputError(f"{what} must have one unit count (rows), got {', '.join(map(str, counts))}")
    if counts[0] < 2:
        raise InputError(f"resampling needs at least 2 units, got {counts[0]}")
    return arrays, counts[0]


def _vectorized(statistic: Statistic, arrays: Sequence[np.ndarray], vectorized: bool | None) -> bool:
    if any(a.ndim != 1 for a in arrays):
        return False
    if vectorized is None:
        try:
            return "axis" in inspect.signature(statistic).parameters
        except (TypeError, ValueError):
            return False
    return bool(vectorized)


def _counted_ranks(codes: np.ndarray, m: int, rows: np.ndarray) -> np.ndarray:
    """``rankdata(values[rows], axis=-1)`` (average ranks) from the values' dense codes, by counting.

    ``codes`` numbers the distinct values ``0..m-1`` in increasing order. In
    each row of ``rows`` a unit's rank is the number of drawn units with a
    smaller value plus half of (one plus those with its value), which is
    what ``scipy.stats.rankdata`` gives, exactly. Counting (one ``bincount``
    and one cumulative sum per row) costs O(n + m) per resample where
    sorting costs O(n log n): written by hand because neither scipy nor
    numpy ranks many draws of one set of values without sorting each draw.
    """
    shape = rows.shape
    drawn = codes[rows.reshape(-1, shape[-1])]
    b = drawn.shape[0]
    drawn += (np.arange(b, dtype=np.intp) * m)[:, None]  # each draw's own block of m counters
    counts = np.bincount(drawn.ravel(), minlength=b * m)
    # the rank of every value in its draw: those below it, plus the middle of its run of ties
    mid = counts.reshape(b, m).cumsum(axis=1).ravel() - (counts - 1) / 2
    return mid[drawn].reshape(shape)


def _spearman_of_rows(arrays: Sequence[np.ndarray]) -> Callable[..., Any] | None:
    """Spearman of the rows drawn from two base arrays, ranked by counting; None where a value is NaN."""
    if len(arrays) != 2 or any(a.ndim != 1 or np.isnan(a).any() for a in arrays):
        return None
    (ux, cx), (uy, cy) = (np.unique(a, return_inverse=True) for a in arrays)
    cx, cy = cx.astype(np.intp).ravel(), cy.astype(np.intp).ravel()  # coded once, ranked for every batch of draws

    def of_rows(rows: np.ndarray, axis: int = -1) -> Any:
        return _rank_correlation(_counted_ranks(cx, len(ux), rows), _counted_ranks(cy, len(uy), rows), axis)
    return of_rows


def _of_rows(statistic: Statistic, arrays: Sequence[np.ndarray]) -> Callable[..., Any]:
    """A vectorised statistic of drawn unit numbers (``(..., n)`` rows into ``arrays``), reduced along the last axis.

    Spearman is ranked by counting (:func:`_counted_ranks`), several times
    faster than ranking each draw; any other statistic is given the drawn rows.
    """
    fast = _spearman_of_rows(arrays) if statistic is spearman_statistic else None
    if fast is not None:
        return fast

    def of_rows(rows: np.ndarray, axis: int = -1) -> Any:
        return statistic(*(a[rows] for a in arrays), axis=axis)
    return of_rows


def _indexed(statistic: Statistic, arrays: Sequence[np.ndarray]) -> Callable[[np.ndarray], float]:
    """A statistic of one resample's unit numbers: the rows of every array at those numbers."""
    def of_rows(i: np.ndarray) -> float:
        return float(statistic(*(a[i] for a in arrays)))
    return of_rows


# ----------------------------------------------------------------------------- bootstrap


def _percentiles(res: Any, level: float) -> tuple[float, float, int]:
    """The interval of a scipy bootstrap result; undefined resamples (NaN) left out of the percentiles."""
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    dist = np.asarray(res.bootstrap_distribution, dtype=np.float64).ravel()
    finite = np.isfinite(dist)
    if math.isfinite(low) and math.isfinite(high) and finite.all():
        return low, high, len(dist)
    if not finite.any():
        return math.nan, math.nan, 0
    alpha = (1 - level) / 2
    lo, hi = np.percentile(dist[finite], [100 * alpha, 100 * (1 - alpha)])
    return float(lo), float(hi), int(finite.sum())


def bootstrap_interval(statistic: Statistic, *samples: Any, n_resamples: int = DEFAULT_RESAMPLES,
                       level: float = 0.95, seed: int = 0, vectorized: bool | None = None) -> Interval | None:
    """A seeded percentile bootstrap interval of ``statistic(*samples)``, resampling the units.

    The units (rows of the aligned arrays: sentence pairs, queries, items) are
    drawn with replacement ``n_resamples`` times, jointly across the arrays
    (a paired bootstrap, :func:`scipy.stats.bootstrap` with ``paired=True``
    and ``method='percentile'``), and the interval is the ``(1 - level) / 2``
    and ``(1 + level) / 2`` percentiles of the resampled statistics.

    Parameters
    ----------
    statistic : callable
        ``statistic(*samples) -> float``; vectorised when it takes ``axis``
        (see the module docstring): :func:`spearman_statistic`, :func:`mean_statistic`.
    *samples : array-like
        1-d or 2-d arrays with the same number of rows (units).
    n_resamples : int
        Bootstrap resamples; 0: no interval (``None`` is returned).
    level : float
        Confidence level in (0, 1).
    seed : int
        Seed of ``numpy.random.default_rng``; the same seed gives the same interval.
    vectorized : bool, optional
        Whether ``statistic`` takes ``axis``; default: whether its signature
        has an ``axis`` parameter (as scipy decides). 2-d samples are never
        vectorised.

    Returns
    -------
    Interval or None
        ``None`` when ``n_resamples`` is 0, or when the statistic is undefined
        (``NaN``) on every resample. Resamples on which it is undefined (a
        correlation of a resample whose gold scores are all equal, likely
        only with a handful of units) are left out, and
        :attr:`Interval.n_resamples` counts those that remain.

    Raises
    ------
    InputError
        A bad ``n_resamples``, ``level`` or ``seed``; arrays with different
        unit counts, or fewer than 2 units.

    Notes
    -----
    When ``n_resamples`` x units exceeds :data:`BATCH_ELEMENTS`, the resamples
    are drawn and scored a batch at a time (scipy's ``batch``), so that memory
    stays bounded on large tasks; the interval is as seeded and reproducible,
    but not bit for bit the one a single batch would give.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(10.0, 2.0, size=400)
    >>> ci = bootstrap_interval(mean_statistic, x, seed=1)
    >>> ci.low < 10.0 < ci.high, round(ci.high - ci.low, 1), ci.level, ci.n_resamples
    (True, 0.4, 0.95, 1000)
    >>> bootstrap_interval(mean_statistic, x, n_resamples=0) is None
    True
    >>> gold, pred = np.arange(50.0), np.arange(50.0) + rng.normal(0, 10, 50)
    >>> ci = bootstrap_interval(spearman_statistic, gold, pred)
    >>> bool(ci.low < float(spearman_statistic(gold, pred)) < ci.high)
    True
    """
    n_resamples, seed, level = _check_resampling(n_resamples, seed, level)
    arrays, n_units = _units(samples)
    if n_resamples == 0:
        return None
    rng = np.random.default_rng(seed)
    # many units are resampled a batch at a time (the draws then differ from one batch's, as seeded as ever)
    batch = None if n_resamples * n_units <= BATCH_ELEMENTS else max(1, BATCH_ELEMENTS // n_units)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if _vectorized(statistic, arrays, vectorized):
            # scipy's paired=True draws unit numbers just so; drawing them here lets Spearman rank by counting
            res = stats.bootstrap((np.arange(n_units),), _of_rows(statistic, arrays), n_resamples=n_resamples,
                                  vectorized=True, confidence_level=level, method="percentile", rng=rng,
                                  batch=batch)
        else:
            # the same draws as paired=True makes (one resample of the unit numbers per bootstrap sample)
            res = stats.bootstrap((np.arange(n_units),), _indexed(statistic, arrays), n_resamples=n_resamples,
                                  vectorized=False, confidence_level=level, method="percentile", rng=rng,
                                  batch=batch)
    low, high, used = _percentiles(res, level)
    if used == 0:
        return None
    return Interval(low, high, level, used)


# ----------------------------------------------------------------------------- paired comparison


def _as_tuple(samples: Any) -> tuple[Any, ...]:
    return tuple(samples) if isinstance(samples, (tuple, list)) else (samples,)


def paired_comparison(statistic: Statistic, a_samples: Any, b_samples: Any, *, a: str = "a", b: str = "b",
                      n_resamples: int = DEFAULT_RESAMPLES, level: float = 0.95, seed: int = 0,
                      vectorized: bool | None = None) -> Comparison:
    """Compare two models scored on the same units: difference, paired bootstrap interval, randomization test.

    Parameters
    ----------
    statistic : callable
        The figure, as in :func:`bootstrap_interval`: ``statistic(*a_samples)``
        is model A's (e.g. :func:`spearman_statistic` of ``(gold, cosines_a)``,
        :func:`mean_statistic` of per-query nDCG@10).
    a_samples, b_samples : array or tuple of arrays
        Each model's arrays, the same number of them, every array with the
        same units in the same order (shared arrays such as the gold scores
        are given on both sides).
    a, b : str
        The models' names, carried into the result.
    n_resamples : int
        Resamples of the bootstrap and of the randomization test; 0: the
        difference alone.
    level : float
        Confidence level of the interval.
    seed : int
        Seed of both: two generators spawned from it (``numpy.random.SeedSequence``),
        so the bootstrap's and the test's draws are independent and reproducible.
    vectorized : bool, optional
        As in :func:`bootstrap_interval`.

    Returns
    -------
    Comparison
        ``difference = statistic(A) - statistic(B)``; ``ci_low``/``ci_high``:
        percentile bootstrap interval of the difference with the units
        resampled jointly for both models; ``p_value``: two-sided paired
        randomization test, each unit's results swapped between A and B with
        probability 1/2 (:func:`scipy.stats.permutation_test` with
        ``permutation_type='samples'``; exact when ``2**n_units`` does not
        exceed ``n_resamples``), ``(hits + 1) / (n_resamples + 1)`` on each side
        as scipy counts it.

    Raises
    ------
    InputError
        Different numbers of arrays for A and B, or unit counts that differ.

    Examples
    --------
    Per-query nDCG of two systems on 60 queries; B is A with a little noise and lower:

    >>> rng = np.random.default_rng(0)
    >>> ndcg_a = rng.uniform(0.3, 0.9, 60)
    >>> ndcg_b = np.clip(ndcg_a - 0.1 + rng.normal(0, 0.05, 60), 0, 1)
    >>> c = paired_comparison(mean_statistic, ndcg_a, ndcg_b, a="A", b="B")
    >>> c.a, round(c.difference, 2), c.ci_low > 0, c.p_value < 0.01
    ('A', 0.1, True, True)
    >>> paired_comparison(mean_statistic, ndcg_a, ndcg_a).p_value
    1.0
    """
    n_resamples, seed, level = _check_resampling(n_resamples, seed, level)
    a_arrays, b_arrays = _as_tuple(a_samples), _as_tuple(b_samples)
    if len(a_arrays) != len(b_arrays):
        raise InputError(f"model {a!r} has {len(a_arrays)} arrays but model {b!r} has {len(b_arrays)}")
    arrays, n_units = _units(a_arrays + b_arrays, f"the arrays of {a!r} and {b!r}")
    k = len(a_arrays)
    if any(x.shape != y.shape for x, y in zip(arrays[:k], arrays[k:])):
        raise InputError(f"the arrays of {a!r} and {b!r} differ in shape: "
                         f"{[x.shape for x in arrays[:k]]} and {[y.shape for y in arrays[k:]]}")
    difference = float(statistic(*arrays[:k])) - float(statistic(*arrays[k:]))
    if n_resamples == 0:
        return Comparison(a, b, difference, None, None, None)
    # Both models' rows stacked: unit i of A is row i, of B row n + i. Resampling and swapping act on row numbers.
    stacked = [np.concatenate([x, y]) for x, y in zip(arrays[:k], arrays[k:])]
    vec = _vectorized(statistic, arrays, vectorized)

    of_rows = _of_rows(statistic, stacked) if vec else None

    def diff(ia: np.ndarray, ib: np.ndarray, axis: int = -1) -> Any:
        if of_rows is not None:
            return np.asarray(of_rows(ia)) - np.asarray(of_rows(ib))
        return float(statistic(*(s[ia] for s in stacked))) - float(statistic(*(s[ib] for s in stacked)))

    boot_rng, test_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    rows = (np.arange(n_units), np.arange(n_units) + n_units)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.bootstrap(rows, diff, n_resamples=n_resamples, paired=True, vectorized=vec,
                              confidence_level=level, method="percentile", rng=boot_rng)
        test = stats.permutation_test(rows, diff, permutation_type="samples", vectorized=vec,
                                      n_resamples=n_resamples, alternative="two-sided", rng=test_rng)
    low, high, used = _percentiles(res, level)
    p = float(test.pvalue)
    return Comparison(a, b, difference, low if used else None, high if used else None,
                      min(p, 1.0) if math.isfinite(p) else None)


# ----------------------------------------------------------------------------- multiple comparisons


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (Holm 1979), in the order given.

    scipy has no Holm correction (:func:`scipy.stats.false_discovery_rate`
    does Benjamini-Hochberg and Benjamini-Yekutieli only), so it is written
    here: with the ``m`` p-values sorted ascending, the ``i``-th (from 1)
    becomes ``max over j <= i of min(1, (m - j + 1) * p_(j))``: monotone in
    the sorted order and capped at 1. Rejecting where the adjusted value is
    at most α controls the family-wise error rate at α, as Holm's step-down
    procedure does.

    Parameters
    ----------
    p_values : sequence of float
        Each in [0, 1].

    Returns
    -------
    (m,) float64 array

    Raises
    ------
    InputError
        A p-value outside [0, 1] or not a number.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.005]).round(4).tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> holm([]).tolist()
    []
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if p.size and not (np.isfinite(p).all() and p.min() >= 0 and p.max() <= 1):
        raise InputError(f"p-values must be numbers in [0, 1], got {p.tolist()}")
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out
