"""Comparing two spaces over the same items, as pure functions of arrays (definitions: ``METRICS.md``, compare).

Each measure takes two arrays with the same rows (items) and any numbers of
columns, and returns a float or a small frozen result with ``to_dict()`` in
METRICS.md's JSON names:

* :func:`cka_linear` (alias :func:`cka`) and :func:`cka_debiased`: centered
  kernel alignment, feature-space form, one streamed pass, ``O(d²)`` memory;
* :func:`mutual_knn`, :func:`neighbourhood_jaccard` and :func:`changed_items`:
  agreement of the cosine k-nearest-neighbour graphs (exact up to 50,000
  items, HNSW with measured recall above);
* :func:`rsa`: Spearman correlation of the pairwise cosine distances;
* :func:`procrustes`: the orthogonal Procrustes distance, in ``[0, √2]``;
* :func:`svcca`: mean canonical correlation of the top singular directions;
* :func:`feature_universality` and :func:`feature_flow`: two sparse dictionaries' features matched by activation
  correlation and compared by SVCCA (Lan et al. 2024), and consecutive layers' features linked into a flow graph.

:data:`MEASURES` declares, for each, whether larger means more similar, whether
it is symmetric and what it is invariant to (as ReSi does); :func:`compare`
runs them all, sharing the moment pass and the kNN graphs, and returns a
:class:`Comparison`. Undefined cases (a space with no variance, ``n ≤ k``,
too few items) raise :class:`~repspace.core.errors.InputError` with one readable
line; no measure returns NaN.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((400, 16))
>>> Q, _ = np.linalg.qr(rng.standard_normal((16, 16)))
>>> Y = 2.0 * X @ Q + 0.3 * rng.standard_normal((400, 16))   # rotated, scaled, noisy copy
>>> c = compare(X, Y, k=10)
>>> {key: round(v, 2) for key, v in c.scores().items()}  # doctest: +NORMALIZE_WHITESPACE
{'cka_linear': 0.98, 'cka_debiased': 0.98, 'mutual_knn': 0.79, 'neighbourhood_jaccard': 0.66,
 'rsa': 0.97, 'procrustes': 0.15, 'svcca': 0.99}
>>> round(cka(X, X @ Q), 10), MEASURES["procrustes"].larger_is_more_similar
(1.0, False)
"""

from repspace.engines.compare._measure import INVARIANCES, MEASURES, Measure
from repspace.engines.compare.cka import cka, cka_debiased, cka_linear
from repspace.engines.compare.compare import Comparison, compare
from repspace.engines.compare.neighbours import (
    ChangedItem,
    ChangedItems,
    MutualKnn,
    NeighbourhoodJaccard,
    changed_items,
    mutual_knn,
    neighbourhood_jaccard,
)
from repspace.engines.compare.procrustes import procrustes
from repspace.engines.compare.rsa import rsa
from repspace.engines.compare.svcca import SVCCAResult, svcca
from repspace.engines.compare.universality import (
    MATCH_METHODS,
    FeatureMatch,
    FeatureUniversality,
    feature_correlations,
    feature_universality,
    match_features,
)
from repspace.engines.compare.feature_flow import FLOW_MODES, FeatureFlow, FlowEdge, FlowStep, feature_flow

__all__ = [
    "FLOW_MODES",
    "INVARIANCES",
    "MATCH_METHODS",
    "MEASURES",
    "ChangedItem",
    "ChangedItems",
    "Comparison",
    "FeatureFlow",
    "FeatureMatch",
    "FeatureUniversality",
    "FlowEdge",
    "FlowStep",
    "Measure",
    "MutualKnn",
    "NeighbourhoodJaccard",
    "SVCCAResult",
    "changed_items",
    "cka",
    "cka_debiased",
    "cka_linear",
    "compare",
    "feature_correlations",
    "feature_flow",
    "feature_universality",
    "match_features",
    "mutual_knn",
    "neighbourhood_jaccard",
    "procrustes",
    "rsa",
    "svcca",
]
