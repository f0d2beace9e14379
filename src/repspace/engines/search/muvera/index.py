"""Multi-vector search over arrays: MUVERA candidates by FDE inner product, then exact Chamfer reranking.

Owns :class:`MultiVectorIndex` (build, search, exact search) and the
reranking of each query's shortlist, one step per distinct shortlisted
document.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import exact_search as _exact_ip_search
from repspace.engines.search.muvera.chamfer import _chamfer_blocks, _concat, _settle
from repspace.engines.search.muvera.fde import FDEConfig, _check_config, _check_sets, fde_documents, fde_queries

__all__ = ["MultiVectorIndex"]


class MultiVectorIndex:
    """Multi-vector search over arrays: MUVERA candidates, then exact Chamfer reranking.

    Build it with :meth:`build`. :meth:`search` finds ``candidates``
    documents per query by exact inner-product search over the documents'
    FDEs and reranks them by Chamfer similarity; :meth:`exact_search`
    computes Chamfer similarity against every document (the reference).

    Attributes
    ----------
    config : FDEConfig
    fdes_ : numpy.ndarray
        ``(n_docs, config.fde_dim)`` float32 document encodings.
    tokens_ : numpy.ndarray
        Every document vector, ``(total tokens, dim)`` float32.
    offsets_ : numpy.ndarray
        Document ``i`` is ``tokens_[offsets_[i]:offsets_[i + 1]]``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> docs = [rng.standard_normal((5, 4)).astype("float32") for _ in range(20)]
    >>> index = MultiVectorIndex.build(docs, FDEConfig(dim=4, k_sim=2, d_proj=4, reps=4))
    >>> len(index), index.fdes_.shape
    (20, (20, 64))
    >>> scores, rows = index.search([docs[7][:3]], k=2, candidates=20)  # every doc is a candidate: exact
    >>> rows.tolist() == index.exact_search([docs[7][:3]], k=2)[1].tolist()
    True
    """

    def __init__(self, config: FDEConfig, fdes: np.ndarray, tokens: np.ndarray, offsets: np.ndarray) -> None:
        self.config = config
        self.fdes_ = fdes
        self.tokens_ = tokens
        self.offsets_ = offsets

    @classmethod
    def build(cls, token_sets: Sequence[np.ndarray], config: FDEConfig | None = None) -> MultiVectorIndex:
        """Encode the documents and keep their vectors for reranking.

        Parameters
        ----------
        token_sets : list of (n_i, dim) arrays
            One set per document; document ``i`` is row ``i`` of the results.
        config : FDEConfig or None, optional
            ``None``: ``FDEConfig(dim)`` with the defaults.

        Returns
        -------
        MultiVectorIndex

        Raises
        ------
        InputError
            If there is no document, or a set is malformed.

        Examples
        --------
        >>> index = MultiVectorIndex.build([np.eye(3, dtype="float32")])
        >>> index.config.dim, index.fdes_.shape
        (3, (1, 2560))
        """
        if config is not None:
            _check_config(config)
        sets = _check_sets(token_sets, None if config is None else config.dim, "token_sets")
        if not sets:
            raise InputError("a MultiVectorIndex needs at least one document")
        config = config or FDEConfig(dim=sets[0].shape[1])
        tokens, offsets = _concat(sets, config.dim)
        return cls(config, fde_documents(config, sets), tokens, offsets)

    def __len__(self) -> int:
        return len(self.offsets_) - 1

    def __repr__(self) -> str:
        return f"MultiVectorIndex(n_docs={len(self)}, n_tokens={len(self.tokens_)}, config={self.config})"

    def _queries(self, query_token_sets: Any, k: int) -> list[np.ndarray]:
        check_scalar(k, "k", int, low=1)
        return _check_sets(query_token_sets, self.config.dim, "query_token_sets")

    def search(
        self, query_token_sets: Sequence[np.ndarray], k: int, *, candidates: int = 100, rerank: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` documents of each query: FDE candidates, reranked by Chamfer similarity.

        Parameters
        ----------
        query_token_sets : list of (n_i, dim) arrays
        k : int
            Results per query (fewer when the index holds fewer documents).
        candidates : int, optional
            Documents shortlisted by FDE inner product (``>= k``).
        rerank : bool, optional
            ``False`` returns the FDE shortlist's top ``k`` with FDE scores.

        Returns
        -------
        scores : (m, k') float32
            Chamfer similarities (or FDE inner products), descending; equal
            scores go to the lower document.
        indices : (m, k') int64
            Document rows.

        Raises
        ------
        InputError
            If ``k`` or ``candidates`` is not a positive integer, or
            ``candidates < k``.

        Examples
        --------
        >>> docs = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[0.7, 0.7]])]
        >>> index = MultiVectorIndex.build(docs, FDEConfig(dim=2, k_sim=1, d_proj=None, reps=2))
        >>> scores, rows = index.search([np.array([[0.0, 1.0]])], k=2, candidates=3)
        >>> rows.tolist(), scores.astype(float).round(2).tolist()
        ([[1, 2]], [[1.0, 0.7]])
        """
        queries = self._queries(query_token_sets, k)
        check_scalar(candidates, f"candidates (k={k})", int, low=k)
        if not queries:
            return np.empty((0, min(k, len(self))), np.float32), np.empty((0, min(k, len(self))), np.int64)
        fq = fde_queries(self.config, queries)
        fde_scores, rows = _exact_ip_search(fq, self.fdes_, int(candidates), metric="ip")
        if not rerank:
            return fde_scores[:, :k], rows[:, :k]
        return _settle(queries, self.tokens_, self.offsets_, self._rerank(queries, rows), rows, k)

    def _rerank(self, queries: list[np.ndarray], rows: np.ndarray) -> np.ndarray:
        """Chamfer scores of each query's shortlisted documents, ``(m, candidates)`` float64,
        from float32 products (:func:`_settle` scores the best again exactly).

        One step per distinct shortlisted document (not per query and document): the
        tokens of every query that shortlisted it, stacked, times the document's tokens,
        which lie contiguous in :attr:`tokens_` (nothing is copied on the document side).
        """
        m, c = rows.shape
        scores = np.zeros((m, c), dtype=np.float64)  # an empty query scores 0 everywhere
        q_all, q_off = _concat(queries, self.config.dim)
        q_len = np.diff(q_off)
        flat_doc = rows.ravel()
        flat_query = np.repeat(np.arange(m), c)
        keep = np.flatnonzero(q_len[flat_query] > 0)
        order = keep[np.argsort(flat_doc[keep], kind="stable")]
        if not len(order):
            return scores
        docs = flat_doc[order]
        bounds = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1], True])
        out = scores.reshape(-1)  # a view: one entry per (query, candidate)
        for lo, hi in pairwise(bounds.tolist()):
            doc, pairs = docs[lo], order[lo:hi]
            tokens = self.tokens_[self.offsets_[doc] : self.offsets_[doc + 1]]
            if not len(tokens):
                out[pairs] = -np.inf
                continue
            who = flat_query[pairs]  # the queries that shortlisted this document
            lengths = q_len[who]
            starts = np.r_[0, np.cumsum(lengths)[:-1]]
            index = np.repeat(q_off[who] - starts, lengths) + np.arange(lengths.sum())
            best = (q_all[index] @ tokens.T).max(axis=1)  # per query token: its best match here
            out[pairs] = np.add.reduceat(best.astype(np.float64), starts)
        return scores

    def exact_search(self, query_token_sets: Sequence[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact top ``k`` by Chamfer similarity against every document (brute force).

        Parameters
        ----------
        query_token_sets : list of (n_i, dim) arrays
        k : int

        Returns
        -------
        scores : (m, k') float32
            Chamfer similarities, descending; equal scores go to the lower document.
        indices : (m, k') int64

        Examples
        --------
        >>> docs = [np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [0.6, 0.8]])]
        >>> index = MultiVectorIndex.build(docs, FDEConfig(dim=2, k_sim=1, d_proj=None, reps=1))
        >>> scores, rows = index.exact_search([np.array([[0.0, 1.0], [1.0, 0.0]])], k=2)
        >>> rows.tolist(), scores.astype(float).round(2).tolist()
        ([[1, 0]], [[1.6, 1.0]])
        """
        queries = self._queries(query_token_sets, k)
        scores = _chamfer_blocks(queries, self.tokens_, self.offsets_)
        empty = np.array([len(q) == 0 for q in queries], dtype=bool)
        scores[empty] = 0.0
        rows = np.broadcast_to(np.arange(len(self)), scores.shape)
        return _settle(queries, self.tokens_, self.offsets_, scores, rows, k)
