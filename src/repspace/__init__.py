"""repspace: an engine for representation spaces.

Embed data into a space and keep it durably with its recipe, search it, measure
its geometry, compare spaces, evaluate them.

Examples
--------
>>> import numpy as np, tempfile, os
>>> import repspace
>>> store = repspace.Store(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> space = store.create_space("toy", dim=2)
>>> _ = space.add(["x", "y"], np.array([[1.0, 0.0], [0.0, 1.0]]))
>>> space.search(np.array([1.0, 0.1]), k=1)[0].id
'x'
"""

from repspace.errors import (
    ConflictError,
    EncoderError,
    FilterError,
    InputError,
    NotFoundError,
    RepspaceError,
    StoreError,
)
from repspace.space import Metric, SpaceInfo
from repspace.store import Space, Store

__version__ = "0.1.0"

__all__ = [
    "Store",
    "Space",
    "SpaceInfo",
    "Metric",
    "RepspaceError",
    "InputError",
    "NotFoundError",
    "FilterError",
    "StoreError",
    "EncoderError",
    "ConflictError",
    "__version__",
]
