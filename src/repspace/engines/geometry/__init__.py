"""The geometry of one space, as pure functions of arrays (definitions: ``METRICS.md``, geometry).

Each metric has its own function and a frozen result with ``to_dict()`` in the
JSON names of ``METRICS.md``: norms (:func:`norms`), hubness (:func:`hubness`:
k-occurrence, k-skewness, Robin Hood, antihub rate, hub occurrence, Gini),
isotropy (:func:`isotropy`: mean cosine with an interval, top-PC share, IsoScore,
rogue dimensions), intrinsic dimension (:func:`intrinsic_dimension`: TwoNN, MLE,
per-item local ID), rank and spectrum (:func:`spectrum`: effective rank, RankMe,
decay α), :func:`uniformity` and :func:`alignment`; :func:`diagnose` computes
them all at once, with one-line readings (:class:`Diagnosis`). Neighbour graphs come from
:func:`knn_graph` (exact blocked BLAS up to :data:`EXACT_MAX` items, else HNSW with
its recall measured on a sample and reported).

Examples
--------
>>> import numpy as np
>>> x = np.random.default_rng(0).standard_normal((500, 8))
>>> round(norms(x).mean, 2), hubness(x, k=5).k
(2.74, 5)
"""

from repspace.core.estimate import Estimate
from repspace.core.knn import EXACT_MAX, KnnGraph, knn_graph
from repspace.engines.geometry.diagnose import Diagnosis, diagnose  # noqa: E402 - after the metrics it combines
from repspace.engines.geometry.hubness import (
    HubnessResult,
    gini,
    hubness,
    k_occurrence,
    robin_hood,
)
from repspace.engines.geometry.intrinsic import (
    IntrinsicDimension,
    intrinsic_dimension,
    local_id,
    mle,
    twonn,
)
from repspace.engines.geometry.isotropy import (
    IsotropyResult,
    RogueDimension,
    RogueDimensions,
    isoscore,
    isotropy,
    mean_cosine,
    rogue_dimensions,
    top_pc_share,
)
from repspace.engines.geometry.norms import NormStats, norms
from repspace.engines.geometry.spectrum import (
    SpectrumResult,
    covariance_eigenvalues,
    effective_rank,
    rankme,
    spectrum,
    spectrum_alpha,
)
from repspace.engines.geometry.uniformity import alignment, uniformity

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
