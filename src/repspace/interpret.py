"""Interpret a space: probes, concept axes, sparse dictionaries, concept erasure, mean decompositions.

The engine functions take arrays (:func:`probe`, :func:`axis`,
:func:`concept_basis`, :class:`SparseAutoencoder`, :class:`LeaceEraser`,
:func:`polar`, :func:`matching_pursuit` ...); the ``*_space`` functions and
:func:`fit_dictionary` work on stored spaces and their metadata.

Examples
--------
>>> import numpy as np
>>> from repspace.interpret import probe
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((200, 4)); y = (X[:, 0] > 0).astype(int)
>>> result = probe(X, y, cv=3)
>>> result.metric, result.score > 0.9
('accuracy', True)
"""

from repspace.engines.interpret import (
    Axis,
    AxisSignificance,
    ConceptBasis,
    ErasureReport,
    GaussianTransport,
    GroupMapComparison,
    GroupMapScore,
    LatentMatch,
    LayerDecomposition,
    LeaceEraser,
    MatchingPursuit,
    MeanDecomposition,
    PairAttribution,
    PolarResult,
    ProbeResult,
    SaeMetrics,
    SparseAutoencoder,
    Stability,
    TopItems,
    attribute_pair,
    axis,
    axis_significance,
    compare_group_maps,
    concept_basis,
    control_labels,
    erase,
    evaluate_erasure,
    match_latents,
    matching_pursuit,
    mean_decomposition,
    mean_decomposition_layers,
    polar,
    probe,
    probe_pipeline,
    rank_axis,
    rank_correlation,
    sae_metrics,
    stability,
    top_items,
)
from repspace.workflows.dictionary import (
    Dictionary,
    DictionaryReport,
    LatentSummary,
    fit_dictionary,
    list_dictionaries,
    load_dictionary,
)
from repspace.workflows.interpret import AxisReport, axis_space, erase_space, labelled, pole_vectors, probe_space

__all__ = [
    "Axis",
    "AxisReport",
    "AxisSignificance",
    "ConceptBasis",
    "Dictionary",
    "DictionaryReport",
    "ErasureReport",
    "GaussianTransport",
    "GroupMapComparison",
    "GroupMapScore",
    "LatentMatch",
    "LatentSummary",
    "LayerDecomposition",
    "LeaceEraser",
    "MatchingPursuit",
    "MeanDecomposition",
    "PairAttribution",
    "PolarResult",
    "ProbeResult",
    "SaeMetrics",
    "SparseAutoencoder",
    "Stability",
    "TopItems",
    "attribute_pair",
    "axis",
    "axis_significance",
    "axis_space",
    "compare_group_maps",
    "concept_basis",
    "control_labels",
    "erase",
    "erase_space",
    "evaluate_erasure",
    "fit_dictionary",
    "labelled",
    "list_dictionaries",
    "load_dictionary",
    "match_latents",
    "matching_pursuit",
    "mean_decomposition",
    "mean_decomposition_layers",
    "polar",
    "pole_vectors",
    "probe",
    "probe_pipeline",
    "probe_space",
    "rank_axis",
    "rank_correlation",
    "sae_metrics",
    "stability",
    "top_items",
]
