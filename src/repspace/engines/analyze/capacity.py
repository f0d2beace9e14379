"""Near-orthogonality capacity of a space: its tolerance ε and how many nearly orthogonal directions it allows.

Under the linear-representation and superposition hypotheses a space stores features as nearly orthogonal
directions; Guha (2026, *Representational Capacity: Geometric Limits on Feature Representation in Transformer
Language Models*, arXiv 2606.02765, S144) reads the tolerated deviation from orthogonality off the pairwise-cosine
distribution, ``ε = μ + 2σ`` (mean and standard deviation of the cosine over distinct pairs of items: the boundary
between meaningful and incidental similarity), and fits how many unit vectors ``k`` can be packed in ``d``
dimensions with every pairwise ``|cos| ≤ ε`` by an adjusted Johnson-Lindenstrauss relation, in which the ratio
``k/d`` replaces the raw count:

    ε = √( C · ln(k^a / d)^b / d^c ),  C = 0.45809143, a = 1.0668005, b = 1.44738666, c = 0.97197234

(the paper's fit to optimised packings, its code's ``representational_capacity.py``), inverted as the capacity

    k = ( d · exp( (ε² d^c / C)^(1/b) ) )^(1/a).

The paper gives a capacity only for ``ε < 0.1`` (its packings' range) and calls larger tolerances indeterminate;
``in_fitted_range`` says which case a space is. The quantiles of ``|cos|`` over the same pairs are reported beside
it: the tolerance that a share of non-matching pairs stays under (for independent random directions the cosine
has mean 0 and variance ``1/d``, and ``(1 + cos)/2 ~ Beta((d−1)/2, (d−1)/2)`` exactly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, row_blocks, unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.estimate import pair_chunks, sample_pairs

__all__ = ["ABS_COSINE_QUANTILES", "CAPACITY_FIT", "DEFAULT_PAIRS", "FITTED_EPSILON_MAX", "Capacity", "capacity",
           "capacity_log10", "packing_epsilon"]

#: The constants ``(C, a, b, c)`` of Guha (2026)'s adjusted relation ``ε = √(C ln(k^a/d)^b / d^c)``.
CAPACITY_FIT = (0.45809143, 1.0668005, 1.44738666, 0.97197234)
#: Tolerances below this are within the range the relation was fitted on (the paper reports no capacity above).
FITTED_EPSILON_MAX = 0.1
#: Pairs sampled when the space has more distinct pairs than this (else every pair is used).
DEFAULT_PAIRS = 1_000_000
#: Quantiles of ``|cos|`` reported.
ABS_COSINE_QUANTILES = (0.5, 0.9, 0.95, 0.99)


def capacity_log10(d: int, epsilon: float) -> float:
    """``log10 k`` of the number ``k`` of directions with pairwise ``|cos| ≤ ε`` in ``d`` dimensions, by Guha
    (2026)'s adjusted Johnson-Lindenstrauss relation: ``k = (d · exp((ε² d^c / C)^(1/b)))^(1/a)``.

    In logarithms, so that large tolerances do not overflow.

    Examples
    --------
    >>> round(capacity_log10(384, 0.05), 4), round(capacity_log10(4096, 0.05), 2)
    (3.0274, 6.35)
    """
    C, a, b, c = CAPACITY_FIT
    return (math.log10(d) + (epsilon * epsilon * d ** c / C) ** (1.0 / b) / math.log(10.0)) / a


def packing_epsilon(k: float, d: int) -> float:
    """The tolerance ``ε = √(C · ln(k^a / d)^b / d^c)`` at which ``k`` directions fit in ``d`` dimensions
    (Guha 2026; 0 when ``k^a ≤ d``): the forward relation that :func:`capacity_log10` inverts.

    Examples
    --------
    >>> round(packing_epsilon(10 ** capacity_log10(384, 0.05), 384), 6)
    0.05
    """
    C, a, b, c = CAPACITY_FIT
    ratio = a * math.log(k) - math.log(d)
    return math.sqrt(C * ratio ** b / d ** c) if ratio > 0 else 0.0


@dataclass(frozen=True)
class Capacity:
    """A space's near-orthogonality tolerance and the capacity it implies.

    Attributes
    ----------
    n, d : int
        Items (zero rows left out) and dimensions.
    zero_rows : int
        Rows of norm 0, left out (they have no direction).
    n_pairs : int
        Distinct pairs the figures rest on; ``exact`` when that is all of them.
    cosine_mean, cosine_std : float
        μ and σ of the cosine over those pairs (``ddof=1``).
    epsilon : float
        ``μ + 2σ``, the tolerance (Guha 2026).
    abs_cosine_quantiles : dict
        ``{"q50", "q90", "q95", "q99"}``: quantiles of ``|cos|``.
    capacity_log10 : float
        ``log10`` of the number of nearly orthogonal directions ``ε`` allows in ``d`` dimensions
        (:func:`capacity_log10`).
    in_fitted_range : bool
        ``ε < 0.1``: where the paper reports a capacity (indeterminate above).

    Examples
    --------
    >>> c = capacity(np.eye(4))
    >>> c.n_pairs, c.cosine_mean, c.epsilon, c.to_dict()["abs_cosine_quantiles"]["q99"]
    (6, 0.0, 0.0, 0.0)
    """

    n: int
    d: int
    zero_rows: int
    n_pairs: int
    exact: bool
    cosine_mean: float
    cosine_std: float
    epsilon: float
    abs_cosine_quantiles: dict[str, float]
    capacity_log10: float
    in_fitted_range: bool

    @property
    def capacity(self) -> float | None:
        """The capacity itself, ``10 ** capacity_log10`` (``None`` past float range)."""
        return 10.0 ** self.capacity_log10 if self.capacity_log10 < 300 else None

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "d", "zero_rows", "n_pairs", "exact", "cosine_mean", "cosine_std", "epsilon",
        "abs_cosine_quantiles", "capacity", "capacity_log10", "in_fitted_range"}``."""
        return {"n": self.n, "d": self.d, "zero_rows": self.zero_rows, "n_pairs": self.n_pairs,
                "exact": self.exact, "cosine_mean": self.cosine_mean, "cosine_std": self.cosine_std,
                "epsilon": self.epsilon, "abs_cosine_quantiles": dict(self.abs_cosine_quantiles),
                "capacity": self.capacity, "capacity_log10": self.capacity_log10,
                "in_fitted_range": self.in_fitted_range}


