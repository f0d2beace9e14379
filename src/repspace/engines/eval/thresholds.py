"""Per-model similarity thresholds: which cosine means "related" depends on the model.

Models spread their cosines differently: all-MiniLM-L6-v2 puts unrelated
sentence pairs near 0.1, a static (averaged word vectors) model puts them far
higher, so a fixed rule such as "0.7 means similar" says different things for
different models. A threshold is therefore read off each model's own
similarity distributions: those of *related* pairs (paraphrases, STS pairs
scored highly) and of *random* pairs (each sentence paired with a random
other), as the telecom-domain bootstrap study of sentence-embedding
similarities does (RESEARCH.md, S220: bootstrap confidence intervals and
per-model similarity thresholds). :func:`similarity_threshold` reports two:

* the **random-pair quantile**: the similarity above which only
  ``1 - quantile`` (5%) of random pairs fall (a false-positive rate of 5% on
  unrelated text), with the share of related pairs above it;
* **Youden's cut**: the similarity that best separates related from random
  pairs, the threshold of the ROC curve (related = positive) maximising
  Youden's J = TPR - FPR; a pair is called related when its similarity is at
  least the cut, as :func:`sklearn.metrics.roc_curve` counts.

Each comes with a seeded percentile bootstrap 95% interval
(:func:`~repspace.engines.eval.uncertainty.bootstrap_interval`), resampling the
pairs (related and random pooled, each keeping its kind), so that two models'
thresholds can be told apart from resampling noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, Interval, bootstrap_interval

__all__ = ["SimilarityThreshold", "similarity_threshold"]


def _ci(interval: Interval | None) -> dict[str, float | None]:
    return {"ci_low": None if interval is None else float(interval.low),
            "ci_high": None if interval is None else float(interval.high)}


@dataclass(frozen=True)
class SimilarityThreshold:
    """A model's similarity thresholds, from its related and random pairs, with bootstrap intervals.

    Attributes
    ----------
    quantile : float
        The random-pair quantile asked for (0.95).
    random_cut : float
        That quantile of the random pairs' similarities (:func:`numpy.quantile`,
        linear interpolation): ``1 - quantile`` of random pairs lie above it.
    related_above : float
        The share of related pairs whose similarity is above :attr:`random_cut`.
    youden_cut : float
        The similarity maximising Youden's J = TPR - FPR over the ROC curve of
        related (positive) against random pairs; a pair is called related when
        its similarity is at least the cut. Among equal J the highest cut.
    youden_j, youden_tpr, youden_fpr : float
        J at :attr:`youden_cut`, and the shares of related (TPR) and random
        (FPR) pairs at or above it.
    random_cut_interval, related_above_interval, youden_cut_interval : Interval or None
        Their seeded bootstrap intervals (None when no resampling was asked for).
    n_related, n_random : int
        The pairs of each kind.
    info : dict
        What was measured (the model, the data, how the pairs were chosen): the workflow's.

    Examples
    --------
    >>> t = similarity_threshold([0.9, 0.8, 0.7, 0.45], [0.1, 0.2, 0.3, 0.5, 0.0], n_resamples=0)
    >>> t.youden_cut, t.youden_tpr, t.youden_fpr  # at 0.7: TPR 0.75, FPR 0, J 0.75; at 0.45: J = 1.0 - 0.2
    (0.45, 1.0, 0.2)
    >>> t.to_dict()["youden"]
    {'cut': 0.45, 'ci_low': None, 'ci_high': None, 'j': 0.8, 'tpr': 1.0, 'fpr': 0.2}
    """

    quantile: float
    random_cut: float
    related_above: float
    youden_cut: float
    youden_j: float
    youden_tpr: float
    youden_fpr: float
    n_related: int
    n_random: int
    random_cut_interval: Interval | None = None
    related_above_interval: Interval | None = None
    youden_cut_interval: Interval | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: ``{"n_related", "n_random", "random_quantile": {...}, "youden": {...}, "bootstrap",
        **info}``, each cut with its ``ci_low``/``ci_high`` (None without resampling)."""
        ci = next((i for i in (self.random_cut_interval, self.youden_cut_interval, self.related_above_interval)
                   if i is not None), None)
        return {
            **self.info,
            "n_related": self.n_related,
            "n_random": self.n_random,
            "random_quantile": {"quantile": self.quantile, "cut": self.random_cut, **_ci(self.random_cut_interval),
                                "related_above": self.related_above,
                                **{f"related_above_{k}": v for k, v in _ci(self.related_above_interval).items()}},
            "youden": {"cut": self.youden_cut, **_ci(self.youden_cut_interval), "j": self.youden_j,
                       "tpr": self.youden_tpr, "fpr": self.youden_fpr},
            "bootstrap": None if ci is None else {"level": ci.level, "n_resamples": ci.n_resamples},
        }

    def with_info(self, **info: Any) -> SimilarityThreshold:
        """A copy whose :attr:`info` has these keys added or replaced."""
        return replace(self, info={**self.info, **info})

    def __repr__(self) -> str:
        return (f"SimilarityThreshold(random {self.quantile:.0%} quantile {self.random_cut:.4f}, "
                f"related above {self.related_above:.3f}; youden cut {self.youden_cut:.4f}, J {self.youden_j:.3f})")


