"""Durable storage of spaces: one SQLite file, numbered migrations, blocks of vectors.

Examples
--------
>>> import tempfile, os
>>> from repspace.core.store import Store
>>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).spaces()
[]
"""

from repspace.core.store._results import SavedResult
from repspace.core.store._space import AddResult, Item, ShardEntry, Snapshot, Space
from repspace.core.store._sparse_space import check_feature_names
from repspace.core.store._store import STORE_ENV, Store, default_store_path

__all__ = ["Store", "Space", "Snapshot", "AddResult", "Item", "ShardEntry", "SavedResult", "default_store_path",
           "STORE_ENV", "check_feature_names"]
