"""The public store: :class:`repspace.core.store.Store` whose spaces can also search.

The core store (SQLite, vectors, state) knows nothing of search, so that the
core imports no engine; this subclass hands out :class:`Space` objects with a
:meth:`Space.search` method, a facade over
:func:`repspace.workflows.search.search_space`. ``repspace.Store`` and
``repspace.Space`` are these classes.

Examples
--------
>>> import numpy as np, tempfile, os
>>> from repspace import Store
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("toy", dim=3)
>>> _ = sp.add(["a", "b"], np.eye(3)[:2])
>>> [h.id for h in sp.search(np.array([0.0, 1.0, 0.0]), k=1)]
['b']
"""

from __future__ import annotations

from typing import Any

from repspace.core import store as _core
from repspace.core.hits import SearchResult
from repspace.core.store import (
    STORE_ENV,
    AddResult,
    Item,
    SavedResult,
    Snapshot,
    default_store_path,
)

__all__ = ["STORE_ENV", "AddResult", "Item", "SavedResult", "Snapshot", "Space", "Store", "default_store_path"]


class Space(_core.Space):
    """A stored space that can search; see :class:`repspace.core.store.Space` for the rest."""

    def search(self, query: Any = None, k: int = 10, **options: Any) -> SearchResult:
        """Nearest items to a text, a stored id (``id=...``), a vector or a
        :class:`~repspace.workflows.search.request.SearchRequest`: the hits and the plan.

        A facade over :func:`repspace.workflows.search.search_space`; see it for
        options (``id``, ``where``, ``method``, ``ef``, ``index``, ``hybrid``, ...). The
        import is deferred so that opening a store does not load FAISS.
        """
        from repspace.workflows.search import search_space

        return search_space(self, query, k=k, **options)


class Store(_core.Store):
    """All spaces in one SQLite file; its spaces can search. See :class:`repspace.core.store.Store`."""

    space_class = Space
