"""Reading a space: probes with control tasks, semantic axes, sparse dictionaries, concept erasure.

Arrays in, results out, no store (the workflows and the CLI bring stored spaces):

* :mod:`~repspace.engines.interpret.probes`: linear, ridge and k-sparse probes, each reported with the score
  of a control task and the selectivity (score minus control);
* :mod:`~repspace.engines.interpret.axes`: pole-difference axes (SemAxis), POLAR bases, rank axes, and their
  significance against random directions;
* :mod:`~repspace.engines.interpret.sae`: a top-k sparse autoencoder (torch on CPU), its metrics, matching
  pursuit over its dictionary, stability and attribution;
* :mod:`~repspace.engines.interpret.erasure`: LEACE and the Gaussian optimal-transport map between groups;
* :mod:`~repspace.engines.interpret.decompose`: token states as global + positional + context means + residual,
  with each part's variance share; concept bases (items as similarities to a named vocabulary).
"""

from repspace.engines.interpret.axes import (
    Axis,
    AxisSignificance,
    PolarResult,
    axis,
    axis_significance,
    polar,
    rank_axis,
    rank_correlation,
)
from repspace.engines.interpret.decompose import (
    ConceptBasis,
    LayerDecomposition,
    MeanDecomposition,
    concept_basis,
    mean_decomposition,
    mean_decomposition_layers,
)
from repspace.engines.interpret.erasure import (
    ErasureReport,
    GaussianTransport,
    GroupMapComparison,
    GroupMapScore,
    LeaceEraser,
    compare_group_maps,
    erase,
    evaluate_erasure,
)
from repspace.engines.interpret.probes import ProbeResult, control_labels, probe, probe_pipeline
from repspace.engines.interpret.sae import (
    LatentMatch,
    MatchingPursuit,
    PairAttribution,
    SaeMetrics,
    SparseAutoencoder,
    Stability,
    TopItems,
    attribute_pair,
    match_latents,
    matching_pursuit,
    sae_metrics,
    stability,
    top_items,
)

__all__ = [
    "Axis", "AxisSignificance", "PolarResult", "axis", "axis_significance", "polar", "rank_axis", "rank_correlation",
    "ErasureReport", "GaussianTransport", "GroupMapComparison", "GroupMapScore", "LeaceEraser", "compare_group_maps",
    "erase", "evaluate_erasure",
    "ProbeResult", "control_labels", "probe", "probe_pipeline",
    "ConceptBasis", "LayerDecomposition", "MeanDecomposition", "concept_basis", "mean_decomposition",
    "mean_decomposition_layers",
    "LatentMatch", "MatchingPursuit", "PairAttribution", "SaeMetrics", "SparseAutoencoder", "Stability", "TopItems",
    "attribute_pair", "match_latents", "matching_pursuit", "sae_metrics", "stability", "top_items",
]
