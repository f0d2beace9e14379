"""FAISS HNSW graphs over rows of vectors (arrays in, results out).

A stored space keeps one beside the store, kept up to date by
:func:`repspace.workflows.search.hnsw.ensure_hnsw`; :class:`ShardedHNSW` is the same
graph over disjoint shards of rows, searched by fan-out with a top-``k`` merge
(:func:`merge_topk`, FAISS ``IndexShards`` semantics).
"""

from __future__ import annotations

import os
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.core.space import Metric
from repspace.core.threads import one_faiss_thread


@dataclass(frozen=True)
class HNSWParams:
    """HNSW construction parameters: ``m`` links per node, ``ef_construction`` beam width.

    Examples
    --------
    >>> HNSWParams(), HNSWParams(m=16).m
    (HNSWParams(m=32, ef_construction=100), 16)
    >>> HNSWParams(m=1)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: HNSW M must be an integer in [2, 256], not 1
    """

    m: int = 32
    ef_construction: int = 100

    def __post_init__(self) -> None:
        check_scalar(self.m, "HNSW M", int, low=2, high=256)
        check_scalar(self.ef_construction, "HNSW efConstruction", int, low=1, high=10_000)


def faiss_metric(metric: Metric) -> int:
    """The FAISS metric constant used for a space metric (cosine = IP on normalised rows); none for poincare."""
    metric.require_vector_space("an HNSW index")
    return faiss.METRIC_L2 if metric is Metric.L2 else faiss.METRIC_INNER_PRODUCT


def prepare(vectors: np.ndarray, metric: Metric) -> np.ndarray:
    """Vectors as the index stores them: normalised for cosine, float32 C-contiguous."""
    if metric is Metric.COSINE:
        return np.ascontiguousarray(normalize_rows(vectors))  # keeps a Fortran-ordered input's order
    return np.ascontiguousarray(vectors, dtype=np.float32)


def pack_mask(allowed: np.ndarray) -> np.ndarray:
    """A boolean row mask as the bitmap FAISS's ``IDSelectorBitmap`` reads (bit ``r`` = row ``r``).

    Examples
    --------
    >>> pack_mask(np.array([True, False, True])).tolist()
    [5]
    """
    return np.packbits(np.asarray(allowed, dtype=bool), bitorder="little")


