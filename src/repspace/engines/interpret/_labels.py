"""One label per row: the check and the integer coding shared by the probes, the mean decomposition and erasure.

Each of them takes labels (class ids, positions, contexts) for the rows of an
array; a bad label array reads the same way in all three.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.errors import InputError


def labels_per_row(values: Any, n: int, name: str, rows: str = "X") -> np.ndarray:
    """``values`` as a 1-d array of ``n`` labels, one per row of ``rows``; else one :class:`InputError` line.

    Examples
    --------
    >>> labels_per_row(["a", "b", "a"], 3, "y").tolist()
    ['a', 'b', 'a']
    >>> labels_per_row([0, 1], 3, "positions", "states")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: states has 3 rows and positions has 2 labels: one label per row
    """
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} is not an array of labels: {e}") from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be 1-d (one label per row of {rows}), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise InputError(f"{rows} has {n} rows and {name} has {arr.shape[0]} labels: one label per row")
    return arr


def label_codes(arr: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted distinct labels of the 1-d ``arr``, each row's code into them (int64) and each label's count.

    Examples
    --------
    >>> labels, codes, counts = label_codes(np.array(["b", "a", "b"]), "y")
    >>> labels.tolist(), codes.tolist(), counts.tolist()
    (['a', 'b'], [1, 0, 1], [1, 2])
    >>> label_codes(np.array([0.0, np.nan]), "y")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: y has NaN or infinite labels (row 1)
    """
    if np.issubdtype(arr.dtype, np.floating) and not np.isfinite(arr).all():
        raise InputError(f"{name} has NaN or infinite labels (row {int(np.flatnonzero(~np.isfinite(arr))[0])})")
    try:
        labels, codes, counts = np.unique(arr, return_inverse=True, return_counts=True)
    except TypeError as e:
        raise InputError(f"{name} mixes labels that cannot be sorted ({e}); use one type of label") from None
    return labels, codes.ravel().astype(np.int64), counts
