"""Diagnose a space's geometry: isotropy, spectrum, intrinsic dimension, hubness, norms, uniformity.

:func:`diagnose` measures an array; :func:`diagnose_space` a stored space
(keeping per-item figures), :func:`diagnose_layers` every hidden layer of a
transformer. The single measures are here too, with the neighbour graph they
share (:func:`knn_graph`).

Examples
--------
>>> import numpy as np
>>> from repspace.diagnose import isotropy
>>> X = np.random.default_rng(0).standard_normal((500, 8))
>>> round(isotropy(X).isoscore, 1) > 0.9
True
"""

from repspace.engines.geometry import (
    EXACT_MAX,
    Diagnosis,
    Estimate,
    HubnessResult,
    IntrinsicDimension,
    IsotropyResult,
    KnnGraph,
    NormStats,
    RogueDimension,
    RogueDimensions,
    SpectrumResult,
    alignment,
    covariance_eigenvalues,
    diagnose,
    effective_rank,
    gini,
    hubness,
    intrinsic_dimension,
    isoscore,
    isotropy,
    k_occurrence,
    knn_graph,
    local_id,
    mean_cosine,
    mle,
    norms,
    rankme,
    robin_hood,
    rogue_dimensions,
    spectrum,
    spectrum_alpha,
    top_pc_share,
    twonn,
    uniformity,
)
from repspace.workflows.diagnose import diagnose_layers, diagnose_space

__all__ = [
    "EXACT_MAX",
    "Diagnosis",
    "Estimate",
    "HubnessResult",
    "IntrinsicDimension",
    "IsotropyResult",
    "KnnGraph",
    "NormStats",
    "RogueDimension",
    "RogueDimensions",
    "SpectrumResult",
    "alignment",
    "covariance_eigenvalues",
    "diagnose",
    "diagnose_layers",
    "diagnose_space",
    "effective_rank",
    "gini",
    "hubness",
    "intrinsic_dimension",
    "isoscore",
    "isotropy",
    "k_occurrence",
    "knn_graph",
    "local_id",
    "mean_cosine",
    "mle",
    "norms",
    "rankme",
    "robin_hood",
    "rogue_dimensions",
    "spectrum",
    "spectrum_alpha",
    "top_pc_share",
    "twonn",
    "uniformity",
]
