"""``POST /api/v1/spaces/{space}/set-search``: the library's set query (SetCSE), its body the library's
:class:`~repspace.workflows.search.set_request.SetQuery` (with the service's bounds).

Examples
--------
>>> [r.path for r in router.routes]
['/api/v1/spaces/{space}/set-search']
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import Response

from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.deps import ERRORS, Run, SpaceArg, json_body, parse
from repspace.workflows.search.set_search import set_search
from repspace.workflows.store import Space

router = APIRouter()


def run_set_search(space: Space, body: S.SetQuery) -> bytes:
    """The set query's JSON answer, ``{"hits": [...], "plan": {...}}`` (a search's shape)."""
    return json.dumps(set_search(space, body).to_dict(), ensure_ascii=False).encode()


@router.post("/api/v1/spaces/{space}/set-search", response_model=S.SearchResponse, responses=ERRORS,
             openapi_extra=json_body(S.SetQuery))
async def set_search_route(space: SpaceArg, request: Request, run: Run) -> Response:
    """Items near every ``all_of`` example and far from the ``none_of`` ones: the rules of ``repspace search
    --all-of ID --none-of ID`` (summed cosine to the first minus summed cosine to the second; the examples are
    left out). It reads the store only, so a read-only service answers it."""
    body = parse(S.SetQuery, await request.body())
    return Response(await run(run_set_search, space, body), media_type="application/json")
