"""bench_search's settings and small helpers, shared by its parts (search_*.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

K = 10
M, EF_CONSTRUCTION = 32, 100
THREADS = (1, 2)
TARGET = 0.95
QPS_GOAL = (">=", 1.0)
MEM_GOAL = ("<=", 0.5)
RECALL_GOAL = 0.95
GOAL_DATASET = "minilm"
LIBRARIES = ("faiss", "hnswlib", "usearch")
EXTRA_LIBRARIES = ("usearch-bf16",)
BUCKETS = 1000
#: (share, filter); None = no filter.
FILTERS = ((0.001, "bucket < 1"), (0.01, "bucket < 10"), (0.1, "bucket < 100"), (0.5, "bucket < 500"), (1.0, None))
FAISS_FILTER_EF = 64
MAX_EF = 4096
FILTER_THREADS = 2
#: A setting whose first run takes longer than this is not repeated (best of 1).
SLOW_S = 3.0


@contextmanager
def threads(n: int) -> Iterator[None]:
    """FAISS (OpenMP) and BLAS limited to ``n`` threads for the block."""
    import faiss
    from threadpoolctl import threadpool_limits

    faiss.omp_set_num_threads(n)
    try:
        with threadpool_limits(limits=n):
            yield
    finally:
        faiss.omp_set_num_threads(max(THREADS))


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Share of the true k nearest found (found rows of -1 never match)."""
    found = np.asarray(found)[:, : truth.shape[1]]
    hits = (found[:, :, None] == truth[:, None, :]).any(axis=2) & (found >= 0)
    return float(hits.sum()) / truth.size


def mib(x: float | None) -> float | None:
    return None if x is None else x / 2**20

