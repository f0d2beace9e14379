"""The map of a space: ``GET .../fields``, ``GET .../column`` and ``GET .../map`` (JSON, Arrow, raw float32, ids).

Examples
--------
>>> [r.path for r in router.routes]
['/api/v1/spaces/{space}/fields', '/api/v1/spaces/{space}/column', '/api/v1/spaces/{space}/map']
"""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi import APIRouter
from fastapi.responses import Response

from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.deps import ERRORS, FieldName, Run, SpaceArg, json_response

router = APIRouter()


@router.get("/api/v1/spaces/{space}/fields", responses=ERRORS)
async def fields(space: SpaceArg, run: Run) -> Any:
    """The metadata fields a map can be coloured by (``number``, ``bool``, ``category``) and the overlays."""
    from repspace.workflows.explore import map_fields

    return await run(lambda: map_fields(space).to_dict())


@router.get("/api/v1/spaces/{space}/column", responses=ERRORS)
async def column(space: SpaceArg, name: FieldName, run: Run, method: S.LayoutMethod = "pca") -> Response:
    """One field (or an ``@`` overlay: ``@map_agreement``, ``@recall``) for every point, in the map's order."""
    from repspace.workflows.explore import map_column

    return json_response(await run(lambda: map_column(space, name, method).to_dict()))


@router.get("/api/v1/spaces/{space}/map", responses={**ERRORS, 200: {"content": {
    "application/json": {}, "application/vnd.apache.arrow.stream": {}, "application/octet-stream": {}}}})
async def layout(space: SpaceArg, run: Run, method: S.LayoutMethod = "pca", format: S.MapFormat = "json") -> Response:
    """The space's 2-D layout in row order, with ids: JSON ``{ids, x, y}``, an Arrow stream (id, x, y),
    ``f32`` (raw little-endian float32 ``x0, y0, x1, y1, ...``: 8 bytes a point, what the explorer
    draws first) or ``ids`` (JSON ``{generation, ids}``, in the same order).

    Computed once per space generation and kept beside the store.
    """
    from repspace.workflows.layout import space_layout

    lay = await run(lambda: space_layout(space, method))
    headers = {"x-repspace-generation": str(lay.generation), "x-repspace-method": lay.method,
               "x-repspace-count": str(len(lay.ids))}
    if format == "f32":
        return Response(np.ascontiguousarray(lay.coords, dtype="<f4").tobytes(),
                        media_type="application/octet-stream", headers=headers)
    if format == "ids":
        return json_response({"generation": lay.generation, "ids": lay.ids}, headers)
    if format == "arrow":
        import pyarrow as pa

        table = pa.table({"id": pa.array(lay.ids, pa.string()), "x": lay.coords[:, 0], "y": lay.coords[:, 1]})
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return Response(sink.getvalue().to_pybytes(), media_type="application/vnd.apache.arrow.stream",
                        headers=headers)
    return json_response({"method": lay.method, "generation": lay.generation, "ids": lay.ids,
                          "x": lay.coords[:, 0].tolist(), "y": lay.coords[:, 1].tolist()}, headers)
