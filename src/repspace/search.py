"""Search spaces: exact and HNSW, filtered, hybrid with BM25, diversified, hubness-reduced, multi-vector.

:func:`search_space` (and :meth:`repspace.store.Space.search`) answers one
query over a stored space: a :class:`SearchRequest` (query text, vector or id,
``k``, ``where``, ``index``, ``hybrid``, ``mmr`` ...) validated once, the same
type the CLI builds and the HTTP service takes as its body, and always a
:class:`SearchResult` (the hits and the plan). :func:`knn` searches a batch of
vectors. Indexes are built,
listed and dropped with :func:`build_index`, :func:`list_indexes` and
:func:`drop_index` from a spec (:func:`parse_spec`). The in-memory indexes
(:class:`HNSWIndex`, :class:`LexicalIndex`, :class:`MultiVectorIndex`,
:class:`FunnelIndex`) and the rank fusions work on plain arrays too.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_space
>>> from repspace.search import search_space
>>> space = example_space(vectors=np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]))
>>> [hit.id for hit in search_space(space, id="i0", k=2)]
['i1', 'i2']
"""

from repspace.engines.search import (
    FDEConfig,
    FunnelIndex,
    HNSWIndex,
    HNSWParams,
    Hit,
    IndexSpec,
    LexicalIndex,
    MultiVectorIndex,
    SearchPlan,
    ShardedHNSW,
    chamfer,
    chamfer_scores,
    exact_search,
    fde_documents,
    fde_queries,
    merge_topk,
    mmr,
    parse_spec,
    rrf,
    weighted_sum,
)
from repspace.engines.search.hubness import reduce_hubness
from repspace.workflows.bench import bench_search
from repspace.workflows.bench_budget import bench_budget
from repspace.workflows.search import (
    KnnResult,
    SearchRequest,
    SearchResult,
    build_index,
    drop_index,
    knn,
    list_indexes,
    search_space,
)

__all__ = [
    "FDEConfig",
    "FunnelIndex",
    "HNSWIndex",
    "HNSWParams",
    "Hit",
    "IndexSpec",
    "KnnResult",
    "LexicalIndex",
    "MultiVectorIndex",
    "SearchPlan",
    "SearchRequest",
    "SearchResult",
    "ShardedHNSW",
    "bench_budget",
    "bench_search",
    "build_index",
    "chamfer",
    "chamfer_scores",
    "drop_index",
    "exact_search",
    "fde_documents",
    "fde_queries",
    "knn",
    "list_indexes",
    "merge_topk",
    "mmr",
    "parse_spec",
    "reduce_hubness",
    "rrf",
    "search_space",
    "weighted_sum",
]
