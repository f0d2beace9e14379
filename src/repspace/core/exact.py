"""Exact k-nearest-neighbour search by blocked matrix products.

Candidates come from FAISS's ``knn`` for batches of queries (fused sgemm + heap)
and for one query (its SIMD scan with a heap, on one thread), and from numpy's
``matmul`` over blocks of rows for a few queries. What is
written here is a selection that neither offers: the candidates, and every row
whose BLAS score is within rounding of the k-th, are re-scored pair by pair in
float64. That makes
the result deterministic: identical vectors get identical scores wherever they
sit (a blocked matmul can differ in the last bit by position), ties go to the
lower row, and l2 distances are exact even far from the origin, where the
expansion ‖q‖² − 2q·x + ‖x‖² loses all precision in float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.arrays import unit_rows
from repspace.core.limits import EXACT_BLOCK_ENTRIES, RESCORE_ENTRIES, TIE_BAND_FLOAT32
from repspace.core.space import Metric
from repspace.core.threads import one_faiss_thread

#: From this many queries on, candidates come from FAISS's fused BLAS + heap search
#: (faster than numpy's matmul + argpartition for batches; slower for one query).
FAISS_MIN_QUERIES = 20
#: One query over a base of at most this many entries (n x d) is scanned by FAISS on one
#: thread, which beats BLAS matrix-vector products + argpartition at these sizes, and FAISS on
#: two threads (BENCHMARKS.md, "Figures behind the defaults"). Beyond this size a many-core
#: BLAS may win, so the blocked path takes over.
ONE_QUERY_SCAN_MAX = 1 << 26


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """L2-normalise rows (zero rows stay zero), as float32: :func:`~repspace.core.arrays.unit_rows` for search.

    Examples
    --------
    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]], dtype=float32)
    """
    return unit_rows(x, np.float32)


def exact_search(
    queries: np.ndarray, base: np.ndarray, k: int, metric: Metric | str = "ip"
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` of each query among the rows of ``base``.

    Parameters
    ----------
    queries : (m, d) array
    base : (n, d) array
        For ``cosine`` both are normalised here; pass normalised arrays and
        ``metric="ip"`` to skip that work on repeated calls.
    k : int
        Results per query (fewer when ``n < k``).
    metric : ``cosine``, ``ip``, ``l2`` or ``poincare``

    Returns
    -------
    scores : (m, k') float32
        Similarities (``cosine``, ``ip``; descending) or distances (``l2``
        Euclidean, ``poincare`` hyperbolic: :func:`repspace.core.hyperbolic.poincare_search`;
        ascending).
    indices : (m, k') int64
        Row numbers in ``base``; equal scores go to the lower row.

    Examples
    --------
    >>> base = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> s, i = exact_search(np.array([[1.0, 0.2]]), base, k=2, metric="cosine")
    >>> i.tolist()
    [[0, 2]]
    """
    metric = Metric.parse(metric)
    q = np.ascontiguousarray(queries, dtype=np.float32)
    x = np.ascontiguousarray(base, dtype=np.float32)
    if q.ndim == 1:
        q = q[None, :]
    m, n = q.shape[0], x.shape[0]
    kk = min(k, n)
    if m == 0 or kk <= 0:
        return np.empty((m, 0), np.float32), np.empty((m, 0), np.int64)
    if metric is Metric.POINCARE:  # hyperbolic distance: no BLAS shortcut, blocked float64 scan
        from repspace.core.hyperbolic import poincare_search

        return poincare_search(q, x, kk)
    if metric is Metric.COSINE:
        q, x = normalize_rows(q), normalize_rows(x)
    l2 = metric is Metric.L2
    if m >= FAISS_MIN_QUERIES and kk < n:
        return _faiss_search(q, x, kk, l2)
    if m == 1 and kk < n and n * x.shape[1] <= ONE_QUERY_SCAN_MAX:
        with one_faiss_thread():
            return _faiss_search(q, x, kk, l2)
    return _blocked_search(q, x, kk, l2)



def _finish(best_s: np.ndarray, best_i: np.ndarray, l2: bool) -> tuple[np.ndarray, np.ndarray]:
    if l2:
        return np.sqrt(np.maximum(-best_s, 0.0)).astype(np.float32), best_i
    return best_s.astype(np.float32), best_i


def _faiss_search(q: np.ndarray, x: np.ndarray, k: int, l2: bool) -> tuple[np.ndarray, np.ndarray]:
    """Batches: FAISS's fused BLAS + heap selection finds k + a margin candidates per query,
    which are re-scored exactly; queries whose margin does not clear the tie band are
    redone by the blocked path, so the result is the same as :func:`_blocked_search`'s."""
    import faiss

    kc = min(x.shape[0], k + max(8, k))
    d, idx = faiss.knn(q, x, kc, metric=faiss.METRIC_L2 if l2 else faiss.METRIC_INNER_PRODUCT)
    approx = -d if l2 else d  # larger is nearer
    kth = approx[:, k - 1]
    band = kth - TIE_BAND_FLOAT32 * (np.abs(kth) + 1.0)
    crowded = approx[:, kc - 1] >= band  # the band may hold rows beyond the candidates
    out_s = np.empty((q.shape[0], k), np.float64)
    out_i = np.empty((q.shape[0], k), np.int64)
    plain = np.flatnonzero(~crowded)
    if len(plain):
        s, i = _rescore_rows(q[plain], x, idx[plain], l2, k)
        out_s[plain], out_i[plain] = s, i
    hard = np.flatnonzero(crowded)
    if len(hard):
        s, i = _blocked_search(q[hard], x, k, l2, finish=False)
        out_s[hard], out_i[hard] = s, i
    return _finish(out_s, out_i, l2)


