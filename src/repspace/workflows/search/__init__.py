"""Search over a stored space: filters, persisted indexes (HNSW, funnels, BM25), hybrid, MMR, hubness reduction.

Also importable as ``repspace.search``; it re-exports the engines of
:mod:`repspace.engines.search` (arrays in, results out) beside the functions
that take a :class:`~repspace.Space`.

Examples
--------
>>> import numpy as np, os, tempfile
>>> from repspace import Store
>>> from repspace.search import knn
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
>>> _ = sp.add(["a", "b"], np.eye(2))
>>> knn(sp, np.array([[1.0, 0.1]]), k=1).rows.tolist()
[[0]]
"""

from repspace.engines.search import *  # noqa: F403 - the engines are part of this public surface
from repspace.engines.search import __all__ as _engine_all
from repspace.workflows.search.hnsw import ensure_hnsw
from repspace.workflows.search.indexes import (
    build_index,
    drop_index,
    ensure_funnel,
    list_indexes,
)
from repspace.workflows.search.lexical import ensure_lexical
from repspace.workflows.search.hits import hits_for
from repspace.workflows.search.query import KnnResult, knn, search_space
from repspace.workflows.search.request import SearchRequest
from repspace.workflows.search.set_request import SetQuery
from repspace.workflows.search.set_search import set_search
from repspace.workflows.search.sparse import search_sparse, sparse_index
from repspace.workflows.search.multivector import multivector_index, search_multivector
from repspace.core.hits import SearchResult

__all__ = [
    "search_space", "SearchRequest", "SearchResult", "knn", "KnnResult", "hits_for", "ensure_hnsw", "build_index", "list_indexes", "drop_index",
    "ensure_funnel", "ensure_lexical", "set_search", "SetQuery", *_engine_all,
    "ensure_funnel", "ensure_lexical", "search_sparse", "sparse_index", "search_multivector", "multivector_index",
    *_engine_all,
]
