"""Translate one space into another: Procrustes, ridge maps, CCA, relative representations, unsupervised alignment,
anchor discovery, subspace-restricted maps and text-to-concept.

The maps are scikit-learn style estimators over paired rows (:class:`Procrustes`,
:class:`RidgeMap`, :class:`Unsupervised`); :func:`align_spaces` fits one between
two stored spaces on their shared ids and stores the translated space.

Examples
--------
>>> import numpy as np
>>> from repspace.align import Procrustes
>>> X = np.random.default_rng(0).standard_normal((50, 3))
>>> R = np.linalg.qr(np.random.default_rng(1).standard_normal((3, 3)))[0]
>>> bool(np.allclose(Procrustes().fit(X, X @ R).transform(X), X @ R, atol=1e-6))
True
"""

from repspace.engines import align as _align
from repspace.engines.align import *  # noqa: F403 - every name of its __all__
from repspace.workflows.align import Alignment, align_spaces
from repspace.workflows.align_anchors import (
    AnchorBootstrap,
    AnchorDiscovery,
    discover_space_anchors,
    grow_space_anchors,
)
from repspace.workflows.align_subspace import SubspaceAlignment, subspace_align_spaces
from repspace.workflows.text_to_concept import TextToConcept, text_to_concept_spaces

__all__ = [
    *_align.__all__,
    "Alignment",
    "AnchorBootstrap",
    "AnchorDiscovery",
    "SubspaceAlignment",
    "TextToConcept",
    "align_spaces",
    "discover_space_anchors",
    "grow_space_anchors",
    "subspace_align_spaces",
    "text_to_concept_spaces",
]
