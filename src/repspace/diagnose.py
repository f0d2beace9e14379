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

from repspace.engines import geometry as _geometry
from repspace.engines.geometry import *  # noqa: F403 - every name of its __all__
from repspace.workflows.diagnose import diagnose_layers, diagnose_space

__all__ = [
    *_geometry.__all__,
    "diagnose_layers",
    "diagnose_space",
]
