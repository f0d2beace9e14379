"""Maximal marginal relevance: re-rank candidates for relevance *and* diversity.

Carbonell & Goldstein (SIGIR 1998): having picked the set ``S``, pick next the
candidate ``d`` maximising ``λ·sim(q, d) − (1 − λ)·max_{s ∈ S} sim(d, s)``.
``λ = 1`` is the plain ranking by relevance; smaller ``λ`` trades relevance for
distance from what was already picked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.arrays import unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.space import Metric


def mmr(
    query_vector: Any,
    candidate_vectors: Any,
    candidate_rows: Any,
    k: int,
    *,
    lambda_: float = 0.5,
    metric: Metric | str = "cosine",
) -> tuple[np.ndarray, np.ndarray]:
    """Pick ``k`` of the candidates by maximal marginal relevance; ``(scores, rows)`` as the other engines
    (:func:`~repspace.engines.search.fusion.rrf`, FAISS's ``search``) return them.

    Parameters
    ----------
    query_vector : (d,) array
    candidate_vectors : (n, d) array
    candidate_rows : (n,) int array
        The candidates' rows; a row of ``-1`` (search padding) is skipped.
    k : int
        How many to pick (fewer when there are fewer candidates).
    lambda_ : float in [0, 1]
        Weight of relevance against diversity.
    metric : ``cosine`` (default), ``ip`` or ``l2``
        The similarity used for both terms: cosine, inner product, or the
        negated Euclidean distance.

    Returns
    -------
    scores : (k',) float32, each pick's relevance to the query as the metric
        reports it (similarity for cosine and ip, distance for l2).
    rows : (k',) int64, in pick order

    The first pick is the most relevant candidate whatever ``λ`` (the
    diversity term of an empty set is taken as 0); equal values go to the
    lower row.

    Examples
    --------
    Rows 10 and 11 are near-duplicates; 12 points elsewhere but is still relevant:

    >>> q = np.array([1.0, 0.0])
    >>> x = np.array([[1.0, 0.05], [1.0, 0.06], [0.6, -0.8]])
    >>> mmr(q, x, [10, 11, 12], k=2, lambda_=1.0)[1].tolist()
    [10, 11]
    >>> mmr(q, x, [10, 11, 12], k=2, lambda_=0.5)[1].tolist()
    [10, 12]
    """
    check_scalar(k, "k", int, low=1)
    check_scalar(lambda_, "lambda_", float, low=0, high=1)
    metric = Metric.parse(metric)
    metric.require_vector_space("MMR diversification")
    q, x, rows = _check(query_vector, candidate_vectors, candidate_rows)
    lam = float(lambda_)
    if metric is Metric.COSINE:
        q = unit_rows(q[None, :])[0]
        x = unit_rows(x)
    # Products by einsum, one fixed summation per candidate: a BLAS matrix-vector product rounds
    # a row differently by where it sits (and by CPU), so duplicates would not tie exactly.
    if metric is Metric.L2:
        rel = -np.sqrt(((x - q) ** 2).sum(axis=1))
    else:
        rel = np.einsum("ij,j->i", x, q)
    n = len(rows)
    kk = min(int(k), n)
    picked = np.empty(kk, np.int64)
    chosen = np.zeros(n, bool)
    closest = np.zeros(n)  # max similarity to the picked set (unused until something is picked)
    for step in range(kk):
        score = rel.copy() if step == 0 else lam * rel - (1.0 - lam) * closest
        score[chosen] = -np.inf
        best = np.flatnonzero(score == score.max())
        j = best[np.argmin(rows[best])]
        picked[step], chosen[j] = j, True
        if metric is Metric.L2:
            sim = -np.sqrt(((x - x[j]) ** 2).sum(axis=1))
        else:
            sim = np.einsum("ij,j->i", x, x[j])
        closest = sim if step == 0 else np.maximum(closest, sim)
    out = rel[picked]
    return (-out if metric is Metric.L2 else out).astype(np.float32), rows[picked]


def _check(query_vector: Any, candidate_vectors: Any, candidate_rows: Any) -> tuple[np.ndarray, ...]:
    try:
        q = np.asarray(query_vector, dtype=np.float64)
        x = np.asarray(candidate_vectors, dtype=np.float64)
        rows = np.asarray(candidate_rows)
    except (TypeError, ValueError):
        raise InputError("the query and candidate vectors must be numeric arrays") from None
    if q.ndim == 2 and q.shape[0] == 1:
        q = q[0]
    if q.ndim != 1:
        raise InputError(f"the query vector has shape {q.shape}; give one vector (d,)")
    if x.ndim != 2 or x.shape[1] != q.shape[0]:
        if not (x.size == 0 and x.ndim in (1, 2)):
            raise InputError(f"candidate vectors have shape {x.shape}; expected (n, {q.shape[0]})")
        x = x.reshape(0, q.shape[0])
    if rows.ndim != 1 or len(rows) != len(x):
        raise InputError(f"{rows.size} candidate rows for {len(x)} candidate vectors")
    if rows.size and not np.issubdtype(rows.dtype, np.integer):
        raise InputError(f"candidate rows must be integers, not {rows.dtype}")
    rows = rows.astype(np.int64)
    real = rows >= 0
    if not real.all():
        if (rows < -1).any():
            raise InputError("candidate rows must be ≥ 0 (or -1 for padding)")
        x, rows = x[real], rows[real]
    if not (np.isfinite(q).all() and np.isfinite(x).all()):
        raise InputError("a query or candidate vector has NaN or inf")
    return q, x, rows
