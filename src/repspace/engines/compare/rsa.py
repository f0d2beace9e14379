"""Representational similarity analysis (``rsa``), Kriegeskorte et al. 2008.

The Spearman correlation between the cosine distances of the same item pairs in
the two spaces: over all ``n(n−1)/2`` pairs when ``n ≤ 3000``, else over a
seeded sample of at least 200,000 pairs drawn independently and uniformly among
distinct pairs, reported as an :class:`~repspace.engines.geometry.Estimate` with its
sample size and a 95% interval.

Conventions
-----------
* Cosine distance is ``1 − cos``; a zero row has cosine 0 (distance 1) with
  every row, as in :mod:`repspace.engines.geometry`.
* Distances are rounded to 12 decimals before ranking, so that pairs whose
  distances are equal in exact arithmetic (duplicate rows, a rotated copy)
  tie in both spaces instead of being ordered by rounding noise; ties get
  average ranks (``scipy.stats.rankdata``).
* The interval of a sampled value is Fieller et al.'s (1957) for Spearman's
  rho: ``tanh(atanh(ρ) ± 1.96·√(1.06/(m − 3)))`` over ``m`` pairs. It treats
  the pairs as independent; pairs sharing an item are weakly dependent, so
  it is slightly optimistic when ``n`` is small compared with ``m``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import rankdata

from repspace.core.arrays import check_pair, unit_rows
from repspace.core.errors import InputError
from repspace.core.estimate import (
    Z95,
    Estimate,
    check_pair_options,
    exact_estimate,
    pair_chunks,
    sample_pairs,
)
from repspace.core.limits import RSA_ALL_PAIRS_MAX

__all__ = ["rsa"]

#: Pairs sampled above :data:`~repspace.core.limits.RSA_ALL_PAIRS_MAX`.
DEFAULT_PAIRS = 200_000
#: Decimals kept before ranking (cosine distances lie in [0, 2]).
_DECIMALS = 12


def _all_pair_distances(X: np.ndarray, metric: str = "cosine") -> np.ndarray:
    """Cosine (or ``poincare``) distances of every pair ``i < j``, in ``np.triu_indices(n, 1)`` order."""
    n = len(X)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    if metric == "poincare":
        from repspace.core.hyperbolic import pairwise_poincare

        return pairwise_poincare(X, X)[upper]
    U = unit_rows(X)
    sim = U @ U.T
    return 1.0 - sim[upper]


def _sampled_distances(X: np.ndarray, i: np.ndarray, j: np.ndarray, metric: str = "cosine") -> np.ndarray:
    out = np.empty(len(i))
    for c in pair_chunks(len(i), X.shape[1]):
        if metric == "poincare":
            from repspace.core.hyperbolic import poincare_distance

            out[c] = poincare_distance(X[i[c]], X[j[c]])
        else:
            out[c] = 1.0 - np.einsum("ij,ij->i", unit_rows(X[i[c]]), unit_rows(X[j[c]]))
    return out


def _ranks(dist: np.ndarray, name: str, metric: str = "cosine") -> np.ndarray:
    r = rankdata(np.round(np.clip(dist, 0.0, None), _DECIMALS))  # cosine distances lie in [0, 2]; poincare's in [0, inf)
    r -= r.mean()
    if not np.any(r):
        raise InputError(f"every {metric} distance in {name} is the same (e.g. all rows parallel or equal): "
                         "the Spearman correlation is undefined")
    return r


def _spearman(dx: np.ndarray, dy: np.ndarray, metrics: tuple[str, str] = ("cosine", "cosine")) -> float:
    rx, ry = _ranks(dx, "X", metrics[0]), _ranks(dy, "Y", metrics[1])
    rho = float(rx @ ry) / (float(np.linalg.norm(rx)) * float(np.linalg.norm(ry)))
    return min(1.0, max(-1.0, rho))


def _fieller(rho: float, m: int) -> Estimate:
    if m <= 3 or abs(rho) >= 1.0:
        lo, hi = (rho, rho) if abs(rho) >= 1.0 else (-1.0, 1.0)
        return Estimate(rho, lo, hi, False, m)
    z, half = math.atanh(rho), Z95 * math.sqrt(1.06 / (m - 3))
    return Estimate(rho, min(rho, math.tanh(z - half)), max(rho, math.tanh(z + half)), False, m)


def rsa(X: Any, Y: Any, *, exact_max: int = RSA_ALL_PAIRS_MAX, pairs: int = DEFAULT_PAIRS,
        seed: int | None = 0, metrics: tuple[str, str] = ("cosine", "cosine")) -> Estimate:
    """Spearman correlation between the cosine distances of the same item pairs in ``X`` and ``Y``.

    Parameters
    ----------
    X : array of shape (n, d₁)
    Y : array of shape (n, d₂)
        The same ``n ≥ 3`` items, row for row.
    exact_max : int, default 3000
        Up to this many items, every pair ``i < j`` is used (the ``n × n``
        cosine matrix of each space is formed, 72 MB at 3000 items).
    pairs : int, default 200,000
        Above ``exact_max``: pairs ``(i, j)``, ``i ≠ j``, sampled independently
        and uniformly (the same pairs in both spaces).
    seed : int or None, default 0
        Seed of the pair sampler.
    metrics : (str, str), default ("cosine", "cosine")
        Each side's distance: ``cosine``, or ``poincare`` for points of the
        Poincare ball (hyperbolic distance): RSA needs only distances, so it
        compares a hyperbolic space with any other.

    Returns
    -------
    Estimate
        ``value`` in ``[−1, 1]``; ``exact`` and ``n_pairs`` (all pairs, or the
        sample size) and, for a sample, a 95% interval (module docstring).

    Raises
    ------
    InputError
        Different numbers of rows, fewer than 3 rows, a NaN / inf, options out
        of range, or a space whose cosine distances are all equal (constant or
        all rows parallel: the ranks have no variance).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 4))
    >>> Q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    >>> rsa(X, 2.0 * X @ Q)
    Estimate(1.0000, exact, 1225 pairs)
    >>> e = rsa(X, X + 0.3 * rng.standard_normal((50, 4)), exact_max=10, pairs=5000)
    >>> e.exact, e.n_pairs, e.low < e.value < e.high
    (False, 5000, True)
    """
    X, Y = check_pair(X, Y, min_rows=3, measure="RSA")
    check_pair_options(exact_max, pairs)
    mx, my = (str(m) for m in metrics)
    for m in (mx, my):
        if m not in ("cosine", "poincare"):
            raise InputError(f"RSA measures cosine or poincare distances, not {m!r}")
    n = X.shape[0]
    if n <= int(exact_max):
        return exact_estimate(_spearman(_all_pair_distances(X, mx), _all_pair_distances(Y, my), (mx, my)), n)
    i, j = sample_pairs(n, int(pairs), seed)
    return _fieller(_spearman(_sampled_distances(X, i, j, mx), _sampled_distances(Y, i, j, my), (mx, my)),
                    int(pairs))
