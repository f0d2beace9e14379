"""Tested comparisons of several models' results on one task: every pair, paired tests, Holm's correction.

Each result carries the per-unit arrays its main score is computed from
(:attr:`TaskResult.units`). Two results of the same task and split are
compared on those units (matched by id where the units have ids, by position
otherwise) with :func:`~repspace.engines.eval.uncertainty.paired_comparison`:
the difference of their main scores, its paired bootstrap interval and a paired
randomization test. The p-values of all the pairs are then corrected together
by :func:`~repspace.engines.eval.uncertainty.holm`, so that "p <= 0.05" holds
for the family of comparisons, not for each one alone.

The randomization test swaps each unit's values between the two models. Per-query
nDCG is on one scale for every model, but two models' cosines need not be (one
model's similarities may all sit in [0.6, 1], another's in [-0.2, 0.9]), and
swapping raw values across scales widens the null distribution, so the test
loses power. The rank statistics (Spearman, average precision) do not depend on
a model's scale, only on the order of its scores: for them each model's scores
are replaced by their ranks (ties averaged) before the test, which leaves the
difference and the bootstrap interval exactly as they were and makes the
swapped values comparable (Deutsch et al. 2021 normalise metric scores before
swapping for the same reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from scipy import stats

from repspace.core.errors import InputError
from repspace.engines.eval._results import TaskResult
from repspace.engines.eval.uncertainty import (
    DEFAULT_RESAMPLES,
    Comparison,
    _check_resampling,
    holm,
    paired_comparison,
)
from repspace.engines.eval.units import Units

__all__ = ["compare_results", "result_label"]

#: The Holm-corrected p-value at and below which a comparison is called significant (marked ``*`` by the CLI's
#: table and the report): the one level every consumer of :func:`compare_results` marks by.
SIGNIFICANCE_LEVEL = 0.05
#: Statistics that depend on each model's scores only through their order: compared on ranks (see the module).
RANK_STATISTICS = frozenset({"spearman", "average_precision"})


def result_label(result: TaskResult) -> str:
    """How a comparison names a result: its subject, with the transform, hubness reduction and codec it had.

    Examples
    --------
    >>> result_label(TaskResult("sts", "test", "spearman", {"spearman": 0.8}, 1.0,
    ...                         {"subject": "static", "transform": "center"}))
    'static [center]'
    """
    info = result.info
    label = str(info.get("subject") or info.get("encoder") or info.get("space") or result.task_name)
    setting = [str(x) for x in (info.get("transform"), (info.get("hubness_reduction") or {}).get("method"),
                                (info.get("codec") or {}).get("name")) if x]
    return label + (f" [{' + '.join(setting)}]" if setting else "")


def _labels(results: Sequence[TaskResult], names: Sequence[str] | None) -> list[str]:
    if names is None:
        names = [result_label(r) for r in results]
    elif len(names) != len(results):
        raise InputError(f"{len(names)} names given for {len(results)} results")
    names = [str(n) for n in names]
    if len(set(names)) == len(names):
        return names
    return [f"{name} #{i + 1}" for i, name in enumerate(names)]  # the same model twice: numbered in order


def _paired(a: Units, b: Units, name_a: str, name_b: str) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Both results' arrays over the same units in the same order, or one InputError line saying why not."""
    def refuse(why: str) -> InputError:
        return InputError(f"results {name_a!r} and {name_b!r} were not scored on the same units ({why})")

    if (a.statistic, a.names, a.shared) != (b.statistic, b.names, b.shared):
        raise refuse(f"{a.statistic} of {', '.join(a.names)} against {b.statistic} of {', '.join(b.names)}")
    if (a.ids is None) != (b.ids is None):
        raise refuse("one names its units, the other does not")
    b_arrays = b.arrays
    if a.ids is not None and b.ids is not None:
        if set(a.ids) != set(b.ids):
            missing = len(set(a.ids) - set(b.ids)) + len(set(b.ids) - set(a.ids))
            raise refuse(f"{a.n_units} and {b.n_units} units, {missing} of them not in both")
        if a.ids != b.ids:
            position = {unit: i for i, unit in enumerate(b.ids)}
            order = np.fromiter((position[unit] for unit in a.ids), dtype=np.int64, count=a.n_units)
            b_arrays = tuple(x[order] for x in b_arrays)
    elif a.n_units != b.n_units:
        raise refuse(f"{a.n_units} and {b.n_units} units")
    for name, x, y in zip(a.names, a.arrays, b_arrays, strict=True):
        if name in a.shared and not np.array_equal(x, y):
            raise refuse(f"their {name} arrays differ")
    if a.statistic in RANK_STATISTICS:  # each model's own scores on one scale: their ranks
        return _ranked(a, a.arrays), _ranked(a, b_arrays)
    return a.arrays, b_arrays


