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

from collections.abc import Mapping
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import Response

from repspace.core.errors import InputError
from repspace.core.limits import MAX_BODY
from repspace.interfaces.server import errors
from repspace.interfaces.server.deps import Service
from repspace.interfaces.server.routes import ROUTERS
from repspace.interfaces.server.security import Guard
from repspace.workflows.search.rerank_stage import load_rerankers

#: The explorer's page and its built scripts (web/ builds them; ``make web``).
STATIC = Path(__file__).parent / "static"


def create_app(store_path: str | Path, *, token: str | None = None, writable: bool = False,
               cors: list[str] | None = None, hosts: list[str] | None = None,
               max_body: int = MAX_BODY, query_timeout: float = 30.0,
               rerankers: Mapping[str, str | Path] | None = None) -> FastAPI:
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
    rerankers : name to model file (``repspace rerank train``), loaded here: a search body's ``rerank``
        names one of them (a client never names a file the service would read).
    """
    from repspace.workflows.store import Store

    if writable and not token:
        raise InputError("a writable service needs a token (--token or $REPSPACE_TOKEN)")
    models = load_rerankers(rerankers or {})  # a missing or broken model is refused before anything opens
    guard = Guard(token=token, hosts=hosts, cors=cors, max_body=max_body)  # refuses an unusable token first
    store = Store(store_path, create=False, readonly=not writable)
    app = FastAPI(title="repspace", version="1", openapi_url="/api/v1/openapi.json", docs_url="/api/v1/docs",
                  redoc_url=None)
    app.state.store = store
    app.state.service = Service(store=store, writable=writable, query_timeout=query_timeout, rerankers=models)
    guard.install(app)
    errors.install(app, Path(store_path).resolve().parent)
    for router in ROUTERS:
        app.include_router(router)
    _install_static(app)
    return app


def _install_static(app: FastAPI) -> None:
    """The explorer's page at ``/`` and its scripts under ``/static``, when they are built."""
    if not (STATIC / "index.html").is_file():
        return
    from fastapi.staticfiles import StaticFiles

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        """The explorer."""
        return Response((STATIC / "index.html").read_bytes(), media_type="text/html",
                        headers={"cache-control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
