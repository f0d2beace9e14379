"""Maps between two spaces learned from paired items, and how to score them on held-out pairs.

METRICS.md, "Maps between spaces". The maps are scikit-learn style estimators
(hyper-parameters stored unchanged, ``fit(X, Y)`` returning ``self``, learned
state in attributes ending in ``_``) that hand their fitted state over as plain
arrays (``state()`` / ``from_state(params, state)``), so a workflow can store a
fitted map without pickle. Arithmetic is float64; outputs are float32.

=============================  ================================================================
:class:`Procrustes`            orthogonal map ``W = UVᵀ`` from ``SVD(XᵀY)`` on centred pairs
:class:`RidgeMap`              ``W = (XᵀX + λI)⁻¹XᵀY`` on centred pairs, ``λ`` by k-fold CV (MSE)
:class:`Relative`              both spaces into a shared space of cosines to paired anchors
:class:`Unsupervised`          orthogonal map with **no pairs**: profile / Gromov–Wasserstein matching, then
                               iterative Procrustes on mutual CSLS neighbours
:func:`relative_representation`  ``[cos(x, a₁), …, cos(x, a_K)]`` (Moschella et al. 2023)
:func:`fit_cca`                regularised CCA between two spaces over shared items (closed form, float64)
:func:`score_map`              ``top1``, ``mean_cosine``, ``mean_rank`` on held-out pairs, ± CSLS
:func:`grow_anchors`           greedily add the anchor pair that most raises the relative agreement (S095)
:func:`discover_anchors`       new anchor pairs among unpaired items: mutual neighbours of relative vectors (S095)
:class:`SubspaceMap`           Procrustes / ridge between projections on subspaces of each side (S150)
:func:`zero_shot_labels`       text-to-concept: labels of mapped rows by cosine to encoded label texts (S280)
=============================  ================================================================

Examples
--------
>>> import numpy as np
>>> from repspace.engines.align import Procrustes, score_map
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(600, 16))
>>> R, _ = np.linalg.qr(rng.normal(size=(16, 16)))
>>> Y = X @ R + 0.05 * rng.normal(size=(600, 16))
>>> m = Procrustes().fit(X[:500], Y[:500])
>>> s = score_map(m.transform(X[500:]), Y[500:])
>>> s.top1, s.mean_rank
(1.0, 1.0)
"""

from repspace.engines.align.anchors import (
    ANCHOR_OBJECTIVES,
    AnchorGrowth,
    AnchorMatches,
    discover_anchors,
    grow_anchors,
    relative_agreement,
)
from repspace.engines.align.cca import CCAResult, fit_cca
from repspace.engines.align.concepts import concept_scores, probe_accuracy, zero_shot_labels
from repspace.engines.align.maps import DEFAULT_ALPHAS, Procrustes, RidgeMap
from repspace.engines.align.relative import Relative, relative_representation
from repspace.engines.align.scores import MapScores, score_map
from repspace.engines.align.subspace import SUBSPACE_MAPS, SubspaceMap
from repspace.engines.align.unsupervised import Unsupervised, similarity_profiles

__all__ = [
    "ANCHOR_OBJECTIVES",
    "DEFAULT_ALPHAS",
    "SUBSPACE_MAPS",
    "AnchorGrowth",
    "AnchorMatches",
    "CCAResult",
    "MapScores",
    "Procrustes",
    "Relative",
    "RidgeMap",
    "SubspaceMap",
    "Unsupervised",
    "concept_scores",
    "discover_anchors",
    "fit_cca",
    "grow_anchors",
    "probe_accuracy",
    "relative_agreement",
    "relative_representation",
    "score_map",
    "similarity_profiles",
    "zero_shot_labels",
]
