"""Exact k-nearest-neighbour search by blocked matrix products.

The scores are BLAS products (numpy's ``matmul``); what is written here is only
the blocking (so memory stays bounded at any size) and the top-k selection with
a deterministic tie rule (equal scores: lower row first), which FAISS's
``knn`` does not promise.
"""

from __future__ import annotations

import numpy as np

from repspace.space import Metric

#: Largest score block held at once, in float32 entries (256 MiB).
BLOCK_ENTRIES = 64 * 1024 * 1024


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """L2-normalise rows (zero rows stay zero), as float32.

    Examples
    --------
    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]], dtype=float32)
    """
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


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
    metric : ``cosine``, ``ip`` or ``l2``

    Returns
    -------
    scores : (m, k') float32
        Similarities (``cosine``, ``ip``; descending) or Euclidean distances
        (``l2``; ascending).
    indices : (m, k') int64
        Row numbers in ``base``; ties go to the lower row.

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
    if metric is Metric.COSINE:
        q, x = normalize_rows(q), normalize_rows(x)
    x_sq = np.einsum("ij,ij->i", x, x) if metric is Metric.L2 else None
    block = max(kk, min(n, BLOCK_ENTRIES // max(1, m)))
    best_s = np.empty((m, 0), np.float32)
    best_i = np.empty((m, 0), np.int64)
    for start in range(0, n, block):
        stop = min(n, start + block)
        s = q @ x[start:stop].T  # (m, b): the BLAS product
        if x_sq is not None:
            s *= 2.0
            s -= x_sq[start:stop]  # -||x||² + 2 q·x : larger is nearer
        cs, ci = _top_k(s, kk)
        best_s = np.concatenate([best_s, cs], axis=1)
        best_i = np.concatenate([best_i, ci + start], axis=1)
        if best_s.shape[1] > kk:
            best_s, best_i = _merge(best_s, best_i, kk)
    best_s, best_i = _merge(best_s, best_i, kk)
    if metric is Metric.L2:
        q_sq = np.einsum("ij,ij->i", q, q)[:, None]
        best_s = np.sqrt(np.maximum(q_sq - best_s, 0.0)).astype(np.float32)
    return best_s, best_i


def _top_k(s: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k columns of each row of ``s`` (unordered), ties at the boundary to lower columns."""
    b = s.shape[1]
    if k >= b:
        idx = np.broadcast_to(np.arange(b), s.shape).copy()
        return s.copy(), idx
    idx = np.argpartition(-s, k - 1, axis=1)[:, :k]
    top = np.take_along_axis(s, idx, axis=1)
    kth = top.min(axis=1)
    # Rows where the k-th score is tied with a column that argpartition left out:
    # redo them with a stable sort so the lower columns win.
    tied = (s >= kth[:, None]).sum(axis=1) > k
    for r in np.flatnonzero(tied):
        order = np.argsort(-s[r], kind="stable")[:k]
        idx[r], top[r] = order, s[r, order]
    return top, idx


def _merge(s: np.ndarray, i: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sort candidates by (score desc, index asc) and keep k."""
    order = np.lexsort((i, -s), axis=-1)[:, :k]
    return np.take_along_axis(s, order, axis=1), np.take_along_axis(i, order, axis=1)
