"""Multi-vector search: MUVERA fixed-dimensional encodings, then exact Chamfer reranking.

A multi-vector item is a set of vectors (one per token, see
:func:`repspace.engines.encoders.tokens.encode_tokens`) and two sets are compared by
**Chamfer similarity** (ColBERT's late interaction, "max-sim"):
``chamfer(Q, P) = Σ_{q ∈ Q} max_{p ∈ P} <q, p>``. Exact search evaluates it
against every document; MUVERA (Dhulipala et al. 2024, "MUVERA: Multi-Vector
Retrieval via Fixed Dimensional Encodings") turns each set into one
fixed-dimensional vector (an *FDE*) whose inner product approximates Chamfer
similarity, so that a single-vector search finds candidates which are then
reranked exactly.

How an FDE is made (one *repetition*; ``reps`` independent ones are
concatenated):

1. **SimHash partitions.** ``k_sim`` random Gaussian hyperplanes give each
   vector ``k_sim`` sign bits, i.e. one of ``B = 2**k_sim`` partitions (here
   the bits read as a binary number; the paper's Gray-code numbering only
   renames the partitions).
2. **Projection.** Each vector is mapped by a random ``±1/√d_proj`` matrix to
   ``d_proj`` dimensions (``d_proj=None``: no projection). One matrix per
   repetition, shared by every partition, as in the paper.
3. **Aggregation, asymmetric.** A *query*'s block for partition ``k`` is the
   **sum** of its projected vectors in ``k``; a *document*'s is their
   **average**. With ``fill_empty``, a document partition holding none of its
   vectors gets the projected vector whose bits are nearest to the
   partition's in Hamming distance (the first such vector on ties), so that
   every query vector finds something to match. Queries are never filled.
4. Optionally, the concatenated ``reps · B · d_proj`` vector is reduced to
   ``final_dim`` by a Count-Sketch (each coordinate added with a random sign
   to one random output coordinate), which preserves inner products in
   expectation.

Then ``<fde_query(Q), fde_document(P)> = Σ_reps Σ_{q ∈ Q} <ψ(q), ψ(avg of P in q's partition)>``,
an estimate of ``reps · chamfer(Q, P)`` that gets better as ``reps`` grows.

Why this is written here: no library on the dependency list makes FDEs
(google/graph-mining's reference code is a C++/Python research tool, not a
package). The encodings are vectorised with numpy over every token of a
batch of documents; Chamfer scores are blocked matrix products with
segment maxima (``np.maximum.reduceat``), and each query's best are scored
again in float64, one pair at a time, so that order and ties do not depend on
the CPU (:data:`TIE_BAND`). :class:`MultiVectorIndex` searches
the FDEs exactly with :func:`repspace.core.exact.exact_search` (fine for
thousands of documents; a larger corpus would put them in an HNSW index).

Examples
--------
>>> from repspace.engines.search import normalize_rows
>>> rng = np.random.default_rng(0)
>>> docs = [normalize_rows(rng.standard_normal((int(n), 8))) for n in rng.integers(3, 9, size=50)]
>>> queries = [normalize_rows(d[:2] + 0.1) for d in docs[:3]]  # each query resembles one document
>>> index = MultiVectorIndex.build(docs, FDEConfig(dim=8, k_sim=3, d_proj=8, reps=8))
>>> scores, rows = index.search(queries, k=1, candidates=10)
>>> rows[:, 0].tolist()
[0, 1, 2]
>>> bool(np.array_equal(rows, index.exact_search(queries, k=1)[1]))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.exact import exact_search as _exact_ip_search

__all__ = [
    "FDEConfig",
    "MultiVectorIndex",
    "chamfer",
    "chamfer_scores",
    "fde_documents",
    "fde_queries",
]

#: Largest ``k_sim``: 2**16 partitions per repetition.
MAX_K_SIM = 16
#: Working-set budget, in array entries, of one batch of tokens (FDE batches, Chamfer blocks).
BATCH_ENTRIES = 4 * 1024 * 1024
#: Documents whose Chamfer score from float32 matrix products is among a query's best ``k`` or
#: within this relative distance of the k-th are scored again in float64 before the final order
#: is taken (float32 rounding of a sum of dot products is far below it).
TIE_BAND = 1e-4


def _check_int(name: str, value: Any, minimum: int, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        extra = " or None" if allow_none else ""
        raise InputError(f"FDEConfig.{name} must be an integer >= {minimum}{extra}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class FDEConfig:
    """The parameters of MUVERA's fixed-dimensional encodings.

    Parameters
    ----------
    dim : int
        Dimension of the token vectors.
    k_sim : int, optional
        SimHash bits per repetition: ``2**k_sim`` partitions (0 .. 16).
    d_proj : int or None, optional
        Dimension of the random ``±1`` projection applied to every vector;
        ``None`` keeps the ``dim`` coordinates.
    reps : int, optional
        Independent repetitions, concatenated.
    fill_empty : bool, optional
        Fill a document's empty partitions from its vector nearest in
        Hamming distance (queries are never filled).
    final_dim : int or None, optional
        Reduce the concatenation to this size with a Count-Sketch.
    seed : int, optional
        Seed of every random draw; equal configs give equal encodings.

    Raises
    ------
    InputError
        If a parameter is out of range.

    Examples
    --------
    >>> c = FDEConfig(dim=384)
    >>> c.n_partitions, c.block_dim, c.fde_dim  # 10 reps x 16 partitions x 16
    (16, 16, 2560)
    >>> FDEConfig(dim=384, d_proj=None, reps=2, final_dim=1024).fde_dim
    1024
    >>> FDEConfig(dim=384, k_sim=40)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: FDEConfig.k_sim must be at most 16 (2**16 partitions), got 40
    """

    dim: int
    k_sim: int = 4
    d_proj: int | None = 16
    reps: int = 10
    fill_empty: bool = True
    final_dim: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "dim", _check_int("dim", self.dim, 1))
        set_(self, "k_sim", _check_int("k_sim", self.k_sim, 0))
        if self.k_sim > MAX_K_SIM:
            raise InputError(
                f"FDEConfig.k_sim must be at most {MAX_K_SIM} (2**{MAX_K_SIM} partitions), got {self.k_sim}"
            )
        set_(self, "d_proj", _check_int("d_proj", self.d_proj, 1, allow_none=True))
        set_(self, "reps", _check_int("reps", self.reps, 1))
        if not isinstance(self.fill_empty, (bool, np.bool_)):
            raise InputError(f"FDEConfig.fill_empty must be True or False, got {self.fill_empty!r}")
        set_(self, "fill_empty", bool(self.fill_empty))
        set_(self, "final_dim", _check_int("final_dim", self.final_dim, 1, allow_none=True))
        set_(self, "seed", _check_int("seed", self.seed, 0))

    @property
    def n_partitions(self) -> int:
        """Partitions per repetition, ``2**k_sim``."""
        return 1 << self.k_sim

    @property
    def block_dim(self) -> int:
        """Dimension of one partition's block: ``d_proj``, or ``dim`` without projection."""
        return self.dim if self.d_proj is None else self.d_proj

    @property
    def raw_dim(self) -> int:
        """Length of the concatenation, ``reps · 2**k_sim · block_dim`` (before ``final_dim``)."""
        return self.reps * self.n_partitions * self.block_dim

    @property
    def fde_dim(self) -> int:
        """Length of an encoding: ``final_dim`` if set, else :attr:`raw_dim`."""
        return self.raw_dim if self.final_dim is None else self.final_dim


