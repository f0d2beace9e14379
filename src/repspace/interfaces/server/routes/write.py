"""``POST /api/v1/spaces/{space}/items``: add or replace items (a ``--writable`` service only).

Examples
--------
>>> [r.path for r in router.routes]
['/api/v1/spaces/{space}/items']
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.deps import ERRORS, ServiceArg, SpaceName
from repspace.interfaces.server.security import require_writer

router = APIRouter()


@router.post("/api/v1/spaces/{space}/items", response_model=S.WriteResponse,
             responses={**ERRORS, 403: {"model": S.Error}})
def write(space: SpaceName, body: S.WriteRequest, svc: ServiceArg) -> dict[str, Any]:
    """Add or replace items, all or none (the rules of ``repspace ingest``); needs ``--writable`` and the token."""
    from repspace.workflows.ingest import add_items

    require_writer(writable=svc.writable)  # after the body's checks, as before: a bad body is a 422 anywhere
    items = [i.model_dump() for i in body.items]
    for n, it in enumerate(items):
        if it["vector"] is not None:
            S.vector_values(it["vector"], f"the vector of item {n}")
    with svc.write_lock:
        report = add_items(svc.store, space, items)
    return report.to_dict()
