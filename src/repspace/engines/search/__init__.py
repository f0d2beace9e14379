"""Search engines on arrays: exact, HNSW, quantized and reduced funnels, BM25, hybrid fusion, MMR, multi-vector,
exact sparse (inverted index).

Over a stored space (persisted indexes, filters): :mod:`repspace.workflows.search`, also importable as
``repspace.search``.

Examples
--------
>>> import numpy as np
>>> from repspace.engines.search import exact_search
>>> exact_search(np.eye(3)[:1], np.eye(3), k=1, metric="ip")[1].tolist()
[[0]]
"""

from repspace.core.exact import exact_search, normalize_rows
from repspace.core.hits import Hit, SearchPlan
from repspace.engines.search.funnel import FunnelIndex
from repspace.engines.search.fusion import rrf, weighted_sum
from repspace.engines.search.hnsw import HNSWIndex, HNSWParams, ShardedHNSW, merge_topk
from repspace.engines.search.lexical import LexicalIndex
from repspace.engines.search.mmr import mmr
from repspace.engines.search.muvera import (
    FDEConfig,
    MultiVectorIndex,
    chamfer,
    chamfer_scores,
    fde_documents,
    fde_queries,
    maxsim_search,
)
from repspace.engines.search.setquery import set_query_vector, set_scores
from repspace.engines.search.sparse import SparseIndex, SparseQuery, sparse_query
from repspace.engines.search.sparse_stats import SparseStatistics, sparse_statistics
from repspace.engines.search.specs import IndexSpec, parse_spec

__all__ = [
    "exact_search", "normalize_rows", "HNSWIndex", "HNSWParams", "ShardedHNSW", "merge_topk", "Hit", "SearchPlan",
    "IndexSpec", "parse_spec", "FunnelIndex", "LexicalIndex", "rrf", "weighted_sum", "mmr",
    "FDEConfig", "MultiVectorIndex", "fde_documents", "fde_queries", "chamfer", "chamfer_scores",
    "maxsim_search", "set_query_vector", "set_scores",
    "SparseIndex", "SparseQuery", "sparse_query", "SparseStatistics", "sparse_statistics",
]
