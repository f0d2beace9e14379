"""Input checks shared by the comparison measures: two matrices over the same rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.arrays import as_matrix

#: Values accepted by the ``precision`` option of the moment-based measures.
PRECISIONS = ("auto", "float64")


def _shape_only(X: Any, name: str) -> np.ndarray:
    """The checks of :func:`~repspace.core.arrays.as_matrix` except the scan for NaN / inf.

    Used where the one streamed pass over the rows detects non-finite values
    itself (a NaN reaches the column sums), so that a large memory-mapped
    array is read once, not twice.
    """
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} is not a numeric array: {e}") from None
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 2-d array (n items × d dimensions), got shape {arr.shape}")
    as_matrix(arr[:0], name, min_rows=0)  # dtype and d ≥ 1, on no rows
    return arr


def check_pair(X: Any, Y: Any, *, min_rows: int = 1, scan: bool = True,
               measure: str = "this measure") -> tuple[np.ndarray, np.ndarray]:
    """Check two spaces over the same items: 2-d, numeric, ``n ≥ min_rows``, the same ``n``.

    Arrays are returned as they are (a memory map stays a memory map).
    With ``scan`` every value is also checked to be finite. ``measure`` names
    the caller in the "too few rows" message.

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
    if scan:
        X, Y = as_matrix(X, "X"), as_matrix(Y, "Y")
    else:
        X, Y = _shape_only(X, "X"), _shape_only(Y, "Y")
    if X.shape[0] != Y.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows and Y has {Y.shape[0]}: "
                         "the two spaces must hold the same items, row for row")
    if X.shape[0] < min_rows:
        raise InputError(f"{measure} needs at least {min_rows} items, got {X.shape[0]}")
    return X, Y


def check_precision(precision: str) -> str:
    """``auto`` or ``float64`` (see :func:`repspace.engines.compare.cka_linear`)."""
    if precision not in PRECISIONS:
        raise InputError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision
