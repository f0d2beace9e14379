"""Uncertainty of similarities: bootstrap intervals on cosine comparisons, and the spread of non-matching pairs.

GloVe-V (Vallebueno et al. 2024, *Statistical Uncertainty in Word Embeddings: GloVe-V*, S266) puts variances on
word vectors from the co-occurrence matrix and carries them into cosine comparisons ("is cos(doctor, man) really
above cos(doctor, woman)?"). Without the co-occurrence matrix the same question can be asked by resampling what a
compared vector is made of (:func:`similarity_ci`):

``items``
    Each compared vector is the mean of a set of rows: a concept vector from a word set, or one word's encodings
    in several contexts (sentences). Every resample draws each set's rows with replacement (its own size, the
    sets independently; a set that is one fixed vector is not resampled), re-forms the means and recomputes
    ``cos(a, b)``, ``cos(a, c)`` and their difference; ``a`` is drawn once per resample and shared by both.
``dimensions``
    The coordinates are resampled (one draw of the ``d`` columns per resample, shared by all vectors): how much
    the comparison rests on a few dimensions.

Intervals are percentile intervals of the resampled statistic (the ``(1 − level)/2`` and ``(1 + level)/2``
quantiles, linear interpolation), and ``flip_share`` is the share of resamples whose order of ``cos(a, b)`` and
``cos(a, c)`` differs from the full sample's (a tie counts as a flip). The draws are scipy's: for the same seed,
``scipy.stats.bootstrap(..., method="percentile", rng=np.random.default_rng(seed))`` on the row indices gives
the same resamples, hence the same interval.

The spread-out statistics (:func:`spread_out`; Zhang et al. 2017, *Learning Spread-out Local Feature
Descriptors*) describe non-matching pairs (distinct items): for directions spread out over the sphere the mean
cosine is 0 and its second moment ``1/d``, so ``d · E[cos²]`` is 1 for a spread-out space and larger for an
anisotropic one. They say what size of cosine is ordinary in the space the intervals are read in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, unit_rows
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.estimate import pair_chunks, sample_pairs

__all__ = ["DEFAULT_RESAMPLES", "DEFAULT_SPREAD_PAIRS", "OVER", "Interval", "SimilarityCI", "SpreadOut",
           "similarity_ci", "spread_out"]

#: Bootstrap resamples unless the caller asks otherwise.
DEFAULT_RESAMPLES = 1000
#: Distinct pairs behind :func:`spread_out` (every pair when there are fewer).
DEFAULT_SPREAD_PAIRS = 200_000
#: What a resample draws: the rows of each set, or the coordinates.
OVER = ("items", "dimensions")
#: Resamples computed at once (bounds the ``chunk × n`` count matrix).
_CHUNK_ENTRIES = 1 << 22


@dataclass(frozen=True)
class Interval:
    """A statistic on the full sample and its bootstrap percentile interval.

    Examples
    --------
    >>> Interval(0.5, 0.4, 0.6, 0.05).to_dict()
    {'estimate': 0.5, 'low': 0.4, 'high': 0.6, 'std': 0.05}
    """

    estimate: float
    low: float
    high: float
    std: float

    def to_dict(self) -> dict[str, float]:
        """``{"estimate", "low", "high", "std"}`` (``std``: of the resampled values, ``ddof=1``)."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "std": self.std}


