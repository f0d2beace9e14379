"""Post-process a space: centre, whiten, normalise, PCA, all-but-the-top, and chains of them.

The transforms are scikit-learn style estimators that serialise with their
fitted state (:func:`transforms_to_bytes`); :func:`derive_space` fits a chain
on a stored space and stores the result with the chain in its recipe, so that
queries go through the same chain (:func:`stored_transforms`).

Examples
--------
>>> import numpy as np
>>> from repspace.transforms import parse_transforms
>>> chain = parse_transforms("center,normalize")
>>> X = np.array([[1.0, 2.0], [3.0, 2.0]])
>>> for t in chain:
...     X = t.fit_transform(X)
>>> X.round(6).tolist()
[[-1.0, 0.0], [1.0, 0.0]]
"""

from repspace.engines import transforms as _transforms
from repspace.engines.transforms import *  # noqa: F403 - every name of its __all__
from repspace.workflows.stored_transforms import TransformedEncoder, apply_chain, stored_transforms
from repspace.workflows.transform import derive_space

__all__ = [
    *_transforms.__all__,
    "TransformedEncoder",
    "apply_chain",
    "derive_space",
    "stored_transforms",
]
