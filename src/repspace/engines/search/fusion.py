"""Fuse several rankings of the same rows into one: reciprocal-rank fusion and weighted score sums.

Both take the arrays searches return — rows ``(m, k_i)`` int64 with ``-1`` as
padding, and for :func:`weighted_sum` the scores beside them — one array per
ranking, the same ``m`` queries in each. A row that one ranking lacks gets
nothing from it. A row repeated within one query's ranking counts once, at its
best (first) place. Results are ``(scores, rows)``, ``(m, k)`` each, best first,
equal scores going to the lower row; padding is row ``-1`` with score 0.
Scores are float64: they are sums of small terms, and float32 would merge
some that differ.

Equal contributions give bit-identical sums whatever the order of the rankings
(each row's terms are added in ascending order), so exact ties are found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar, positive_int
from repspace.core.errors import InputError


def rrf(
    rankings: Sequence[Any], k: int, *, c: float = 60, weights: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

    Each row scores ``Σ_i w_i / (c + rank_i)`` over the rankings ``i`` that
    hold it, ``rank_i`` counting from 1.

    Parameters
    ----------
    rankings : list of int arrays, (m, k_i) each (or (k_i,) for one query)
        Rows best first; ``-1`` is padding.
    k : int
        Rows to keep per query.
    c : float, ≥ 0
        The smoothing constant (60 in the paper).
    weights : list of float ≥ 0, optional
        One per ranking (default 1 each); a ranking of weight 0 adds no rows.

    Returns
    -------
    scores : (m, k) float64, descending
    rows : (m, k) int64, ``-1`` padded
        1-d ``(k,)`` each when every ranking was 1-d.

    Examples
    --------
    Row 7 is first in one ranking and third in the other; row 3 second in both:

    >>> s, r = rrf([np.array([[7, 3, 5]]), np.array([[1, 3, 7]])], k=3, c=0)
    >>> r.tolist(), s.round(4).tolist()
    ([[7, 1, 3]], [[1.3333, 1.0, 1.0]])

    Rows 1 and 3 tie (1/1 = 1/2 + 1/2): the lower row comes first.
    """
    k = positive_int(k, "k")
    check_scalar(c, "the RRF constant c", float, low=0)
    arrays, single = _check_rankings(rankings)
    w = _check_weights(weights, len(arrays))
    m = arrays[0].shape[0]
    parts = []
    for rows, wi in zip(arrays, w):
        if wi == 0:
            continue
        q, r, pos = _entries(rows)
        parts.append((q, r, wi / (c + pos + 1.0)))
    return _fuse(parts, m, k, single)


def weighted_sum(
    results: Sequence[tuple[Any, Any]],
    k: int,
    *,
    weights: Sequence[float] | None = None,
    normalize: str | None = "minmax",
) -> tuple[np.ndarray, np.ndarray]:
    """Fuse scored rankings by a weighted sum of their (normalised) scores.

    Parameters
    ----------
    results : list of (scores, rows) pairs, (m, k_i) arrays each (or (k_i,))
        Scores must grow with relevance (negate distances first); entries
        whose row is ``-1`` are padding and ignored.
    k : int
    weights : list of float ≥ 0, optional
        One per list (default 1 each); a list of weight 0 adds no rows.
    normalize : ``"minmax"`` (default) or None
        ``minmax`` maps each query's scores in each list to [0, 1] by
        ``(s − min) / (max − min)`` over that list's rows (1 for every row when
        they are all equal, e.g. a single row); None sums raw scores.
        A row missing from a list gets 0 from it.

    Returns
    -------
    scores : (m, k) float64, descending
    rows : (m, k) int64, ``-1`` padded

    Examples
    --------
    >>> bm25 = (np.array([[9.0, 5.0, 1.0]]), np.array([[4, 2, 8]]))
    >>> dense = (np.array([[0.9, 0.8]]), np.array([[2, 6]]))
    >>> s, r = weighted_sum([bm25, dense], k=3)
    >>> r.tolist(), s.round(3).tolist()
    ([[2, 4, 6]], [[1.5, 1.0, 0.0]])
    """
    k = positive_int(k, "k")
    if normalize not in ("minmax", None, "none"):
        raise InputError(f"normalize must be 'minmax' or None, not {normalize!r}")
    if isinstance(results, tuple) and len(results) == 2 and not isinstance(results[0], tuple):
        raise InputError("results must be a list of (scores, rows) pairs; wrap a single pair in a list")
    pairs = []
    for i, pair in enumerate(results):
        try:
            s, r = pair
        except (TypeError, ValueError):
            raise InputError(f"result {i} is not a (scores, rows) pair") from None
        pairs.append((s, r))
    arrays, single = _check_rankings([r for _, r in pairs])
    w = _check_weights(weights, len(arrays))
    m = arrays[0].shape[0]
    parts = []
    for i, ((scores, _), rows, wi) in enumerate(zip(pairs, arrays, w)):
        try:
            s = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"the scores of result {i} are not numeric") from None
        if single:
            s = s[None, :] if s.ndim == 1 else s
        if s.shape != rows.shape:
            raise InputError(f"result {i}: scores have shape {s.shape} but rows {rows.shape}")
        if not np.isfinite(s[rows >= 0]).all():
            raise InputError(f"result {i} has a NaN or infinite score")
        if wi == 0:
            continue
        q, r, pos = _entries(rows)
        v = s[q, pos]
        if normalize == "minmax" and len(v):
            lo = np.full(m, np.inf)
            hi = np.full(m, -np.inf)
            np.minimum.at(lo, q, v)
            np.maximum.at(hi, q, v)
            span = (hi - lo)[q]
            v = np.divide(v - lo[q], span, out=np.ones_like(v), where=span > 0)
        parts.append((q, r, wi * v))
    return _fuse(parts, m, k, single)


