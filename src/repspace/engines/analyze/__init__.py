"""Questions the analysis papers ask of one space, as pure functions of arrays (issue 34).

One module per question: :mod:`~repspace.engines.analyze.ricci` (Ollivier-Ricci curvature of the kNN graph),
:mod:`~repspace.engines.analyze.capacity` (near-orthogonality tolerance and the number of directions it allows).
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
from repspace.engines.analyze.ricci import (
    CurvatureSummary,
    RicciCurvature,
    graph_ricci,
    knn_ricci,
    union_edges,
)
from repspace.engines.analyze.topics import TopicGeometry, topic_geometry
from repspace.engines.analyze.dimension import LinearNonlinearID, linear_nonlinear_id, pca_dimension
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
from repspace.engines.analyze.tracking import SpaceQuality, lidar_views, space_quality, view_alignment

__all__ = [
    "Capacity",
    "Circularity",
    "CurvatureSummary",
    "HierarchyOrthogonality",
    "HierarchyPair",
    "Parallelograms",
    "RicciCurvature",
    "TopicGeometry",
    "capacity",
    "capacity_log10",
    "circularity",
    "concept_vector",
    "graph_ricci",
    "hierarchy_orthogonality",
    "knn_ricci",
    "packing_epsilon",
    "parallelograms",
    "topic_geometry",
    "union_edges",
]
__all__ += ["CriticalDimension", "FreeEmbeddingFit", "LimitCurve", "LimitPoint", "LinearNonlinearID", "SpaceQuality",
            "critical_dimension", "free_embedding_fit", "lidar_views", "limit_curve", "linear_nonlinear_id",
            "paper_critical_n", "pca_dimension", "space_quality", "topk_relevance", "view_alignment"]
