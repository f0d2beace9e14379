"""Values derived from a filter's selection, kept while that selection is: packed masks, gathered vectors.

A repeated filter's selection is the same read-only array for a generation
(:mod:`repspace.core.store._selections`); the search keeps what it derives from it
here, so a loop of filtered queries builds a FAISS bitmap, or gathers the matches'
vectors for an exact scan, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.cache import LRUCache
from repspace.core.exact import normalize_rows
from repspace.core.space import Metric
from repspace.workflows.search.persist import IndexNotReady

if TYPE_CHECKING:
    from repspace.core.store import Space

#: Bytes of filtered vectors kept for exact search over a repeated filter's matches.
GATHER_CACHE_BYTES = 256 * 1024 * 1024


def _allowed_mask(space: Space, size: int, candidates: np.ndarray | None, needs_mask: bool) -> np.ndarray | None:
    """Rows an index may return: the filter's matches, or the live rows when some died since it was built."""
    if candidates is None and not needs_mask:
        return None
    keep = candidates if candidates is not None else space.rows()
    allowed = np.zeros(size, dtype=bool)
    allowed[keep[keep < size]] = True
    return allowed


class _PerSelection:
    """Values derived from a filter's selection, kept while that selection is (an :class:`LRUCache`).

    A repeated filter's selection is the same read-only array
    (:mod:`repspace.core.store._selections`), so the selection itself keys what was derived
    from it: an entry holds the array and answers only for that very array, so its ``id``
    in the key cannot be another array's while the entry lives. Writable arrays (not from
    the selection cache) are never kept. ``size`` measures an entry against ``budget``.
    """

    def __init__(self, budget: int, size: Callable[[Any], int] | None = None) -> None:
        if size is None:
            self.cache: LRUCache[tuple[np.ndarray | None, Any]] = LRUCache(budget)
        else:
            self.cache = LRUCache(1 << 30, max_bytes=budget, sizeof=lambda held: size(held[1]))

    def key(self, space: Space, info: Any, candidates: np.ndarray | None, *extra: Any) -> tuple[Any, ...]:
        """The space, its generation and the selection (by identity; see the class)."""
        return (space.uid, info.generation, 0 if candidates is None else id(candidates), *extra)

    def get(self, key: tuple[Any, ...], candidates: np.ndarray | None) -> Any:
        held = self.cache.get(key)
        return held[1] if held is not None and held[0] is candidates else None

    def put(self, key: tuple[Any, ...], candidates: np.ndarray | None, value: Any) -> None:
        if candidates is not None and candidates.flags.writeable:
            return
        self.cache.put(key, (candidates, value))


#: Packed masks kept (one bit per row: 50 KB for 400,000 rows).
BITS_CACHE = 32
_BITS = _PerSelection(BITS_CACHE)


def _allowed_bits(space: Space, info: Any, size: int, candidates: np.ndarray | None,
                  needs_mask: bool) -> np.ndarray | None:
    """:func:`_allowed_mask` packed for FAISS, kept per (space generation, selection, size).

    Building and packing a mask over a large space costs more than the graph search it
    feeds, so a repeated filter's selection (or, without a filter, the live rows of a
    generation) gets its bitmap built once.
    """
    from repspace.engines.search.hnsw import pack_mask

    if candidates is None and not needs_mask:
        return None
    key = _BITS.key(space, info, candidates, size)
    bits = _BITS.get(key, candidates)
    if bits is None:
        mask = _allowed_mask(space, size, candidates, needs_mask)
        assert mask is not None
        bits = pack_mask(mask)
        _BITS.put(key, candidates, bits)
    return bits


#: Gathered vectors of repeated filters' matches, GATHER_CACHE_BYTES in all.
_GATHERED = _PerSelection(GATHER_CACHE_BYTES, size=lambda base: base.nbytes)


def _gathered(space: Space, candidates: np.ndarray, info: Any) -> np.ndarray:
    """A large space's matches' vectors as searched, kept while the filter's selection is.

    Read from the memory-mapped vector file (built once, like an index), not from the
    store on every call (10,000 matches of 100,000: 71 -> 1,390 queries/s); a repeated
    filter reuses the gathered copy, up to :data:`GATHER_CACHE_BYTES` in all.
    """
    from repspace.workflows.search.vectorfile import ensure_vector_file

    key = _GATHERED.key(space, info, candidates)
    base = _GATHERED.get(key, candidates)
    if base is not None:
        return base
    try:
        tier = ensure_vector_file(space, info=info, recheck=False).index
        base, normalized = tier.read(candidates), tier.normalized
    except IndexNotReady:  # a read-only store without a current vector file: the store's own blocks
        base, normalized = space.read_rows(candidates), False
    if space.metric is Metric.COSINE and not normalized:
        base = normalize_rows(base)
    _GATHERED.put(key, candidates, base)
    return base
