"""Keep spaces: vectors with their ids, texts, metadata and recipe, in one SQLite file.

A :class:`Store` holds named spaces; a :class:`Space` adds, deletes, reads,
filters and searches its items (dense vectors, or sparse rows over a vocabulary:
:class:`SparseRows`, with ``create_space(..., layout="sparse")``, or token matrices: :class:`TokenSets`,
with ``layout="multivector"``). ``where`` filters are parsed by
:func:`parse_filter`; :func:`export_parquet` writes a space out for other tools.

Examples
--------
>>> import numpy as np, tempfile, os
>>> from repspace.store import Store
>>> space = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("toy", dim=2)
>>> _ = space.add(["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]]), metadata=[{"y": 1}, {"y": 2}])
>>> space.filter_rows("y >= 2").tolist()
[1]
"""

from repspace.core.filters import Filter
from repspace.core.filters import parse as parse_filter
from repspace.core.space import Metric, SpaceInfo
from repspace.core.multivector import TokenSets
from repspace.core.sparse import SparseRows
from repspace.core.store import STORE_ENV, AddResult, Item, SavedResult, ShardEntry, Snapshot, default_store_path
from repspace.workflows.examples import example_file, example_pair, example_space, example_store, example_vectors
from repspace.workflows.describe import SpaceDescription, describe_space
from repspace.workflows.export import export_parquet
from repspace.workflows.store import Space, Store

__all__ = [
    "STORE_ENV",
    "AddResult",
    "Filter",
    "Item",
    "Metric",
    "SavedResult",
    "ShardEntry",
    "Snapshot",
    "Space",
    "SpaceDescription",
    "SpaceInfo",
    "SparseRows",
    "TokenSets",
    "Store",
    "default_store_path",
    "describe_space",
    "example_file",
    "example_pair",
    "example_space",
    "example_store",
    "example_vectors",
    "export_parquet",
    "parse_filter",
]
