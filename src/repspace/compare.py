"""Compare spaces: CKA, RSA, SVCCA, Procrustes, neighbourhood agreement, the items that moved.

:func:`compare` measures two arrays of paired rows; :func:`compare_spaces` two
stored spaces joined on their shared ids; :func:`compare_layers` every pair of
hidden layers of a transformer.

Examples
--------
>>> import numpy as np
>>> from repspace.compare import cka
>>> X = np.random.default_rng(0).standard_normal((100, 5))
>>> round(cka(X, 2 * X @ np.linalg.qr(np.random.default_rng(1).standard_normal((5, 5)))[0]), 6)
1.0
"""

from repspace.engines import compare as _compare
from repspace.engines.compare import *  # noqa: F403 - every name of its __all__
from repspace.workflows.compare import compare_layers, compare_spaces, joined

__all__ = [
    *_compare.__all__,
    "compare_layers",
    "compare_spaces",
    "joined",
]
