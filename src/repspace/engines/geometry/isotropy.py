"""Isotropy of a space: mean cosine, top-PC share, IsoScore and rogue dimensions (``isotropy.*``).

Conventions
-----------
"Cosine" normalises rows first; a zero row stays the zero vector (as
``sklearn.preprocessing.normalize`` does), so its cosine with anything is 0
and it still counts in the pairs. Variances are population variances
(``ddof=0``); every metric here is invariant to that choice except the
reported per-dimension variances.

Degenerate input
----------------
Every function takes ``X``, an array of shape ``(n, d)`` with one vector per
row, and raises :class:`~repspace.core.errors.InputError` when it is not a
finite 2-d numeric array or has no rows. Metrics over pairs
(:func:`mean_cosine`, :func:`rogue_dimensions`, :func:`isotropy`) need
``n ≥ 2`` and raise it otherwise, or when ``exact_max`` or ``pairs`` is out
of range. A space without variance (every row the same, or ``n = 1``) counts
as fully collapsed: :func:`top_pc_share` is 1.0 and :func:`isoscore` 0.0. With
``d = 1`` and some variance the space is trivially isotropic: IsoScore 1.0,
top-PC share 1.0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, max_abs, row_blocks, unit_rows
from repspace.core.checks import check_scalar
from repspace.core.estimate import (
    Estimate,
    check_pair_options,
    exact_estimate,
    pair_chunks,
    sample_pairs,
    sampled_estimate,
)
from repspace.engines.geometry.spectrum import _eigenvalues, _scaled_eigenvalues

__all__ = [
    "IsotropyResult",
    "RogueDimension",
    "RogueDimensions",
    "isoscore",
    "isotropy",
    "mean_cosine",
    "rogue_dimensions",
    "top_pc_share",
]

_EPS = float(np.finfo(np.float64).eps)
_BIG = float(np.finfo(np.float64).max)


# ---------------------------------------------------------------------------------------------------------------
# Mean cosine


def _unit_sums(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per dimension: ``S_j = Σ_i x̂_ij`` and ``Q_j = Σ_i x̂_ij²`` over the normalised rows (float64)."""
    d = X.shape[1]
    S, Q = np.zeros(d), np.zeros(d)
    for _, b in row_blocks(X):
        u = unit_rows(b)
        S += u.sum(axis=0)
        Q += np.einsum("ij,ij->j", u, u)
    return S, Q


def _mean_cosine_exact(S: np.ndarray, Q: np.ndarray, n: int) -> float:
    """Σ_{i<j} cos(x_i, x_j) = (‖Σ x̂‖² − Σ‖x̂‖²) / 2, divided by n(n−1)/2."""
    return float(np.clip((float(S @ S) - float(Q.sum())) / (n * (n - 1)), -1.0, 1.0))


def _mean_cosine_sampled(X: np.ndarray, pairs: int, seed: int | None) -> Estimate:
    n, d = X.shape
    i, j = sample_pairs(n, pairs, seed)
    cos = np.empty(pairs)
    for c in pair_chunks(pairs, d):
        cos[c] = np.einsum("ij,ij->i", unit_rows(X[i[c]]), unit_rows(X[j[c]]))
    return sampled_estimate(np.clip(cos, -1.0, 1.0), -1.0, 1.0)


def mean_cosine(X: Any, *, exact_max: int = 5000, pairs: int = 100_000, seed: int | None = 0) -> Estimate:
    """Mean cosine similarity over distinct pairs of rows (Ethayarajh 2019).

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row, ``n ≥ 2``. Zero rows have cosine 0 with every row.
    exact_max : int, default 5000
        Up to this many rows the mean is exact over all ``n(n−1)/2`` pairs,
        computed in ``O(nd)`` time and one block of memory from the identity
        ``Σ_{i<j} x̂_i·x̂_j = (‖Σ_i x̂_i‖² − Σ_i ‖x̂_i‖²) / 2``.
    pairs : int, default 100_000
        Above ``exact_max``, the number of pairs sampled independently and
        uniformly among distinct pairs (``i ≠ j``); the interval is the normal
        95% interval ``mean ± 1.96·s/√pairs``, clipped to ``[−1, 1]``.
    seed : int or None, default 0
        Seed of the pair sampler (``None``: fresh randomness).

    Returns
    -------
    Estimate
        ``value``, ``low``, ``high``, ``exact`` and ``n_pairs``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    >>> e = mean_cosine(X)            # pairs: 0, 0.7071, 0.7071
    >>> round(e.value, 4), e.exact, e.n_pairs
    (0.4714, True, 3)
    >>> e = mean_cosine(X, exact_max=0, pairs=1000)
    >>> e.exact, e.n_pairs, e.low <= 0.4714 <= e.high
    (False, 1000, True)
    """
    X = as_matrix(X, min_rows=2)
    check_pair_options(exact_max, pairs)
    n = X.shape[0]
    if n <= exact_max:
        S, Q = _unit_sums(X)
        return exact_estimate(_mean_cosine_exact(S, Q, n), n)
    return _mean_cosine_sampled(X, int(pairs), seed)