# ---------------------------------------------------------------------- helpers
def _check_rankings(rankings: Sequence[Any]) -> tuple[list[np.ndarray], bool]:
    """Rankings as (m, k_i) int64 arrays with the same m; True when all were 1-d."""
    if isinstance(rankings, np.ndarray) or not isinstance(rankings, Sequence) or not len(rankings):
        raise InputError("give a non-empty list of rankings (one rows array per ranking)")
    arrays, dims = [], set()
    for i, r in enumerate(rankings):
        a = np.asarray(r)
        if a.size and not np.issubdtype(a.dtype, np.integer):
            raise InputError(f"ranking {i} holds {a.dtype} values, not integer rows")
        if a.ndim not in (1, 2):
            raise InputError(f"ranking {i} has shape {a.shape}; expected (queries, k) rows")
        a = a.astype(np.int64)
        if a.size and a.min() < -1:
            raise InputError(f"ranking {i} has a negative row other than the padding -1")
        dims.add(a.ndim)
        arrays.append(a[None, :] if a.ndim == 1 else a)
    if len(dims) > 1:
        raise InputError("mix of 1-d and 2-d rankings; give all for one query (1-d) or all (queries, k)")
    sizes = {a.shape[0] for a in arrays}
    if len(sizes) > 1:
        raise InputError(f"the rankings cover different numbers of queries: {sorted(sizes)}")
    return arrays, dims == {1}


def _check_weights(weights: Sequence[float] | None, n: int) -> list[float]:
    if weights is None:
        return [1.0] * n
    w = list(weights)
    if len(w) != n:
        raise InputError(f"{len(w)} weights for {n} rankings")
    return [check_scalar(x, "weights", float, low=0) for x in w]


def _entries(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, row, position) of each real entry, each row once per query (its first position)."""
    m, kk = rows.shape
    q = np.repeat(np.arange(m), kk)
    pos = np.tile(np.arange(kk), m)
    r = rows.ravel()
    real = r >= 0
    q, pos, r = q[real], pos[real], r[real]
    order = np.lexsort((pos, r, q))
    q, r, pos = q[order], r[order], pos[order]
    first = np.ones(len(q), bool)
    first[1:] = (q[1:] != q[:-1]) | (r[1:] != r[:-1])
    return q[first], r[first], pos[first]


def _fuse(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], m: int, k: int,
          single: bool) -> tuple[np.ndarray, np.ndarray]:
    """Sum the contributions per (query, row) and keep each query's k best (ties: lower row)."""
    out_s = np.zeros((m, k), np.float64)
    out_r = np.full((m, k), -1, np.int64)
    if parts:
        q = np.concatenate([p[0] for p in parts])
        r = np.concatenate([p[1] for p in parts])
        v = np.concatenate([p[2] for p in parts]).astype(np.float64)
    if parts and len(q):
        order = np.lexsort((v, r, q))  # each group's terms in ascending order: equal multisets, equal sums
        q, r, v = q[order], r[order], v[order]
        start = np.ones(len(q), bool)
        start[1:] = (q[1:] != q[:-1]) | (r[1:] != r[:-1])
        at = np.flatnonzero(start)
        gq, gr, gs = q[at], r[at], np.add.reduceat(v, at)
        order = np.lexsort((gr, -gs, gq))
        gq, gr, gs = gq[order], gr[order], gs[order]
        first_of_query = np.searchsorted(gq, gq, side="left")
        place = np.arange(len(gq)) - first_of_query
        keep = place < k
        out_s[gq[keep], place[keep]] = gs[keep]
        out_r[gq[keep], place[keep]] = gr[keep]
    if single:
        return out_s[0], out_r[0]
    return out_s, out_r
