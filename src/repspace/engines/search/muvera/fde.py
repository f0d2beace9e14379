"""MUVERA's fixed-dimensional encodings: a set of vectors turned into one vector whose inner product approximates Chamfer.

Owns :class:`FDEConfig`, the random draws of one config (SimHash planes,
projections, Count-Sketch), the checks of token sets, and
:func:`fde_documents` / :func:`fde_queries` (vectorised over every token of a
batch of items). The package docstring describes the encoding step by step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["BATCH_ENTRIES", "MAX_K_SIM", "FDEConfig", "fde_documents", "fde_queries"]

#: Largest ``k_sim``: 2**16 partitions per repetition.
MAX_K_SIM = 16
#: Working-set budget, in array entries, of one batch of tokens (FDE batches, Chamfer blocks).
BATCH_ENTRIES = 4 * 1024 * 1024


#: FDEConfig's integer fields: (lowest, highest or None, None allowed).
_INT_FIELDS: dict[str, tuple[int, int | None, bool]] = {
    "dim": (1, None, False), "k_sim": (0, MAX_K_SIM, False), "d_proj": (1, None, True), "reps": (1, None, False),
    "final_dim": (1, None, True), "seed": (0, None, False),
}


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
    repspace.core.errors.InputError: FDEConfig.k_sim must be an integer in [0, 16], not 40
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
        for name, (low, high, none) in _INT_FIELDS.items():
            set_(self, name, check_scalar(getattr(self, name), f"FDEConfig.{name}", int, low=low, high=high, none=none))
        if not isinstance(self.fill_empty, (bool, np.bool_)):
            raise InputError(f"FDEConfig.fill_empty must be True or False, got {self.fill_empty!r}")
        set_(self, "fill_empty", bool(self.fill_empty))

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
