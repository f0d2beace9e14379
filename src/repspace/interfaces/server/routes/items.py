"""``GET /api/v1/spaces/{space}/items/{item_id}`` (and ``?id=``): one item and its neighbours.

Examples
--------
>>> [r.path for r in router.routes]
['/api/v1/spaces/{space}/items/{item_id:path}', '/api/v1/spaces/{space}/items']
"""

from __future__ import annotations

import json

from fastapi import APIRouter
from fastapi.responses import Response

from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.deps import ERRORS, ItemId, ItemIdQuery, Run, SpaceArg
from repspace.workflows.store import Space

#: Neighbours listed with an item.
ITEM_NEIGHBOURS = 10

router = APIRouter()


def run_item(space: Space, item_id: str) -> bytes:
    """The item's JSON answer: text, metadata, exact and approximate neighbours."""
    from repspace.workflows.explore import item_neighbours

    (it,) = space.get([item_id])
    near = item_neighbours(space, item_id, ITEM_NEIGHBOURS).to_dict()
    body = {"id": it.id, "text": it.text, "metadata": it.metadata,
            "neighbours": near["approximate"] if near["approximate"] is not None else near["exact"], **near}
    return json.dumps(body, ensure_ascii=False).encode()


@router.get("/api/v1/spaces/{space}/items/{item_id:path}", response_model=S.ItemResponse, responses=ERRORS)
async def item(space: SpaceArg, item_id: ItemId, run: Run) -> Response:
    """One item: its text, metadata, and its exact and approximate neighbours side by side
    (``approximate`` is null when the space has no index yet: opening an item never builds one);
    ``neighbours`` is the approximate list when there is one, else the exact one. The id is the rest
    of the path, ``/`` included; ``GET .../items?id=`` is the same for clients that rewrite paths
    (a browser resolves an id ``.`` or ``..`` as a path segment)."""
    return Response(await run(run_item, space, item_id), media_type="application/json")


@router.get("/api/v1/spaces/{space}/items", response_model=S.ItemResponse, responses=ERRORS)
async def item_by_query(space: SpaceArg, item_id: ItemIdQuery, run: Run) -> Response:
    """One item, its id in the query string: the same answer as ``GET .../items/{item_id}``."""
    return Response(await run(run_item, space, item_id), media_type="application/json")
