"""Search: exact (blocked BLAS) and FAISS HNSW over stored spaces or plain arrays.

Examples
--------
>>> import numpy as np
>>> from repspace.search import exact_search
>>> exact_search(np.eye(3)[:1], np.eye(3), k=1, metric="ip")[1].tolist()
[[0]]
"""

from repspace.search._search import KnnResult, hits_for, knn, search_space
from repspace.search.exact import exact_search, normalize_rows
from repspace.search.hnsw import HNSWIndex, HNSWParams, ensure_hnsw
from repspace.search.results import Hit, SearchPlan

__all__ = [
    "search_space", "knn", "KnnResult", "hits_for", "exact_search", "normalize_rows",
    "HNSWIndex", "HNSWParams", "ensure_hnsw", "Hit", "SearchPlan",
]
