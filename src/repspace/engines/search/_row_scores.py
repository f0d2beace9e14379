"""Exact scores of a few CSR rows against a query, compiled by numba (a dependency; see pyproject.toml).

A Seismic search rescoring its k rows (:meth:`repspace.engines.search.seismic.SeismicIndex.scores`) did
this with about twenty numpy calls on a thousand entries, 15 us a query, more than Seismic's own search on
small spaces; the loop below is one call. Kept apart so that importing the search engines does not import
numba; the first call compiles it (about a second; cached beside this file when the folder is writable).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["row_scores"]


@njit(cache=True, nogil=True)
def row_scores(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, positions: np.ndarray,
               dense_query: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[i]`` = row ``positions[i]`` (its entries ``indptr[p]:indptr[p + 1]``) times ``dense_query``
    (the query's weight of every feature, float64), summed in the row's entry order in float64."""
    for i in range(len(positions)):
        p = positions[i]
        s = 0.0
        for e in range(indptr[p], indptr[p + 1]):
            s += data[e] * dense_query[indices[e]]
        out[i] = s
