"""FAISS HNSW graphs over rows of vectors (arrays in, results out).

A stored space keeps one beside the store, kept up to date by
:func:`repspace.workflows.search.hnsw.ensure_hnsw`.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.core.space import Metric


@dataclass(frozen=True)
class HNSWParams:
    """HNSW construction parameters: ``m`` links per node, ``ef_construction`` beam width."""

    m: int = 32
    ef_construction: int = 100

    def __post_init__(self) -> None:
        if not (2 <= self.m <= 256):
            raise InputError(f"HNSW M must be between 2 and 256, not {self.m}")
        if not (1 <= self.ef_construction <= 10_000):
            raise InputError(f"HNSW efConstruction must be between 1 and 10000, not {self.ef_construction}")


def faiss_metric(metric: Metric) -> int:
    """The FAISS metric constant used for a space metric (cosine = IP on normalised rows)."""
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

    def __init__(self, dim: int, metric: Metric, params: HNSWParams, index: Any = None) -> None:
        self.dim, self.metric, self.params = dim, metric, params
        if index is None:
            inner = faiss.IndexHNSWFlat(dim, params.m, faiss_metric(metric))
            inner.hnsw.efConstruction = params.ef_construction
            index = faiss.IndexIDMap2(inner)
        self.index = index
        self._params: dict[int, Any] = {}  # search parameters without a selector, by efSearch

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
            return self.index.search(q, k, params=params)
        params = faiss.SearchParametersHNSW(efSearch=ef)
        bitmap = allowed if allowed.dtype == np.uint8 else pack_mask(allowed)
        params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
        d, i = self.index.search(q, k, params=params)
        del bitmap  # kept alive until FAISS is done with it
        return d, i

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
