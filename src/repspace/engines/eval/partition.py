"""A task's score part by part (``--by COLUMN``): each part's score and interval, and their macro average.

Universal-embedding benchmarks report a task per domain (MTEB's subsets,
MIEB's and FEET's domains) and average the domains with equal weight, so that
a large domain does not drown the small ones. :class:`Partition` is that
report for one result: a :class:`PartScore` per part (the task run on that
part's units alone: its main score, its unit count and its own bootstrap
interval) and the macro average, the plain mean of the parts' main scores.

The macro average's interval (:func:`macro_interval`) is a stratified
bootstrap: each resample draws every part's units with replacement within
that part (as many as it has), scores each part on its draw and averages the
parts, so the parts keep their sizes and weights in every resample. Its
percentiles are taken as :func:`~repspace.engines.eval.uncertainty.bootstrap_interval`
takes them; with one part it is that function's interval bit for bit (the
same draws from the same seed).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval.uncertainty import BATCH_ELEMENTS, DEFAULT_RESAMPLES, Interval
from repspace.engines.eval.units import Units

__all__ = ["PartScore", "Partition", "macro_interval"]


@dataclass(frozen=True)
class PartScore:
    """One part's figure: the task run on the units whose column holds ``part``.

    Attributes
    ----------
    part : str
        The column's value shared by the part's units.
    n : int
        Its units (pairs, queries, items, texts).
    main_score : float
        The task's main score on those units alone.
    interval : Interval or None
        Its bootstrap interval over those units (``None``: no resampling, or
        a task without one).

    Examples
    --------
    >>> PartScore("news", 120, 0.8, Interval(0.7, 0.9, 0.95, 1000)).to_dict()
    {'part': 'news', 'n': 120, 'main_score': 0.8, 'ci_low': 0.7, 'ci_high': 0.9, 'n_resamples': 1000}
    """

    part: str
    n: int
    main_score: float
    interval: Interval | None = None

    def __post_init__(self) -> None:
        if not math.isfinite(self.main_score):
            raise InputError(f"the score of part {self.part!r} is not a finite number: {self.main_score!r}")

    def to_dict(self) -> dict[str, Any]:
        """``{"part", "n", "main_score"}``, and ``ci_low``, ``ci_high``, ``n_resamples`` when it has an interval."""
        return {"part": self.part, "n": self.n, "main_score": self.main_score, **_ci(self.interval)}


def _ci(interval: Interval | None) -> dict[str, Any]:
    if interval is None:
        return {}
    return {"ci_low": float(interval.low), "ci_high": float(interval.high), "n_resamples": int(interval.n_resamples)}


def _interval(entry: dict[str, Any], level: float) -> Interval | None:
    if entry.get("ci_low") is None:
        return None
    return Interval(float(entry["ci_low"]), float(entry["ci_high"]), level, int(entry.get("n_resamples") or 0))


@dataclass(frozen=True)
class Partition:
    """A result split by a column: each part's :class:`PartScore` and their macro average.

    Attributes
    ----------
    by : str
        The column (a CSV header, or a JSON key; ``metadata.domain`` reads a nested key).
    values : tuple of PartScore
        One per distinct value of the column, in sorted order.
    macro_interval : Interval or None
        The stratified bootstrap interval of :attr:`macro` (:func:`macro_interval`);
        ``None`` without resampling or where a part has no per-unit data.

    Examples
    --------
    >>> p = Partition("genre", (PartScore("forum", 40, 0.6), PartScore("news", 60, 0.8)))
    >>> round(p.macro, 4), p.n_parts
    (0.7, 2)
    >>> d = p.to_dict()
    >>> d["by"], round(d["macro"]["main_score"], 4), [v["part"] for v in d["values"]]
    ('genre', 0.7, ['forum', 'news'])
    >>> Partition.from_dict(d) == p
    True
    """

    by: str
    values: tuple[PartScore, ...]
    macro_interval: Interval | None = None

    def __post_init__(self) -> None:
        values = tuple(self.values)
        if not values:
            raise InputError(f"a partition by {self.by!r} needs at least one part")
        names = [v.part for v in values]
        if len(set(names)) != len(names):
            raise InputError(f"the parts of a partition by {self.by!r} must be distinct, got {names}")
        object.__setattr__(self, "values", values)

    @property
    def macro(self) -> float:
        """The mean of the parts' main scores, each part weighing the same."""
        return float(np.mean([v.main_score for v in self.values]))

    @property
    def n_parts(self) -> int:
        """The number of parts."""
        return len(self.values)

    def to_dict(self) -> dict[str, Any]:
        """``{"by", "level", "macro": {"main_score", "n_parts", ci...}, "values": [PartScore.to_dict(), ...]}``.

        ``level`` is the intervals' confidence level (``None`` without any);
        an interval is written as ``ci_low``, ``ci_high`` and ``n_resamples``
        (the resamples on which the figure was defined).
        """
        levels = [i.level for i in (self.macro_interval, *(v.interval for v in self.values)) if i is not None]
        return {"by": self.by, "level": levels[0] if levels else None,
                "macro": {"main_score": self.macro, "n_parts": self.n_parts, **_ci(self.macro_interval)},
                "values": [v.to_dict() for v in self.values]}

    @classmethod
    def from_dict(cls, data: Any) -> Partition:
        """The partition :meth:`to_dict` wrote (as read back from JSON or the store).

        ``level`` defaults to 0.95 and an interval's ``n_resamples`` to 0 (unknown) where a
        hand-written block leaves them out.

        Raises
        ------
        InputError
            When ``data`` is not such a dict.
        """
        try:
            level = float(data.get("level") or 0.95)
            values = tuple(PartScore(str(v["part"]), int(v["n"]), float(v["main_score"]), _interval(v, level))
                           for v in data["values"])
            return cls(str(data["by"]), values, _interval(data.get("macro") or {}, level))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError("a partition must look like Partition.to_dict(): by, values with part, n and "
                             "main_score, and a macro entry") from None


