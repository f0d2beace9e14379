"""Uniformity and alignment of Wang & Isola (2020) (``uniformity``, ``alignment`` in METRICS.md).

Both work on L2-normalised rows; a zero row stays the zero vector (as
``sklearn.preprocessing.normalize`` does), so its squared distance to a unit
row is 1 and to another zero row 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

from repspace.core.arrays import as_matrix, block_rows, row_blocks, unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.estimate import (
    Z95,
    Estimate,
    check_pair_options,
    exact_estimate,
    pair_chunks,
    sample_pairs,
)

__all__ = ["alignment", "uniformity"]

#: Squared distances between normalised rows lie in [0, 4].
_MAX_SQ = 4.0
#: Rounding of ``‖x̂‖² + ‖ŷ‖² − 2x̂·ŷ`` per dimension: a BLAS product and einsum norms round
#: differently (by CPU, and by where a row sits), so equal directions came out at ±1e-15, not 0.
#: Squared distances below ``_SQ_ROUNDING · d`` are that rounding and count as 0.
_SQ_ROUNDING = 8.0 * float(np.finfo(np.float64).eps)


def _unit_matrix(X: np.ndarray) -> np.ndarray:
    return np.concatenate([unit_rows(b) for _, b in row_blocks(X)])


def _uniformity_exact(X: np.ndarray, t: float) -> float:
    """``log mean_{i<j} exp(−t‖x̂_i − x̂_j‖²)``, in row blocks against the rows after them, in log space.

    Squared distances within rounding of 0 (:data:`_SQ_ROUNDING`) are 0, so rows
    pointing the same way give exactly 0 on every CPU.
    """
    U = _unit_matrix(X)
    n = U.shape[0]
    q = np.einsum("ij,ij->i", U, U)  # 1, or 0 for a zero row
    step = block_rows(U.shape[1], n)
    tiny = _SQ_ROUNDING * U.shape[1]
    parts = []
    for a in range(0, n - 1, step):
        b = min(n, a + step)
        sq = q[a:b, None] + q[None, a:] - 2.0 * (U[a:b] @ U[a:].T)
        sq[sq <= tiny] = 0.0
        logits = -t * np.clip(sq, 0.0, _MAX_SQ)
        # keep the pairs (i, j) with j > i: column c of this block is row a + c
        logits[np.tril_indices(b - a, 0, logits.shape[1])] = -np.inf
        parts.append(float(logsumexp(logits)))
    total = float(logsumexp(parts))
    return total - math.log(n * (n - 1) / 2)


def _uniformity_sampled(X: np.ndarray, t: float, pairs: int, seed: int | None) -> Estimate:
    n, d = X.shape
    i, j = sample_pairs(n, pairs, seed)
    logits = np.empty(pairs)
    for c in pair_chunks(pairs, d):
        diff = unit_rows(X[i[c]]) - unit_rows(X[j[c]])
        logits[c] = -t * np.clip(np.einsum("ij,ij->i", diff, diff), 0.0, _MAX_SQ)
    # mean of exp(logits) = exp(top) · mean(exp(logits − top)), so nothing underflows to log(0)
    top = float(logits.max())
    w = np.exp(logits - top)
    m = float(w.mean())
    half = Z95 * float(w.std(ddof=1)) / math.sqrt(pairs)
    floor = -_MAX_SQ * t  # the smallest possible uniformity
    value = min(0.0, max(floor, top + math.log(m)))
    low = max(floor, top + math.log(m - half)) if m - half > 0 else floor
    high = min(0.0, top + math.log(m + half))
    return Estimate(value, min(low, value), max(high, value), False, pairs)


def uniformity(X: Any, *, t: float = 2.0, exact_max: int = 5000, pairs: int = 100_000,
               seed: int | None = 0) -> Estimate:
    """Uniformity (Wang & Isola 2020): ``log mean_{i<j} exp(−t‖x̂_i − x̂_j‖²)`` over normalised rows.

    Lower (more negative) is more uniform on the sphere; the value lies in
    ``[−4t, 0]`` (0 when every row points the same way).

    Parameters
    ----------
    X : array of shape (n, d)
        One vector per row, ``n ≥ 2``.
    t : float, default 2.0
        The kernel's scale (Wang & Isola's ``t``; METRICS.md fixes 2).
    exact_max : int, default 5000
        Up to this many rows the mean is exact over all distinct pairs,
        computed in row blocks (``O(n²d)`` time; memory: a float64 copy of
        the normalised rows plus one ``block × n`` matrix of about 32 MiB)
        and summed in log space.
    pairs : int, default 100_000
        Above ``exact_max``, the number of pairs sampled independently and
        uniformly among distinct pairs; the 95% interval is the normal
        interval of the mean of ``exp(−t‖x̂ − ŷ‖²)``, mapped through ``log``
        (clipped to ``[−4t, 0]``).
    seed : int or None, default 0
        Seed of the pair sampler.

    Returns
    -------
    Estimate
        ``value``, ``low``, ``high``, ``exact`` and ``n_pairs``.

    Raises
    ------
    InputError
        ``X`` is not a finite 2-d numeric array or has fewer than 2 rows,
        ``t`` is not a positive number, or an option is out of range.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])   # ‖x−y‖²: 2, 4, 2
    >>> e = uniformity(X)                                      # log mean(e⁻⁴, e⁻⁸, e⁻⁴)
    >>> round(e.value, 4), e.exact, e.n_pairs
    (-4.3963, True, 3)
    >>> uniformity([[1.0, 1.0], [2.0, 2.0]]).value   # identical directions
    0.0
    """
    X = as_matrix(X, min_rows=2)
    check_pair_options(exact_max, pairs)
    t = check_scalar(t, "t", float, low=0, include="neither")
    n = X.shape[0]
    if n <= exact_max:
        value = min(0.0, max(-_MAX_SQ * t, _uniformity_exact(X, t)))
        return exact_estimate(value, n)
    return _uniformity_sampled(X, t, int(pairs), seed)


def alignment(X: Any, Y: Any) -> float:
    """Alignment (Wang & Isola 2020): mean ``‖x̂_i − ŷ_i‖²`` over positive pairs ``(X[i], Y[i])``.

    Parameters
    ----------
    X, Y : arrays of shape (n, d)
        Row ``i`` of ``X`` and row ``i`` of ``Y`` are a positive pair; both are
        L2-normalised per row first.

    Returns
    -------
    float
        In ``[0, 4]``; 0 when every pair points the same way.

    Raises
    ------
    InputError
        Either array is not a finite 2-d numeric array, has no rows, or the
        shapes differ.

    Examples
    --------
    >>> alignment([[1.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [1.0, 0.0]])   # 0 and 2
    1.0
    """
    X = as_matrix(X, "X")
    Y = as_matrix(Y, "Y")
    if X.shape != Y.shape:
        raise InputError(f"alignment needs X and Y of the same shape (row i pairs with row i), got {X.shape} and {Y.shape}")
    n, d = X.shape
    step = block_rows(d)
    total = 0.0
    for a in range(0, n, step):
        diff = unit_rows(X[a:a + step]) - unit_rows(Y[a:a + step])
        total += float(np.einsum("ij,ij->", diff, diff))
    return float(min(_MAX_SQ, max(0.0, total / n)))