@dataclass(frozen=True)
class _Draws:
    """The random matrices of one config."""

    simhash: tuple[np.ndarray, ...]  # per repetition: (dim, k_sim) Gaussian
    projection: tuple[np.ndarray | None, ...]  # per repetition: (dim, d_proj) of ±1/√d_proj, or None
    sketch_bucket: np.ndarray | None  # (raw_dim,) output coordinate of each input coordinate
    sketch_sign: np.ndarray | None  # (raw_dim,) ±1


@lru_cache(maxsize=16)
def _draws(config: FDEConfig) -> _Draws:
    simhash, projection = [], []
    for rep in range(config.reps):
        rng = np.random.default_rng([config.seed, rep, 0])
        simhash.append(rng.standard_normal((config.dim, config.k_sim)).astype(np.float32))
        if config.d_proj is None:
            projection.append(None)
        else:
            signs = rng.integers(0, 2, size=(config.dim, config.d_proj)).astype(np.float32) * 2.0 - 1.0
            projection.append(signs / np.float32(np.sqrt(config.d_proj)))
    bucket = sign = None
    if config.final_dim is not None:
        rng = np.random.default_rng([config.seed, config.reps, 1])
        bucket = rng.integers(0, config.final_dim, size=config.raw_dim)
        sign = (rng.integers(0, 2, size=config.raw_dim) * 2 - 1).astype(np.float32)
    return _Draws(tuple(simhash), tuple(projection), bucket, sign)


