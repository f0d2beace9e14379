"""A number computed over pairs of items, exact or estimated from sampled pairs, and the sampling of pairs.

Every metric over pairs of items (mean cosine, uniformity, RSA) is either exact
or estimated from sampled pairs; :class:`Estimate` carries the value, its 95%
interval and how many pairs it rests on.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import block_rows
from repspace.core.errors import InputError

#: Two-sided 95% normal quantile, for the intervals of sampled estimates.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """A number computed over pairs of items, exact or from sampled pairs.

    Parameters
    ----------
    value : float
        The metric (the exact value, or the mean over the sampled pairs).
    low, high : float
        The 95% interval: ``value ± 1.96·s/√m`` over ``m`` sampled pairs
        (clipped to the metric's range); equal to ``value`` when exact.
    exact : bool
        Whether every distinct pair was used.
    n_pairs : int
        Pairs the value rests on: ``n(n-1)/2`` when exact, else the sample size.

    Examples
    --------
    >>> e = Estimate(0.25, 0.25, 0.25, True, 6)
    >>> e.to_dict()
    {'value': 0.25, 'low': 0.25, 'high': 0.25, 'exact': True, 'n_pairs': 6}
    >>> e
    Estimate(0.2500, exact, 6 pairs)
    """

    value: float
    low: float
    high: float
    exact: bool
    n_pairs: int

    def __post_init__(self) -> None:
        for name in ("value", "low", "high"):
            v = getattr(self, name)
            if not math.isfinite(v):
                raise ValueError(f"estimate {name} is not finite: {v!r}")
        if not self.low <= self.value <= self.high:
            raise ValueError(f"estimate interval [{self.low}, {self.high}] does not hold its value {self.value}")

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "low", "high", "exact", "n_pairs"}`` (the ``--json`` shape)."""
        return {"value": float(self.value), "low": float(self.low), "high": float(self.high),
                "exact": bool(self.exact), "n_pairs": int(self.n_pairs)}

    def __repr__(self) -> str:
        how = "exact" if self.exact else f"95% CI [{self.low:.4f}, {self.high:.4f}]"
        return f"Estimate({self.value:.4f}, {how}, {self.n_pairs} pairs)"


def exact_estimate(value: float, n: int) -> Estimate:
    """An exact :class:`Estimate` over the ``n(n-1)/2`` distinct pairs of ``n`` rows."""
    return Estimate(float(value), float(value), float(value), True, n * (n - 1) // 2)


def sampled_estimate(samples: np.ndarray, lo: float, hi: float) -> Estimate:
    """Mean of per-pair ``samples`` with its 95% normal interval, clipped to ``[lo, hi]``."""
    m = int(samples.size)
    value = float(np.clip(samples.mean(dtype=np.float64), lo, hi))
    half = Z95 * float(samples.std(ddof=1)) / math.sqrt(m) if m > 1 else 0.0
    return Estimate(value, max(lo, value - half), min(hi, value + half), False, m)


def check_pair_options(exact_max: int, pairs: int) -> None:
    """Reject a negative ``exact_max`` or fewer than 2 sampled pairs."""
    if int(exact_max) < 0:
        raise InputError(f"exact_max must be ≥ 0, got {exact_max}")
    if int(pairs) < 2:
        raise InputError(f"pairs must be ≥ 2 to give an interval, got {pairs}")


def sample_pairs(n: int, m: int, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``m`` pairs ``(i, j)``, ``i ≠ j``, drawn independently and uniformly among the distinct pairs of ``n`` rows."""
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, size=m)
    j = rng.integers(0, n - 1, size=m)
    j += j >= i
    return i, j


def pair_chunks(m: int, d: int) -> Iterator[slice]:
    """Slices of ``range(m)`` small enough that gathering two ``chunk × d`` float64 blocks stays near 64 MiB."""
    step = block_rows(d)
    for start in range(0, m, step):
        yield slice(start, min(m, start + step))
