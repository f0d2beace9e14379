"""repspace: an engine for representation spaces.

Embed data into a space and keep it durably with its recipe, search it, measure
its geometry, compare spaces, evaluate them.

Import a capability by name: :mod:`repspace.store`, :mod:`repspace.embed`,
:mod:`repspace.search`, :mod:`repspace.diagnose`, :mod:`repspace.compare`,
:mod:`repspace.align`, :mod:`repspace.transforms`, :mod:`repspace.evaluate`,
:mod:`repspace.interpret`, :mod:`repspace.learn`, :mod:`repspace.layers`,
:mod:`repspace.explore`, :mod:`repspace.distributed` and :mod:`repspace.errors`
each re-export the supported names (``__all__``; docs/API.md lists them). The
layers below them, :mod:`repspace.core` < :mod:`repspace.engines` <
:mod:`repspace.workflows` < :mod:`repspace.interfaces`, are the implementation
(docs/ARCHITECTURE.md). This module keeps the few names almost every program
needs: the store and the errors.

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

from repspace.core.errors import (
    ConflictError,
    EncoderError,
    FilterError,
    InputError,
    NotFoundError,
    RepspaceError,
    StoreError,
)
from repspace.core.space import Metric, SpaceInfo
from repspace.workflows.store import Space, Store

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
