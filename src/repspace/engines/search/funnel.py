"""Funnel indexes over plain arrays: a compact first stage, then an optional exact rerank.

A :class:`FunnelIndex` is described by an index spec (:mod:`repspace.engines.search.specs`),
for example ``"int8>rescore4"``: the first stage holds compact codes in memory
(int8, sign bits, PCA or prefix dimensions, IVF-PQ codes, or full vectors in a
graph) labelled by the space's *rows*; it shortlists ``k·F`` candidates, whose full
float vectors the caller reads (``fetch(rows)``, typically from the store) and which
are rescored exactly, in float64, with the tie rule of
:func:`~repspace.core.exact.exact_search`. This is the two-tier design of BiDR and
the rescoring recipe of sentence-transformers (binary/int8 retrieval, float
rescoring); ``pca64>rerank``/``prefix64>rerank`` are AdANNS' funnel (shortlist on low
dimensions, rerank on all).

Scores follow the space's convention: similarities (``cosine``, ``ip``) descending,
Euclidean distances (``l2``) ascending, equal scores to the lower row; where fewer
than ``k`` rows are found the row is -1 and the score ``-inf`` (similarities) or
``+inf`` (distances). Without a refine stage the scores are the first stage's own
approximations: inner products / Euclidean distances of the codes or the reduced
vectors, and for ``binary`` the Hamming distance ``h`` (``l2``) or the sign agreement
``1 - 2h/d`` (``cosine``, ``ip``).

Every kind honours an ``allowed`` row mask through a FAISS ``IDSelectorBitmap``
(FAISS 1.15 supports selectors in every index used here, ``IndexBinaryFlat``
included). Kinds listed in :data:`NO_SELECTOR_KINDS` are filtered here instead, by
asking for more candidates until enough allowed ones are found.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> x = rng.standard_normal((2000, 16)).astype("float32")
>>> ix = FunnelIndex("int8>rescore4", dim=16, metric="cosine").train(x)
>>> ix.add(x, np.arange(2000))
>>> scores, rows = ix.search(x[:2], k=3, fetch=lambda r: x[r])
>>> rows[:, 0].tolist(), np.round(scores[:, 0], 4).tolist()
([0, 1], [1.0, 1.0])
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.space import Metric
from repspace.core.threads import one_faiss_thread
from repspace.core.limits import FUNNEL_RESCORE_ENTRIES, TIE_BAND_FLOAT32
from repspace.engines.search._stages import Flat, Stage, stage_for
from repspace.engines.search.hnsw import prepare
from repspace.engines.search.specs import IndexSpec, parse_spec

__all__ = ["Fetch", "FunnelIndex"]

#: ``fetch(rows) -> (len(rows), dim) float32``: full vectors of sorted, distinct rows.
Fetch = Callable[[np.ndarray], np.ndarray]

#: Kinds whose FAISS index ignores ``SearchParameters.sel``: filtered here by expansion.
NO_SELECTOR_KINDS: frozenset[str] = frozenset()
#: Largest number of values (rows × dim) fetched for one rescoring call (64 Mi: 256 MiB of float32).
FETCH_ENTRIES = 64 * 1024 * 1024


class FunnelIndex:
    """An in-memory first stage (per ``spec``) labelled by rows, with an optional exact rerank.

    Parameters
    ----------
    spec : IndexSpec or str
        For example ``"hnsw32"``, ``"int8>rescore4"``, ``"pca64,hnsw32>rerank"``.
    dim : int
        Dimension of the full vectors.
    metric : ``cosine``, ``ip`` or ``l2``
        ``cosine`` normalises every vector first (and renormalises a Matryoshka prefix).

    Notes
    -----
    What each kind holds, and how FAISS searches it, is its *stage*
    (:mod:`repspace.engines.search._stages`, one class per kind): ``exact`` an
    ``IndexFlat``; ``hnsw`` an ``IndexHNSWFlat``; ``int8`` an
    ``IndexScalarQuantizer(QT_8bit)`` with per-dimension ranges from :meth:`train`;
    ``binary`` an ``IndexBinaryFlat`` over the sign bits ``x > 0``; ``pca``/``prefix`` an
    ``IndexFlat`` or ``IndexHNSWFlat`` over the reduced vectors (PCA uncentred, cosine
    renormalised); with ``int8``/``fp16`` codes (``hnsw32,int8``, ``pca128,hnsw32,fp16``)
    an ``IndexScalarQuantizer`` or ``IndexHNSWSQ`` instead; ``ivfpq`` FAISS'
    ``IVF{nlist},PQ{pq_m}`` (``OPQ{m},IVF{nlist},PQ{pq_m}`` with ``opqM``: the learned
    rotation in an ``IndexPreTransform``); ``prefixD,ivfN`` an ``IVF{N},Flat`` over the
    prefixes (AdANNS). Float and binary indexes sit in an
    ``IndexIDMap``/``IndexBinaryIDMap`` (not ``IDMap2``: nothing is reconstructed, and
    the reverse hash map would cost more per vector than an int8 or binary code); IVF
    keeps row labels in its lists. This class runs the funnel around the stage: masks,
    the shortlist, the exact rerank, the file.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.standard_normal((1000, 12)).astype("float32")
    >>> ix = FunnelIndex("prefix6>rerank5", 12, "l2")
    >>> ix.add(x, np.arange(1000) + 100)
    >>> calls = []
    >>> def fetch(rows):
    ...     calls.append(len(rows))
    ...     return x[rows - 100]
    >>> s, r = ix.search(x[7], k=2, fetch=fetch)
    >>> int(r[0, 0]), float(s[0, 0]), calls
    (107, 0.0, [10])
    """

    def __init__(self, spec: IndexSpec | str, dim: int, metric: Metric | str) -> None:
        self.spec = parse_spec(spec)
        self.dim = check_scalar(dim, "dimension", int, low=1)
        self.metric = Metric.parse(metric)
        self.metric.require_vector_space(f"index {str(self.spec)!r}")
        #: What the first stage holds and how FAISS searches it (one class per kind).
        self.stage: Stage = stage_for(self.spec, self.dim, self.metric)
        self.index: Any = None  # the FAISS index searched (IDMap / binary IDMap / IVF)
        self._labels: np.ndarray | None = None  # graph kinds: row of each stored vector (cache)
        self._owner: Any = None  # keeps a loaded IndexPreTransform (owner of the parts) alive
        if not self.spec.needs_training:
            self.index = self.stage.empty()

    def __repr__(self) -> str:
        return (f"FunnelIndex({str(self.spec)!r}, dim={self.dim}, metric={self.metric.value}, "
                f"ntotal={self.ntotal})")

    # -- structure -----------------------------------------------------------------------

    @property
    def reduced_dim(self) -> int:
        """Dimension of what the first stage compares (``dims`` for pca/tldr/prefix, else ``dim``)."""
        return self.stage.reduced_dim

    @property
    def pca_(self) -> Any:
        """The trained ``faiss.PCAMatrix`` of a ``pca`` index, ``LinearTransform`` of a ``tldr`` one (else None)."""
        return getattr(self.stage, "pca", None)

    @property
    def _proj(self) -> np.ndarray | None:
        """The ``(dims, dim)`` float32 projection of a ``pca``/``tldr`` index (the transform's ``A``)."""
        return getattr(self.stage, "proj", None)

    @property
    def is_trained(self) -> bool:
        """Whether :meth:`add` may be called (kinds that need no training always are)."""
        return self.index is not None

    @property
    def ntotal(self) -> int:
        """Number of vectors held."""
        return 0 if self.index is None else int(self.index.ntotal)

    # -- training and adding ---------------------------------------------------------------

    def train(self, x: np.ndarray) -> FunnelIndex:
        """Fit what the first stage needs (int8 ranges, PCA, TLDR, IVF-PQ) on sample vectors.

        A no-op for kinds that need no training. Training again discards the vectors
        held. IVF needs at least ``nlist`` vectors and PQ at least 256 (its codebooks
        have 256 entries); PCA at least ``dims``. Returns ``self``.

        Examples
        --------
        >>> x = np.random.default_rng(2).standard_normal((300, 8)).astype("float32")
        >>> FunnelIndex("pca4>rerank", 8, "ip").train(x).is_trained
        True
        """
        if not self.spec.needs_training:
            return self
        self.index = self.stage.train(prepare(self._check(x, "training vectors"), self.metric))
        return self

    def add(self, x: np.ndarray, rows: np.ndarray) -> None:
        """Add full vectors (raw; normalised here for cosine) labelled by the given rows.

        Examples
        --------
        >>> ix = FunnelIndex("binary", 10, "cosine")
        >>> ix.add(np.eye(10, dtype="float32"), np.arange(10))
        >>> ix.ntotal
        10
        """
        x = self._check(x, "vectors")
        labels = np.asarray(rows)
        if labels.ndim != 1 or labels.shape[0] != x.shape[0]:
            raise InputError(f"rows must be one label per vector ({x.shape[0]}), not shape {labels.shape}")
        if labels.size and (not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0):
            raise InputError("rows must be non-negative integers")
        if not self.is_trained:
            raise InputError(f"{self.spec} must be trained before vectors are added: call train(x) first")
        if not len(labels):
            return
        codes = self.stage.encode(prepare(x, self.metric))
        self.index.add_with_ids(codes, np.ascontiguousarray(labels, dtype=np.int64))

    def _check(self, x: Any, what: str) -> np.ndarray:
        try:
            a = np.asarray(x, dtype=np.float32)
        except (TypeError, ValueError):
            raise InputError(f"{what} are not numeric") from None
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.dim:
            raise InputError(f"{what} have shape {a.shape}; this index has dimension {self.dim}")
        if not np.isfinite(a).all():
            raise InputError(f"{what} contain NaN or inf")
        return a

    # -- search ------------------------------------------------------------------------------

    def with_search_params(self, spec: IndexSpec | str) -> FunnelIndex:
        """A view of this index that searches with another spec's search-time parameters.

        Specs sharing a :attr:`IndexSpec.slug` store the same codes and differ
        only in the refine factor, ``ef`` or ``nprobe``; the view shares the
        codes (no copy) and uses ``spec`` for those.

        Examples
        --------
        >>> ix = FunnelIndex("int8>rescore4", 4, "l2")
        >>> str(ix.with_search_params("int8>rescore20").spec)
        'int8>rescore20'
        """
        spec = parse_spec(spec)
        if spec.slug != self.spec.slug:
            raise InputError(f"{spec} does not share the stored codes of {self.spec} ({self.spec.slug})")
        view = copy.copy(self)
        view.spec = spec
        return view

    def search(
        self,
        q: np.ndarray,
        k: int,
        *,
        allowed: np.ndarray | None = None,
        fetch: Fetch | None = None,
        ef: int | None = None,
        prepared: bool = False,
        vectors: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows of each query: ``(scores (m, k) float32, rows (m, k) int64)``.

        Parameters
        ----------
        q : (m, dim) or (dim,) array
        k : int
            Results per query; the first stage shortlists ``k·F`` with a refine stage.
        allowed : bool array over rows, optional
            Only rows ``r`` with ``allowed[r]`` are returned; rows beyond its length are
            excluded. For graph and IVF kinds the beam (``ef``) or ``nprobe`` is widened by
            ``ntotal / allowed rows`` (up to :data:`MAX_EF` / all lists) so that selective
            masks still find their rows; graph kinds search a mask that keeps at most
            :data:`FLAT_MAX_SHARE` of the rows (or no more than the beam) by brute force
            over the vectors the graph holds.
        fetch : callable, required with a refine stage
            ``fetch(rows)`` returns the full float vectors of the sorted, distinct
            ``rows`` (as stored: raw, not normalised). It is called once per group of
            queries (see :data:`FETCH_ENTRIES`) for the union of their shortlists.
        ef : int, optional
            HNSW beam for graph kinds (default: the spec's ``ef``, else :data:`DEFAULT_EF`;
            at least the shortlist size). Ignored by other kinds.
        prepared : bool
            ``fetch`` returns vectors already as searched (normalised for ``cosine``), so
            they are used as they are.
        vectors : (rows, dim) float32 array, optional
            Instead of ``fetch``: every row's vector as searched (normalised for
            ``cosine``), C-contiguous; a read-only ``np.memmap`` is the intended use.
            The shortlist is scored in place by FAISS (``fvec_inner_products_by_idx`` /
            ``fvec_L2sqr_by_idx``, parallel, no copy of the candidates' vectors); rows
            beyond its length are dropped.

        Examples
        --------
        >>> x = np.array([[1, 0], [0, 1], [1, 1]], dtype="float32")
        >>> ix = FunnelIndex("exact", 2, "l2")
        >>> ix.add(x, np.array([5, 6, 7]))
        >>> s, r = ix.search(np.array([1.0, 0.1]), k=4, allowed=np.arange(8) != 7)
        >>> r.tolist(), s.astype(float).round(3).tolist()
        ([[5, 6, -1, -1]], [[0.1, 1.345, inf, inf]])
        """
        sp = self.spec
        k = check_scalar(k, "k", int, low=1)
        if vectors is not None:
            if (not isinstance(vectors, np.ndarray) or vectors.dtype != np.float32 or vectors.ndim != 2
                    or vectors.shape[1] != self.dim or not vectors.flags.c_contiguous):
                raise InputError(f"vectors must be a C-contiguous float32 (rows, {self.dim}) array")
        if sp.refine_factor is not None and fetch is None and vectors is None:
            raise InputError(f"{sp} rescores a shortlist with the full vectors: pass fetch(rows) -> vectors")
        check_scalar(ef, "ef", int, low=1, none=True)
        queries = self._check(q, "query vectors")
        mask = None
        if allowed is not None:
            mask = np.asarray(allowed)
            if mask.ndim != 1 or mask.dtype != bool:
                raise InputError(f"allowed must be a 1-d boolean mask over rows, not {mask.dtype} {mask.shape}")
        m = queries.shape[0]
        kk = k * sp.refine_factor if sp.refine_factor is not None else k
        if not self.is_trained or self.ntotal == 0 or m == 0 or (mask is not None and not mask.any()):
            return self._padding(m, k)
        queries_p = prepare(queries, self.metric)
        with one_faiss_thread(m):  # one query: no OpenMP team to wake
            key, rows = self._first_stage(queries_p, kk, mask, ef)
        if sp.refine_factor is None:
            return self._finish(key, rows, k)
        if vectors is not None:
            return self._rescore_in_place(queries_p, rows, k, vectors)
        assert fetch is not None
        return self._rescore(queries_p, rows, k, fetch, prepared)

    def _padding(self, m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        fill = np.inf if self.metric is Metric.L2 else -np.inf
        return np.full((m, k), fill, np.float32), np.full((m, k), -1, np.int64)

    def _first_stage(
        self, q: np.ndarray, kk: int, mask: np.ndarray | None, ef: int | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Shortlist: (key: larger is nearer, float64; rows, -1 padded), (m, kk) each."""
        codes = self.stage.encode(q)
        n_allowed = self.ntotal if mask is None else int(np.count_nonzero(mask))
        if mask is not None and self.stage.uses_flat(n_allowed, self.ntotal, kk, ef, self.spec):
            dist, rows = self._graph_flat(codes, kk, mask)
            return self._key(dist, rows), rows
        params = self.stage.params(kk, ef, max(1.0, self.ntotal / max(n_allowed, 1)), self.spec)
        if mask is not None and self.spec.kind in NO_SELECTOR_KINDS:
            dist, rows = self._expand(codes, kk, mask, params)
        else:
            bitmap = None
            if mask is not None:
                bitmap = np.packbits(mask, bitorder="little")
                params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
            dist, rows = self.index.search(codes, kk, params=params)
            del bitmap  # kept alive until FAISS is done with it
            if mask is not None:  # never trust a selector blindly: drop anything outside the mask
                rows = np.where(_allowed(rows, mask), rows, -1)
        return self._key(dist, rows), rows.astype(np.int64)

    def _graph_flat(self, codes: np.ndarray, kk: int, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Selective masks on graph kinds: brute force over the allowed rows' vectors held by
        the graph (a beam wide enough to find them would visit more nodes than that)."""
        if self._labels is None or len(self._labels) != self.ntotal:
            self._labels = faiss.vector_to_array(self.index.id_map)
        labels = self._labels
        assert isinstance(self.stage, Flat)
        storage = self.stage.storage(self.index)
        bitmap = np.packbits(_allowed(labels, mask), bitorder="little")
        params = faiss.SearchParameters()
        params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
        dist, pos = storage.search(codes, kk, params=params)
        del bitmap
        return dist, np.where(pos >= 0, labels[np.maximum(pos, 0)], -1).astype(np.int64)

    def _expand(
        self, codes: np.ndarray, kk: int, mask: np.ndarray, params: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """Filter without a FAISS selector: ask for more candidates until ``kk`` allowed
        ones are found for every query or the index is exhausted."""
        m, n = codes.shape[0], self.ntotal
        out_d = np.zeros((m, kk), np.float64)
        out_r = np.full((m, kk), -1, np.int64)
        todo = np.arange(m)
        ask = min(n, max(2 * kk, int(kk * n / max(int(np.count_nonzero(mask)), 1))))
        while len(todo):
            dist, rows = self.index.search(codes[todo], ask, params=params)
            ok = _allowed(rows, mask)
            done = (ok.sum(axis=1) >= kk) | (ask >= n)
            for j in np.flatnonzero(done):
                keep = np.flatnonzero(ok[j])[:kk]
                out_r[todo[j], : len(keep)] = rows[j, keep]
                out_d[todo[j], : len(keep)] = dist[j, keep]
            todo = todo[~done]
            ask = min(n, ask * 4)
        return out_d, out_r

    def _key(self, dist: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """FAISS's distances as float64 "larger is nearer" keys (-inf for padding)."""
        return np.where(rows >= 0, self.stage.key(dist), -np.inf)

    def _finish(self, key: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Sort by (key desc, row asc), keep k, and express keys in the metric's convention."""
        key, rows = _top(key, rows, k)
        return self.stage.scores(key, rows).astype(np.float32), rows

    def _rescore(
        self, q: np.ndarray, cand: np.ndarray, k: int, fetch: Fetch, prepared: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact scores of each query's shortlist with the full vectors from ``fetch``.

        The union of the shortlists is fetched at once (per group of queries whose
        shortlists hold at most :data:`FETCH_ENTRIES` values). Candidates are ordered by float32
        scores (one batched matrix product); those within :data:`TIE_BAND_FLOAT32` of each
        query's k-th are then scored again in float64 and the top ``k`` taken by (score,
        row), which is the tie rule of :func:`~repspace.core.exact.exact_search` at a
        fraction of the cost of scoring every candidate in float64.
        """
        m, kk = cand.shape
        group = max(1, FETCH_ENTRIES // max(1, kk * self.dim))
        if m > group:
            parts = [self._rescore(q[lo : lo + group], cand[lo : lo + group], k, fetch, prepared)
                     for lo in range(0, m, group)]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        valid = cand >= 0
        uniq = np.unique(cand[valid])
        if not len(uniq):
            return self._finish(np.full((m, kk), -np.inf), cand, k)
        full = np.asarray(fetch(uniq))
        if full.shape != (len(uniq), self.dim):
            raise InputError(f"fetch returned shape {full.shape} for {len(uniq)} rows; "
                             f"expected ({len(uniq)}, {self.dim})")
        full = np.ascontiguousarray(full, dtype=np.float32) if prepared else prepare(full, self.metric)
        pos = np.searchsorted(uniq, np.where(valid, cand, uniq[0]))
        l2 = self.metric is Metric.L2
        out_key = np.empty((m, k), np.float64)
        out_rows = np.empty((m, k), np.int64)
        step = _chunk(m, FUNNEL_RESCORE_ENTRIES // max(1, kk * self.dim))

        def score(lo: int) -> None:
            hi = min(m, lo + step)
            c, v, qc = cand[lo:hi], valid[lo:hi], q[lo:hi]
            x = full[pos[lo:hi]]  # (chunk, kk, dim) float32
            if l2:
                x -= qc[:, None, :]
                key32 = -np.einsum("pkd,pkd->pk", x, x)
            else:
                key32 = np.matmul(x, qc[:, :, None])[:, :, 0]
            key32 = np.where(v, key32, -np.inf)
            pc = pos[lo:hi]
            rows, key = self._settle(qc, c, key32, k,
                                     lambda _rows, at: full[np.take_along_axis(pc[at[0]], at[1], axis=1)])
            out_key[lo:hi], out_rows[lo:hi] = _top(key, rows, k)

        _each(score, range(0, m, step))
        scores = -out_key if l2 else out_key
        return scores.astype(np.float32), out_rows

    def _rescore_in_place(
        self, q: np.ndarray, cand: np.ndarray, k: int, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_rescore` with every row's prepared vector at hand: FAISS scores the
        shortlists where they lie (float32, parallel), then the tie band is settled in float64."""
        m, kk = cand.shape
        cand = np.ascontiguousarray(np.where((cand >= 0) & (cand < base.shape[0]), cand, -1), dtype=np.int64)
        valid = cand >= 0
        l2 = self.metric is Metric.L2
        key32 = np.empty((m, kk), np.float32)
        by_idx = faiss.fvec_L2sqr_by_idx if l2 else faiss.fvec_inner_products_by_idx
        if m and kk:
            by_idx(faiss.swig_ptr(key32), faiss.swig_ptr(q), faiss.swig_ptr(base), faiss.swig_ptr(cand),
                   self.dim, m, kk)
        key32 = np.where(valid, -key32 if l2 else key32, -np.inf)
        out_key = np.empty((m, k), np.float64)
        out_rows = np.empty((m, k), np.int64)
        step = _chunk(m, FUNNEL_RESCORE_ENTRIES // max(1, k * 2 * self.dim))

        def settle(lo: int) -> None:
            hi = min(m, lo + step)
            rows, key = self._settle(q[lo:hi], cand[lo:hi], key32[lo:hi], k,
                                     lambda rows, _at: base[np.where(rows >= 0, rows, 0)])
            out_key[lo:hi], out_rows[lo:hi] = _top(key, rows, k)

        _each(settle, range(0, m, step))
        scores = -out_key if l2 else out_key
        return scores.astype(np.float32), out_rows

    def _settle(
        self, q: np.ndarray, cand: np.ndarray, key32: np.ndarray, k: int,
        gather: Callable[[np.ndarray, tuple[np.ndarray, np.ndarray]], np.ndarray],
    ) -> tuple[np.ndarray, np.ndarray]:
        """The top ``k`` candidates of each query by exact order: ``(rows, key)``, ``(m, k)``.

        Candidates are ordered by their float32 key (ties: lower row). Where that order
        could differ from the exact one -- a candidate beyond the k-th within
        :data:`TIE_BAND_FLOAT32` of it, or two of the first k within the band of each other --
        the query's candidates up to the band are scored again in float64 and ordered by
        (score, row), the tie rule of :func:`~repspace.core.exact.exact_search`.
        Elsewhere float32 rounding (~1e-7 relative) cannot change the order, and the keys
        are the float32 ones. ``gather(rows, (queries, columns))`` returns the prepared vectors
        of the candidates ``rows`` at those positions of ``cand``.
        """
        m, kk = cand.shape
        kq = min(k, kk)
        tie = np.where(cand >= 0, cand, np.iinfo(np.int64).max)
        order = np.lexsort((tie, -key32), axis=-1)
        key32 = np.take_along_axis(key32, order, axis=1)
        kth = key32[:, kq - 1 : kq]
        band = TIE_BAND_FLOAT32 * np.maximum(1.0, np.abs(kth))
        within = np.sum(key32 >= kth - band, axis=1)
        with np.errstate(invalid="ignore"):  # -inf - -inf among padding: NaN, not "close"
            close = np.any(key32[:, : kq - 1] - key32[:, 1:kq] < band, axis=1) if kq > 1 else np.zeros(m, bool)
        unsure = np.flatnonzero((within > kq) | close)
        rows = np.take_along_axis(cand, order[:, :kq], axis=1)
        key = key32[:, :kq].astype(np.float64)
        if self.metric is Metric.L2:  # float32 keys are negated squared distances
            key = -np.sqrt(np.maximum(-key, 0.0))
        if len(unsure):
            width = int(np.max(within[unsure]))
            top = order[unsure, :width]
            urows = np.take_along_axis(cand[unsure], top, axis=1)
            xs = gather(urows, (unsure, top)).astype(np.float64)
            q64 = q[unsure].astype(np.float64)
            if self.metric is Metric.L2:
                xs -= q64[:, None, :]
                ukey = -np.sqrt(np.einsum("pkd,pkd->pk", xs, xs))
            else:
                ukey = np.einsum("pkd,pd->pk", xs, q64)
            ukey, urows = _top(np.where(urows >= 0, ukey, -np.inf), urows, kq)
            key[unsure], rows[unsure] = ukey, urows
        return rows, np.where(rows >= 0, key, -np.inf)

    # -- size and persistence ---------------------------------------------------------------------

    def memory_bytes(self) -> int:
        """Approximate bytes held in memory; see :meth:`memory_breakdown`.

        Examples
        --------
        >>> ix = FunnelIndex("binary", 50, "cosine")
        >>> ix.add(np.ones((100, 50), dtype="float32"), np.arange(100))
        >>> ix.memory_bytes()  # 100 × (7 code bytes + 8 label bytes)
        1500
        """
        return sum(self.memory_breakdown().values())

    def memory_breakdown(self) -> dict[str, int]:
        """Approximate bytes held in memory, by part, computed from the index's sizes.

        ``codes``: ``ntotal × code size`` (4·d for floats, 1 per dimension for int8,
        d/8 rounded up for binary, ``pq_m`` for PQ); ``labels``: 8 bytes per vector (the
        row labels of the ID map or IVF lists); ``graph``: the HNSW neighbour lists,
        levels and offsets as allocated; ``model``: trained parameters (PCA matrix and
        mean and FAISS' full eigenvector matrix, int8 ranges, IVF centroids, PQ codebooks, the ``d × d``
        OPQ rotation and, for ``l2``, FAISS' table of precomputed centroid terms,
        ``nlist × pq_m × 256`` floats). Allocator and
        container overheads are not counted.

        Examples
        --------
        >>> ix = FunnelIndex("exact", 4, "ip")
        >>> ix.add(np.ones((10, 4), dtype="float32"), np.arange(10))
        >>> ix.memory_breakdown()
        {'codes': 160, 'labels': 80, 'graph': 0, 'model': 0}
        """
        parts = {"codes": 0, "labels": 0, "graph": 0, "model": 0}
        if self.index is None:
            return parts
        n = self.ntotal
        parts.update(self.stage.memory(self.index, n), labels=8 * n)
        return parts

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to one file, atomically (temporary file, then rename).

        The file is a plain FAISS index: ``faiss.write_index_binary`` for ``binary``;
        for ``pca`` an ``IndexPreTransform(PCAMatrix, index)`` so that the trained PCA
        travels with the codes (``tldr``: its ``LinearTransform``); ``faiss.write_index``
        otherwise. The spec, dimension and metric are not stored: :meth:`load` takes them
        and checks the file agrees (callers stamp files with :attr:`IndexSpec.slug`).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> x = np.random.default_rng(3).standard_normal((50, 6)).astype("float32")
        >>> ix = FunnelIndex("hnsw8", 6, "cosine")
        >>> ix.add(x, np.arange(50))
        >>> with tempfile.TemporaryDirectory() as d:
        ...     ix.save(pathlib.Path(d) / "i.faiss")
        ...     FunnelIndex.load(pathlib.Path(d) / "i.faiss", "hnsw8", 6, "cosine").ntotal
        50
        """
        if not self.is_trained:
            raise InputError(f"{self.spec} is not trained yet: nothing to save")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(fd)
        try:
            self.stage.write(self.index, tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], spec: IndexSpec | str, dim: int, metric: Metric | str
    ) -> FunnelIndex:
        """Read an index written by :meth:`save` for the same spec (slug), dimension and metric.

        Raises :class:`~repspace.core.errors.InputError` when the file holds another kind of
        index (another spec, dimension or metric) or is not an index at all.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> x = np.random.default_rng(4).standard_normal((300, 8)).astype("float32")
        >>> ix = FunnelIndex("int8>rescore4", 8, "l2").train(x)
        >>> ix.add(x, np.arange(300))
        >>> with tempfile.TemporaryDirectory() as d:
        ...     ix.save(pathlib.Path(d) / "int8.faiss")
        ...     again = FunnelIndex.load(pathlib.Path(d) / "int8.faiss", "int8>rescore8", 8, "l2")
        ...     FunnelIndex.load(pathlib.Path(d) / "int8.faiss", "int8", 8, "cosine")
        Traceback (most recent call last):
        ...
        repspace.core.errors.InputError: ... does not hold index 'int8' for dimension 8 and metric cosine
        >>> again.search(x[:1], k=1, fetch=lambda r: x[r])[1].tolist()
        [[0]]
        """
        ix = cls(spec, dim, metric)
        path = str(path)
        try:
            ix.index, ix._owner = ix.stage.read(path)
        except RuntimeError as e:
            raise InputError(f"cannot read index file {path}: {str(e).splitlines()[0] if str(e) else e}") from None
        if not ix.stage.verify(ix.index):
            raise InputError(f"{path} does not hold index {ix.spec.slug!r} for dimension {ix.dim} "
                             f"and metric {ix.metric.value}")
        return ix

def _chunk(m: int, most: int) -> int:
    """Queries per rescoring chunk: at most ``most``, and few enough that every thread gets one."""
    return max(1, min(most, -(-m // max(1, faiss.omp_get_max_threads()))))


def _each(fn: Callable[[int], None], starts: range) -> None:
    """``fn(start)`` for every chunk, on FAISS' thread count (numpy releases the GIL in gathers
    and products, so chunks of queries run in parallel)."""
    threads = min(max(1, faiss.omp_get_max_threads()), len(starts))
    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(fn, starts))
    else:
        for lo in starts:
            fn(lo)


def _allowed(rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Whether each label is a row inside the mask (-1 padding and rows beyond it: no)."""
    inside = (rows >= 0) & (rows < len(mask))
    return inside & mask[np.where(inside, rows, 0)]


def _top(key: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the k best by (key desc, row asc), padding (-1 rows) last; padded to k columns."""
    m, c = rows.shape
    if c < k:
        key = np.concatenate([key, np.full((m, k - c), -np.inf)], axis=1)
        rows = np.concatenate([rows, np.full((m, k - c), -1, np.int64)], axis=1)
    valid = rows >= 0
    tie = np.where(valid, rows, np.iinfo(np.int64).max)
    order = np.lexsort((tie, -np.where(valid, key, -np.inf)), axis=-1)[:, :k]
    rows = np.take_along_axis(rows, order, axis=1)
    key = np.take_along_axis(key, order, axis=1)
    return np.where(rows >= 0, key, -np.inf), rows
