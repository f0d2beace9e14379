"""Semantic axes: pole-difference directions (SemAxis), POLAR bases, rank axes, and their significance.

* :func:`axis` — SemAxis (An, Kwak & Ahn, *SemAxis: a lightweight framework to
  characterize domain-specific word semantics beyond sentiment*, ACL 2018): the
  direction from the mean of a negative pole to the mean of a positive pole,
  optionally with each pole expanded by its nearest neighbours in a pool of
  candidates; :meth:`Axis.score` is the cosine of each item with it.
* :func:`polar` — POLAR (Mathew, Sikdar, Lemmerich & Strohmaier, *The POLAR
  framework: polar opposites enable interpretability of pre-trained word
  embeddings*, WWW 2020): a change of basis onto many named axes, ``X @ pinv(A)``.
* :func:`rank_axis`, :func:`rank_correlation` — an axis from a handful of
  ranked items (as few as the two extremes), and how well it orders others.
* :func:`axis_significance` — the axis's Spearman ρ with some values against
  the distribution of ρ for random directions (how often does chance do as well?).

Every function takes arrays (one row per item) and raises
:class:`~repspace.core.errors.InputError` on bad input; nothing here is
random except :func:`axis_significance`, which is seeded.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import ConstantInputWarning, rankdata, spearmanr

from repspace.core.arrays import as_matrix, row_blocks, row_norms, unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = [
    "Axis",
    "AxisSignificance",
    "PolarResult",
    "axis",
    "axis_significance",
    "polar",
    "rank_axis",
    "rank_correlation",
]

#: The poles' means count as equal when their difference is below this fraction of their norms.
_SAME_MEAN = 1e-12
#: A pool row with cosine above ``1 − this`` to a seed row is that seed (not added again by pole expansion).
_SAME_ROW = 1e-9
#: Elements (floats) of one block of random-direction scores in :func:`axis_significance`.
_BLOCK = 1 << 22


@dataclass(frozen=True, eq=False)
class Axis:
    """A semantic axis: the direction from a negative pole to a positive pole.

    Attributes
    ----------
    vector : ndarray of shape (d,)
        ``mean(positive pole) − mean(negative pole)`` (rows L2-normalised first
        when :attr:`normalize`); not itself normalised.
    n_pos, n_neg : int
        Rows in each pole, expansion included.
    normalize : bool
        Whether pole rows were L2-normalised before averaging.
    expanded_pos, expanded_neg : tuple of int
        Rows of the ``pool`` added to each pole by expansion (nearest first).

    Examples
    --------
    >>> a = axis([[1.0, 0.0], [0.9, 0.1]], [[0.0, 1.0]])
    >>> a.score([[2.0, 0.0], [0.0, 3.0], [1.0, 1.0]]).round(3).tolist()
    [0.726, -0.688, 0.027]
    >>> a.to_dict()["n_pos"]
    2
    """

    vector: np.ndarray = field(repr=False)
    n_pos: int
    n_neg: int
    normalize: bool = True
    expanded_pos: tuple[int, ...] = ()
    expanded_neg: tuple[int, ...] = ()

    @property
    def d(self) -> int:
        """The dimension."""
        return int(self.vector.shape[0])

    @property
    def direction(self) -> np.ndarray:
        """:attr:`vector` scaled to unit length."""
        return self.vector / float(row_norms(self.vector[None, :])[0])

    def score(self, X: Any) -> np.ndarray:
        """SemAxis scores: the cosine of each row of ``X`` with the axis (a zero row scores 0).

        Examples
        --------
        >>> axis([1.0, 0.0], [0.0, 1.0]).score([[3.0, 0.0], [1.0, 1.0]]).round(4).tolist()
        [0.7071, 0.0]
        """
        return _cosines(_rows(X, "X", self.d), self.direction)

    def project(self, X: Any) -> np.ndarray:
        """Scalar projections ``X @ direction`` (the signed length along the axis, not divided by ``‖x‖``).

        Examples
        --------
        >>> axis([1.0, 0.0], [0.0, 1.0]).project([[3.0, 0.0]]).round(4).tolist()
        [2.1213]
        """
        Xm = _rows(X, "X", self.d)
        out = np.empty(Xm.shape[0])
        for start, block in row_blocks(Xm):
            out[start:start + block.shape[0]] = block @ self.direction
        return out

    def to_dict(self) -> dict[str, Any]:
        """``{"d", "n_pos", "n_neg", "normalize", "norm", "expanded_pos", "expanded_neg", "vector"}``."""
        return {
            "d": self.d,
            "n_pos": int(self.n_pos),
            "n_neg": int(self.n_neg),
            "normalize": bool(self.normalize),
            "norm": float(row_norms(self.vector[None, :])[0]),
            "expanded_pos": [int(i) for i in self.expanded_pos],
            "expanded_neg": [int(i) for i in self.expanded_neg],
            "vector": [float(v) for v in self.vector],
        }

    def __repr__(self) -> str:
        return (f"Axis(d={self.d}, n_pos={self.n_pos}, n_neg={self.n_neg}, normalize={self.normalize}, "
                f"expanded={len(self.expanded_pos)}+{len(self.expanded_neg)})")


@dataclass(frozen=True, eq=False)
class PolarResult:
    """Coordinates of items on named POLAR axes.

    Attributes
    ----------
    coordinates : ndarray of shape (n, m)
        ``X @ pinv(A)``: column ``j`` is the coordinate on axis ``names[j]``.
    names : tuple of str
        The axes, in the order given.
    axes : ndarray of shape (m, d)
        ``A``: row ``j`` is :attr:`Axis.vector` of axis ``j``.
    condition : float
        The 2-norm condition number of ``A`` (largest over smallest singular
        value; ``inf`` when the axes are linearly dependent). POLAR's
        coordinates become unstable when axes are nearly collinear.

    Examples
    --------
    >>> r = polar([[1.0, 2.0]], {"x": ([1.0, 0.0], [0.0, 0.0]), "y": ([0.0, 1.0], [0.0, 0.0])}, normalize=False)
    >>> r.coordinates.tolist(), r.names
    ([[1.0, 2.0]], ('x', 'y'))
    """

    coordinates: np.ndarray = field(repr=False)
    names: tuple[str, ...]
    axes: np.ndarray = field(repr=False)
    condition: float

    def to_dict(self, per_item: bool = False) -> dict[str, Any]:
        """``{"names", "n", "m", "d", "condition"}``; with ``per_item`` also ``"coordinates"`` (n lists of m)."""
        cond = float(self.condition)
        out: dict[str, Any] = {"names": list(self.names), "n": int(self.coordinates.shape[0]),
                               "m": int(self.axes.shape[0]), "d": int(self.axes.shape[1]),
                               "condition": cond if np.isfinite(cond) else None}
        if per_item:
            out["coordinates"] = self.coordinates.astype(float).tolist()
        return out


@dataclass(frozen=True)
class AxisSignificance:
    """An axis's Spearman ρ with some values, against random directions.

    Attributes
    ----------
    rho : float
        Spearman's ρ of the axis scores (cosines) with the values.
    random_p95, random_p99 : float
        The 95th and 99th percentiles of ``|ρ|`` over the random directions.
    random_mean : float
        The mean of ``|ρ|`` over the random directions.
    p_value : float
        ``(1 + #{random |ρ| ≥ |rho|}) / (1 + n_random)``.
    n, n_random, seed : int
        Items, random directions, seed.

    Examples
    --------
    >>> s = AxisSignificance(0.5, 0.2, 0.3, 0.05, 0.001, 100, 999, 0)
    >>> s.to_dict()["p_value"]
    0.001
    """

    rho: float
    random_p95: float
    random_p99: float
    random_mean: float
    p_value: float
    n: int
    n_random: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """``{"rho", "random_p95", "random_p99", "random_mean", "p_value", "n", "n_random", "seed"}``."""
        return {"rho": float(self.rho), "random_p95": float(self.random_p95), "random_p99": float(self.random_p99),
                "random_mean": float(self.random_mean), "p_value": float(self.p_value), "n": int(self.n),
                "n_random": int(self.n_random), "seed": int(self.seed)}


def axis(X_pos: Any, X_neg: Any, *, expand: int | None = None, pool: Any = None, normalize: bool = True) -> Axis:
    """The SemAxis direction ``mean(X_pos) − mean(X_neg)``, optionally with expanded poles.

    Parameters
    ----------
    X_pos, X_neg : array of shape (n_pos, d) and (n_neg, d), or one vector (d,)
        The pole items' vectors (e.g. "good", "excellent" against "bad", "awful").
    expand : int, optional
        With ``pool``: add to each pole its ``expand`` nearest rows of
        ``pool`` by cosine to the pole's mean (An et al. 2018's pole
        expansion). Two guards, not in the paper, keep the expansion from
        blurring the axis: a pool row that is a seed row of either pole
        (cosine ``> 1 − 1e-9``) is skipped, and a row joins a pole only if it
        is closer (by cosine) to that pole's mean than to the other's — in
        word vectors an antonym is often among a word's nearest neighbours
        ("bad" is close to "good"). Fewer rows are added when fewer qualify.
        Ties go to the lower pool row.
    pool : array of shape (N, d), optional
        The candidates for expansion (e.g. the whole vocabulary).
    normalize : bool
        L2-normalise every pole row (seed or added) before averaging, so that
        frequent words with long vectors do not dominate (SemAxis works with
        cosines). A zero row stays zero.

    Returns
    -------
    Axis

    Raises
    ------
    InputError
        Empty poles, different dimensions, NaN / inf, ``expand`` without
        ``pool`` (or not a positive integer), or poles with the same mean
        ("the poles have the same mean": the axis would have no direction).

    Examples
    --------
    >>> a = axis([[2.0, 0.0]], [[0.0, 1.0]])
    >>> a.vector.tolist(), a.direction.round(4).tolist()
    ([1.0, -1.0], [0.7071, -0.7071])
    >>> pool = np.array([[1.0, 0.1], [0.1, 1.0], [5.0, 5.2]])
    >>> b = axis([1.0, 0.0], [0.0, 1.0], expand=1, pool=pool)
    >>> b.expanded_pos, b.expanded_neg, b.n_pos
    ((0,), (1,), 2)
    >>> axis([1.0, 1.0], [2.0, 2.0])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: the poles have the same mean: the axis has no direction
    """
    P = _rows(X_pos, "X_pos")
    N = _rows(X_neg, "X_neg", P.shape[1])
    P64, N64 = np.asarray(P, dtype=np.float64), np.asarray(N, dtype=np.float64)
    if normalize:
        P64, N64 = unit_rows(P64), unit_rows(N64)
    added_pos: tuple[int, ...] = ()
    added_neg: tuple[int, ...] = ()
    if expand is not None or pool is not None:
        if pool is None or expand is None:
            raise InputError("pole expansion needs both expand (how many rows per pole) and pool (the candidates)")
        check_scalar(expand, "expand", int, low=1)
        Q = _rows(pool, "pool", P.shape[1], allow_vector=False)
        added_pos, added_neg = _expand(Q, P64, N64, int(expand))
        extra_p = np.asarray(Q[list(added_pos)], dtype=np.float64)
        extra_n = np.asarray(Q[list(added_neg)], dtype=np.float64)
        if normalize:
            extra_p, extra_n = unit_rows(extra_p), unit_rows(extra_n)
        P64, N64 = np.vstack([P64, extra_p]), np.vstack([N64, extra_n])
    return Axis(_difference(P64.mean(axis=0), N64.mean(axis=0)), P64.shape[0], N64.shape[0], bool(normalize),
                added_pos, added_neg)


def polar(X: Any, axes: Mapping[str, Axis | tuple[Any, Any]], *, normalize: bool = True) -> PolarResult:
    """POLAR coordinates: ``X @ pinv(A)``, the change of basis onto named polar axes (Mathew et al. 2020).

    With ``A`` the ``m × d`` matrix whose rows are the axes' vectors, POLAR
    writes each item ``x`` as ``x ≈ c A`` (a combination of the axes) and takes
    the least-squares, minimum-norm solution ``c = x pinv(A)`` (the
    Moore–Penrose generalised inverse, ``numpy.linalg.pinv`` with its default
    cut-off); for ``m ≤ d`` independent axes ``pinv(A) = Aᵀ(AAᵀ)⁻¹``. Unlike
    the SemAxis cosines of each axis taken alone, the coordinates account for
    the overlap between axes.

    Parameters
    ----------
    X : array of shape (n, d)
    axes : mapping of name → (X_pos, X_neg) or Axis
        The poles of each axis (built with :func:`axis` and ``normalize``), or
        ready axes. At least one.
    normalize : bool
        Passed to :func:`axis` for the pole pairs.

    Returns
    -------
    PolarResult

    Raises
    ------
    InputError
        No axes, dimensions that differ, NaN / inf, or an axis whose poles have the same mean.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    >>> r = polar(X, {"a": ([1.0, 0.0, 0.0], [0.0, 0.0, 0.0]), "b": ([1.0, 1.0, 0.0], [0.0, 0.0, 0.0])},
    ...           normalize=False)
    >>> (r.coordinates.round(6) + 0.0).tolist(), r.names
    ([[1.0, 0.0], [-1.0, 1.0]], ('a', 'b'))
    """
    if not isinstance(axes, Mapping) or len(axes) == 0:
        raise InputError("polar needs a non-empty mapping of axis name → (X_pos, X_neg) or Axis")
    Xm = as_matrix(X, "X")
    d = Xm.shape[1]
    names, rows = [], []
    for name, spec in axes.items():
        a = spec if isinstance(spec, Axis) else _axis_from_pair(name, spec, normalize)
        if a.d != d:
            raise InputError(f"axis {name!r} has dimension {a.d}, X has {d}")
        names.append(str(name))
        rows.append(a.vector)
    A = np.vstack(rows)
    pinv = np.linalg.pinv(A)  # d × m
    coords = np.empty((Xm.shape[0], A.shape[0]))
    for start, block in row_blocks(Xm):
        coords[start:start + block.shape[0]] = block @ pinv
    sv = np.linalg.svd(A, compute_uv=False)
    full_rank = sv.size == min(A.shape) and sv[-1] > sv[0] * max(A.shape) * np.finfo(np.float64).eps
    cond = float(sv[0] / sv[-1]) if full_rank else float("inf")
    return PolarResult(coords, tuple(names), A, cond)


def rank_axis(X_labelled: Any, ranks: Any, *, normalize: bool = True) -> Axis:
    """An axis from a few ranked items, pointing from the lowest- to the highest-ranked.

    The items ranked above the median rank form the positive pole and those
    below it the negative pole (items exactly at the median are left out), and
    the axis is :func:`axis` of the two: with two items, the difference of
    the highest and the lowest; with more, the difference of the top and
    bottom halves' means. This half-difference is used rather than a
    least-squares fit of the ranks on ``X`` because it needs no more items than
    dimensions (a fit on a handful of items in ``d`` dimensions interpolates
    the ranks and follows noise) and keeps the axis a SemAxis direction, scored
    by cosine like any other.

    Parameters
    ----------
    X_labelled : array of shape (n, d), n ≥ 2
        The ranked items' vectors.
    ranks : array of shape (n,)
        Numbers, higher = further toward the positive end (not all equal;
        ties allowed).
    normalize : bool
        Passed to :func:`axis`.

    Returns
    -------
    Axis
        Its positive pole holds the items above the median rank and its
        negative pole those below (``n_pos`` and ``n_neg`` items).

    Raises
    ------
    InputError
        Fewer than two items, ranks of another length, NaN ranks, all ranks equal, or poles with the same mean.

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    >>> a = rank_axis(X, [1, 2, 3], normalize=False)
    >>> a.vector.tolist()
    [2.0, 0.0]
    >>> round(rank_correlation(a, [[3.0, 1.0], [0.5, 1.0], [1.0, 1.0]], [3, 1, 2]), 6)
    1.0
    """
    Xm = as_matrix(X_labelled, "X_labelled", min_rows=2)
    r = _numbers(ranks, Xm.shape[0], "ranks")
    mid = float(np.median(r))
    top, bottom = np.flatnonzero(r > mid), np.flatnonzero(r < mid)
    if top.size == 0 or bottom.size == 0:
        raise InputError("the ranks are all equal: a rank axis needs a lowest and a highest item")
    return axis(Xm[top], Xm[bottom], normalize=normalize)


def rank_correlation(axis_or_direction: Axis | Any, X: Any, ranks: Any) -> float:
    """Spearman's ρ between the axis scores (cosines, :meth:`Axis.score`) of ``X`` and ``ranks``.

    Parameters
    ----------
    axis_or_direction : Axis or array of shape (d,)
    X : array of shape (n, d), n ≥ 2
    ranks : array of shape (n,)
        Numbers, not all equal.

    Returns
    -------
    float
        In ``[−1, 1]``; ``scipy.stats.spearmanr`` (ties get average ranks).

    Raises
    ------
    InputError
        Mismatched lengths or dimensions, NaN / inf, constant ranks, or scores all equal.

    Examples
    --------
    >>> rank_correlation([1.0, 0.0], [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], [30, 20, 10])
    1.0
    """
    direction = _direction(axis_or_direction)
    Xm = _rows(X, "X", direction.shape[0], allow_vector=False)
    if Xm.shape[0] < 2:
        raise InputError(f"a rank correlation needs at least 2 items, got {Xm.shape[0]}")
    r = _numbers(ranks, Xm.shape[0], "ranks")
    if np.ptp(r) == 0:
        raise InputError("the ranks are all equal: there is no order to correlate with")
    return _spearman(_cosines(Xm, direction), r)


def axis_significance(axis_or_direction: Axis | Any, X: Any, values: Any, n_random: int = 1000,
                      seed: int = 0) -> AxisSignificance:
    """Is the axis's Spearman ρ with ``values`` beyond what random directions reach?

    The items' scores on the axis (cosines, as :meth:`Axis.score`) are
    correlated with ``values`` (Spearman); the same is done for ``n_random``
    random directions (standard Gaussian vectors, normalised; seeded), and
    the axis's ``|ρ|`` is compared with their ``|ρ|`` distribution. The random
    ρ are computed in one vectorised pass (ranks of each block of score
    columns, then Pearson with the ranked values) because ``spearmanr`` on a
    matrix would also correlate every pair of random directions; they equal
    ``spearmanr`` column by column (ties get average ranks).

    Parameters
    ----------
    axis_or_direction : Axis or array of shape (d,)
    X : array of shape (n, d), n ≥ 3
    values : array of shape (n,)
        Numbers, not all equal (e.g. a lexicon's valence per word).
    n_random : int
        Random directions (≥ 1).
    seed : int

    Returns
    -------
    AxisSignificance
        ``rho`` (signed), the random ``|ρ|`` 95th and 99th percentiles and
        mean, and the empirical ``p_value`` with +1 smoothing (never 0).

    Raises
    ------
    InputError
        Mismatched lengths or dimensions, NaN / inf, fewer than 3 items, constant values or scores.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 20))
    >>> v = X[:, 0] + 0.5 * rng.standard_normal(300)
    >>> s = axis_significance(np.eye(20)[0], X, v, n_random=200)
    >>> round(s.rho, 2), s.random_p99 < 0.6, s.p_value == 1 / 201
    (0.89, True, True)
    """
    direction = _direction(axis_or_direction)
    d = direction.shape[0]
    Xm = _rows(X, "X", d, allow_vector=False)
    n = Xm.shape[0]
    if n < 3:
        raise InputError(f"axis significance needs at least 3 items, got {n}")
    v = _numbers(values, n, "values")
    if np.ptp(v) == 0:
        raise InputError("the values are all equal: there is nothing to correlate with")
    check_scalar(n_random, "n_random", int, low=1)
    check_scalar(seed, "seed", int, low=0)
    U = unit_rows(np.asarray(Xm, dtype=np.float64))
    rho = _spearman(U @ direction, v)
    R = np.random.default_rng(int(seed)).standard_normal((int(n_random), d))
    R = unit_rows(R)
    rv = rankdata(v)
    rv = rv - rv.mean()
    rv /= np.linalg.norm(rv)
    random_abs = np.empty(int(n_random))
    step = max(1, _BLOCK // n)
    for lo in range(0, int(n_random), step):
        S = rankdata(U @ R[lo:lo + step].T, axis=0)
        S -= S.mean(axis=0)
        norms = np.linalg.norm(S, axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (rv @ S) / norms
        random_abs[lo:lo + step] = np.abs(np.where(norms > 0, r, 0.0))
    p95, p99 = np.percentile(random_abs, [95, 99])
    p = (1 + int(np.count_nonzero(random_abs >= abs(rho)))) / (1 + int(n_random))
    return AxisSignificance(rho, float(p95), float(p99), float(random_abs.mean()), float(p), n, int(n_random), int(seed))


# -- helpers ----------------------------------------------------------------------------------------------------


def _rows(X: Any, name: str, d: int | None = None, *, allow_vector: bool = True) -> np.ndarray:
    """``X`` as a checked 2-d array (a 1-d vector is one row when ``allow_vector``), of dimension ``d`` if given."""
    arr = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if allow_vector and arr.ndim == 1:
        arr = arr[None, :]
    arr = as_matrix(arr, name)
    if d is not None and arr.shape[1] != d:
        raise InputError(f"{name} has dimension {arr.shape[1]}, expected {d}")
    return arr


def _numbers(values: Any, n: int, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} must be numbers: {e}") from None
    if arr.ndim != 1 or arr.shape[0] != n:
        raise InputError(f"{name} must give one number per item: got shape {arr.shape} for {n} items")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} has NaN or infinite values (item {int(np.flatnonzero(~np.isfinite(arr))[0])})")
    return arr


def _direction(a: Axis | Any) -> np.ndarray:
    if isinstance(a, Axis):
        return a.direction
    try:
        v = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"the direction must be an Axis or a vector of numbers: {e}") from None
    if v.ndim != 1 or v.size == 0:
        raise InputError(f"the direction must be an Axis or a 1-d vector, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise InputError("the direction has NaN or infinite values")
    norm = float(row_norms(v[None, :])[0])
    if norm == 0.0:
        raise InputError("the direction is the zero vector")
    return v / norm


def _cosines(X: np.ndarray, unit: np.ndarray) -> np.ndarray:
    out = np.empty(X.shape[0])
    for start, block in row_blocks(X):
        out[start:start + block.shape[0]] = unit_rows(block) @ unit
    return out


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0:
        raise InputError("every item has the same score on the axis: the rank correlation is undefined")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        return float(spearmanr(a, b).statistic)


def _difference(mp: np.ndarray, mn: np.ndarray) -> np.ndarray:
    v = mp - mn
    scale = max(float(np.linalg.norm(mp)), float(np.linalg.norm(mn)))
    if float(np.linalg.norm(v)) <= _SAME_MEAN * scale or not np.any(v):
        raise InputError("the poles have the same mean: the axis has no direction")
    return v


def _axis_from_pair(name: Any, spec: Any, normalize: bool) -> Axis:
    if not isinstance(spec, (tuple, list)) or len(spec) != 2:
        raise InputError(f"axis {name!r} must be an Axis or a pair (X_pos, X_neg)")
    try:
        return axis(spec[0], spec[1], normalize=normalize)
    except InputError as e:
        raise InputError(f"axis {name!r}: {e}") from None


def _expand(pool: np.ndarray, P: np.ndarray, N: np.ndarray, m: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ``m`` pool rows nearest (by cosine) to each pole's mean, closer to it than to the other, seeds excluded."""
    mp, mn = P.mean(axis=0), N.mean(axis=0)
    if not np.any(mp) or not np.any(mn):
        raise InputError("a pole's mean is the zero vector: its nearest neighbours are undefined")
    mp, mn = mp / np.linalg.norm(mp), mn / np.linalg.norm(mn)
    seeds = unit_rows(np.vstack([P, N]))
    n_pool = pool.shape[0]
    cos_p, cos_n, is_seed = np.empty(n_pool), np.empty(n_pool), np.zeros(n_pool, dtype=bool)
    for start, block in row_blocks(pool):
        U = unit_rows(block)
        stop = start + U.shape[0]
        cos_p[start:stop], cos_n[start:stop] = U @ mp, U @ mn
        is_seed[start:stop] = (U @ seeds.T).max(axis=1) > 1.0 - _SAME_ROW

    def nearest(own: np.ndarray, other: np.ndarray) -> tuple[int, ...]:
        cand = np.flatnonzero(~is_seed & (own > other))
        order = cand[np.lexsort((cand, -own[cand]))]
        return tuple(int(i) for i in order[:m])

    return nearest(cos_p, cos_n), nearest(cos_n, cos_p)
