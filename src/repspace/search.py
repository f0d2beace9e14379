"""Search spaces: exact and HNSW, filtered, hybrid with BM25, diversified, hubness-reduced, multi-vector, sparse.

:func:`search_space` (and :meth:`repspace.store.Space.search`) answers one
query over a stored space: a :class:`SearchRequest` (query text, vector or id,
``k``, ``where``, ``index``, ``hybrid``, ``mmr`` ...) validated once, the same
type the CLI builds and the HTTP service takes as its body, and always a
:class:`SearchResult` (the hits and the plan). :func:`knn` searches a batch of
vectors. :func:`set_search` ranks by examples (SetCSE set operations: near every ``all_of``
item, far from the ``none_of`` ones; a :class:`SetQuery`), :func:`maxsim_search` by exact
late interaction over token vectors. Indexes are built,
listed and dropped with :func:`build_index`, :func:`list_indexes` and
:func:`drop_index` from a spec (:func:`parse_spec`). The in-memory indexes
(:class:`HNSWIndex`, :class:`LexicalIndex`, :class:`MultiVectorIndex`,
:class:`FunnelIndex`, :class:`SparseIndex`) and the rank fusions work on plain arrays too. A sparse
space (``layout="sparse"``) is searched exactly over an inverted index (:func:`search_sparse`,
which :func:`search_space` runs for it); :func:`expected_flops` measures what that costs. A multi-vector
space (``layout="multivector"``) is searched by MUVERA's shortlist rescored by exact MaxSim, or exact MaxSim
over all (:func:`search_multivector`, its index kept per generation by :func:`multivector_index`). A learned
reranker (:func:`train_reranker` on judged queries, :func:`apply_reranker`, :class:`RankerModel`)
reorders a space's dense candidates by the dense score and lexical features. :func:`derive_sae_codes` and
:func:`derive_bm25` write a dense space's SAE codes or BM25 impact weights as a sparse space searchable by text;
:func:`convex` fuses a sparse and a dense ranking with a weight :func:`tune_convex` picks on dev queries.

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
    SparseIndex,
    SparseQuery,
    SparseStatistics,
    chamfer,
    chamfer_scores,
    exact_search,
    fde_documents,
    fde_queries,
    maxsim_search,
    merge_topk,
    mmr,
    parse_spec,
    rrf,
    set_query_vector,
    set_scores,
    sparse_query,
    sparse_statistics,
    weighted_sum,
)
from repspace.core.sparse import expected_flops
from repspace.engines.search.dlmmr import length_mmr
from repspace.engines.search.gaussian import (
    gaussian_kl,
    kl_from_inner_products,
    kl_item_vectors,
    kl_query_vectors,
    mips_to_l2,
)
from repspace.engines.search.fusion_tuning import convex, dev_test_split, tune_convex
from repspace.engines.search.hubness import reduce_hubness
from repspace.engines.search.ltr import RankerModel
from repspace.engines.search.pruning import quality_scores
from repspace.engines.search.seismic import SeismicIndex, SeismicParams, parse_seismic_spec
from repspace.workflows.bench import bench_search
from repspace.workflows.rerank import RerankApplyRequest, RerankTrainRequest, apply_reranker, train_reranker
from repspace.workflows.search.gaussian_search import search_gaussian
from repspace.workflows.search.prune import PruneResult, prune_space
from repspace.workflows.search.rerank_stage import reranker_for
from repspace.workflows.bench_budget import bench_budget
from repspace.workflows.ingest.derived import DerivedSparseReport, derive_bm25, derive_sae_codes, derived_text_query
from repspace.workflows.search import (
    KnnResult,
    SearchRequest,
    SearchResult,
    SetQuery,
    build_index,
    drop_index,
    knn,
    list_indexes,
    search_space,
    set_search,
    search_sparse,
    sparse_index,
    search_multivector,
    multivector_index,
)

__all__ = [
    "FDEConfig",
    "FunnelIndex",
    "HNSWIndex",
    "HNSWParams",
    "DerivedSparseReport",
    "Hit",
    "IndexSpec",
    "KnnResult",
    "LexicalIndex",
    "MultiVectorIndex",
    "RankerModel",
    "RerankApplyRequest",
    "RerankTrainRequest",
    "PruneResult",
    "SearchPlan",
    "SearchRequest",
    "SearchResult",
    "SeismicIndex",
    "SeismicParams",
    "SetQuery",
    "ShardedHNSW",
    "SparseIndex",
    "SparseQuery",
    "SparseStatistics",
    "apply_reranker",
    "bench_budget",
    "bench_search",
    "parse_seismic_spec",
    "build_index",
    "chamfer",
    "chamfer_scores",
    "convex",
    "derive_bm25",
    "derive_sae_codes",
    "derived_text_query",
    "dev_test_split",
    "drop_index",
    "exact_search",
    "expected_flops",
    "fde_documents",
    "fde_queries",
    "gaussian_kl",
    "kl_from_inner_products",
    "kl_item_vectors",
    "kl_query_vectors",
    "length_mmr",
    "knn",
    "list_indexes",
    "maxsim_search",
    "merge_topk",
    "mips_to_l2",
    "mmr",
    "parse_spec",
    "prune_space",
    "quality_scores",
    "reduce_hubness",
    "reranker_for",
    "rrf",
    "search_space",
    "set_query_vector",
    "set_scores",
    "set_search",
    "search_gaussian",
    "search_sparse",
    "sparse_index",
    "search_multivector",
    "multivector_index",
    "sparse_query",
    "sparse_statistics",
    "train_reranker",
    "tune_convex",
    "weighted_sum",
]