def _ranked(units: Units, arrays: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    return tuple(x if name in units.shared else stats.rankdata(x) for name, x in zip(units.names, arrays))


def compare_results(results: Sequence[TaskResult], *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                    level: float = 0.95, names: Sequence[str] | None = None) -> list[Comparison]:
    """Compare every pair of results of one task and split on their units; Holm-correct the p-values.

    Parameters
    ----------
    results : sequence of TaskResult
        At least two, of the same task and split, each with :attr:`TaskResult.units`.
    n_resamples : int
        Resamples of each pair's bootstrap interval and randomization test; 0:
        the differences alone (no interval, no p-value).
    seed : int
        The seed of every pair's resampling (the same draws of units for each pair).
    level : float
        Confidence level of the intervals.
    names : sequence of str, optional
        The models' names in the comparisons; default :func:`result_label`
        (numbered ``#1``, ``#2``... where two would be the same).

    Returns
    -------
    list of Comparison
        One per pair ``i < j`` in the order given: ``a`` is result ``i``,
        ``difference`` is ``a``'s statistic minus ``b``'s (the difference of
        their main scores), ``ci_low``/``ci_high`` its paired bootstrap
        interval; ``p_value`` is the Holm-adjusted p-value of the paired
        randomization test (on ranks for a rank statistic, see the module)
        across all the pairs, ``p_raw`` the unadjusted one.

    Raises
    ------
    InputError
        Fewer than 2 results; results of different tasks or splits; results
        without units (clustering, results saved before repspace recorded
        units); two results not scored on the same units (their gold scores or
        labels, unit ids or unit counts differ); bad ``n_resamples``, ``seed``
        or ``level``. All are checked before any resampling.

    Examples
    --------
    Three models' cosines on the same six STS pairs:

    >>> gold = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    >>> def result(name, cosines):
    ...     units = Units("spearman", (gold, cosines), ("gold", "cosine"), shared=("gold",))
    ...     return TaskResult("sts:toy", "test", "spearman", {"spearman": units.value()}, 0.0, {"subject": name},
    ...                       units=units)
    >>> rs = [result("good", [0.1, 0.2, 0.3, 0.5, 0.4, 0.9]), result("fair", [0.3, 0.1, 0.2, 0.6, 0.4, 0.5]),
    ...       result("poor", [0.5, 0.2, 0.1, 0.3, 0.6, 0.4])]
    >>> cs = compare_results(rs, n_resamples=200)
    >>> [(c.a, c.b, round(c.difference, 3)) for c in cs]
    [('good', 'fair', 0.286), ('good', 'poor', 0.686), ('fair', 'poor', 0.4)]
    >>> all(c.p_raw <= c.p_value <= 1 for c in cs)  # Holm-adjusted p-values, the raw ones kept
    True
    >>> compare_results(rs[:1])
    Traceback (most recent call last):
    repspace.core.errors.InputError: comparing needs at least 2 models, got 1
    """
    results = list(results)
    n_resamples, seed, level = _check_resampling(n_resamples, seed, level)
    if len(results) < 2:
        raise InputError(f"comparing needs at least 2 models, got {len(results)}")
    labels = _labels(results, names)
    tasks = list(dict.fromkeys(f"{r.task_name} ({r.split})" for r in results))
    if len(tasks) > 1:
        raise InputError(f"results of different tasks cannot be compared: {', '.join(tasks)}")
    bare = [label for label, r in zip(labels, results) if r.units is None]
    if bare:
        raise InputError(f"no per-unit scores to compare on for {', '.join(repr(x) for x in bare)} (clustering "
                         f"records none, nor did repspace before it recorded units: evaluate again)")
    pairs = [(i, j) for i in range(len(results)) for j in range(i + 1, len(results))]
    samples = {(i, j): _paired(results[i].units, results[j].units, labels[i], labels[j]) for i, j in pairs}
    out = []
    for i, j in pairs:
        a_arrays, b_arrays = samples[i, j]
        out.append(paired_comparison(results[i].units.function, a_arrays, b_arrays, a=labels[i], b=labels[j],
                                     n_resamples=n_resamples, level=level, seed=seed))
    tested = [k for k, c in enumerate(out) if c.p_value is not None]
    adjusted = holm([out[k].p_value for k in tested])
    for k, p in zip(tested, adjusted.tolist()):
        out[k] = replace(out[k], p_value=p, p_raw=out[k].p_value)
    return out