def _part_draws(units: Units, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The statistic of ``n_resamples`` draws of the part's units with replacement, drawn a batch at a time."""
    n = units.n_units
    batch = n_resamples if n_resamples * n <= BATCH_ELEMENTS else max(1, BATCH_ELEMENTS // n)
    out = []
    for start in range(0, n_resamples, batch):
        idx = rng.integers(0, n, (min(batch, n_resamples - start), n))
        out.append(np.asarray(units.function(*(a[idx] for a in units.arrays), axis=-1), dtype=np.float64))
    return np.concatenate(out)


def macro_interval(parts: Sequence[Units], *, n_resamples: int = DEFAULT_RESAMPLES, level: float = 0.95,
                   seed: int = 0) -> Interval | None:
    """A stratified percentile bootstrap interval of the mean of the parts' statistics.

    Each resample draws every part's units with replacement within the part
    (the parts drawn in the order given, each ``n_resamples`` draws at once,
    as :func:`scipy.stats.bootstrap` draws a paired sample), computes each
    part's statistic (:attr:`Units.function`) and averages them over the parts.
    A resample where some part's statistic is undefined (``NaN``: a draw
    whose gold scores are all equal) is left out, as in
    :func:`~repspace.engines.eval.uncertainty.bootstrap_interval`.

    Parameters
    ----------
    parts : sequence of Units
        Each part's per-unit data (:attr:`TaskResult.units` of the part's run).
    n_resamples : int
        Bootstrap resamples; 0: no interval (``None``).
    level : float
        Confidence level in (0, 1).
    seed : int
        Seed of ``numpy.random.default_rng``; the same seed gives the same interval.

    Returns
    -------
    Interval or None
        ``None`` with ``n_resamples`` 0 or when every resample was undefined.

    Raises
    ------
    InputError
        No parts, a part with fewer than 2 units, or bad resampling settings.

    Examples
    --------
    >>> a = Units("mean", [[1.0, 0.0, 1.0, 1.0]], ("correct",))
    >>> b = Units("mean", [[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]], ("correct",))
    >>> ci = macro_interval([a, b], seed=0)
    >>> (a.value() + b.value()) / 2, ci.low <= 0.4583 <= ci.high, ci.n_resamples
    (0.4583333333333333, True, 1000)
    """
    n_resamples = check_scalar(n_resamples, "n_resamples", int, low=0)
    seed = check_scalar(seed, "seed", int, low=0, high=2**32, include="left")
    level = check_scalar(level, "level", float, low=0, high=1, include="neither")
    if not parts:
        raise InputError("a macro interval needs at least one part")
    small = [u for u in parts if u.n_units < 2]
    if small:
        raise InputError(f"resampling needs at least 2 units in every part, got {small[0].n_units}")
    if n_resamples == 0:
        return None
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        macro = np.mean([_part_draws(u, n_resamples, rng) for u in parts], axis=0)
    finite = macro[np.isfinite(macro)]
    if not len(finite):
        return None
    alpha = (1 - level) / 2
    low, high = np.percentile(finite, [100 * alpha, 100 * (1 - alpha)])
    return Interval(float(low), float(high), level, int(len(finite)))