# ---------------------------------------------------------------------------------------------------------------
# Covariance-based: top PC share, IsoScore


def _top_pc_share_from(lam: np.ndarray) -> float:
    total = float(lam.sum())
    return float(min(1.0, lam[0] / total)) if total > 0 else 1.0


def _isoscore_from(lam: np.ndarray, d: int) -> float:
    total = float(np.linalg.norm(lam))
    if total == 0.0:
        return 0.0
    if d == 1:
        return 1.0
    sigma = np.zeros(d)
    sigma[:lam.size] = lam
    sigma_hat = math.sqrt(d) * sigma / total  # Σ̂ = √d Σ_D / ‖Σ_D‖
    spread = d - math.sqrt(d)
    defect2 = float(np.sum((sigma_hat - 1.0) ** 2)) / (2.0 * spread)  # δ²
    k = d - defect2 * spread  # the number of dimensions "used"
    return float(np.clip((k * k - d) / (d * (d - 1)), 0.0, 1.0))


def top_pc_share(X: Any) -> float:
    """Share of the total variance carried by the first principal component of the centred ``X``.

    Returns
    -------
    float
        ``λ₁ / Σ λ`` over the covariance eigenvalues, in ``[1/d, 1]``; 1.0
        when ``X`` has no variance at all (a collapsed space).

    Examples
    --------
    >>> round(top_pc_share([[0.0, 0.0], [2.0, 0.0], [0.0, 4.0], [2.0, 4.0]]), 4)  # variances 1 and 4
    0.8
    """
    return _top_pc_share_from(_eigenvalues(X, centre=True)[0])


def isoscore(X: Any) -> float:
    """IsoScore (Rudman et al. 2022): how uniformly the variance spreads over the dimensions, in ``[0, 1]``.

    The steps of the reference implementation (``bcbi-edu/p_eickhoff_isoscore``):
    reorient ``X`` by PCA, take the variance vector ``Σ_D`` of the PCA
    coordinates (the covariance eigenvalues), ``Σ̂ = √d·Σ_D / ‖Σ_D‖``,
    ``δ = ‖Σ̂ − 1‖ / √(2(d − √d))``, ``k = d − δ²(d − √d)`` and
    ``score = (k² − d) / (d(d − 1))``.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row, ``n ≥ 1``. The reference needs ``n ≥ d`` (its PCA
        keeps ``d`` components); here, when ``n ≤ d``, the eigenvalues beyond
        the rank are 0 and count as unused dimensions.

    Returns
    -------
    float
        1 for an isotropic space, 0 when all variance lies on one direction.
        0.0 for a space with no variance; 1.0 for ``d = 1`` with some
        variance (where the formula is 0/0). Clipped to ``[0, 1]`` against
        rounding.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]])
    >>> isoscore(X)
    1.0
    >>> isoscore(X * [1.0, 0.0])  # all variance on one axis
    0.0
    """
    lam, _, d = _eigenvalues(X, centre=True)
    return _isoscore_from(lam, d)


# ---------------------------------------------------------------------------------------------------------------
# Rogue dimensions


@dataclass(frozen=True)
class RogueDimension:
    """One dimension with an outsized share of the mean cosine.

    Attributes
    ----------
    dim : int
        Column index (0-based).
    share : float
        ``c_j = E[x_j y_j / (‖x‖‖y‖)] / E[cos(x, y)]`` over distinct pairs (the shares of all dimensions sum to 1).
    variance : float
        Population variance of the column in ``X``'s units.

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((500, 6))
    >>> X[:, 2] += 10.0                    # one dimension with a large mean
    >>> (r,) = rogue_dimensions(X).dimensions
    >>> r.dim, round(r.share, 3), round(r.variance, 1), sorted(r.to_dict())
    (2, 1.0, 1.1, ['dim', 'share', 'variance'])
    """

    dim: int
    share: float
    variance: float

    def to_dict(self) -> dict[str, Any]:
        """``{"dim", "share", "variance"}``."""
        return {"dim": int(self.dim), "share": float(self.share), "variance": float(self.variance)}


