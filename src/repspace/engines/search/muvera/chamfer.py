"""Chamfer (max-sim) similarity of token sets: blocked float32 scoring and the float64 pass that settles the order.

Owns :func:`chamfer` and :func:`chamfer_scores`, the blocked scoring of many
queries against many documents, and the final ordering of a query's best
documents, scored again in float64 one pair at a time so that order and ties
do not depend on the CPU (:data:`TIE_BAND`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from repspace.core.limits import TIE_BAND_FLOAT32
from repspace.engines.search.muvera.fde import _batches, _check_sets

__all__ = ["TIE_BAND", "chamfer", "chamfer_scores"]

#: Documents whose Chamfer score from float32 matrix products is among a query's best ``k`` or
#: within this relative distance of the k-th are scored again in float64 before the final order
#: is taken: the float32 tie band of every exact search (:mod:`repspace.core.limits`).
TIE_BAND = TIE_BAND_FLOAT32


def _concat(sets: list[np.ndarray], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """All tokens in one array and the item offsets (``len(sets) + 1``)."""
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in sets])
    tokens = np.concatenate(sets) if sets else np.zeros((0, dim), np.float32)
    return np.ascontiguousarray(tokens, dtype=np.float32), offsets


def _chamfer_blocks(queries: list[np.ndarray], tokens: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``(m, n)`` Chamfer scores of queries against the items ``tokens[offsets[i]:offsets[i+1]]``.

    Blocks of documents: one matrix product of every query token against the
    block's tokens, a segment maximum per document, a segment sum per query.
    """
    m, n = len(queries), len(offsets) - 1
    scores = np.zeros((m, n), dtype=np.float64)
    lengths = np.diff(offsets)
    scores[:, lengths == 0] = -np.inf  # nothing to match: ranked last
    q_all, q_off = _concat(queries, tokens.shape[1])
    q_len = np.diff(q_off)
    if n == 0 or m == 0 or len(q_all) == 0:
        return scores
    q_has = np.flatnonzero(q_len > 0)
    for lo, hi in _batches(lengths, max(1, len(q_all))):
        sub = np.flatnonzero(lengths[lo:hi] > 0) + lo
        if not len(sub):
            continue
        sims = q_all @ tokens[offsets[lo] : offsets[hi]].T  # (query tokens, block tokens)
        best = np.maximum.reduceat(sims, offsets[sub] - offsets[lo], axis=1)  # (query tokens, docs)
        scores[np.ix_(q_has, sub)] = np.add.reduceat(best.astype(np.float64), q_off[q_has], axis=0)
    return scores


def chamfer(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """Chamfer (max-sim) similarity: ``Σ_q max_p <q, p>``.

    Parameters
    ----------
    query_tokens : (m, d) array
    doc_tokens : (n, d) array

    Returns
    -------
    float
        ``0.0`` for an empty query; ``-inf`` for an empty document with a
        non-empty query (no vector to match).

    Examples
    --------
    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> d = np.array([[0.5, 0.5], [2.0, 0.0]])
    >>> chamfer(q, d)  # max(0.5, 2) + max(0.5, 0)
    2.5
    """
    return float(chamfer_scores(query_tokens, [doc_tokens])[0])


def chamfer_scores(query_tokens: np.ndarray, docs: Sequence[np.ndarray]) -> np.ndarray:
    """Chamfer similarity of one query against each of several documents.

    Parameters
    ----------
    query_tokens : (m, d) array
    docs : list of (n_i, d) arrays

    Returns
    -------
    numpy.ndarray
        ``(len(docs),)`` float64 (``-inf`` for empty documents; see :func:`chamfer`).

    Examples
    --------
    >>> q = np.array([[1.0, 0.0]])
    >>> chamfer_scores(q, [np.array([[0.25, 1.0]]), np.array([[0.5, 0.0], [0.125, 0.0]])]).tolist()
    [0.25, 0.5]
    """
    (q,) = _check_sets([query_tokens], None, "query_tokens")
    sets = _check_sets(docs, q.shape[1], "docs")
    tokens, offsets = _concat(sets, q.shape[1])
    scores = _chamfer_blocks([q], tokens, offsets)[0]
    if len(q) == 0:
        scores[:] = 0.0
    return scores


def _chamfer64(query: np.ndarray, tokens: np.ndarray, offsets: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Chamfer similarity of one query against documents ``docs``, in float64, one pair at a time.

    ``einsum`` sums every dot product in one fixed order, so a document's score does not
    depend on where it sits or on the CPU (a BLAS product's rounding does): duplicates tie
    exactly. An empty query scores 0, an empty document ``-inf``.
    """
    q64 = query.astype(np.float64)
    out = np.empty(len(docs), dtype=np.float64)
    for j, doc in enumerate(docs.tolist()):
        doc_tokens = tokens[offsets[doc] : offsets[doc + 1]]
        if not len(q64):
            out[j] = 0.0
        elif not len(doc_tokens):
            out[j] = -np.inf
        else:
            out[j] = np.einsum("id,jd->ij", q64, doc_tokens.astype(np.float64)).max(axis=1).sum()
    return out


def _settle(
    queries: list[np.ndarray], tokens: np.ndarray, offsets: np.ndarray, approx: np.ndarray, rows: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` of each query's documents ``rows`` by (Chamfer score desc, document asc).

    ``approx`` are the documents' scores from float32 matrix products, ``(m, c)`` like
    ``rows``. Each query's best ``k`` by them and every document within :data:`TIE_BAND` of
    the k-th are scored again by :func:`_chamfer64`, which decides order and scores: the
    result is the same on every CPU and for every batching.
    """
    m, c = rows.shape
    kk = min(k, c)
    out_s = np.empty((m, kk), np.float32)
    out_r = np.empty((m, kk), np.int64)
    if kk == 0:
        return out_s, out_r
    for i, query in enumerate(queries):
        a = approx[i]
        kth = np.partition(a, c - kk)[c - kk]
        near = np.flatnonzero(a >= kth - TIE_BAND * (abs(kth) + 1.0)) if np.isfinite(kth) else np.arange(c)
        docs = rows[i, near]
        exact = _chamfer64(query, tokens, offsets, docs)
        order = np.lexsort((docs, -exact))[:kk]
        out_s[i], out_r[i] = exact[order], docs[order]
    return out_s, out_r
