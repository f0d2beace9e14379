"""Exact scores of a few CSR rows against a query, compiled by numba (a dependency; see pyproject.toml).

A Seismic search rescoring its k rows (:meth:`repspace.engines.search.seismic.SeismicIndex.scores`) did
this with about twenty numpy calls on a thousand entries, 15 us a query, more than Seismic's own search on
small spaces; the loop below is one call. Kept apart so that importing the search engines does not import
numba; the first call compiles it (about a second; cached beside this file when the folder is writable).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["rescored", "row_scores"]


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


@njit(cache=True, nogil=True)
def rescored(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, norms: np.ndarray, query_norm: float,
             found: np.ndarray, query_ids: np.ndarray, query_weights: np.ndarray, buf: np.ndarray, keep: int,
             out_scores: np.ndarray, out_rows: np.ndarray) -> int:  # pragma: no cover - compiled
    """The rows ``found`` scored exactly and ranked, in one call (what a Seismic search with ``rescore`` does
    with its rows): the best ``keep`` written to ``out_scores`` (float32) and ``out_rows``, their count returned.

    Each row is summed in its entry order in float64 against the query spread into ``buf`` (zeros of the
    vocabulary's size, zero again on return), divided by ``norms[row] * query_norm`` when ``norms`` is not
    empty (cosine; 0 where that product is 0), then ranked by score, ties to the lower row: the arithmetic
    of :func:`row_scores` and :func:`~repspace.engines.search.sparse.top_k_by_score` on the rows sorted.
    """
    rows = np.sort(found)
    n = len(rows)
    for j in range(len(query_ids)):
        buf[query_ids[j]] = query_weights[j]
    neg = np.empty(n)
    for i in range(n):
        p = rows[i]
        s = 0.0
        for e in range(indptr[p], indptr[p + 1]):
            s += data[e] * buf[indices[e]]
        if len(norms):
            d = norms[p] * query_norm
            s = s / d if d > 0 else 0.0
        neg[i] = -s
    for j in range(len(query_ids)):
        buf[query_ids[j]] = 0.0
    order = np.argsort(neg, kind="mergesort")  # stable: equal scores keep the ascending rows' order
    m = min(keep, n)
    for t in range(m):
        out_scores[t] = -neg[order[t]]
        out_rows[t] = rows[order[t]]
    return m