@dataclass(frozen=True)
class RogueDimensions:
    """Dimensions whose share of the mean cosine exceeds a threshold (Timkey & van Schijndel 2021).

    Attributes
    ----------
    dimensions : tuple of RogueDimension
        Those with ``share > threshold``, largest share first (ties: lower index first).
    threshold : float
        The cut-off (``3/d`` by default).
    shares : ndarray of shape (d,)
        ``c_j`` for every dimension (all 0 when the mean cosine is 0 and shares are undefined).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((500, 6))
    >>> X[:, 2] += 10.0
    >>> r = rogue_dimensions(X)
    >>> [d.dim for d in r.dimensions], r.threshold, r.shares.shape, round(float(r.shares.sum()), 6)
    ([2], 0.5, (6,), 1.0)
    >>> rogue_dimensions(X, threshold=1.5).dimensions   # no share exceeds 1.5
    ()
    """

    dimensions: tuple[RogueDimension, ...]
    threshold: float
    shares: np.ndarray = field(compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """``{"isotropy.rogue_dimensions": [{"dim", "share", "variance"}, ...], "isotropy.rogue_threshold"}``."""
        return {"isotropy.rogue_dimensions": [r.to_dict() for r in self.dimensions],
                "isotropy.rogue_threshold": float(self.threshold)}

    def __repr__(self) -> str:
        dims = ", ".join(f"{r.dim}:{r.share:.3f}" for r in self.dimensions[:5])
        more = f", … {len(self.dimensions) - 5} more" if len(self.dimensions) > 5 else ""
        return f"RogueDimensions(threshold={self.threshold:.4g}, [{dims}{more}])"


def _column_variances(X: np.ndarray) -> np.ndarray:
    """Population variance of every column (two passes, float64, scaled against overflow)."""
    n, d = X.shape
    s = max_abs(X) or 1.0
    mu = np.zeros(d)
    for _, b in row_blocks(X):
        mu += (b / s).sum(axis=0)
    mu /= n
    ss = np.zeros(d)
    for _, b in row_blocks(X):
        ss += ((b / s - mu) ** 2).sum(axis=0)
    with np.errstate(over="ignore"):
        return np.minimum(ss / n * s * s, _BIG)


def _rogue_from(S: np.ndarray, Q: np.ndarray, variances: np.ndarray, threshold: float) -> RogueDimensions:
    per_dim = (S * S - Q) / 2.0  # Σ_{i<k} x̂_ij x̂_kj
    total = float(per_dim.sum())
    noise = 64.0 * _EPS * float(np.sum(S * S + Q))  # rounding error of ``total``
    if abs(total) <= noise:  # mean cosine 0: the shares are undefined
        return RogueDimensions((), threshold, np.zeros_like(per_dim))
    shares = per_dim / total
    order = np.argsort(-shares, kind="stable")
    rogue = tuple(RogueDimension(int(j), float(shares[j]), float(variances[j])) for j in order if shares[j] > threshold)
    return RogueDimensions(rogue, threshold, shares)


def _threshold(threshold: float | None, d: int, name: str) -> float:
    t = check_scalar(threshold, name, float, none=True)
    return 3.0 / d if t is None else t


def rogue_dimensions(X: Any, threshold: float | None = None) -> RogueDimensions:
    """Dimensions that dominate the mean cosine (Timkey & van Schijndel 2021).

    Each dimension's share of the mean cosine over distinct pairs is
    ``c_j = E[x_j y_j / (‖x‖‖y‖)] / E[cos(x, y)]``; the shares sum to 1 and an
    isotropic space gives each about ``1/d``. Computed exactly for any ``n`` in
    ``O(nd)``: ``Σ_{i<k} x̂_ij x̂_kj = ((Σ_i x̂_ij)² − Σ_i x̂_ij²) / 2``.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row, ``n ≥ 2``.
    threshold : float, optional
        List dimensions whose share exceeds this; ``3/d`` by default.

    Returns
    -------
    RogueDimensions
        The listed dimensions (share, variance), largest share first, and
        every dimension's share. When the mean cosine is 0 (within rounding)
        the shares are undefined: none is listed and ``shares`` is all 0.

    Raises
    ------
    InputError
        ``X`` is not a finite 2-d numeric array, has fewer than 2 rows, or the
        threshold is not finite.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 20))
    >>> X[:, 7] += 10.0                    # one dimension with a large mean
    >>> r = rogue_dimensions(X)
    >>> [d.dim for d in r.dimensions], round(r.dimensions[0].share, 2)
    ([7], 1.0)
    """
    X = as_matrix(X, min_rows=2)
    t = _threshold(threshold, X.shape[1], "threshold")
    S, Q = _unit_sums(X)
    return _rogue_from(S, Q, _column_variances(X), t)


# ---------------------------------------------------------------------------------------------------------------
# All of them


@dataclass(frozen=True)
class IsotropyResult:
    """The isotropy metrics of one space.

    Attributes
    ----------
    mean_cosine : Estimate
        :func:`mean_cosine` (``isotropy.mean_cosine``, with its interval).
    top_pc_share : float
        :func:`top_pc_share` (``isotropy.top_pc_share``).
    isoscore : float
        :func:`isoscore` (``isotropy.isoscore``).
    rogue_dimensions : RogueDimensions
        :func:`rogue_dimensions` (``isotropy.rogue_dimensions``).
    variances : ndarray of shape (d,)
        Population variance of every dimension (``isotropy.dimension_variances``, for plots).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((500, 6))
    >>> X[:, 2] += 10.0                    # every vector leans the same way
    >>> r = isotropy(X)
    >>> round(r.mean_cosine.value, 2), r.mean_cosine.exact, [d.dim for d in r.rogue_dimensions.dimensions]
    (0.95, True, [2])
    >>> r.variances.shape, round(r.isoscore, 2) <= 1.0, r.to_dict()["isotropy.rogue_threshold"]
    ((6,), True, 0.5)
    """

    mean_cosine: Estimate
    top_pc_share: float
    isoscore: float
    rogue_dimensions: RogueDimensions
    variances: np.ndarray = field(compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """``isotropy.mean_cosine`` (an :class:`Estimate` dict), ``.top_pc_share``, ``.isoscore``,
        ``.rogue_dimensions``, ``.rogue_threshold`` and ``.dimension_variances``."""
        return {
            "isotropy.mean_cosine": self.mean_cosine.to_dict(),
            "isotropy.top_pc_share": float(self.top_pc_share),
            "isotropy.isoscore": float(self.isoscore),
            **self.rogue_dimensions.to_dict(),
            "isotropy.dimension_variances": [float(v) for v in self.variances],
        }

    def __repr__(self) -> str:
        return (f"IsotropyResult(mean_cosine={self.mean_cosine!r}, top_pc_share={self.top_pc_share:.4g}, "
                f"isoscore={self.isoscore:.4g}, rogue={[r.dim for r in self.rogue_dimensions.dimensions]})")


def isotropy(X: Any, *, exact_max: int = 5000, pairs: int = 100_000, seed: int | None = 0,
             rogue_threshold: float | None = None) -> IsotropyResult:
    """Every isotropy metric of ``X``, sharing the passes over the data.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row, ``n ≥ 2``.
    exact_max, pairs, seed
        As in :func:`mean_cosine`.
    rogue_threshold : float, optional
        As ``threshold`` in :func:`rogue_dimensions` (``3/d`` by default).

    Returns
    -------
    IsotropyResult
        The same values as the separate functions.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]])
    >>> r = isotropy(X)
    >>> round(r.mean_cosine.value, 4), r.isoscore, r.top_pc_share
    (-0.3333, 1.0, 0.5)
    >>> r.to_dict()["isotropy.mean_cosine"]["exact"]
    True
    """
    X = as_matrix(X, min_rows=2)
    check_pair_options(exact_max, pairs)
    n, d = X.shape
    t = _threshold(rogue_threshold, d, "rogue_threshold")
    S, Q = _unit_sums(X)
    if n <= exact_max:
        mc = exact_estimate(_mean_cosine_exact(S, Q, n), n)
    else:
        mc = _mean_cosine_sampled(X, int(pairs), seed)
    lam, _ = _scaled_eigenvalues(X, centre=True)
    variances = _column_variances(X)
    return IsotropyResult(mc, _top_pc_share_from(lam), _isoscore_from(lam, d), _rogue_from(S, Q, variances, t),
                          variances)