@dataclass(frozen=True)
class SimilarityCI:
    """Bootstrap intervals on ``cos(a, b)`` and, with a third vector, on ``cos(a, c)`` and their difference.

    Attributes
    ----------
    over : str
        ``items`` or ``dimensions`` (what was resampled).
    sizes : tuple of int
        Rows behind ``a``, ``b`` (and ``c``); a fixed vector counts 1.
    resamples : int
    level : float
        Confidence level of the intervals.
    seed : int or None
    cos_ab, cos_ac, difference : Interval
        ``cos_ac`` and ``difference`` (``cos(a, b) − cos(a, c)``) are ``None`` without ``c``.
    flip_share : float or None
        Share of resamples in which ``cos(a, b)`` and ``cos(a, c)`` are in the other order than on the full
        sample, or tied (``None`` without ``c``).

    Examples
    --------
    >>> r = similarity_ci(np.eye(3)[:2], np.eye(3)[:2], resamples=50)
    >>> r.cos_ab.estimate, r.cos_ac
    (1.0, None)
    """

    over: str
    sizes: tuple[int, ...]
    resamples: int
    level: float
    seed: int | None
    cos_ab: Interval
    cos_ac: Interval | None = None
    difference: Interval | None = None
    flip_share: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"over", "sizes", "resamples", "level", "seed", "cos_ab", "cos_ac", "difference", "flip_share"}``."""
        opt = lambda i: None if i is None else i.to_dict()  # noqa: E731
        return {"over": self.over, "sizes": list(self.sizes), "resamples": self.resamples, "level": self.level,
                "seed": self.seed, "cos_ab": self.cos_ab.to_dict(), "cos_ac": opt(self.cos_ac),
                "difference": opt(self.difference), "flip_share": self.flip_share}


@dataclass(frozen=True)
class SpreadOut:
    """The spread-out statistics of non-matching (distinct) pairs of items.

    Attributes
    ----------
    n, d : int
        Items of non-zero norm and dimensions.
    n_pairs : int
        Pairs the figures rest on; ``exact`` when that is every distinct pair.
    mean : float
        Mean cosine (0 for a spread-out space).
    second_moment : float
        Mean squared cosine (``1/d`` for a spread-out space).
    d_second_moment : float
        ``d · second_moment`` (1 for a spread-out space).

    Examples
    --------
    >>> spread_out(np.eye(4)).to_dict()["d_second_moment"]
    0.0
    """

    n: int
    d: int
    n_pairs: int
    exact: bool
    mean: float
    second_moment: float
    d_second_moment: float

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "d", "n_pairs", "exact", "mean", "second_moment", "d_second_moment"}``."""
        return {"n": self.n, "d": self.d, "n_pairs": self.n_pairs, "exact": self.exact, "mean": self.mean,
                "second_moment": self.second_moment, "d_second_moment": self.d_second_moment}


def _as_set(v: Any, name: str, d: int | None) -> np.ndarray:
    """A set of rows (2-d) or one fixed vector (1-d, returned as one row), checked."""
    arr = np.asarray(v, dtype=np.float64) if not isinstance(v, np.ndarray) else v
    if arr.ndim == 1:
        arr = arr[None, :]
    arr = np.asarray(as_matrix(arr, name), dtype=np.float64)
    if d is not None and arr.shape[1] != d:
        raise InputError(f"{name} has {arr.shape[1]} dimensions, the first set {d}")
    return arr


