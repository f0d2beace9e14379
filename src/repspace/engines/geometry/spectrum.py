"""Rank and spectrum of a space: effective rank, RankMe and the power-law decay α (``rank.*``, ``spectrum.*``).

Numerical choice
----------------
All three metrics need only the singular values of an ``n × d`` matrix. When
``n > d`` they are taken from the eigenvalues of the ``d × d`` Gram matrix
``AᵀA``, accumulated in float64 over row blocks (two passes when centring:
the column mean first, then ``Σ (B − μ)ᵀ(B − μ)``, so no ``XᵀX − nμμᵀ``
cancellation): memory is ``O(d²)`` plus one block, never an ``n × d`` copy.
When ``n ≤ d`` the SVD of the (centred) float64 copy is cheaper and used
directly. ``X`` is first divided by its largest absolute entry (every metric
here is scale-invariant), so squares neither overflow nor underflow.

Squaring halves the relative precision of small singular values: on the Gram
path an eigenvalue below ``λ_max · max(n, d) · ε`` (ε = float64 machine
epsilon) is rounding noise and is set to 0; on the SVD path the same rule is
applied to singular values (``σ ≤ σ_max · max(n, d) · ε``, NumPy's
``matrix_rank`` tolerance). Singular values that small change an entropy-based
rank by less than ~1e-6.

Input
-----
Every function takes ``X``, an array of shape ``(n, d)`` with one vector per
row and ``n ≥ 1``, and raises :class:`~repspace.core.errors.InputError` when
``X`` is not a finite 2-d numeric array or has no rows.

Degenerate input
----------------
An all-zero (centred: constant) matrix has no spectrum: its effective rank and
RankMe are 0.0 (its rank) and its α is 0.0. ``n = 1`` and ``d = 1`` are
allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, max_abs, row_blocks
from repspace.core.linalg import svd

__all__ = [
    "SpectrumResult",
    "covariance_eigenvalues",
    "effective_rank",
    "rankme",
    "spectrum",
    "spectrum_alpha",
]

#: RankMe's additive constant on p (Garrido et al. 2023).
RANKME_EPS = 1e-7

#: First rank of the α fit, and the fraction of d where it stops.
ALPHA_FIRST_RANK = 10

_EPS = float(np.finfo(np.float64).eps)
_BIG = float(np.finfo(np.float64).max)


def _scaled_eigenvalues(X: np.ndarray, *, centre: bool) -> tuple[np.ndarray, float]:
    """Eigenvalues of ``(1/n) AᵀA`` for ``A = X/s`` (centred if asked), descending, length ``min(n, d)``.

    Returns the eigenvalues of the scaled matrix and the scale ``s`` (the
    largest absolute entry of ``X``; 1.0 for a zero matrix). Values below the
    rounding tolerance (module docstring) are exactly 0.
    """
    n, d = X.shape
    k = min(n, d)
    s = max_abs(X)
    if s == 0.0:
        return np.zeros(k), 1.0
    if n <= d:
        A = np.asarray(X, dtype=np.float64) / s
        if centre:
            A = A - A.mean(axis=0)
        sv = svd(A, compute_uv=False)
        top = float(sv[0]) if sv.size else 0.0
        sv[sv <= top * max(n, d) * _EPS] = 0.0
        return np.sort(sv * sv / n)[::-1][:k], s
    mu = np.zeros(d)
    if centre:
        for _, b in row_blocks(X):
            mu += b.sum(axis=0)
        mu /= s * n
    gram = np.zeros((d, d))
    for _, b in row_blocks(X):
        b = b / s
        if centre:
            b -= mu
        gram += b.T @ b
    lam = np.linalg.eigvalsh(gram / n)[::-1].copy()
    top = max(float(lam[0]), 0.0)
    lam[lam <= top * max(n, d) * _EPS] = 0.0
    return lam, s


def _eigenvalues(X: Any, *, centre: bool) -> tuple[np.ndarray, float, int]:
    """:func:`_scaled_eigenvalues` of ``X`` once :func:`as_matrix` has checked it, and ``X``'s dimension ``d``."""
    A = as_matrix(X)
    return *_scaled_eigenvalues(A, centre=centre), A.shape[1]