def _check_sets(token_sets: Any, dim: int | None, what: str) -> list[np.ndarray]:
    """``token_sets`` as a list of C-contiguous float32 ``(n_i, dim)`` arrays, or :class:`InputError`."""
    if isinstance(token_sets, np.ndarray) and token_sets.ndim == 2:
        raise InputError(f"{what} must be a list of (n_tokens, dim) arrays, one per item, not one 2-d array")
    if isinstance(token_sets, (str, bytes)) or not isinstance(token_sets, (Sequence, np.ndarray)):
        raise InputError(f"{what} must be a list of (n_tokens, dim) arrays, got {type(token_sets).__name__}")
    out = []
    for i, tokens in enumerate(token_sets):
        try:
            arr = np.ascontiguousarray(tokens, dtype=np.float32)
        except (TypeError, ValueError):
            raise InputError(f"{what}[{i}] is not a numeric array") from None
        if arr.ndim != 2:
            raise InputError(f"{what}[{i}] has shape {arr.shape}; expected (n_tokens, dim)")
        if dim is None:
            dim = arr.shape[1]
        if arr.shape[1] != dim:
            raise InputError(f"{what}[{i}] has dimension {arr.shape[1]}, expected {dim}")
        if not np.isfinite(arr).all():
            raise InputError(f"{what}[{i}] holds NaN or infinite values")
        out.append(arr)
    return out


