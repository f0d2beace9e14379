"""``GET /api/v1/health``, ``GET /api/v1/spaces`` and ``GET /api/v1/spaces/{space}``: what the store holds.

Examples
--------
>>> [r.path for r in router.routes]
['/api/v1/health', '/api/v1/spaces', '/api/v1/spaces/{space}']
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.deps import ERRORS, Run, ServiceArg, SpaceArg

router = APIRouter()


@router.get("/api/v1/health", responses=ERRORS)
def health() -> dict[str, bool]:
    """Whether the service answers (no store work: the HTTP floor the benchmarks compare with)."""
    return {"ok": True}


@router.get("/api/v1/spaces", response_model=list[S.SpaceSummary], responses=ERRORS)
async def spaces(svc: ServiceArg, run: Run) -> Any:
    """Every space of the store: name, count, dimension, metric, provenance."""
    assert svc.store is not None
    store = svc.store
    return await run(lambda: [summary(info) for info in store.spaces()])


@router.get("/api/v1/spaces/{space}", response_model=S.SpaceDescription, responses=ERRORS)
async def space(space: SpaceArg, run: Run) -> Any:
    """One space's description, as ``repspace info --json`` gives it (a sparse space's statistics included)."""
    from repspace.workflows.describe import describe_space

    return await run(lambda: describe_space(space).to_dict())


def summary(info: Any) -> dict[str, Any]:
    """A space's description as the API gives it (:class:`~repspace.interfaces.server.schemas.SpaceSummary`)."""
    return {"name": info.name, "count": info.count, "dim": info.dim, "metric": info.metric.value,
            "dtype": info.dtype, "generation": info.generation, "provenance": info.provenance}
