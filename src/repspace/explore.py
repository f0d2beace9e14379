"""Explore spaces in a browser: 2-D maps, the explorer's HTTP service, HTML reports.

:func:`space_layout` projects a stored space to 2-D (PCA, UMAP ...), kept
beside the store; the ``map_*``, ``item_neighbours`` and ``pair_*`` functions
answer the explorer's views; :func:`serve` runs the HTTP service with the web
explorer (:func:`create_app` builds the ASGI app);
:func:`write_diagnosis_html` and :func:`write_dictionary_html` write
self-contained reports.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_space
>>> from repspace.explore import space_layout
>>> space_layout(example_space(vectors=np.eye(3))).coords.shape
(3, 2)
"""

from repspace.interfaces import reports as _reports
from repspace.interfaces.reports import *  # noqa: F403 - every name of its __all__
from repspace.interfaces import server as _server
from repspace.interfaces.server import *  # noqa: F403 - every name of its __all__
from repspace.workflows.explore import (
    find_alignment,
    index_recall,
    item_neighbours,
    map_agreement,
    map_column,
    map_fields,
    pair_item,
    pair_jaccard,
    pair_search,
)
from repspace.workflows.explore_results import ItemNeighbours, MapColumn, MapFields, PairItem, PairJaccard, PairSearch
from repspace.workflows.layout import Layout, space_layout

__all__ = [
    *_reports.__all__,
    *_server.__all__,
    "ItemNeighbours",
    "Layout",
    "MapColumn",
    "MapFields",
    "PairItem",
    "PairJaccard",
    "PairSearch",
    "find_alignment",
    "index_recall",
    "item_neighbours",
    "map_agreement",
    "map_column",
    "map_fields",
    "pair_item",
    "pair_jaccard",
    "pair_search",
    "space_layout",
]
