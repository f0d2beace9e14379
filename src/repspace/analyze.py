"""Analyze a space: the structure and capacity questions of the analysis papers (issue 34).

Ollivier-Ricci curvature of a space's kNN graph (:func:`knn_ricci` on an array, :func:`graph_ricci` on any
graph, :func:`ricci_space` on a stored space with per-item curvature kept as metadata, :func:`ricci_spaces` for
two spaces compared over their shared items), and the near-orthogonality tolerance ε with the number of nearly
orthogonal directions it allows (:func:`capacity`, :func:`capacity_space`), bootstrap intervals on cosine
comparisons with the spread of non-matching pairs (:func:`similarity_ci`, :func:`similarity_ci_space`,
:func:`spread_out`), and per-item local topology against a datastore (:func:`local_topology`,
:func:`local_topology_space`).

Examples
--------
>>> import numpy as np
>>> from repspace.analyze import capacity, graph_ricci
>>> graph_ricci([(0, 1), (1, 2), (2, 0)], 3).mean_curvature
0.75
>>> round(capacity(np.eye(3)).epsilon, 3)
0.0
"""

from repspace.engines import analyze as _analyze
from repspace.engines.analyze import *  # noqa: F403 - every name of its __all__
from repspace.engines.geometry.dimension_linear import LinearNonlinearID, linear_nonlinear_id, pca_dimension
from repspace.engines.geometry.tracking import SpaceQuality, lidar_views, space_quality, view_alignment
from repspace.workflows.analyze import (
    CompatHeadCheck,
    CurvatureComparison,
    SpaceCapacity,
    SpaceCurvature,
    SpaceDocProfiles,
    capacity_space,
    compat_head_retrieval,
    compat_head_spaces,
    doc_profile_space,
    ricci_space,
    ricci_spaces,
)
from repspace.workflows.analyze import (
    SpaceCircularity,
    SpaceHierarchy,
    SpaceParallelograms,
    SpaceTopics,
    circular_space,
    hierarchy_space,
    parallelograms_space,
    topics_space,
)
from repspace.workflows.analyze import (
    SpaceFeatureAudit,
    SpaceFeatureNorms,
    SpaceIdealWords,
    SpaceSimplex,
    category_words,
    feature_audit_space,
    feature_norms_space,
    ideal_words_encoder,
    ideal_words_grid,
    ideal_words_space,
    read_norms,
    simplex_space,
    CHAIN_METHODS,
    ChainPair,
    ChainTriple,
    CompatChain,
    compat_chain,
    compat_chain_encoders,
)
from repspace.workflows.analyze import (
    LayerDimensions,
    QualityTrack,
    SpaceDimension,
    dimension_layers,
    dimension_space,
    track_spaces,
)
from repspace.workflows.analyze import SpaceLocalTopology, SpaceSimilarityCI, local_topology_space, similarity_ci_space
from repspace.engines.geometry.local_topology import LocalTopology, local_topology

__all__ = [
    *_analyze.__all__,
    "LinearNonlinearID",
    "SpaceQuality",
    "lidar_views",
    "linear_nonlinear_id",
    "pca_dimension",
    "space_quality",
    "view_alignment",
    "CHAIN_METHODS",
    "ChainPair",
    "ChainTriple",
    "CompatChain",
    "compat_chain",
    "compat_chain_encoders",
    "CompatHeadCheck",
    "CurvatureComparison",
    "SpaceCapacity",
    "SpaceCurvature",
    "SpaceDocProfiles",
    "capacity_space",
    "compat_head_retrieval",
    "compat_head_spaces",
    "doc_profile_space",
    "ricci_space",
    "ricci_spaces",
    "SpaceCircularity",
    "SpaceHierarchy",
    "SpaceParallelograms",
    "SpaceTopics",
    "circular_space",
    "hierarchy_space",
    "parallelograms_space",
    "topics_space",
    "LayerDimensions",
    "QualityTrack",
    "SpaceDimension",
    "dimension_layers",
    "dimension_space",
    "track_spaces",
    "SpaceFeatureAudit",
    "SpaceFeatureNorms",
    "SpaceIdealWords",
    "SpaceSimplex",
    "category_words",
    "feature_audit_space",
    "feature_norms_space",
    "ideal_words_encoder",
    "ideal_words_grid",
    "ideal_words_space",
    "read_norms",
    "simplex_space",
    "SpaceSimilarityCI",
    "similarity_ci_space",
    "LocalTopology",
    "SpaceLocalTopology",
    "local_topology",
    "local_topology_space",
]