# ----------------------------------------------------------------------------- vectorised statistics
# Each takes ``labels`` (1 related, 0 random) and ``sims`` of the pooled pairs, units along the last axis, and
# reduces it: one call scores every bootstrap resample (rows). NaN where a resample lacks a kind of pair.


def _random_cut(labels: np.ndarray, sims: np.ndarray, q: float) -> np.ndarray:
    """The ``q`` quantile of the random pairs' similarities, as :func:`numpy.quantile` (linear) computes it."""
    random = labels == 0
    n = random.sum(axis=-1)
    ordered = np.sort(np.where(random, sims, np.inf), axis=-1)  # each row's random pairs first, ascending
    h = np.maximum(n - 1, 0) * q
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    a = np.take_along_axis(ordered, lo[..., None], axis=-1)[..., 0]
    b = np.take_along_axis(ordered, hi[..., None], axis=-1)[..., 0]
    t = h - lo
    with np.errstate(invalid="ignore"):  # numpy's own interpolation, from the nearer end
        cut = np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t)
    return np.where(n > 0, cut, np.nan)


def _related_above(labels: np.ndarray, sims: np.ndarray, q: float) -> np.ndarray:
    """The share of related pairs above the random-pair cut."""
    cut = _random_cut(labels, sims, q)
    related = labels == 1
    n = related.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (related & (sims > cut[..., None])).sum(axis=-1) / n
    return np.where((n > 0) & np.isfinite(cut), share, np.nan)