def _batches(lengths: np.ndarray, width: int) -> list[tuple[int, int]]:
    """Consecutive item ranges whose tokens times ``width`` stay near :data:`BATCH_ENTRIES`."""
    budget = max(1, BATCH_ENTRIES // max(1, width))
    ranges, lo, total = [], 0, 0
    for i, n in enumerate(lengths.tolist()):
        if i > lo and total + n > budget:
            ranges.append((lo, i))
            lo, total = i, 0
        total += n
    if lo < len(lengths) or not ranges:
        ranges.append((lo, len(lengths)))
    return ranges


def _encode(config: FDEConfig, token_sets: Any, documents: bool) -> np.ndarray:
    what = "document token sets" if documents else "query token sets"
    sets = _check_sets(token_sets, config.dim, what)
    draws = _draws(config)
    n, parts, block = len(sets), config.n_partitions, config.block_dim
    raw = np.zeros((n, config.reps, parts, block), dtype=np.float32)
    lengths = np.array([len(s) for s in sets], dtype=np.int64)
    fill = documents and config.fill_empty
    powers = (1 << np.arange(config.k_sim)).astype(np.int64)
    width = max(parts, block) * (2 if fill else 1) + config.dim
    for lo, hi in _batches(lengths, width):
        counts = lengths[lo:hi]
        if counts.sum() == 0:
            continue  # items without vectors encode to zeros
        x = np.concatenate(sets[lo:hi])  # (N, dim): every token of the batch
        x64 = x.astype(np.float64)
        owner = np.repeat(np.arange(hi - lo), counts)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        for rep in range(config.reps):
            # Products in float64 (the projection then rounded to float32): a float32 product
            # rounds a token by its place in the batch and by CPU, which moved a token lying
            # within that of a hyperplane to another partition and gave copies of a document
            # FDEs an ulp apart, so the FDE search shortlisted copies by noise, not by row.
            bits = (x64 @ draws.simhash[rep].astype(np.float64)) > 0  # (N, k_sim)
            part = bits.astype(np.int64) @ powers  # (N,) partition of each token
            proj = x if draws.projection[rep] is None else (
                x64 @ draws.projection[rep].astype(np.float64)).astype(np.float32)  # (N, block)
            key = owner * parts + part
            order = np.argsort(key, kind="stable")
            sorted_key = key[order]
            first = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
            sums = np.add.reduceat(proj[order], first, axis=0)  # one row per occupied (item, partition)
            cell = sorted_key[first]
            flat = np.zeros(((hi - lo) * parts, block), dtype=np.float32)  # (item, partition) cells
            if documents:
                sizes = np.diff(np.r_[first, len(sorted_key)]).astype(np.float32)
                flat[cell] = sums / sizes[:, None]
            else:
                flat[cell] = sums
            if fill:
                _fill_empty(flat, cell, part, proj, counts, starts, parts)
            raw[lo:hi, rep] = flat.reshape(hi - lo, parts, block)
    out = raw.reshape(n, config.raw_dim)
    if config.final_dim is not None:
        out = _count_sketch(out, draws.sketch_bucket, draws.sketch_sign, config.final_dim)
    return np.ascontiguousarray(out, dtype=np.float32)


def _fill_empty(
    flat: np.ndarray,
    occupied: np.ndarray,
    part: np.ndarray,
    proj: np.ndarray,
    counts: np.ndarray,
    starts: np.ndarray,
    parts: int,
) -> None:
    """Give every empty (item, partition) cell the projected token nearest in Hamming distance.

    Ties go to the item's first such token. Items without tokens stay empty.
    """
    empty = np.ones(flat.shape[0], dtype=bool)
    empty[occupied] = False
    has = counts > 0
    empty = empty.reshape(len(counts), parts) & has[:, None]
    if not empty.any():
        return
    longest = int(counts.max())
    local = np.arange(len(part)) - np.repeat(starts, counts)  # position of each token in its item
    hamming = np.bitwise_count(part[:, None] ^ np.arange(parts)[None, :]).astype(np.int64)  # (N, parts)
    ranked = hamming * longest + local[:, None]  # smaller = nearer, then earlier
    best = np.minimum.reduceat(ranked, starts[has], axis=0) % longest  # (items with tokens, parts)
    nearest = np.zeros((len(counts), parts), dtype=np.int64)
    nearest[has] = best + starts[has][:, None]
    items, cells = np.nonzero(empty)
    flat[items * parts + cells] = proj[nearest[items, cells]]


def _count_sketch(x: np.ndarray, bucket: np.ndarray, sign: np.ndarray, size: int) -> np.ndarray:
    """Add each column of ``x``, times its sign, into output column ``bucket`` (Count-Sketch)."""
    order = np.argsort(bucket, kind="stable")
    sorted_bucket = bucket[order]
    first = np.flatnonzero(np.r_[True, sorted_bucket[1:] != sorted_bucket[:-1]])
    out = np.zeros((x.shape[0], size), dtype=np.float32)
    if x.shape[0]:
        out[:, sorted_bucket[first]] = np.add.reduceat(x[:, order] * sign[order], first, axis=1)
    return out


def fde_documents(config: FDEConfig, token_sets: Sequence[np.ndarray]) -> np.ndarray:
    """Fixed-dimensional encodings of documents (average per partition, empty ones filled).

    Parameters
    ----------
    config : FDEConfig
        The encoding; queries must be encoded with the same one.
    token_sets : list of (n_i, dim) arrays
        One set of vectors per document. A document without vectors encodes
        to zeros.

    Returns
    -------
    numpy.ndarray
        ``(len(token_sets), config.fde_dim)`` float32.

    Raises
    ------
    InputError
        If a set is not a finite ``(n_i, config.dim)`` array.

    Examples
    --------
    >>> config = FDEConfig(dim=2, k_sim=1, d_proj=None, reps=1)
    >>> docs = [np.array([[1.0, 0.0], [3.0, 0.0]]), np.zeros((0, 2))]
    >>> f = fde_documents(config, docs)
    >>> f.shape
    (2, 4)
    >>> sorted(f[0].tolist())  # one partition: the average (2, 0); the empty one: the nearest point (1, 0)
    [0.0, 0.0, 1.0, 2.0]
    >>> f[1].tolist()
    [0.0, 0.0, 0.0, 0.0]
    """
    _check_config(config)
    return _encode(config, token_sets, documents=True)


def fde_queries(config: FDEConfig, token_sets: Sequence[np.ndarray]) -> np.ndarray:
    """Fixed-dimensional encodings of queries (sum per partition, never filled).

    Parameters
    ----------
    config : FDEConfig
        The encoding the documents were given.
    token_sets : list of (n_i, dim) arrays
        One set of vectors per query.

    Returns
    -------
    numpy.ndarray
        ``(len(token_sets), config.fde_dim)`` float32; its inner product
        with :func:`fde_documents` approximates ``reps`` times the Chamfer
        similarity.

    Examples
    --------
    >>> config = FDEConfig(dim=2, k_sim=1, d_proj=None, reps=1)
    >>> f = fde_queries(config, [np.array([[1.0, 0.0], [3.0, 0.0]])])
    >>> sorted(f[0].tolist())  # both points in one partition: their sum; the other stays empty
    [0.0, 0.0, 0.0, 4.0]
    """
    _check_config(config)
    return _encode(config, token_sets, documents=False)


def _check_config(config: Any) -> None:
    if not isinstance(config, FDEConfig):
        raise InputError(f"config must be an FDEConfig, got {type(config).__name__}")


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
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InputError(f"k must be an integer >= 1, got {k!r}")
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
        if isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer)) or candidates < k:
            raise InputError(f"candidates must be an integer >= k ({k}), got {candidates!r}")
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