def capacity(X: Any, *, pairs: int = DEFAULT_PAIRS, seed: int | None = 0) -> Capacity:
    """The near-orthogonality tolerance ``ε = μ + 2σ`` of ``X``'s pairwise cosines and the number of nearly
    orthogonal directions it allows in ``X``'s dimension (Guha 2026, S144; see the module's formulas).

    Parameters
    ----------
    X : array of shape (n, d)
        One item per row; zero rows are left out (counted in ``zero_rows``); at least 2 others.
    pairs : int
        Every distinct pair is used when there are at most this many, else this many pairs are drawn uniformly
        (:func:`repspace.core.estimate.sample_pairs`), in blocks of bounded memory.
    seed : int or None
        Seed of the sampled pairs.

    Returns
    -------
    Capacity

    Examples
    --------
    Random directions in 64 dimensions: cosines of mean 0 and standard deviation 1/8, so ε ≈ 0.25:

    >>> X = np.random.default_rng(0).standard_normal((2000, 64))
    >>> c = capacity(X, pairs=200_000)
    >>> round(c.epsilon, 2), c.exact, c.in_fitted_range
    (0.25, False, False)
    """
    pairs = check_scalar(pairs, "pairs", int, low=2)
    X = as_matrix(X)
    norms = np.concatenate([np.linalg.norm(b, axis=1) for _, b in row_blocks(X)]) if len(X) else np.empty(0)
    keep = np.flatnonzero(norms > 0)
    n, d = len(keep), int(X.shape[1])
    if n < 2:
        raise InputError(f"capacity needs at least 2 items of non-zero norm, got {n}")
    total = n * (n - 1) // 2
    cos = _all_pair_cosines(X, keep) if total <= pairs else _sampled_cosines(X, keep, pairs, seed)
    cos = np.clip(cos, -1.0, 1.0)
    mu = float(cos.mean())
    sigma = float(cos.std(ddof=1)) if len(cos) > 1 else 0.0
    eps = mu + 2.0 * sigma
    q = np.quantile(np.abs(cos), ABS_COSINE_QUANTILES)
    quantiles = {f"q{round(p * 100)}": round(float(v), 12) for p, v in zip(ABS_COSINE_QUANTILES, q)}
    return Capacity(n, d, int(len(X) - n), int(len(cos)), total <= pairs, round(mu, 12), round(sigma, 12),
                    round(eps, 12), quantiles, round(capacity_log10(d, max(eps, 0.0)), 9),
                    bool(eps < FITTED_EPSILON_MAX))


def _all_pair_cosines(X: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The cosines of every distinct pair of the rows ``keep`` (upper triangle, row by row)."""
    U = unit_rows(np.asarray(X[keep], dtype=np.float64))
    iu = np.triu_indices(len(U), k=1)
    return (U @ U.T)[iu]


def _sampled_cosines(X: np.ndarray, keep: np.ndarray, pairs: int, seed: int | None) -> np.ndarray:
    """The cosines of ``pairs`` uniformly drawn distinct pairs of the rows ``keep``, gathered in chunks."""
    i, j = sample_pairs(len(keep), pairs, seed)
    out = np.empty(pairs)
    d = X.shape[1]
    for c in pair_chunks(pairs, d):
        out[c] = np.einsum("ij,ij->i", unit_rows(np.asarray(X[keep[i[c]]])), unit_rows(np.asarray(X[keep[j[c]]])))
    return out
