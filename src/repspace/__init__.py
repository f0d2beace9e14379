"""repspace: an engine for representation spaces.

Embed data into a space and keep it durably with its recipe, search it, measure
its geometry, compare spaces, evaluate them.

The package is layered (DESIGN.md; the import contract in pyproject.toml keeps
the arrows pointing down): :mod:`repspace.core` (errors, arrays, the store),
:mod:`repspace.engines` (arrays in, results out), :mod:`repspace.workflows`
(over a store, with encoders) and :mod:`repspace.interfaces` (CLI, reports).
The short paths users know stay importable: ``repspace.search``,
``repspace.geometry``, ``repspace.compare``, ``repspace.align``,
``repspace.transforms``, ``repspace.eval``, ``repspace.evaluate``,
``repspace.encoders``, ``repspace.store``, ``repspace.errors`` (see
:mod:`repspace._aliases`).

Examples
--------
>>> import numpy as np, tempfile, os
>>> import repspace
>>> store = repspace.Store(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> space = store.create_space("toy", dim=2)
>>> _ = space.add(["x", "y"], np.array([[1.0, 0.0], [0.0, 1.0]]))
>>> space.search(np.array([1.0, 0.1]), k=1)[0].id
'x'
>>> from repspace.geometry import diagnose  # the short path of repspace.engines.geometry
"""

from repspace import _aliases
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

_aliases.install()

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