def _rescore_rows(
    q: np.ndarray, xb: np.ndarray, cand: np.ndarray, l2: bool, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Exact float64 scores of each query's candidate rows; the best k by (score desc, row asc)."""
    out_s = np.empty((q.shape[0], k), np.float64)
    out_i = np.empty((q.shape[0], k), np.int64)
    step = max(1, RESCORE_ENTRIES // max(1, cand.shape[1] * xb.shape[1]))
    for lo in range(0, q.shape[0], step):  # bounded memory: (rows, candidates, d) float64 at a time
        c = cand[lo : lo + step]
        q64 = q[lo : lo + step].astype(np.float64)
        x64 = xb[c].astype(np.float64)
        if l2:
            x64 -= q64[:, None, :]
            scores = -np.einsum("pkd,pkd->pk", x64, x64)
        else:
            scores = np.einsum("pkd,pd->pk", x64, q64)
        order = np.lexsort((c, -scores), axis=-1)[:, :k]
        out_s[lo : lo + step] = np.take_along_axis(scores, order, axis=1)
        out_i[lo : lo + step] = np.take_along_axis(c, order, axis=1)
    return out_s, out_i


def _blocked_search(
    q: np.ndarray, x: np.ndarray, kk: int, l2: bool, finish: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Few queries: numpy matmul over blocks of rows, with exact re-scoring of candidates."""
    m, n = q.shape[0], x.shape[0]
    x_sq = np.einsum("ij,ij->i", x, x) if l2 else None
    block = max(kk, min(n, EXACT_BLOCK_ENTRIES // max(1, m)))
    best_s = np.empty((m, 0), np.float64)
    best_i = np.empty((m, 0), np.int64)
    for start in range(0, n, block):
        stop = min(n, start + block)
        s = q @ x[start:stop].T  # (m, b): the BLAS product
        if x_sq is not None:
            s *= 2.0
            s -= x_sq[start:stop]  # 2q·x − ‖x‖²: larger is nearer
        cs, ci = _block_top_k(s, kk, q, x[start:stop], l2)
        best_s = np.concatenate([best_s, cs], axis=1)
        best_i = np.concatenate([best_i, ci + start], axis=1)
        if best_s.shape[1] > kk:
            best_s, best_i = _merge(best_s, best_i, kk)
    best_s, best_i = _merge(best_s, best_i, kk)
    return _finish(best_s, best_i, l2) if finish else (best_s, best_i)


def _rescore(q: np.ndarray, xb: np.ndarray, l2: bool) -> np.ndarray:
    """Pairwise float64 scores of one query against some rows: q·x, or −‖q − x‖².

    Computed by ``einsum``, one fixed summation per row, as in :func:`_rescore_rows`: a BLAS
    matrix-vector product rounds a row differently by where it sits (and by CPU), which gave
    duplicate rows unequal scores and broke the lower-row tie rule.
    """
    q64, x64 = q.astype(np.float64), xb.astype(np.float64)
    if l2:
        diff = x64 - q64
        return -np.einsum("ij,ij->i", diff, diff)
    return np.einsum("ij,j->i", x64, q64)


def _block_top_k(
    s: np.ndarray, k: int, q: np.ndarray, xb: np.ndarray, l2: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k columns of each row of ``s``, re-scored exactly, sorted by (score desc, column asc)."""
    m, b = s.shape
    if k >= b:
        k = b
        idx = np.broadcast_to(np.arange(b), (m, b))
    else:
        idx = np.argpartition(-s, k - 1, axis=1)[:, :k]
    top = np.take_along_axis(s, idx, axis=1)
    kth = top.min(axis=1)
    band = kth - TIE_BAND_FLOAT32 * (np.abs(kth) + 1.0)
    crowded = (s >= band[:, None]).sum(axis=1) > k
    out_s = np.empty((m, k), np.float64)
    out_i = np.empty((m, k), np.int64)
    plain = np.flatnonzero(~crowded)
    if len(plain):
        out_s[plain], out_i[plain] = _rescore_rows(q[plain], xb, np.asarray(idx[plain]), l2, k)
    for r in np.flatnonzero(crowded):  # near-ties at the k-th place: re-score the whole band
        cand = np.flatnonzero(s[r] >= band[r])
        scores = _rescore(q[r], xb[cand], l2)
        order = np.lexsort((cand, -scores))[:k]
        out_s[r], out_i[r] = scores[order], cand[order]
    return out_s, out_i


def _merge(s: np.ndarray, i: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sort candidates by (score desc, index asc) and keep k."""
    order = np.lexsort((i, -s), axis=-1)[:, :k]
    return np.take_along_axis(s, order, axis=1), np.take_along_axis(i, order, axis=1)
