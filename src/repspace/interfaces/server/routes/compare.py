"""Two spaces over the same items: ``GET /api/v1/compare/{a}/{b}`` (measures and the items that moved most),
``.../jaccard`` (per point), ``.../items/{item_id}`` (one item in both) and ``POST .../search``.

Examples
--------
>>> [r.path for r in router.routes][:2]
['/api/v1/compare/{a}/{b}', '/api/v1/compare/{a}/{b}/jaccard']
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from repspace.core.errors import NotFoundError
from repspace.core.printable import excerpt
from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.deps import (
    ERRORS,
    ItemId,
    ItemIdQuery,
    Measures,
    PairK,
    Run,
    ServiceArg,
    SpaceA,
    SpaceB,
    json_response,
)
from repspace.workflows.store import Space

router = APIRouter()


@router.get("/api/v1/compare/{a}/{b}", responses=ERRORS)
async def compare(a: SpaceA, b: SpaceB, run: Run, changed: Annotated[int, Query(ge=0, le=1000)] = 0,
                  k: PairK = 10, measures: Measures = None) -> Any:
    """Two spaces over the same items: CKA and the other measures, and the ``changed`` items whose
    neighbourhoods moved most (kept, lost and gained neighbours); ``repspace compare``'s engine."""
    from repspace.workflows.compare import compare_spaces

    keys = None if measures is None else measures.split(",")
    return await run(lambda: compare_spaces(a, b, measures=keys, k=k, changed=changed).to_dict())


@router.get("/api/v1/compare/{a}/{b}/jaccard", responses=ERRORS)
async def compare_jaccard(a: SpaceA, b: SpaceB, run: Run, k: PairK = 10,
                          method: S.LayoutMethod = "pca") -> Response:
    """Each point of ``a``'s map: the Jaccard similarity of its ``k`` nearest neighbours in ``a`` and ``b``."""
    from repspace.workflows.explore import pair_jaccard

    return json_response(await run(lambda: pair_jaccard(a, b, k, method).to_dict()))


def run_pair_item(a: Space, b: Space, item_id: str, k: int) -> dict[str, Any]:
    """One item's neighbours in both spaces (an id not in both: 404, as elsewhere)."""
    from repspace.workflows.explore import pair_item

    if not (a.existing_ids([item_id]) and b.existing_ids([item_id])):
        raise NotFoundError(f"item {excerpt(item_id)} is not in both {a.name!r} and {b.name!r}")
    return pair_item(a, b, item_id, k).to_dict()


@router.get("/api/v1/compare/{a}/{b}/items/{item_id:path}", responses=ERRORS)
async def compare_item(a: SpaceA, b: SpaceB, item_id: ItemId, run: Run, k: PairK = 10) -> Any:
    """One item's neighbours in both spaces: kept, lost (in ``a`` only) and gained (in ``b`` only)."""
    return await run(run_pair_item, a, b, item_id, k)


@router.get("/api/v1/compare/{a}/{b}/items", responses=ERRORS)
async def compare_item_by_query(a: SpaceA, b: SpaceB, item_id: ItemIdQuery, run: Run, k: PairK = 10) -> Any:
    """One item of both spaces, its id in the query string (as ``GET .../items/{item_id}``)."""
    return await run(run_pair_item, a, b, item_id, k)


@router.post("/api/v1/compare/{a}/{b}/search", responses=ERRORS)
async def compare_search(a: SpaceA, b: SpaceB, body: S.PairSearchRequest, svc: ServiceArg, run: Run) -> Any:
    """A text's or an id's top k in ``a``, in ``b``, and mapped from ``a`` into ``b`` by a stored alignment."""
    from repspace.workflows.explore import pair_search

    return await run(lambda: pair_search(svc.store, a, b, text=body.text, id=body.id, k=body.k).to_dict())
