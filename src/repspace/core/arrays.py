"""Array helpers shared by the engines: one input check, row blocks, overflow-safe row norms and unit rows.

An input matrix is checked once and walked in row blocks converted to float64,
so that memory stays linear in ``n`` whatever the dtype of ``X`` (a
memory-mapped float32 file is never copied whole).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from repspace.core.errors import InputError

#: Elements (not bytes) of one float64 block: 4M elements, 32 MiB.
BLOCK_ELEMENTS = 1 << 22

#: Up to this many elements :func:`unit_rows` takes one step instead of the block loop (a query, a few rows).
SMALL_ELEMENTS = 1 << 14

#: Below this a sum of squares may have lost precision to underflow.
_TINY = 1e-280


def as_matrix(X: Any, name: str = "X", *, min_rows: int = 1, scan: bool = True) -> np.ndarray:
    """Check that ``X`` is a finite numeric ``n × d`` array with ``n ≥ min_rows`` and ``d ≥ 1``.

    The array is returned as is (no float64 copy, a memory map stays one);
    :func:`row_blocks` converts it block by block. With ``scan=False`` the
    values are not read: the caller's own blocked pass checks them (for
    example with :func:`block64`), so that a large array is read once.

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
    repspace.core.errors.InputError: X must be a 2-d array (n items × d dimensions), got shape (2,)
    >>> as_matrix([[1.0, float("nan")]], scan=False).shape  # values left to the caller's pass
    (1, 2)
    """
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} is not a numeric array: {e}") from None
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-d array (n items × d dimensions), got shape {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"{name} must be numeric (real numbers), got dtype {arr.dtype}")
    n, d = arr.shape
    if d < 1:
        raise InputError(f"{name} has no dimensions (shape {arr.shape})")
    if n < min_rows:
        raise InputError(f"{name} has {n} rows; this metric needs at least {min_rows}")
    if scan and np.issubdtype(arr.dtype, np.floating):
        for start, block in row_blocks(arr, convert=False):
            ok = np.isfinite(block).all(axis=1)
            if not ok.all():
                raise InputError(f"{name} has NaN or infinite values (row {start + int(np.argmin(ok))})")
    return arr


def block_rows(d: int, n_cols: int | None = None) -> int:
    """Rows per block so that a ``rows × max(d, n_cols)`` float64 block stays near 32 MiB."""
    width = max(d, n_cols or 1, 1)
    return max(1, BLOCK_ELEMENTS // width)


def row_slices(n: int, d: int, rows: int | None = None) -> Iterator[slice]:
    """Slices of ``rows`` rows (default: a float64 copy near 32 MiB, :func:`block_rows`) covering ``n``."""
    step = rows or block_rows(d)
    for lo in range(0, n, step):
        yield slice(lo, min(n, lo + step))


def row_blocks(X: np.ndarray, rows: int | None = None, *, convert: bool = True) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(start, X[start:start+rows])`` over :func:`row_slices`, as float64 when ``convert``."""
    for s in row_slices(*X.shape, rows):
        block = X[s]
        yield s.start, (np.asarray(block, dtype=np.float64) if convert else block)


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


def unit_rows(X: np.ndarray, dtype: Any = np.float64) -> np.ndarray:
    """Rows divided by their L2 norm; a zero row stays zero, as in ``sklearn.preprocessing.normalize``.

    The one row normaliser: norms are taken in float64 without overflow
    (:func:`row_norms`), block by block (bounded extra memory), and written as
    ``dtype`` (float64, or float32 for vectors that are searched). Up to
    :data:`SMALL_ELEMENTS` elements (a query) the same arithmetic runs in one
    step without the block loop, bit for bit the same result.

    Examples
    --------
    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    >>> unit_rows(np.array([[3.0, 4.0]]), np.float32).dtype
    dtype('float32')
    """
    X = np.asarray(X)
    if X.ndim == 2 and X.size <= SMALL_ELEMENTS:  # one query: skip the block loop, same arithmetic
        block = np.asarray(X, dtype=np.float64)
        if X.dtype == np.float32:  # float32's squares and their sums neither overflow nor underflow in float64
            sq = np.einsum("ij,ij->i", block, block)
        else:
            with np.errstate(over="ignore", under="ignore"):
                sq = np.einsum("ij,ij->i", block, block)
        if len(sq) == 1:  # one row: a Python comparison, not two array reductions
            fine = _TINY <= float(sq[0]) < np.inf
        else:
            fine = bool(sq.size) and _TINY <= sq.min() and sq.max() < np.inf
        if fine:  # no zero, tiny or overflowing row
            return (block / np.sqrt(sq)[:, None]).astype(dtype, copy=False)
    out = np.empty(X.shape, dtype)
    for start, block in row_blocks(X):
        out[start:start + len(block)] = _unit_block(block)
    return out


def _unit_block(block: np.ndarray) -> np.ndarray:
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


def block64(X: np.ndarray, rows: slice, what: str = "X") -> np.ndarray:
    """Rows of ``X`` as a float64 copy, checked for NaN and infinities."""
    b = np.array(X[rows], dtype=np.float64)
    if not np.isfinite(b).all():
        bad = int(np.flatnonzero(~np.isfinite(b).all(axis=1))[0]) + (rows.start or 0)
        raise InputError(f"{what} has NaN or infinite values (row {bad})")
    return b


def check_pair(X: Any, Y: Any, *, min_rows: int = 1, scan: bool = True,
               measure: str = "this measure", unit: str = "items") -> tuple[np.ndarray, np.ndarray]:
    """Check two matrices over the same items (or pairs): 2-d, numeric, ``d ≥ 1``, ``n ≥ min_rows``, the same ``n``.

    Arrays are returned as they are (a memory map stays a memory map).
    With ``scan`` every value is also checked to be finite (without, the
    caller's own blocked pass must do it). ``measure`` names the caller in
    the "too few rows" message, ``unit`` what a row is.

    Raises
    ------
    InputError
        One readable line: which argument, and what is wrong.

    Examples
    --------
    >>> X, Y = check_pair(np.zeros((3, 2)), np.ones((3, 5)))
    >>> X.shape, Y.shape
    ((3, 2), (3, 5))
    >>> check_pair(np.zeros((3, 2)), np.zeros((4, 2)))
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: X has 3 rows and Y has 4: the two spaces must hold the same items, row for row
    """
    X, Y = as_matrix(X, "X", min_rows=0, scan=scan), as_matrix(Y, "Y", min_rows=0, scan=scan)
    if X.shape[0] != Y.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows and Y has {Y.shape[0]}: "
                         "the two spaces must hold the same items, row for row")
    if X.shape[0] < min_rows:
        raise InputError(f"{measure} needs at least {min_rows} {unit}, got {X.shape[0]}")
    return X, Y
