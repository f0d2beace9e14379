"""The HTTP service: a FastAPI app over one store, JSON under ``/api/v1``.

Each route parses its request, calls one library function and returns its result, as the
CLI's commands do (the rules of search, filters and writes are the library's). What is
the service's own is its safety (:mod:`repspace.interfaces.server.security`) and the
mapping of errors to statuses: bad input is a 4xx with one line (``{"error": ...}``),
never a 500, and never changes the store.

Examples
--------
>>> import numpy as np, tempfile, os
>>> from starlette.testclient import TestClient
>>> from repspace import Store
>>> path = os.path.join(tempfile.mkdtemp(), "s.db")
>>> sp = Store(path).create_space("toy", dim=2)
>>> _ = sp.add(["a", "b"], np.eye(2), metadata=[{"n": 1}, {"n": 2}])
>>> client = TestClient(create_app(path), base_url="http://127.0.0.1")
>>> client.get("/api/v1/spaces").json()[0]["name"]
'toy'
>>> r = client.post("/api/v1/spaces/toy/search", json={"vector": [1, 0], "k": 1})
>>> r.json()["hits"][0]["id"], r.json()["plan"]["method"]
('a', 'exact')
>>> client.post("/api/v1/spaces/toy/search", json={"id": "a", "where": "n >"}).status_code
400
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from repspace.core.errors import (
    ConflictError,
    InputError,
    NotFoundError,
    RepspaceError,
    StoreError,
)
from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.security import Guard, Refused, require_writer

#: Neighbours listed with an item.
ITEM_NEIGHBOURS = 10
#: What ``GET .../map`` answers in.
MAP_FORMATS = ("json", "arrow", "f32", "ids")
#: The explorer's page and its built scripts (web/ builds them; ``make web``).
STATIC = Path(__file__).parent / "static"

M = TypeVar("M", bound=BaseModel)


def create_app(store_path: str | Path, *, token: str | None = None, writable: bool = False,
               cors: list[str] | None = None, hosts: list[str] | None = None,
               max_body: int = 16 * 1024 * 1024, query_timeout: float = 30.0) -> FastAPI:
    """The service over the store at ``store_path``.

    Parameters
    ----------
    store_path : path of an existing store (opened read-only unless ``writable``).
    token : str, optional
        When set, every request must carry ``Authorization: Bearer TOKEN``; writes
        always need it (``writable`` without a token is refused).
    writable : bool
        Accept ``POST /api/v1/spaces/{space}/items``.
    cors : origins allowed to call the API from a browser (none by default).
    hosts : Host header values accepted (default: loopback names); others get a 400
        (a DNS-rebinding page cannot reach the API).
    max_body : largest request body in bytes (larger: 413).
    query_timeout : seconds a search may take; a slower one is answered 408 (the thread finishes its work,
        which cannot be interrupted, and its result is dropped).
    """
    from repspace.workflows.store import Store

    if writable and not token:
        raise InputError("a writable service needs a token (--token or $REPSPACE_TOKEN)")
    store = Store(store_path, create=False, readonly=not writable)
    write_lock = threading.Lock()  # one write at a time; readers never wait for it (WAL)
    app = FastAPI(title="repspace", version="1", openapi_url="/api/v1/openapi.json", docs_url="/api/v1/docs",
                  redoc_url=None)
    app.state.store = store
    Guard(token=token, hosts=hosts, cors=cors, max_body=max_body).install(app)

    @app.exception_handler(RepspaceError)
    async def _library_error(request: Request, e: RepspaceError) -> JSONResponse:
        status = (404 if isinstance(e, NotFoundError) else 409 if isinstance(e, ConflictError)
                  else 503 if isinstance(e, StoreError) else 400)
        message = e.args[0] if isinstance(e, NotFoundError) and e.args else str(e)
        return JSONResponse({"error": message}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, e: RequestValidationError) -> JSONResponse:
        first = e.errors()[0] if e.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return JSONResponse({"error": f"{where}: {first['msg']}" if where else first["msg"]}, status_code=422)

    @app.get("/api/v1/health")
    def health() -> dict[str, bool]:
        """Whether the service answers (no store work: the HTTP floor the benchmarks compare with)."""
        return {"ok": True}

    @app.get("/api/v1/spaces", response_model=list[S.SpaceSummary])
    def spaces() -> list[dict[str, Any]]:
        """Every space of the store: name, count, dimension, metric, provenance."""
        return [_summary(info) for info in store.spaces()]

    @app.get("/api/v1/spaces/{space}", response_model=S.SpaceSummary, responses={404: {"model": S.Error}})
    def space(space: str) -> dict[str, Any]:
        """One space's description."""
        return _summary(store.space(space).info())

    async def bounded(fn: Any, *args: Any) -> Any:
        """``fn(*args)`` in the thread pool, answered 408 after ``query_timeout`` seconds."""
        try:
            return await asyncio.wait_for(run_in_threadpool(fn, *args), query_timeout)
        except TimeoutError:
            raise Refused(408, f"the query took longer than {query_timeout:g} s (the service's --query-timeout)"
                          ) from None

    def run_search(space: str, body: S.SearchRequest) -> bytes:
        sp = store.space(space)
        query = body.text if body.text is not None else (np.asarray(body.vector, dtype=np.float64)
                                                        if body.vector is not None else None)
        hits, plan = sp.search(query, k=body.k, id=body.id, where=body.where, index=body.index, ef=body.ef,
                               hubness=body.hubness, hybrid=body.hybrid, explain=True)
        return json.dumps({"hits": [h.to_dict() for h in hits], "plan": plan.to_dict()},
                          ensure_ascii=False).encode()

    @app.post("/api/v1/spaces/{space}/search", response_model=S.SearchResponse,
              responses={400: {"model": S.Error}, 404: {"model": S.Error}, 408: {"model": S.Error},
                         422: {"model": S.Error}},
              openapi_extra=_json_body(S.SearchRequest))
    async def search(space: str, request: Request) -> Response:
        """Nearest items to a text, a vector or a stored id: the engine and rules of ``repspace search``.

        The body is parsed and validated by pydantic's own JSON reader (15 us for a 384-d
        vector, where ``json.loads`` and validation took 130 us) and the answer written with
        ``json.dumps``; the search runs in the thread pool, so the event loop stays free.
        """
        body = _parse(S.SearchRequest, await request.body())
        return Response(await bounded(run_search, space, body), media_type="application/json")

    @app.get("/api/v1/spaces/{space}/items/{item_id}", response_model=S.ItemResponse,
             responses={404: {"model": S.Error}, 408: {"model": S.Error}})
    async def item(space: str, item_id: str) -> Response:
        """One item: its text, metadata, and its exact and approximate neighbours side by side
        (``approximate`` is null when the space has no index yet: opening an item never builds one);
        ``neighbours`` is the approximate list when there is one, else the exact one."""
        from repspace.workflows.explore import item_neighbours

        def run() -> bytes:
            sp = store.space(space)
            (it,) = sp.get([item_id])
            near = item_neighbours(sp, item_id, ITEM_NEIGHBOURS)
            body = {"id": it.id, "text": it.text, "metadata": it.metadata,
                    "neighbours": near["approximate"] if near["approximate"] is not None else near["exact"], **near}
            return json.dumps(body, ensure_ascii=False).encode()

        return Response(await bounded(run), media_type="application/json")

    @app.get("/api/v1/spaces/{space}/fields", responses={404: {"model": S.Error}})
    def fields(space: str) -> dict[str, Any]:
        """The metadata fields a map can be coloured by (``number``, ``bool``, ``category``) and the overlays."""
        from repspace.workflows.explore import map_fields

        return map_fields(store.space(space))

    @app.get("/api/v1/spaces/{space}/column", responses={400: {"model": S.Error}, 404: {"model": S.Error},
                                                          409: {"model": S.Error}})
    def column(space: str, name: str = Query(..., min_length=1, max_length=200), method: str = "pca") -> Response:
        """One field (or an ``@`` overlay: ``@map_agreement``, ``@recall``) for every point, in the map's order."""
        from repspace.workflows.explore import map_column

        out = map_column(store.space(space), name, method)
        return Response(json.dumps(out, ensure_ascii=False).encode(), media_type="application/json")

    @app.get("/api/v1/spaces/{space}/map", responses={200: {"content": {
        "application/json": {}, "application/vnd.apache.arrow.stream": {}}}, 400: {"model": S.Error},
        404: {"model": S.Error}})
    def layout(space: str, method: str = "pca", format: str = "json") -> Response:
        """The space's 2-D layout in row order, with ids: JSON ``{ids, x, y}``, an Arrow stream (id, x, y),
        ``f32`` (raw little-endian float32 ``x0, y0, x1, y1, ...``: 8 bytes a point, what the explorer
        draws first) or ``ids`` (JSON ``{generation, ids}``, in the same order).

        Computed once per space generation and kept beside the store.
        """
        from repspace.workflows.layout import space_layout

        if format not in MAP_FORMATS:
            raise InputError(f"format must be one of {', '.join(MAP_FORMATS)}, not {format!r}")
        lay = space_layout(store.space(space), method)
        headers = {"x-repspace-generation": str(lay.generation), "x-repspace-method": lay.method,
                   "x-repspace-count": str(len(lay.ids))}
        if format == "f32":
            return Response(np.ascontiguousarray(lay.coords, dtype="<f4").tobytes(),
                            media_type="application/octet-stream", headers=headers)
        if format == "ids":
            return Response(json.dumps({"generation": lay.generation, "ids": lay.ids}, ensure_ascii=False).encode(),
                            media_type="application/json", headers=headers)
        if format == "arrow":
            import pyarrow as pa

            table = pa.table({"id": pa.array(lay.ids, pa.string()), "x": lay.coords[:, 0], "y": lay.coords[:, 1]})
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            return Response(sink.getvalue().to_pybytes(), media_type="application/vnd.apache.arrow.stream",
                            headers=headers)
        body = {"method": lay.method, "generation": lay.generation, "ids": lay.ids,
                "x": lay.coords[:, 0].tolist(), "y": lay.coords[:, 1].tolist()}
        return Response(json.dumps(body, ensure_ascii=False).encode(), media_type="application/json",
                        headers=headers)

    @app.get("/api/v1/compare/{a}/{b}", responses={400: {"model": S.Error}, 404: {"model": S.Error}})
    def compare(a: str, b: str, changed: int = Query(0, ge=0, le=1000), k: int = Query(10, ge=1, le=100),
                measures: str | None = None) -> dict[str, Any]:
        """Two spaces over the same items: CKA and the other measures, and the ``changed`` items whose
        neighbourhoods moved most (kept, lost and gained neighbours); ``repspace compare``'s engine."""
        from repspace.workflows.compare import compare_spaces

        return compare_spaces(store.space(a), store.space(b), measures=measures, k=k, changed=changed).to_dict()

    @app.get("/api/v1/compare/{a}/{b}/jaccard", responses={400: {"model": S.Error}, 404: {"model": S.Error}})
    def compare_jaccard(a: str, b: str, k: int = Query(10, ge=1, le=100), method: str = "pca") -> Response:
        """Each point of ``a``'s map: the Jaccard similarity of its ``k`` nearest neighbours in ``a`` and ``b``."""
        from repspace.workflows.explore import pair_jaccard

        out = pair_jaccard(store.space(a), store.space(b), k, method)
        return Response(json.dumps(out).encode(), media_type="application/json")

    @app.get("/api/v1/compare/{a}/{b}/items/{item_id}", responses={400: {"model": S.Error}, 404: {"model": S.Error}})
    def compare_item(a: str, b: str, item_id: str, k: int = Query(10, ge=1, le=100)) -> dict[str, Any]:
        """One item's neighbours in both spaces: kept, lost (in ``a`` only) and gained (in ``b`` only)."""
        from repspace.workflows.explore import pair_item

        return pair_item(store.space(a), store.space(b), item_id, k)

    @app.post("/api/v1/compare/{a}/{b}/search", responses={400: {"model": S.Error}, 404: {"model": S.Error},
                                                          422: {"model": S.Error}})
    async def compare_search(a: str, b: str, body: S.PairSearchRequest) -> dict[str, Any]:
        """A text's or an id's top k in ``a``, in ``b``, and mapped from ``a`` into ``b`` by a stored alignment."""
        from repspace.workflows.explore import pair_search

        def run() -> dict[str, Any]:
            return pair_search(store, store.space(a), store.space(b), text=body.text, id=body.id, k=body.k)

        return await bounded(run)

    if (STATIC / "index.html").is_file():
        from fastapi.staticfiles import StaticFiles

        @app.get("/", include_in_schema=False)
        def page() -> Response:
            """The explorer."""
            return Response((STATIC / "index.html").read_bytes(), media_type="text/html",
                            headers={"cache-control": "no-cache"})

        app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.post("/api/v1/spaces/{space}/items", response_model=S.WriteResponse,
              responses={400: {"model": S.Error}, 401: {"model": S.Error}, 403: {"model": S.Error},
                         404: {"model": S.Error}})
    def write(space: str, body: S.WriteRequest) -> dict[str, Any]:
        """Add or replace items, all or none (the rules of ``repspace ingest``); needs ``--writable`` and the token."""
        from repspace.workflows.ingest import add_items

        require_writer(writable=writable)
        with write_lock:
            report = add_items(store, space, [i.model_dump() for i in body.items])
        return report.to_dict()

    return app


def _json_body(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads its JSON itself (:func:`_parse`)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


def _parse(model: type[M], body: bytes) -> M:
    """A request body validated by pydantic's JSON reader; errors become FastAPI's (a 422 with one line)."""
    try:
        return model.model_validate_json(body)
    except ValidationError as e:
        raise RequestValidationError(e.errors(include_url=False)) from None


def _summary(info: Any) -> dict[str, Any]:
    return {"name": info.name, "count": info.count, "dim": info.dim, "metric": info.metric.value,
            "dtype": info.dtype, "generation": info.generation, "provenance": info.provenance}