def _cosines(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Row-wise cosines of two ``(m, d)`` arrays; 0 where a row is zero."""
    nu = np.linalg.norm(u, axis=1)
    nv = np.linalg.norm(v, axis=1)
    den = nu * nv
    dot = np.einsum("ij,ij->i", u, v)
    return np.divide(dot, den, out=np.zeros_like(dot), where=den > 0)


def _counts(idx: np.ndarray, n: int) -> np.ndarray:
    """How often each of ``n`` rows is drawn in each resample: ``(m, n)`` float64 from ``(m, n)`` indices."""
    m = idx.shape[0]
    out = np.zeros((m, n))
    np.add.at(out, (np.arange(m)[:, None], idx), 1.0)
    return out


def _interval(est: float, boot: np.ndarray, level: float) -> Interval:
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
    std = float(boot.std(ddof=1)) if len(boot) > 1 else 0.0
    return Interval(round(float(est), 12), round(float(lo), 12), round(float(hi), 12), round(std, 12))


def similarity_ci(a: Any, b: Any, c: Any = None, *, over: str = "items", resamples: int = DEFAULT_RESAMPLES,
                  level: float = 0.95, seed: int | None = 0, normalize: bool = True) -> SimilarityCI:
    """Bootstrap percentile intervals on ``cos(ā, b̄)``, ``cos(ā, c̄)`` and their difference, and how often the
    order of the two flips (see the module's description).

    Parameters
    ----------
    a, b, c : array of shape (n_i, d) or (d,)
        Each compared vector as the set of rows it is the mean of (a word set, a word's contexts), or one fixed
        vector (1-d: never resampled). ``c`` is optional.
    over : ``items`` or ``dimensions``
        Resample each set's rows (independently; ``a`` shared by both cosines), or the ``d`` coordinates (one
        draw shared by every vector).
    resamples : int
        Bootstrap resamples (at least 2).
    level : float
        Confidence level, in (0, 1).
    seed : int or None
        Seed of ``np.random.default_rng``; the draws are made as scipy.stats.bootstrap makes them (per set in
        the order ``a, b, c``, ``rng.integers(0, n, (resamples, n))``), so scipy with the same seed resamples
        the same rows.
    normalize : bool
        Scale every row to unit length before the means (each word weighs the same); the cosines do not
        depend on it otherwise.

    Returns
    -------
    SimilarityCI

    Raises
    ------
    InputError
        A set that is not a finite numeric array, sets of different dimensions, bad ``over``, ``resamples`` or
        ``level``.

    Examples
    --------
    A concept of five noisy copies of ``e1`` against ``e1`` and against ``e2``: the order never flips.

    >>> rng = np.random.default_rng(0)
    >>> a = np.eye(4)[0] + 0.3 * rng.standard_normal((5, 4))
    >>> r = similarity_ci(a, np.eye(4)[0], np.eye(4)[1], resamples=200)
    >>> r.cos_ab.low > r.cos_ac.high, r.flip_share, r.sizes
    (True, 0.0, (5, 1, 1))
    """
    over = check_choice(over, "over", OVER)
    resamples = check_scalar(resamples, "resamples", int, low=2)
    level = check_scalar(level, "level", float, low=0, high=1, include="neither")
    A = _as_set(a, "a", None)
    d = A.shape[1]
    sets = [A, _as_set(b, "b", d)] + ([] if c is None else [_as_set(c, "c", d)])
    if normalize:
        sets = [unit_rows(s) for s in sets]
    means = [s.mean(axis=0) for s in sets]
    rng = np.random.default_rng(seed)
    if over == "items":
        draws = [None if len(s) == 1 else rng.integers(0, len(s), (resamples, len(s))) for s in sets]
        boot = _items_boot(sets, draws, resamples)
    else:
        boot = _dims_boot(means, rng.integers(0, d, (resamples, d)))
    est_ab = float(_cosines(means[0][None], means[1][None])[0])
    cos_ab = _interval(est_ab, boot[0], level)
    if c is None:
        return SimilarityCI(over, tuple(len(s) for s in sets), resamples, level, seed, cos_ab)
    est_ac = float(_cosines(means[0][None], means[2][None])[0])
    diff = boot[0] - boot[1]
    sign = np.sign(est_ab - est_ac)
    flips = float(np.mean(np.sign(diff) != sign)) if sign != 0 else 1.0
    return SimilarityCI(over, tuple(len(s) for s in sets), resamples, level, seed, cos_ab,
                        _interval(est_ac, boot[1], level), _interval(est_ab - est_ac, diff, level),
                        round(flips, 12))


def _items_boot(sets: list[np.ndarray], draws: list[np.ndarray | None], resamples: int) -> list[np.ndarray]:
    """Resampled ``cos(a, b)`` (and ``cos(a, c)``) from each set's drawn rows, in chunks of resamples."""
    out = [np.empty(resamples) for _ in sets[1:]]
    widest = max(len(s) for s in sets)
    step = max(1, _CHUNK_ENTRIES // widest)
    for lo in range(0, resamples, step):
        hi = min(resamples, lo + step)
        m = []
        for s, dr in zip(sets, draws):
            m.append(np.broadcast_to(s[0], (hi - lo, s.shape[1])) if dr is None
                     else _counts(dr[lo:hi], len(s)) @ s / len(s))
        for o, other in zip(out, m[1:]):
            o[lo:hi] = _cosines(m[0], other)
    return out


def _dims_boot(means: list[np.ndarray], idx: np.ndarray) -> list[np.ndarray]:
    """Resampled cosines over drawn coordinates: ``Σ w_j a_j b_j / √(Σ w_j a_j² · Σ w_j b_j²)``."""
    out = [np.empty(len(idx)) for _ in means[1:]]
    step = max(1, _CHUNK_ENTRIES // idx.shape[1])
    a = means[0]
    for lo in range(0, len(idx), step):
        w = _counts(idx[lo:lo + step], idx.shape[1])
        aa = w @ (a * a)
        for o, v in zip(out, means[1:]):
            den = np.sqrt(aa * (w @ (v * v)))
            dot = w @ (a * v)
            o[lo:lo + step] = np.divide(dot, den, out=np.zeros_like(dot), where=den > 0)
    return out


def spread_out(X: Any, *, pairs: int = DEFAULT_SPREAD_PAIRS, seed: int | None = 0) -> SpreadOut:
    """Mean and second moment of the cosine over non-matching (distinct) pairs of ``X``'s rows, and ``d`` times
    the second moment (Zhang et al. 2017's spread-out property: 0, ``1/d`` and 1 for directions uniform on the
    sphere).

    Parameters
    ----------
    X : array of shape (n, d)
        Zero rows are left out; at least 2 others.
    pairs : int
        Every distinct pair when there are at most this many, else this many drawn uniformly
        (:func:`repspace.core.estimate.sample_pairs`), gathered in blocks of bounded memory.
    seed : int or None
        Seed of the sampled pairs.

    Examples
    --------
    Random Gaussian directions are spread out: ``d · E[cos²] ≈ 1``.

    >>> s = spread_out(np.random.default_rng(0).standard_normal((2000, 64)), pairs=100_000)
    >>> round(s.mean, 2), round(s.d_second_moment, 1), s.exact
    (0.0, 1.0, False)
    """
    pairs = check_scalar(pairs, "pairs", int, low=1)
    X = as_matrix(X)
    norms = np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1)
    keep = np.flatnonzero(norms > 0)
    n, d = len(keep), int(X.shape[1])
    if n < 2:
        raise InputError(f"spread-out statistics need at least 2 items of non-zero norm, got {n}")
    total = n * (n - 1) // 2
    if total <= pairs:
        U = unit_rows(np.asarray(X[keep], dtype=np.float64))
        s1 = s2 = 0.0
        for lo in range(0, n, 1024):  # the upper triangle, one block of rows at a time
            g = U[lo:lo + 1024] @ U.T
            mask = np.arange(n)[None, :] > np.arange(lo, min(n, lo + 1024))[:, None]
            v = g[mask]
            s1 += float(v.sum())
            s2 += float((v * v).sum())
        m = total
    else:
        i, j = sample_pairs(n, pairs, seed)
        s1 = s2 = 0.0
        for ch in pair_chunks(pairs, d):
            v = np.einsum("ij,ij->i", unit_rows(np.asarray(X[keep[i[ch]]])), unit_rows(np.asarray(X[keep[j[ch]]])))
            s1 += float(v.sum())
            s2 += float((v * v).sum())
        m = pairs
    mean, second = s1 / m, s2 / m
    return SpreadOut(n, d, int(m), total <= pairs, round(mean, 12), round(second, 12), round(d * second, 12))