def _youden(labels: np.ndarray, sims: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Youden's cut, its J, TPR and FPR: J = TPR - FPR at each distinct similarity (called related when at or
    above it), the first maximum from the top (the highest cut among equal J), as ``argmax`` over sklearn's
    ``roc_curve`` finds it."""
    order = np.argsort(-sims, axis=-1, kind="stable")
    s = np.take_along_axis(sims, order, axis=-1)
    tp = np.cumsum(np.take_along_axis(labels, order, axis=-1), axis=-1, dtype=np.int64)
    del order
    n = s.shape[-1]
    fp = np.arange(1, n + 1) - tp  # pairs at or above each position that are random
    n_pos, n_neg = tp[..., -1:], fp[..., -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        j = tp / n_pos - fp / n_neg
    # a threshold is the last position of a run of tied similarities: every pair of the run is counted there
    j[..., :-1][s[..., 1:] == s[..., :-1]] = -np.inf
    at = np.argmax(j, axis=-1)[..., None]
    picked = [np.take_along_axis(x, at, axis=-1)[..., 0] for x in (s, j, tp, fp)]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (picked[0], picked[1], picked[2] / n_pos[..., 0], picked[3] / n_neg[..., 0])
    defined = (n_pos[..., 0] > 0) & (n_neg[..., 0] > 0)
    return tuple(np.where(defined, x, np.nan) for x in out)  # type: ignore[return-value]


def _stat(fn: Any, *args: Any) -> Any:
    """``fn`` as a bootstrap statistic ``(labels, sims, axis)``, units along ``axis``."""
    def statistic(labels: np.ndarray, sims: np.ndarray, axis: int = -1) -> Any:
        out = fn(np.moveaxis(labels, axis, -1), np.moveaxis(sims, axis, -1), *args)
        return out if np.ndim(out) else float(out)
    return statistic


def _similarities(values: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"the {what} similarities are not numbers") from None
    if arr.ndim != 1:
        raise InputError(f"the {what} similarities must be one number per pair (1-d), got shape {arr.shape}")
    if len(arr) < 2:
        raise InputError(f"a threshold needs at least 2 {what} pairs, got {len(arr)}")
    if not np.isfinite(arr).all():
        raise InputError(f"the {what} similarities contain NaN or infinite values")
    return arr


def similarity_threshold(related: Any, random: Any, *, quantile: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES,
                         seed: int = 0, level: float = 0.95) -> SimilarityThreshold:
    """A model's similarity thresholds from its related and random pairs' similarities, with bootstrap intervals.

    Parameters
    ----------
    related : array-like of shape (n_related,)
        Similarities (cosines) of related pairs: paraphrases, STS pairs with a high gold score.
    random : array-like of shape (n_random,)
        Similarities of random pairs (each sentence paired with a random other).
    quantile : float
        The random-pair quantile of the first threshold, in (0, 1): 0.95 leaves 5% of random pairs above it.
    n_resamples : int
        Bootstrap resamples behind the intervals; 0: none.
    seed : int
        The bootstrap's seed (``numpy.random.default_rng``): the same seed gives the same intervals.
    level : float
        The intervals' confidence level.

    Returns
    -------
    SimilarityThreshold

    Notes
    -----
    The bootstrap resamples the pooled pairs with replacement (each keeps its
    kind), so a resample's numbers of related and random pairs vary around
    the sample's, as in Efron's bootstrap of an ROC curve; the three intervals
    (random-pair cut, share of related pairs above it, Youden's cut) come from
    the same resamples (one seed). Every resample is scored in one vectorised
    call.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> related, random = rng.normal(0.45, 0.1, 300), rng.normal(0.1, 0.1, 600)
    >>> t = similarity_threshold(related, random, seed=1)
    >>> round(t.random_cut, 2), round(t.related_above, 2), round(t.youden_cut, 2)
    (0.25, 0.98, 0.3)
    >>> t.random_cut_interval.low < t.random_cut < t.random_cut_interval.high
    True
    >>> similarity_threshold([0.9], [0.1, 0.2])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: a threshold needs at least 2 related pairs, got 1
    """
    q = check_scalar(quantile, "quantile", float, low=0, high=1, include="neither")
    n_resamples = check_scalar(n_resamples, "n_resamples", int, low=0)
    pos = _similarities(related, "related")
    neg = _similarities(random, "random")
    labels = np.concatenate([np.ones(len(pos), dtype=np.int8), np.zeros(len(neg), dtype=np.int8)])
    sims = np.concatenate([pos, neg])
    cut = float(_random_cut(labels, sims, q))
    above = float(_related_above(labels, sims, q))
    y_cut, y_j, y_tpr, y_fpr = (float(x) for x in _youden(labels, sims))

    def interval(fn: Any, *args: Any) -> Interval | None:
        return bootstrap_interval(_stat(fn, *args), labels, sims, n_resamples=n_resamples, level=level, seed=seed,
                                  vectorized=True)

    return SimilarityThreshold(
        quantile=q, random_cut=cut, related_above=above, youden_cut=y_cut, youden_j=y_j, youden_tpr=y_tpr,
        youden_fpr=y_fpr, n_related=len(pos), n_random=len(neg),
        random_cut_interval=interval(_random_cut, q),
        related_above_interval=interval(_related_above, q),
        youden_cut_interval=interval(lambda lab, s: _youden(lab, s)[0]),
    )
