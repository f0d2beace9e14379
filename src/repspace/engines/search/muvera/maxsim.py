"""Exact MaxSim (late interaction): one function for exact search, MUVERA shortlists and any given shortlist.

MaxSim is ColBERT's late-interaction score (Khattab & Zaharia 2020, eq. 3), the same as
:func:`~repspace.engines.search.muvera.chamfer.chamfer`: for each query token the largest dot
product with any document token, summed over the query tokens,
``S(q, d) = Σ_i max_j <q_i, d_j>``. No normalisation happens in the score: as in ColBERT and
PyLate (``pylate.scores.colbert_scores``), token vectors are L2-normalised when they are made
(:func:`repspace.engines.encoders.tokens.encode_tokens` with ``normalize=True``, PyLate's model
does the same), so each dot product is a cosine and the score lies in ``[-n_q, n_q]``.

:func:`maxsim_search` is the one entry point for the three ways to use it:

* ``candidates=None, shortlist=None``: exact MaxSim against every document (brute force);
* ``candidates=c``: MUVERA's first stage (the ``c`` best documents by FDE inner product), rescored
  by exact MaxSim;
* ``shortlist=rows``: rescore the documents another first stage found (a dense single-vector
  search, BM25, ...), ``rows`` per query, ``-1`` for padding.

Every path ends with the same float64 pass (:func:`~repspace.engines.search.muvera.chamfer._settle`):
scores and order do not depend on the CPU or on which path found the documents, so a rescored
shortlist that holds the exact top ``k`` returns exactly :meth:`MultiVectorIndex.exact_search`'s answer.

Examples
--------
>>> import numpy as np
>>> from repspace.engines.search.muvera import FDEConfig, MultiVectorIndex
>>> docs = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[0.6, 0.8], [1.0, 0.0]])]
>>> index = MultiVectorIndex.build(docs, FDEConfig(dim=2, k_sim=1, d_proj=None, reps=2))
>>> q = [np.array([[0.0, 1.0], [1.0, 0.0]])]
>>> scores, rows = maxsim_search(index, q, k=2)  # exact over every document
>>> rows.tolist(), scores.astype(float).round(2).tolist()
([[2, 0]], [[1.8, 1.0]])
>>> maxsim_search(index, q, k=2, shortlist=np.array([[1, 0]]))[1].tolist()  # rescore a given shortlist
[[0, 1]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.search.muvera.chamfer import _chamfer64
from repspace.engines.search.muvera.fde import _check_sets
from repspace.engines.search.muvera.index import MultiVectorIndex

__all__ = ["maxsim_search"]


def _check_shortlist(shortlist: object, m: int, n_docs: int) -> np.ndarray:
    """``shortlist`` as an ``(m, c)`` int64 array of document rows in ``[0, n_docs)`` or ``-1``."""
    arr = np.asarray(shortlist)
    if arr.ndim == 1 and m == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] != m or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise InputError(f"shortlist must be an (n_queries={m}, c) array of document rows, "
                         f"not {arr.dtype} of shape {arr.shape}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < -1 or arr.max() >= n_docs):
        raise InputError(f"shortlist rows must be document rows in [0, {n_docs}) or -1 (padding)")
    return arr


def _rescore(index: MultiVectorIndex, queries: list[np.ndarray], shortlist: np.ndarray,
             k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each query's shortlisted documents (``-1`` and repeats dropped) by exact MaxSim, best ``k`` first."""
    m = len(queries)
    kept = [np.unique(r[r >= 0]) for r in shortlist]
    kk = min(k, max((len(r) for r in kept), default=0))
    out_s = np.full((m, kk), -np.inf, np.float32)
    out_r = np.full((m, kk), -1, np.int64)
    for i, (query, rows) in enumerate(zip(queries, kept)):
        if not len(rows):
            continue
        exact = _chamfer64(query, index.tokens_, index.offsets_, rows)
        order = np.lexsort((rows, -exact))[:kk]
        out_s[i, : len(order)], out_r[i, : len(order)] = exact[order], rows[order]
    return out_s, out_r


def maxsim_search(
    index: MultiVectorIndex,
    query_token_sets: Sequence[np.ndarray],
    k: int,
    *,
    candidates: int | None = None,
    shortlist: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The best ``k`` documents of each query by exact MaxSim: over every document, a MUVERA shortlist or yours.

    Parameters
    ----------
    index : MultiVectorIndex
        The documents' token vectors (and their FDEs for ``candidates``).
    query_token_sets : list of (n_i, dim) arrays
        One token set per query (L2-normalised rows, as ColBERT's and :func:`encode_tokens`'s).
    k : int
        Results per query (fewer when fewer documents are searched).
    candidates : int, optional
        Rescore MUVERA's shortlist of this many documents per query (``>= k``).
    shortlist : (n_queries, c) int array, optional
        Rescore these document rows per query (``-1`` pads a short row; a repeated row counts once).
        Not with ``candidates``.

    Returns
    -------
    scores : (m, k') float32
        MaxSim scores (each settled in float64), descending; equal scores go to the lower document.
        A shortlist row with fewer than ``k'`` documents is padded with ``-inf``.
    rows : (m, k') int64
        Document rows (``-1`` where padded).

    Raises
    ------
    InputError
        If ``k`` or ``candidates`` is not a positive integer, ``candidates < k``, both
        ``candidates`` and ``shortlist`` are given, or ``shortlist`` names no document row.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.engines.search.muvera import FDEConfig, MultiVectorIndex
    >>> rng = np.random.default_rng(0)
    >>> docs = [rng.standard_normal((4, 8)) for _ in range(30)]
    >>> index = MultiVectorIndex.build(docs, FDEConfig(dim=8, k_sim=2, d_proj=8, reps=4))
    >>> q = [docs[5][:2]]
    >>> exact = maxsim_search(index, q, k=3)
    >>> via_muvera = maxsim_search(index, q, k=3, candidates=30)  # every document shortlisted: exact
    >>> bool(np.array_equal(exact[1], via_muvera[1])), int(exact[1][0, 0])
    (True, 5)
    """
    check_scalar(k, "k", int, low=1)
    if candidates is not None and shortlist is not None:
        raise InputError("give candidates (a MUVERA shortlist) or shortlist (your own), not both")
    if candidates is not None:
        return index.search(query_token_sets, k, candidates=candidates)
    if shortlist is None:
        return index.exact_search(query_token_sets, k)
    queries = _check_sets(query_token_sets, index.config.dim, "query_token_sets")
    rows = _check_shortlist(shortlist, len(queries), len(index))
    if not queries:
        return np.empty((0, 0), np.float32), np.empty((0, 0), np.int64)
    return _rescore(index, queries, rows, k)

