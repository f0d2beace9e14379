"""Questions the analysis papers ask of one space, as pure functions of arrays (issue 34).

One module per question: :mod:`~repspace.engines.analyze.ricci` (Ollivier-Ricci curvature of the kNN graph),
:mod:`~repspace.engines.analyze.capacity` (near-orthogonality tolerance and the number of directions it allows),
:mod:`~repspace.engines.analyze.compat` (model-update compatibility criteria),
:mod:`~repspace.engines.analyze.compat_head` (a head onto fixed d-simplex prototypes),
:mod:`~repspace.engines.analyze.doc_profile` (document similarity profiles),
:mod:`~repspace.engines.analyze.ideal_words` (additive attribute × object grids),
:mod:`~repspace.engines.analyze.feature_audit` (variance explained per known feature),
:mod:`~repspace.engines.analyze.feature_norms` (word vectors to human feature norms, PLSR beside ridge),
:mod:`~repspace.engines.analyze.simplex` (sibling categories as a simplex).
Each returns a frozen result with ``to_dict()`` in the JSON names of docs/METRICS.md.

Examples
--------
>>> import numpy as np
>>> round(graph_ricci([(0, 1), (1, 2), (0, 2)], 3).mean_curvature, 2)
0.75
"""

from repspace.engines.analyze.capacity import Capacity, capacity, capacity_log10, packing_epsilon
from repspace.engines.analyze.circular import Circularity, circularity
from repspace.engines.analyze.hierarchy import (
    HierarchyOrthogonality,
    HierarchyPair,
    concept_vector,
    hierarchy_orthogonality,
)
from repspace.engines.analyze.parallelograms import Parallelograms, parallelograms
from repspace.engines.analyze.ideal_words import IdealWords, ideal_word_vectors, ideal_words, leave_one_out_predictions
from repspace.engines.analyze.feature_audit import FeatureAudit, FeatureStrength, feature_audit, feature_r2
from repspace.engines.analyze.feature_norms import FeatureNormPrediction, NormScore, feature_norm_prediction
from repspace.engines.analyze.simplex import CategoricalSimplex, categorical_simplex, simplex_shape, simplex_volume
from repspace.engines.analyze.compat import (
    Compatibility,
    LabelRetrieval,
    PairCriterion,
    compatibility,
    label_retrieval,
    pair_criterion,
)
from repspace.engines.analyze.compat_head import CompatibilityHead, simplex_prototypes
from repspace.engines.analyze.doc_profile import DocProfile, DocProfiles, doc_profiles
from repspace.engines.analyze.ricci import (
    CurvatureSummary,
    RicciCurvature,
    graph_ricci,
    knn_ricci,
    union_edges,
)
from repspace.engines.analyze.topics import TopicGeometry, topic_geometry
from repspace.engines.analyze.similarity_ci import Interval, SimilarityCI, SpreadOut, similarity_ci, spread_out
from repspace.engines.analyze.limit import (
    CriticalDimension,
    FreeEmbeddingFit,
    LimitCurve,
    LimitPoint,
    critical_dimension,
    free_embedding_fit,
    limit_curve,
    paper_critical_n,
    topk_relevance,
)

__all__ = [
    "CategoricalSimplex",
    "FeatureAudit",
    "FeatureNormPrediction",
    "FeatureStrength",
    "IdealWords",
    "NormScore",
    "categorical_simplex",
    "feature_audit",
    "feature_norm_prediction",
    "feature_r2",
    "ideal_word_vectors",
    "ideal_words",
    "leave_one_out_predictions",
    "simplex_shape",
    "simplex_volume",
    "Capacity",
    "Circularity",
    "Compatibility",
    "CompatibilityHead",
    "CriticalDimension",
    "CurvatureSummary",
    "DocProfile",
    "DocProfiles",
    "FreeEmbeddingFit",
    "HierarchyOrthogonality",
    "HierarchyPair",
    "LabelRetrieval",
    "LimitCurve",
    "LimitPoint",
    "PairCriterion",
    "Parallelograms",
    "RicciCurvature",
    "TopicGeometry",
    "capacity",
    "capacity_log10",
    "circularity",
    "compatibility",
    "concept_vector",
    "critical_dimension",
    "doc_profiles",
    "free_embedding_fit",
    "graph_ricci",
    "hierarchy_orthogonality",
    "knn_ricci",
    "label_retrieval",
    "limit_curve",
    "packing_epsilon",
    "pair_criterion",
    "paper_critical_n",
    "parallelograms",
    "simplex_prototypes",
    "topic_geometry",
    "topk_relevance",
    "union_edges",
]
__all__ += ["Interval", "SimilarityCI", "SpreadOut", "similarity_ci", "spread_out"]
