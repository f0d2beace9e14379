"""The analyze workflows: the questions of issue 34 asked of stored spaces, one module per question.

Each reads a space's vectors, calls its engine (:mod:`repspace.engines.analyze`) and keeps per-item figures as
metadata where the question has them: :mod:`~repspace.workflows.analyze.ricci` (curvature of the kNN graph, of
one space or two compared), :mod:`~repspace.workflows.analyze.capacity` (near-orthogonality capacity).

Examples
--------
>>> from repspace.store import example_space
>>> ricci_space(example_space(40, 4), k=3).curvature.k
3
"""

from repspace.workflows.analyze.capacity import SpaceCapacity, capacity_space
from repspace.workflows.analyze.circular import SpaceCircularity, circular_space
from repspace.workflows.analyze.hierarchy import SpaceHierarchy, hierarchy_space, hierarchy_tree
from repspace.workflows.analyze.parallelograms import SpaceParallelograms, parallelograms_space
from repspace.workflows.analyze.compat import CompatHeadCheck, compat_head_retrieval, compat_head_spaces
from repspace.workflows.analyze.doc_profile import SpaceDocProfiles, doc_profile_space
from repspace.workflows.analyze.ricci import CurvatureComparison, SpaceCurvature, ricci_space, ricci_spaces
from repspace.workflows.analyze.topics import SpaceTopics, topics_space
from repspace.workflows.analyze.dimension import LayerDimensions, SpaceDimension, dimension_layers, dimension_space
from repspace.workflows.analyze.track import QualityTrack, track_spaces
from repspace.workflows.analyze.ideal_words import (
    SpaceIdealWords,
    grid_texts,
    ideal_words_encoder,
    ideal_words_grid,
    ideal_words_space,
)
from repspace.workflows.analyze.features import (
    SpaceFeatureAudit,
    SpaceFeatureNorms,
    feature_audit_space,
    feature_norms_space,
    read_norms,
)
from repspace.workflows.analyze.simplex import SpaceSimplex, category_words, simplex_space
from repspace.workflows.analyze.similarity_ci import SpaceSimilarityCI, similarity_ci_space
from repspace.workflows.analyze.local_topology import SpaceLocalTopology, local_topology_space
from repspace.workflows.analyze.compat_chain import (
    CHAIN_METHODS,
    ChainPair,
    ChainTriple,
    CompatChain,
    compat_chain,
    compat_chain_encoders,
)

__all__ = ["CurvatureComparison", "SpaceCapacity", "SpaceCurvature", "capacity_space", "ricci_space",
           "ricci_spaces"]
__all__ += ["SpaceCircularity", "SpaceHierarchy", "SpaceParallelograms", "SpaceTopics", "circular_space",
            "hierarchy_space", "hierarchy_tree", "parallelograms_space", "topics_space"]
__all__ += ["CompatHeadCheck", "SpaceDocProfiles", "compat_head_retrieval", "compat_head_spaces", "doc_profile_space"]
__all__ += ["LayerDimensions", "QualityTrack", "SpaceDimension", "dimension_layers", "dimension_space",
            "track_spaces"]
__all__ += ["SpaceFeatureAudit", "SpaceFeatureNorms", "SpaceIdealWords", "SpaceSimplex", "category_words",
            "feature_audit_space", "feature_norms_space", "grid_texts", "ideal_words_encoder", "ideal_words_grid",
            "ideal_words_space", "read_norms", "simplex_space"]
__all__ += ["SpaceSimilarityCI", "similarity_ci_space"]
__all__ += ["SpaceLocalTopology", "local_topology_space"]
__all__ += ["CHAIN_METHODS", "ChainPair", "ChainTriple", "CompatChain", "compat_chain", "compat_chain_encoders"]
