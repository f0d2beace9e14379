"""Helpers shared by the geometry metrics: the :class:`Estimate` result, input checks, row blocks.

Every metric over pairs of items (mean cosine, uniformity) is either exact or
estimated from sampled pairs; :class:`Estimate` carries the value, its 95%
interval and how many pairs it rests on. The other helpers check an input
matrix once and walk it in row blocks converted to float64, so that a metric's
memory stays linear in ``n`` whatever the dtype of ``X`` (a memory-mapped
float32 file is never copied whole).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.errors import InputError

#: Two-sided 95% normal quantile, for the intervals of sampled estimates.
Z95 = 1.959963984540054

#: Elements (not bytes) of one float64 block: 4M elements, 32 MiB.
BLOCK_ELEMENTS = 1 << 22

#: Below this a sum of squares may have lost precision to underflow.
_TINY = 1e-280


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


def as_matrix(X: Any, name: str = "X", *, min_rows: int = 1) -> np.ndarray:
    """Check that ``X`` is a finite numeric ``n × d`` array with ``n ≥ min_rows`` and ``d ≥ 1``.

    The array is returned as is (no float64 copy); :func:`row_blocks` converts
    it block by block.

    Raises
    ------
    InputError
        Wrong number of dimensions, a non-numeric dtype, too few rows, no
        columns, or a NaN / infinite entry (the first bad row is named).

    Examples
    --------
    >>> as_matrix([[1, 2], [3, 4]]).shape
    (2, 2)
    >>> as_matrix([1.0, 2.0])
    Traceback (most recent call last):
    ...
    repspace.errors.InputError: X must be a 2-d array (n items × d dimensions), got shape (2,)
    """
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} is not a numeric array: {e}") from None
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-d array (n items × d dimensions), got shape {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    n, d = arr.shape
    if d < 1:
        raise InputError(f"{name} has no dimensions (shape {arr.shape})")
    if n < min_rows:
        raise InputError(f"{name} has {n} rows; this metric needs at least {min_rows}")
    if np.issubdtype(arr.dtype, np.floating):
        for start, block in row_blocks(arr, convert=False):
            ok = np.isfinite(block).all(axis=1)
            if not ok.all():
                raise InputError(f"{name} has NaN or infinite values (row {start + int(np.argmin(ok))})")
    return arr


def block_rows(d: int, n_cols: int | None = None) -> int:
    """Rows per block so that a ``rows × max(d, n_cols)`` float64 block stays near 32 MiB."""
    width = max(d, n_cols or 1, 1)
    return max(1, BLOCK_ELEMENTS // width)


def row_blocks(X: np.ndarray, rows: int | None = None, *, convert: bool = True) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(start, X[start:start+rows])``, as float64 when ``convert``."""
    n, d = X.shape
    step = rows or block_rows(d)
    for start in range(0, n, step):
        block = X[start:start + step]
        yield start, (np.asarray(block, dtype=np.float64) if convert else block)


def row_norms(block: np.ndarray) -> np.ndarray:
    """L2 norms of the rows (float64), without overflow or underflow for extreme magnitudes.

    The plain ``sqrt(Σ x²)`` is used; rows whose sum of squares overflows or
    underflows are recomputed scaled by their largest absolute entry. A norm
    beyond the largest float64 is clipped to it.
    """
    block = np.asarray(block, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        sq = np.einsum("ij,ij->i", block, block)
    bad = ~np.isfinite(sq)
    tiny = np.flatnonzero(sq < _TINY)
    if tiny.size:  # zero rows are fine; rows of tiny non-zero entries are not
        bad[tiny[np.abs(block[tiny]).max(axis=1) > 0]] = True
    out = np.sqrt(sq)
    if bad.any():
        rows = block[bad]
        scale = np.abs(rows).max(axis=1)
        scaled = rows / scale[:, None]
        with np.errstate(over="ignore"):
            out[bad] = scale * np.sqrt(np.einsum("ij,ij->i", scaled, scaled))
    return np.minimum(out, np.finfo(np.float64).max)


def unit_rows(block: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (float64); a zero row stays zero, as in ``sklearn.preprocessing.normalize``."""
    block = np.asarray(block, dtype=np.float64)
    norms = row_norms(block)
    out = block / np.where(norms > 0, norms, 1.0)[:, None]
    huge = norms >= np.finfo(np.float64).max  # only for rows near the float64 limit
    if huge.any():
        rows = block[huge]
        rows = rows / np.abs(rows).max(axis=1)[:, None]
        out[huge] = rows / np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
    return out


def max_abs(X: np.ndarray) -> float:
    """The largest absolute entry of ``X`` (0.0 for an all-zero array), read in blocks."""
    return max((float(np.abs(b).max()) for _, b in row_blocks(X, convert=False)), default=0.0)


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
