"""Length-aware MMR (DL-MMR): diversify the *lengths* of the picks instead of their vectors.

Do et al., "Considering Length Diversity in Retrieval-Augmented Summarization"
(NAACL Findings 2025, S186). Plain MMR (:mod:`repspace.engines.search.mmr`)
compares every candidate with every pick (an ``n × k`` block of similarities);
DL-MMR keeps one number per candidate, its length, and rewards candidates whose
length is far from every length already picked. Having picked ``S``, pick next

    argmax_d  λ·rel'(d) + (1 − λ)·min_{s ∈ S} |len'(d) − len'(s)|

where ``rel'`` is the relevance to the query and ``len'`` the length, each scaled
to [0, 1] by its minimum and maximum over the candidates (the authors' code
scales both the same way). The first pick is the most relevant candidate.

Two conventions differ from the authors' code (``retrieving`` in
``JuseonDo/DL-MMR/src/rag_utils/retriever_utils.py``): there λ weights the
length term and distances are minimised (here λ weights relevance, as in our
MMR, so ``λ = 1`` is the plain ranking); and their loop multiplies the distance
by ``(1 − λ)`` once more at every step, which we read as a slip and do not copy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.arrays import unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.space import Metric
from repspace.engines.search.mmr import _check


def _scaled(values: np.ndarray) -> np.ndarray:
    """``values`` mapped to [0, 1] by their minimum and maximum; all equal: all 0."""
    span = float(values.max() - values.min()) if len(values) else 0.0
    return (values - values.min()) / span if span > 0 else np.zeros_like(values)


def length_mmr(
    query_vector: Any,
    candidate_vectors: Any,
    candidate_rows: Any,
    lengths: Any,
    k: int,
    *,
    lambda_: float = 0.5,
    metric: Metric | str = "cosine",
) -> tuple[np.ndarray, np.ndarray]:
    """Pick ``k`` candidates by length-aware MMR (DL-MMR); ``(scores, rows)`` as
    :func:`~repspace.engines.search.mmr.mmr` returns them.

    Parameters
    ----------
    query_vector, candidate_vectors, candidate_rows, k, metric
        As :func:`~repspace.engines.search.mmr.mmr` (a row of ``-1`` is padding, skipped with its length).
    lengths : (n,) array of finite numbers ≥ 0
        Each candidate's length (words, characters, tokens: any unit, it is rescaled).
    lambda_ : float in [0, 1]
        Weight of relevance against length diversity; 1 is the plain ranking.

    Returns
    -------
    scores : (k',) float32, each pick's relevance as the metric reports it
    rows : (k',) int64, in pick order; equal values go to the lower row.

    Examples
    --------
    Rows 10 and 11 are the most relevant and equally long; 12 is less relevant but much longer:

    >>> q = np.array([1.0, 0.0])
    >>> x = np.array([[1.0, 0.05], [1.0, 0.06], [0.6, -0.8]])
    >>> length_mmr(q, x, [10, 11, 12], [20, 21, 200], k=2, lambda_=1.0)[1].tolist()
    [10, 11]
    >>> length_mmr(q, x, [10, 11, 12], [20, 21, 200], k=2, lambda_=0.4)[1].tolist()
    [10, 12]
    """
    check_scalar(k, "k", int, low=1)
    check_scalar(lambda_, "lambda_", float, low=0, high=1)
    metric = Metric.parse(metric)
    metric.require_vector_space("DL-MMR diversification")
    try:
        lens = np.asarray(lengths, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("the candidate lengths must be numbers") from None
    raw_rows = np.asarray(candidate_rows)
    if lens.ndim != 1 or len(lens) != raw_rows.size:
        raise InputError(f"{lens.size} lengths for {raw_rows.size} candidates")
    if not np.isfinite(lens).all() or (lens < 0).any():
        raise InputError("a candidate length is negative, NaN or inf")
    q, x, rows = _check(query_vector, candidate_vectors, candidate_rows)
    if len(rows) < raw_rows.size:  # padding rows were dropped with their vectors
        lens = lens[raw_rows.astype(np.int64) >= 0]
    lam = float(lambda_)
    if metric is Metric.COSINE:
        q = unit_rows(q[None, :])[0]
        x = unit_rows(x)
    # one fixed summation per candidate (einsum), as mmr: copies of a vector tie exactly
    rel = -np.sqrt(((x - q) ** 2).sum(axis=1)) if metric is Metric.L2 else np.einsum("ij,j->i", x, q)
    rel_s, len_s = _scaled(rel), _scaled(lens)
    n = len(rows)
    kk = min(int(k), n)
    picked = np.empty(kk, np.int64)
    chosen = np.zeros(n, bool)
    gap = np.zeros(n)  # smallest scaled length difference to a pick
    for step in range(kk):
        score = rel.copy() if step == 0 else lam * rel_s + (1.0 - lam) * gap
        score[chosen] = -np.inf
        best = np.flatnonzero(score == score.max())
        j = best[np.argmin(rows[best])]
        picked[step], chosen[j] = j, True
        diff = np.abs(len_s - len_s[j])
        gap = diff if step == 0 else np.minimum(gap, diff)
    out = rel[picked]
    return (-out if metric is Metric.L2 else out).astype(np.float32), rows[picked]
