"""Search: exact, HNSW, quantized and reduced funnels, BM25, hybrid fusion and MMR, over spaces or arrays.

Examples
--------
>>> import numpy as np
>>> from repspace.search import exact_search
>>> exact_search(np.eye(3)[:1], np.eye(3), k=1, metric="ip")[1].tolist()
[[0]]
"""

from repspace.search._search import KnnResult, hits_for, knn, search_space
from repspace.search.exact import exact_search, normalize_rows
from repspace.search.funnel import FunnelIndex
from repspace.search.fusion import rrf, weighted_sum
from repspace.search.hnsw import HNSWIndex, HNSWParams, ensure_hnsw
from repspace.search.indexes import build_index, drop_index, ensure_funnel, list_indexes
from repspace.search.lexical import LexicalIndex, ensure_lexical
from repspace.search.mmr import mmr
from repspace.search.muvera import FDEConfig, MultiVectorIndex, chamfer, chamfer_scores, fde_documents, fde_queries
from repspace.search.results import Hit, SearchPlan
from repspace.search.specs import IndexSpec, parse_spec

__all__ = [
    "search_space", "knn", "KnnResult", "hits_for", "exact_search", "normalize_rows",
    "HNSWIndex", "HNSWParams", "ensure_hnsw", "Hit", "SearchPlan",
    "IndexSpec", "parse_spec", "FunnelIndex", "build_index", "list_indexes", "drop_index", "ensure_funnel",
    "LexicalIndex", "ensure_lexical", "rrf", "weighted_sum", "mmr",
    "FDEConfig", "MultiVectorIndex", "fde_documents", "fde_queries", "chamfer", "chamfer_scores",
]
