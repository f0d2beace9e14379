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
from typing import Annotated, Any, TypeVar

import numpy as np
from fastapi import FastAPI
from fastapi import Path as PathParam
from fastapi import Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from repspace.core.errors import InputError, NotFoundError
from repspace.core.printable import excerpt
from repspace.interfaces.server import errors
from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.security import Guard, Refused, require_writer

#: Neighbours listed with an item.
ITEM_NEIGHBOURS = 10
#: The explorer's page and its built scripts (web/ builds them; ``make web``).
STATIC = Path(__file__).parent / "static"
#: Largest request body (bytes) by default.
MAX_BODY = 16 * 1024 * 1024

M = TypeVar("M", bound=BaseModel)

#: The parameters that name things: a space, an item (any text but control characters; ``/`` included).
Space = Annotated[str, PathParam(json_schema_extra=S.SPACE_SCHEMA)]
ItemId = Annotated[str, PathParam(min_length=1, max_length=S.MAX_ID_LENGTH,
                                  json_schema_extra=S.ID_SEGMENT_SCHEMA)]
ItemIdQuery = Annotated[str, Query(alias="id", min_length=1, max_length=S.MAX_ID_LENGTH,
                                   json_schema_extra=S.ID_SCHEMA)]
PairK = Annotated[int, Query(ge=1, le=S.MAX_PAIR_K)]
FieldName = Annotated[str, Query(min_length=1, max_length=S.MAX_FIELD_NAME,
                                 json_schema_extra={"pattern": S.FIELD_NAME_PATTERN})]
Measures = Annotated[str | None, Query(json_schema_extra=S.MEASURES_SCHEMA)]
#: The errors every route can give (each ``{"error": "one line"}``; see :mod:`repspace.interfaces.server.errors`).
ERRORS = {status: {"model": S.Error} for status in (400, 401, 404, 408, 409, 413, 415, 422, 500, 503, 507)}


