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


#: :func:`repspace.workflows.search.search_space`, imported on the first search (it loads FAISS).
_search_space: Any = None


class Space(_core.Space):
    """A stored space that can search; see :class:`repspace.core.store.Space` for the rest.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("toy", dim=3, metric="l2")
    >>> _ = sp.add(["a", "b", "c"], np.eye(3), metadata=[{"lang": "en"}, {"lang": "fr"}, {"lang": "en"}])
    >>> isinstance(sp, Space), sp.name, sp.info().count, sp.metric.value
    (True, 'toy', 3, 'l2')
    >>> res = sp.search(id="a", k=2, where="lang = 'en'")  # by an item's id; the item itself is left out
    >>> [h.id for h in res], round(res[0].score, 3), res.plan.method
    (['c'], 1.414, 'exact')
    """

    def search(self, query: Any = None, k: int = 10, **options: Any) -> SearchResult:
        """Nearest items to a text, a stored id (``id=...``), a vector or a
        :class:`~repspace.workflows.search.request.SearchRequest`: the hits and the plan.

        A facade over :func:`repspace.workflows.search.search_space`; see it for
        options (``id``, ``where``, ``method``, ``ef``, ``index``, ``hybrid``, ...). The
        import is deferred so that opening a store does not load FAISS.
        """
        global _search_space
        if _search_space is None:
            from repspace.workflows.search import search_space as _search_space
        return _search_space(self, query, k=k, **options)


class Store(_core.Store):
    """All spaces in one SQLite file; its spaces can search. See :class:`repspace.core.store.Store`.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> sp = store.create_space("toy", dim=2)
    >>> _ = sp.add(["a", "b"], np.eye(2))
    >>> [s.name for s in store.spaces()], type(store.space("toy")).__name__
    (['toy'], 'Space')
    >>> [h.id for h in store.space("toy").search(np.array([0.0, 1.0]), k=1)]
    ['b']
    """

    space_class = Space