def _entropy_rank(p: np.ndarray) -> float:
    """``exp(−Σ p log p)`` over the positive entries of ``p``."""
    p = p[p > 0]
    return float(math.exp(-float(np.sum(p * np.log(p)))))


def _effective_rank_from(lam: np.ndarray) -> float:
    sigma = np.sqrt(lam)
    total = float(sigma.sum())
    return _entropy_rank(sigma / total) if total > 0 else 0.0


def _rankme_from(lam: np.ndarray) -> float:
    sigma = np.sqrt(lam)
    total = float(sigma.sum())
    return _entropy_rank(sigma / total + RANKME_EPS) if total > 0 else 0.0


def _alpha_from(lam: np.ndarray, d: int) -> tuple[float, tuple[int, int]]:
    """The α fit on descending eigenvalues ``lam``; returns ``(alpha, (first_rank, last_rank))``."""
    m = int(np.count_nonzero(lam > 0))  # lam is descending: the positive ones come first
    hi = min(d // 2, m)
    lo = ALPHA_FIRST_RANK
    if hi - lo + 1 < 2:  # too few ranks between 10 and d/2: fall back to the head of the spectrum
        hi, lo = min(max(d // 2, 2), m), 1
    if hi - lo + 1 < 2:  # fewer than two non-zero eigenvalues: no decay to fit
        return 0.0, (0, 0)
    r = np.arange(lo, hi + 1, dtype=np.float64)
    x = np.log(r)
    y = np.log(lam[lo - 1:hi])
    x -= x.mean()
    slope = float(np.dot(x, y - y.mean()) / np.dot(x, x))
    return max(0.0, -slope), (lo, hi)


def effective_rank(X: Any) -> float:
    """Effective rank of Roy & Vetterli (2007): ``exp(H(p))``, ``p = σ / ‖σ‖₁``, on the centred ``X``.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row, ``n ≥ 1``; its column mean is removed first.

    Returns
    -------
    float
        In ``[1, min(n, d)]`` for a non-constant ``X``; 0.0 when every row is
        the same (the centred matrix is zero, of rank 0). ``H`` is the
        natural-log entropy over the singular values ``σ`` (``0 log 0 = 0``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]])
    >>> round(effective_rank(X), 6)  # two equal singular values
    2.0
    >>> effective_rank(np.ones((5, 3)))
    0.0
    """
    return _effective_rank_from(_eigenvalues(X, centre=True)[0])


def rankme(X: Any) -> float:
    """RankMe of Garrido et al. (2023): ``exp(H(p))``, ``p = σ / ‖σ‖₁ + 1e-7``, on the uncentred ``X``.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row, ``n ≥ 1``; not centred.

    Returns
    -------
    float
        ``H = −Σ p log p`` over all ``min(n, d)`` singular values (the 1e-7
        makes zero singular values count a little, as in the paper). 0.0 when
        ``X`` is all zeros.

    Examples
    --------
    >>> round(rankme(np.eye(4)), 4)
    4.0
    >>> round(rankme(np.ones((5, 3))), 4)  # rank 1, plus the 1e-7 terms
    1.0
    """
    return _rankme_from(_eigenvalues(X, centre=False)[0])


def spectrum_alpha(X: Any) -> float:
    """Power-law decay α of the covariance spectrum (Agrawal et al. 2022): ``log λ_r ≈ c − α log r``.

    Returns
    -------
    float
        ``α = −slope`` of the least-squares line of ``log λ_r`` on ``log r``
        over 1-based ranks ``r = 10 … h``, ``h = min(⌊d/2⌋, m)`` and ``m`` the
        number of non-zero eigenvalues of the covariance (zero eigenvalues
        have no logarithm and are never fitted). When that range holds fewer
        than 2 ranks (``d < 22``, or rank below 11) the fit uses ranks
        ``1 … min(max(⌊d/2⌋, 2), m)`` instead; with fewer than 2 non-zero
        eigenvalues there is no decay to fit and α is 0.0. Always ``≥ 0``.
        :func:`spectrum` also reports the ranks fitted and the eigenvalues.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.standard_normal((400, 60))
    >>> Q, _ = np.linalg.qr(Z - Z.mean(axis=0))      # orthonormal, centred columns
    >>> X = Q * np.arange(1, 61) ** -0.75            # covariance eigenvalues ∝ r^-1.5
    >>> round(spectrum_alpha(X), 6)
    1.5
    """
    lam, _, d = _eigenvalues(X, centre=True)
    return _alpha_from(lam, d)[0]


def covariance_eigenvalues(X: Any) -> np.ndarray:
    """The ``d`` eigenvalues of the covariance of ``X`` (``ddof=0``), descending, in ``X``'s units squared.

    When ``n ≤ d`` the ``d − n + 1`` or more eigenvalues beyond the rank are
    exactly 0. Values beyond the float64 range are clipped to its maximum.

    Examples
    --------
    >>> covariance_eigenvalues([[0.0, 0.0], [2.0, 0.0], [0.0, 4.0], [2.0, 4.0]]).round(6).tolist()
    [4.0, 1.0]
    """
    return _in_units(*_eigenvalues(X, centre=True))


def _in_units(lam: np.ndarray, s: float, d: int) -> np.ndarray:
    out = np.zeros(d)
    with np.errstate(over="ignore"):
        out[:lam.size] = np.minimum(lam * s * s, _BIG)
    return out


@dataclass(frozen=True)
class SpectrumResult:
    """Rank and spectrum metrics of one space.

    Attributes
    ----------
    effective_rank : float
        :func:`effective_rank` (``rank.effective_rank``).
    rankme : float
        :func:`rankme` (``rank.rankme``).
    alpha : float
        :func:`spectrum_alpha` (``spectrum.alpha``).
    alpha_ranks : tuple of int
        First and last 1-based rank of the α fit; ``(0, 0)`` when nothing was fitted.
    eigenvalues : ndarray of shape (d,)
        Covariance eigenvalues, descending (for a log-log plot).

    Examples
    --------
    Four orthogonal directions of equal spread: both ranks say 4 and the spectrum is flat (no decay).

    >>> r = spectrum(np.vstack([np.eye(4), -np.eye(4)]))
    >>> round(r.effective_rank, 4), round(r.rankme, 4), round(r.alpha, 6), r.eigenvalues.round(4).tolist()
    (4.0, 4.0, 0.0, [0.25, 0.25, 0.25, 0.25])
    """

    effective_rank: float
    rankme: float
    alpha: float
    alpha_ranks: tuple[int, int]
    eigenvalues: np.ndarray = field(compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """``rank.effective_rank``, ``rank.rankme``, ``spectrum.alpha``, ``spectrum.alpha_ranks``, ``spectrum.eigenvalues``."""
        return {
            "rank.effective_rank": float(self.effective_rank),
            "rank.rankme": float(self.rankme),
            "spectrum.alpha": float(self.alpha),
            "spectrum.alpha_ranks": [int(r) for r in self.alpha_ranks],
            "spectrum.eigenvalues": [float(v) for v in self.eigenvalues],
        }

    def __repr__(self) -> str:
        return (f"SpectrumResult(effective_rank={self.effective_rank:.4g}, rankme={self.rankme:.4g}, "
                f"alpha={self.alpha:.4g} on ranks {self.alpha_ranks[0]}..{self.alpha_ranks[1]}, "
                f"d={self.eigenvalues.size})")


def spectrum(X: Any) -> SpectrumResult:
    """Effective rank, RankMe, α and the covariance eigenvalues in one pass per Gram matrix.

    Returns
    -------
    SpectrumResult
        Same values as :func:`effective_rank`, :func:`rankme`,
        :func:`spectrum_alpha` and :func:`covariance_eigenvalues`.

    Examples
    --------
    >>> r = spectrum(np.eye(4))
    >>> round(r.effective_rank, 4), round(r.rankme, 4), round(r.alpha, 6), r.alpha_ranks
    (3.0, 4.0, 0.0, (1, 2))
    >>> sorted(r.to_dict())[:3]
    ['rank.effective_rank', 'rank.rankme', 'spectrum.alpha']
    """
    X = as_matrix(X)
    lam, s = _scaled_eigenvalues(X, centre=True)
    raw, _ = _scaled_eigenvalues(X, centre=False)
    alpha, ranks = _alpha_from(lam, X.shape[1])
    return SpectrumResult(_effective_rank_from(lam), _rankme_from(raw), alpha, ranks,
                          _in_units(lam, s, X.shape[1]))