def create_app(store_path: str | Path, *, token: str | None = None, writable: bool = False,
               cors: list[str] | None = None, hosts: list[str] | None = None,
               max_body: int = MAX_BODY, query_timeout: float = 30.0) -> FastAPI:
    """The service over the store at ``store_path``.

    Parameters
    ----------
    store_path : path of an existing store (opened read-only unless ``writable``).
    token : str, optional
        When set, every request must carry ``Authorization: Bearer TOKEN``; writes
        always need it (``writable`` without a token is refused). An empty or
        whitespace-only token is refused (:func:`~repspace.interfaces.server.security.check_token`).
    writable : bool
        Accept ``POST /api/v1/spaces/{space}/items``.
    cors : origins allowed to call the API from a browser (none by default).
    hosts : Host header names accepted (default: loopback names); others get a 400
        (a DNS-rebinding page cannot reach the API).
    max_body : largest request body in bytes (larger: 413).
    query_timeout : seconds a request that reads the store may take; a slower one is answered 408 (the thread
        finishes its work, which cannot be interrupted, and its result is dropped). Writes are not bounded:
        a write that went on after a 408 would land while its client was told it had not.
    """
    from repspace.workflows.store import Store

    if writable and not token:
        raise InputError("a writable service needs a token (--token or $REPSPACE_TOKEN)")
    guard = Guard(token=token, hosts=hosts, cors=cors, max_body=max_body)  # refuses an unusable token first
    store = Store(store_path, create=False, readonly=not writable)
    write_lock = threading.Lock()  # one write at a time; readers never wait for it (WAL)
    app = FastAPI(title="repspace", version="1", openapi_url="/api/v1/openapi.json", docs_url="/api/v1/docs",
                  redoc_url=None)
    app.state.store = store
    guard.install(app)
    errors.install(app, Path(store_path).resolve().parent)

    async def bounded(fn: Any, *args: Any) -> Any:
        """``fn(*args)`` in the thread pool, answered 408 after ``query_timeout`` seconds."""
        try:
            return await asyncio.wait_for(run_in_threadpool(fn, *args), query_timeout)
        except TimeoutError:
            raise Refused(408, f"the request took longer than {query_timeout:g} s (the service's --query-timeout)"
                          ) from None

    def json_response(out: Any, headers: dict[str, str] | None = None) -> Response:
        return Response(json.dumps(out, ensure_ascii=False).encode(), media_type="application/json",
                        headers=headers)

    @app.get("/api/v1/health", responses=ERRORS)
    def health() -> dict[str, bool]:
        """Whether the service answers (no store work: the HTTP floor the benchmarks compare with)."""
        return {"ok": True}

    @app.get("/api/v1/spaces", response_model=list[S.SpaceSummary], responses=ERRORS)
    async def spaces() -> Any:
        """Every space of the store: name, count, dimension, metric, provenance."""
        return await bounded(lambda: [_summary(info) for info in store.spaces()])

    @app.get("/api/v1/spaces/{space}", response_model=S.SpaceSummary, responses=ERRORS)
    async def space(space: Space) -> Any:
        """One space's description."""
        return await bounded(lambda: _summary(store.space(space).info()))

    def run_search(space: str, body: S.SearchRequest, raw: bytes) -> bytes:
        sp = store.space(space)
        if body.vector is not None:
            body = body.model_copy(update={"vector": S.vector_values(
                body.vector, original=lambda: json.loads(raw)["vector"])})
        return json.dumps(sp.search(body).to_dict(), ensure_ascii=False).encode()

    @app.post("/api/v1/spaces/{space}/search", response_model=S.SearchResponse, responses=ERRORS,
              openapi_extra=_json_body(S.SearchRequest))
    async def search(space: Space, request: Request) -> Response:
        """Nearest items to a text, a vector or a stored id: the engine and rules of ``repspace search``.

        The body is parsed and validated by pydantic's own JSON reader (15 us for a 384-d
        vector, where ``json.loads`` and validation took 130 us) and the answer written with
        ``json.dumps``; the search runs in the thread pool, so the event loop stays free. Only a
        vector with a magnitude beyond 2**24 is read again with ``json.loads``, to tell its JSON
        integers from its floats (:func:`~repspace.interfaces.server.schemas.vector_values`).
        """
        raw = await request.body()
        body = _parse(S.SearchRequest, raw)
        return Response(await bounded(run_search, space, body, raw), media_type="application/json")

    def run_item(space: str, item_id: str) -> bytes:
        from repspace.workflows.explore import item_neighbours

        sp = store.space(space)
        (it,) = sp.get([item_id])
        near = item_neighbours(sp, item_id, ITEM_NEIGHBOURS)
        body = {"id": it.id, "text": it.text, "metadata": it.metadata,
                "neighbours": near["approximate"] if near["approximate"] is not None else near["exact"], **near}
        return json.dumps(body, ensure_ascii=False).encode()

    @app.get("/api/v1/spaces/{space}/items/{item_id:path}", response_model=S.ItemResponse, responses=ERRORS)
    async def item(space: Space, item_id: ItemId) -> Response:
        """One item: its text, metadata, and its exact and approximate neighbours side by side
        (``approximate`` is null when the space has no index yet: opening an item never builds one);
        ``neighbours`` is the approximate list when there is one, else the exact one. The id is the rest
        of the path, ``/`` included; ``GET .../items?id=`` is the same for clients that rewrite paths
        (a browser resolves an id ``.`` or ``..`` as a path segment)."""
        return Response(await bounded(run_item, space, item_id), media_type="application/json")

    @app.get("/api/v1/spaces/{space}/items", response_model=S.ItemResponse, responses=ERRORS)
    async def item_by_query(space: Space, item_id: ItemIdQuery) -> Response:
        """One item, its id in the query string: the same answer as ``GET .../items/{item_id}``."""
        return Response(await bounded(run_item, space, item_id), media_type="application/json")

    @app.get("/api/v1/spaces/{space}/fields", responses=ERRORS)
    async def fields(space: Space) -> Any:
        """The metadata fields a map can be coloured by (``number``, ``bool``, ``category``) and the overlays."""
        from repspace.workflows.explore import map_fields

        return await bounded(lambda: map_fields(store.space(space)))

    @app.get("/api/v1/spaces/{space}/column", responses=ERRORS)
    async def column(space: Space, name: FieldName, method: S.LayoutMethod = "pca") -> Response:
        """One field (or an ``@`` overlay: ``@map_agreement``, ``@recall``) for every point, in the map's order."""
        from repspace.workflows.explore import map_column

        return json_response(await bounded(lambda: map_column(store.space(space), name, method)))

    @app.get("/api/v1/spaces/{space}/map", responses={**ERRORS, 200: {"content": {
        "application/json": {}, "application/vnd.apache.arrow.stream": {}, "application/octet-stream": {}}}})
    async def layout(space: Space, method: S.LayoutMethod = "pca", format: S.MapFormat = "json") -> Response:
        """The space's 2-D layout in row order, with ids: JSON ``{ids, x, y}``, an Arrow stream (id, x, y),
        ``f32`` (raw little-endian float32 ``x0, y0, x1, y1, ...``: 8 bytes a point, what the explorer
        draws first) or ``ids`` (JSON ``{generation, ids}``, in the same order).

        Computed once per space generation and kept beside the store.
        """
        from repspace.workflows.layout import space_layout

        lay = await bounded(lambda: space_layout(store.space(space), method))
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

    @app.get("/api/v1/compare/{a}/{b}", responses=ERRORS)
    async def compare(a: Space, b: Space, changed: Annotated[int, Query(ge=0, le=1000)] = 0, k: PairK = 10,
                      measures: Measures = None) -> Any:
        """Two spaces over the same items: CKA and the other measures, and the ``changed`` items whose
        neighbourhoods moved most (kept, lost and gained neighbours); ``repspace compare``'s engine."""
        from repspace.workflows.compare import compare_spaces

        keys = None if measures is None else measures.split(",")
        return await bounded(lambda: compare_spaces(store.space(a), store.space(b), measures=keys, k=k,
                                                    changed=changed).to_dict())

    @app.get("/api/v1/compare/{a}/{b}/jaccard", responses=ERRORS)
    async def compare_jaccard(a: Space, b: Space, k: PairK = 10, method: S.LayoutMethod = "pca") -> Response:
        """Each point of ``a``'s map: the Jaccard similarity of its ``k`` nearest neighbours in ``a`` and ``b``."""
        from repspace.workflows.explore import pair_jaccard

        return json_response(await bounded(lambda: pair_jaccard(store.space(a), store.space(b), k, method)))

    def run_pair_item(a: str, b: str, item_id: str, k: int) -> dict[str, Any]:
        from repspace.workflows.explore import pair_item

        sa, sb = store.space(a), store.space(b)
        if not (sa.existing_ids([item_id]) and sb.existing_ids([item_id])):  # an unknown id is a 404, as elsewhere
            raise NotFoundError(f"item {excerpt(item_id)} is not in both {a!r} and {b!r}")
        return pair_item(sa, sb, item_id, k)

    @app.get("/api/v1/compare/{a}/{b}/items/{item_id:path}", responses=ERRORS)
    async def compare_item(a: Space, b: Space, item_id: ItemId, k: PairK = 10) -> Any:
        """One item's neighbours in both spaces: kept, lost (in ``a`` only) and gained (in ``b`` only)."""
        return await bounded(run_pair_item, a, b, item_id, k)

    @app.get("/api/v1/compare/{a}/{b}/items", responses=ERRORS)
    async def compare_item_by_query(a: Space, b: Space, item_id: ItemIdQuery, k: PairK = 10) -> Any:
        """One item of both spaces, its id in the query string (as ``GET .../items/{item_id}``)."""
        return await bounded(run_pair_item, a, b, item_id, k)

    @app.post("/api/v1/compare/{a}/{b}/search", responses=ERRORS)
    async def compare_search(a: Space, b: Space, body: S.PairSearchRequest) -> Any:
        """A text's or an id's top k in ``a``, in ``b``, and mapped from ``a`` into ``b`` by a stored alignment."""
        from repspace.workflows.explore import pair_search

        return await bounded(lambda: pair_search(store, store.space(a), store.space(b), text=body.text,
                                                 id=body.id, k=body.k))

    if (STATIC / "index.html").is_file():
        from fastapi.staticfiles import StaticFiles

        @app.get("/", include_in_schema=False)
        def page() -> Response:
            """The explorer."""
            return Response((STATIC / "index.html").read_bytes(), media_type="text/html",
                            headers={"cache-control": "no-cache"})

        app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.post("/api/v1/spaces/{space}/items", response_model=S.WriteResponse,
              responses={**ERRORS, 403: {"model": S.Error}})
    def write(space: Space, body: S.WriteRequest) -> dict[str, Any]:
        """Add or replace items, all or none (the rules of ``repspace ingest``); needs ``--writable`` and the token."""
        from repspace.workflows.ingest import add_items

        require_writer(writable=writable)
        items = [i.model_dump() for i in body.items]
        for n, it in enumerate(items):
            if it["vector"] is not None:
                S.vector_values(it["vector"], f"the vector of item {n}")
        with write_lock:
            report = add_items(store, space, items)
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
        errors = e.errors(include_url=False)
        cause = (errors[0].get("ctx") or {}).get("error") if errors else None
        if isinstance(cause, InputError):  # a rule of the library's (a 400, as when the library finds it)
            raise cause from None
        raise RequestValidationError(errors) from None


def _summary(info: Any) -> dict[str, Any]:
    return {"name": info.name, "count": info.count, "dim": info.dim, "metric": info.metric.value,
            "dtype": info.dtype, "generation": info.generation, "provenance": info.provenance}
