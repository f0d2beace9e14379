"""Durable storage of spaces: one SQLite file, numbered migrations, blocks of vectors.

Examples
--------
>>> import tempfile, os
>>> from repspace.store import Store
>>> Store(os.path.join(tempfile.mkdtemp(), "s.db")).spaces()
[]
"""

from repspace.store._results import SavedResult
from repspace.store._space import AddResult, Item, Snapshot, Space
from repspace.store._store import STORE_ENV, Store, default_store_path

__all__ = ["Store", "Space", "Snapshot", "AddResult", "Item", "SavedResult", "default_store_path", "STORE_ENV"]
