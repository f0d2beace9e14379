"""Statistics of the row norms ‖x_i‖₂ of a space (``norms.*`` in METRICS.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, row_blocks, row_norms

__all__ = ["NormStats", "norms"]


@dataclass(frozen=True)
class NormStats:
    """Mean, standard deviation, extremes and coefficient of variation of the row norms.

    ``std`` is the population standard deviation (``ddof=0``); ``cv = std / mean``,
    defined as 0 when ``mean`` is 0 (every row is the zero vector).

    Examples
    --------
    >>> NormStats(2.0, 1.0, 1.0, 3.0, 0.5).to_dict()["norms.cv"]
    0.5
    """

    mean: float
    std: float
    min: float
    max: float
    cv: float

    def to_dict(self) -> dict[str, Any]:
        """``{"norms.mean", "norms.std", "norms.min", "norms.max", "norms.cv"}``."""
        return {f"norms.{k}": float(getattr(self, k)) for k in ("mean", "std", "min", "max", "cv")}

    def __repr__(self) -> str:
        return (f"NormStats(mean={self.mean:.4g}, std={self.std:.4g}, min={self.min:.4g}, "
                f"max={self.max:.4g}, cv={self.cv:.4g})")


def norms(X: Any) -> NormStats:
    """Statistics of the L2 norms of the rows of ``X``.

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row; ``n ≥ 1``. Read in float64 blocks (memory linear in
        the block, not in ``n``).

    Returns
    -------
    NormStats
        ``mean``, ``std`` (population, ``ddof=0``), ``min``, ``max`` and
        ``cv = std / mean`` (0 when every row is zero).

    Raises
    ------
    InputError
        ``X`` is not a finite 2-d numeric array or has no rows.

    Examples
    --------
    >>> s = norms([[3.0, 4.0], [0.0, 1.0], [0.0, 0.0]])
    >>> s.mean, s.min, s.max
    (2.0, 0.0, 5.0)
    >>> round(s.cv, 4)
    1.0801
    """
    X = as_matrix(X)
    lengths = np.concatenate([row_norms(b) for _, b in row_blocks(X)])
    top = float(lengths.max())
    if top == 0.0:  # every row is the zero vector
        return NormStats(0.0, 0.0, 0.0, 0.0, 0.0)
    if 1e-150 < top < 1e150:  # squares of the lengths neither overflow nor underflow
        mean, std = float(lengths.mean(dtype=np.float64)), float(lengths.std(dtype=np.float64))
        return NormStats(mean, std, float(lengths.min()), top, std / mean)
    scaled = lengths / top  # in [0, 1]: the mean and spread cannot overflow
    mean_s, std_s = float(scaled.mean(dtype=np.float64)), float(scaled.std(dtype=np.float64))
    big = np.finfo(np.float64).max
    return NormStats(min(mean_s * top, big), min(std_s * top, big), float(lengths.min()), top, std_s / mean_s)