class HNSWIndex:
    """A FAISS ``IndexHNSWFlat`` wrapped in an ``IndexIDMap2`` whose labels are rows.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((500, 8)).astype("float32")
    >>> ix = HNSWIndex(8, Metric.L2, HNSWParams(m=16))
    >>> ix.add(x, np.arange(500))
    >>> d, i = ix.search(x[:1], k=1, ef=32)
    >>> int(i[0, 0])
    0
    """

    #: Rows are best added in one call: FAISS inserts one add's rows level by level, top down, in a
    #: random order, so rows added in several calls (in the store's order) make a graph of lower recall.
    ADD_AT_ONCE = True

    def __init__(self, dim: int, metric: Metric, params: HNSWParams, index: Any = None) -> None:
        self.dim, self.metric, self.params = dim, metric, params
        if index is None:
            inner = faiss.IndexHNSWFlat(dim, params.m, faiss_metric(metric))
            inner.hnsw.efConstruction = params.ef_construction
            index = faiss.IndexIDMap2(inner)
        self.index = index
        self._params: dict[int, Any] = {}  # search parameters without a selector, by efSearch
        # Search parameters with a packed mask, by (id of the mask, efSearch); each entry holds its mask,
        # so the id names that very array while the entry lives (the selector reads the mask's memory).
        self._masked: dict[tuple[int, int], tuple[np.ndarray, Any]] = {}

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    def add(self, vectors: np.ndarray, rows: np.ndarray) -> None:
        """Add vectors (raw; normalised here for cosine) under the given row labels."""
        if len(rows):
            self.index.add_with_ids(prepare(vectors, self.metric), np.ascontiguousarray(rows, dtype=np.int64))

    def search(
        self, queries: np.ndarray, k: int, ef: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS scores and row labels (-1 where fewer than k were found).

        ``allowed`` is a boolean mask over rows, or the same mask packed by
        :func:`pack_mask` (a ``uint8`` array: a caller searching one mask many
        times packs it once); rows outside it are never returned.
        """
        q = np.array(queries, dtype=np.float32, order="C", ndmin=2)  # a copy: normalised in place below
        if self.metric is Metric.COSINE:
            faiss.normalize_L2(q)  # zero rows stay zero; cheaper than numpy for the one-query case
        ef = max(int(ef), k)
        if allowed is None:
            params = self._params.get(ef)
            if params is None:  # shared by threads: FAISS only reads it
                params = self._params[ef] = faiss.SearchParametersHNSW(efSearch=ef)
            return _search(self.index, q, k, params)
        if allowed.dtype == np.uint8:  # a packed mask, perhaps searched many times: its parameters are kept
            key = (id(allowed), ef)
            held = self._masked.get(key)
            if held is None or held[0] is not allowed:
                if len(self._masked) >= MASKED_PARAMS:
                    self._masked.clear()
                held = self._masked[key] = (allowed, _masked_params(allowed, ef))
            return _search(self.index, q, k, held[1])
        bitmap = pack_mask(allowed)
        params = _masked_params(bitmap, ef)
        d, i = _search(self.index, q, k, params)
        del bitmap  # kept alive until FAISS is done with it
        return d, i

    def search_one(self, query: np.ndarray, k: int, ef: int) -> tuple[list[float], list[int]]:
        """:meth:`search` of one query with no mask, as lists: what a loop of one query per call needs.

        ``query`` is a checked C-contiguous float32 ``(1, dim)`` array. FAISS writes into this thread's
        own output arrays, read out as lists (what hits are made of), so no array of the search outlives
        it; the scores and rows are :meth:`search`'s.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> x = rng.standard_normal((500, 8)).astype("float32")
        >>> ix = HNSWIndex(8, Metric.COSINE, HNSWParams(m=16))
        >>> ix.add(x, np.arange(500))
        >>> scores, rows = ix.search_one(x[:1] * 3, 2, 32)
        >>> rows == ix.search(x[:1] * 3, 2, 32)[1][0].tolist(), round(scores[0], 4)
        (True, 1.0)
        """
        ef = max(int(ef), k)
        params = self._params.get(ef)
        if params is None:  # shared by threads: FAISS only reads it
            params = self._params[ef] = faiss.SearchParametersHNSW(efSearch=ef)
        if self.metric is Metric.COSINE:
            query = query.copy()
            faiss.normalize_L2(query)  # as search does: the same scores to the last bit
        out = getattr(_OUT, "arrays", None)
        if out is None or out[0].shape[1] < k:
            out = _OUT.arrays = (np.empty((1, k), np.float32), np.empty((1, k), np.int64))
        d, i = out
        ptrs = (faiss.swig_ptr(query), k, faiss.swig_ptr(d), faiss.swig_ptr(i), params)
        if faiss.omp_get_max_threads() > 1:
            with one_faiss_thread(1):
                self.index.search_c(1, *ptrs)
        else:
            self.index.search_c(1, *ptrs)
        return d[0, :k].tolist(), i[0, :k].tolist()

    def save(self, path: Path) -> None:
        """Write atomically (temporary file, then rename)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(fd)
        try:
            faiss.write_index(self.index, tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(cls, path: Path, dim: int, metric: Metric, params: HNSWParams) -> HNSWIndex:
        return cls(dim, metric, params, index=faiss.read_index(str(path)))


#: Packed masks whose FAISS search parameters an index keeps (a few filters searched in turn).
MASKED_PARAMS = 32
#: Each thread's output arrays of :meth:`HNSWIndex.search_one` (read out before the call returns).
_OUT = threading.local()


def _masked_params(bitmap: np.ndarray, ef: int) -> Any:
    """FAISS HNSW search parameters at ``ef`` with a selector reading the packed mask ``bitmap`` (keep it alive)."""
    params = faiss.SearchParametersHNSW(efSearch=ef)
    params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
    return params


def _search(index: Any, q: np.ndarray, k: int, params: Any) -> tuple[np.ndarray, np.ndarray]:
    """``index.search`` of ``q``, one query on one FAISS thread (:func:`one_faiss_thread`; entered only
    when it changes something: a search loop's one query on one thread pays nothing for it)."""
    if len(q) == 1 and faiss.omp_get_max_threads() > 1:
        with one_faiss_thread(1):
            return index.search(q, k, params=params)
    return index.search(q, k, params=params)


class ShardedHNSW:
    """HNSW graphs over disjoint shards of rows, searched by fan-out and a top-``k`` merge.

    Row ``r`` lives in shard ``r % n`` (so rows added later keep the shards even); each
    shard is an :class:`~repspace.engines.search.hnsw.HNSWIndex` labelled by global rows.
    :meth:`search` asks every shard for its top ``k`` and keeps the ``k`` best by
    FAISS's distance, equal distances to the lower row: the semantics of FAISS'
    ``IndexShards``. The file is one ``.npz`` of the shards' serialised FAISS indexes,
    written atomically.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.core.space import Metric
    >>> x = np.random.default_rng(0).standard_normal((400, 8)).astype("float32")
    >>> ix = ShardedHNSW(2, 8, Metric.L2, HNSWParams(m=8))
    >>> ix.add(x, np.arange(400))
    >>> [s.ntotal for s in ix.shards]
    [200, 200]
    >>> d, i = ix.search(x[:2], k=1, ef=32)
    >>> i.tolist()
    [[0], [1]]
    """

    def __init__(self, n: int, dim: int, metric: Metric, params: HNSWParams,
                 shards: list[HNSWIndex] | None = None) -> None:
        n = check_scalar(n, "shards", int, low=1)
        self.n, self.dim, self.metric, self.params = n, dim, metric, params
        self.shards = shards if shards is not None else [HNSWIndex(dim, metric, params) for _ in range(n)]
        if len(self.shards) != n:
            raise ValueError(f"{len(self.shards)} shards where {n} were expected")

    #: As :attr:`HNSWIndex.ADD_AT_ONCE`: each shard's graph is best built from one add.
    ADD_AT_ONCE = True

    @property
    def ntotal(self) -> int:
        return sum(s.ntotal for s in self.shards)

    def add(self, vectors: np.ndarray, rows: np.ndarray) -> None:
        """Add vectors (raw) under the given row labels, row ``r`` to shard ``r % n``."""
        rows = np.asarray(rows, dtype=np.int64)
        for s, shard in enumerate(self.shards):
            pick = np.flatnonzero(rows % self.n == s)
            if len(pick):
                shard.add(vectors[pick], rows[pick])

    def search(
        self, queries: np.ndarray, k: int, ef: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS distances and row labels of the ``k`` best over all shards (-1 where fewer were found).

        ``allowed`` as in :meth:`HNSWIndex.search` (a mask over global rows, packed or not).
        """
        q = np.array(queries, dtype=np.float32, order="C", ndmin=2)
        if allowed is not None and allowed.dtype != np.uint8:
            allowed = pack_mask(allowed)
        parts = [s.search(q, k, ef, allowed) for s in self.shards if s.ntotal]
        if not parts:
            worst = np.inf if self.metric is Metric.L2 else -np.inf
            return np.full((q.shape[0], k), worst, np.float32), np.full((q.shape[0], k), -1, np.int64)
        return merge_topk([p[0] for p in parts], [p[1] for p in parts], k, ascending=self.metric is Metric.L2)

    def save(self, path: Path) -> None:
        """Write every shard into one ``.npz`` file, atomically (:func:`repspace.core.atomic.write_atomic`)."""
        arrays = {f"shard{s}": faiss.serialize_index(sh.index) for s, sh in enumerate(self.shards)}
        write_atomic(path, lambda f: np.savez(f, **arrays))

    @classmethod
    def load(cls, path: Path, n: int, dim: int, metric: Metric, params: HNSWParams) -> ShardedHNSW:
        """Read a file written by :meth:`save` (``ValueError`` if it holds another number of shards)."""
        try:
            with np.load(path) as data:
                if sorted(data.files) != sorted(f"shard{s}" for s in range(n)):
                    raise ValueError(f"{path} does not hold {n} HNSW shards")
                shards = [HNSWIndex(dim, metric, params, index=faiss.deserialize_index(data[f"shard{s}"]))
                          for s in range(n)]
        except (zipfile.BadZipFile, EOFError, KeyError, AttributeError) as e:  # not an npz of shards: damaged
            raise ValueError(f"{path} is not an index of HNSW shards ({e})") from None
        for sh in shards:
            if sh.index.d != dim or sh.index.metric_type != faiss_metric(metric):
                raise ValueError(f"{path} holds shards of another dimension or metric")
        return cls(n, dim, metric, params, shards)


def merge_topk(distances: list[np.ndarray], labels: list[np.ndarray], k: int, *,
               ascending: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of several result lists per query: FAISS' ``IndexShards`` merge.

    ``distances``/``labels`` are ``(m, k_i)`` arrays from each shard (FAISS's
    convention: labels -1 for padding). Kept: the best distances (smallest when
    ``ascending``, largest otherwise), equal distances to the lower label, padding last.

    Examples
    --------
    >>> d, i = merge_topk([np.array([[0.1, 0.5]]), np.array([[0.2, 0.5]])],
    ...                   [np.array([[7, 3]]), np.array([[4, 1]])], 3, ascending=True)
    >>> i.tolist(), d.tolist()
    ([[7, 4, 1]], [[0.10000000149011612, 0.20000000298023224, 0.5]])
    """
    d = np.concatenate([np.asarray(x, dtype=np.float32) for x in distances], axis=1)
    i = np.concatenate([np.asarray(x, dtype=np.int64) for x in labels], axis=1)
    real = i >= 0
    key = np.where(real, d if ascending else -d, np.inf)
    order = np.lexsort((np.where(real, i, np.iinfo(np.int64).max), key), axis=-1)[:, :k]
    d, i = np.take_along_axis(d, order, axis=1), np.take_along_axis(i, order, axis=1)
    if d.shape[1] < k:
        pad = k - d.shape[1]
        d = np.concatenate([d, np.full((d.shape[0], pad), np.inf if ascending else -np.inf, np.float32)], axis=1)
        i = np.concatenate([i, np.full((i.shape[0], pad), -1, np.int64)], axis=1)
    worst = np.float32(np.inf if ascending else -np.inf)
    return np.where(i >= 0, d, worst).astype(np.float32), i
