"""``POST /api/v1/spaces/{space}/search``: the library's search, its body the library's
:class:`~repspace.workflows.search.request.SearchRequest` (with the service's bounds).

Examples
--------
>>> [r.path for r in router.routes]
['/api/v1/spaces/{space}/search']
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.deps import ERRORS, Run, ServiceArg, SpaceArg, json_body, parse
from repspace.workflows.search.rerank_stage import served_reranker
from repspace.workflows.store import Space

router = APIRouter()


def run_search(space: Space, body: S.SearchRequest, raw: bytes, rerankers: dict[str, Any] | None = None) -> bytes:
    """The search's JSON answer, ``{"hits": [...], "plan": {...}}`` (:meth:`SearchResult.to_dict`); a body's
    ``rerank`` names one of ``rerankers`` (loaded at start), never a file."""
    if isinstance(body.rerank, str):
        body = body.model_copy(update={"rerank": served_reranker(rerankers or {}, body.rerank)})
    if body.vector is not None:
        body = body.model_copy(update={"vector": S.vector_values(
            body.vector, original=lambda: json.loads(raw)["vector"])})
    return json.dumps(space.search(body).to_dict(), ensure_ascii=False).encode()


@router.post("/api/v1/spaces/{space}/search", response_model=S.SearchResponse, responses=ERRORS,
             openapi_extra=json_body(S.SearchRequest))
async def search(space: SpaceArg, request: Request, run: Run, svc: ServiceArg) -> Response:
    """Nearest items to a text, a vector or a stored id: the engine and rules of ``repspace search``.

    The body is parsed and validated by pydantic's own JSON reader (much faster than
    ``json.loads`` and validation) and the answer written with ``json.dumps``; the search runs in
    the thread pool, so the event loop stays free. Only a vector with a magnitude beyond 2**24 is
    read again with ``json.loads``, to tell its JSON integers from its floats
    (:func:`~repspace.interfaces.server.schemas.vector_values`).
    """
    raw = await request.body()
    body = parse(S.SearchRequest, raw)
    return Response(await run(run_search, space, body, raw, svc.rerankers), media_type="application/json")
