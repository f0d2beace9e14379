"""What the routes share, as FastAPI dependencies: the service (its store and settings), the space a path
names, and the query timeout; and the request parameters that name things.

A route declares what it needs (``space: SpaceArg``, ``run: Run``) and FastAPI provides it per request:
:func:`open_space` opens the space named in the path (an unknown name is a 404), :func:`bounded` runs work
in the thread pool under the service's ``--query-timeout`` (a slower request is a 408).

Examples
--------
>>> import asyncio
>>> from repspace.interfaces.server.deps import Service, bounded
>>> run = bounded(Service(store=None, writable=False, query_timeout=5.0))
>>> asyncio.run(run(sum, [1, 2]))
3
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool

from repspace.core.errors import InputError
from repspace.interfaces.server import schemas as S
from repspace.interfaces.server.security import Refused
from repspace.workflows.store import Space, Store

M = TypeVar("M", bound=BaseModel)
#: Work given to :func:`bounded`'s runner: a function and its arguments, awaited with the timeout.
Runner = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class Service:
    """One service's state: its store, whether it accepts writes, its query timeout, its write lock, and the
    rerankers loaded at start by name (``--reranker NAME=PATH``)."""

    store: Store | None
    writable: bool
    query_timeout: float
    write_lock: Any = field(default_factory=threading.Lock)  # one write at a time; readers never wait (WAL)
    rerankers: dict[str, Any] = field(default_factory=dict)


def service(request: Request) -> Service:
    """The service the request came to (set by :func:`~repspace.interfaces.server.app.create_app`)."""
    return request.app.state.service


ServiceArg = Annotated[Service, Depends(service)]


def bounded(svc: ServiceArg) -> Runner:
    """A runner of ``fn(*args)`` in the thread pool, answered 408 after the service's query timeout (the thread
    finishes its work, which cannot be interrupted, and its result is dropped)."""

    async def run(fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await asyncio.wait_for(run_in_threadpool(fn, *args), svc.query_timeout)
        except TimeoutError:
            raise Refused(408, f"the request took longer than {svc.query_timeout:g} s (the service's "
                               "--query-timeout)") from None

    return run


Run = Annotated[Runner, Depends(bounded)]

#: The parameters that name things: a space, an item (any text but control characters; ``/`` included).
SpaceName = Annotated[str, PathParam(json_schema_extra=S.SPACE_SCHEMA)]
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


def _open(svc: Service, name: str) -> Space:
    assert svc.store is not None
    return svc.store.space(name)


def open_space(space: SpaceName, svc: ServiceArg) -> Space:
    """The space ``{space}`` of the path (an unknown one: 404)."""
    return _open(svc, space)


def open_a(a: SpaceName, svc: ServiceArg) -> Space:
    """The first space ``{a}`` of a two-space path."""
    return _open(svc, a)


def open_b(b: SpaceName, svc: ServiceArg) -> Space:
    """The second space ``{b}`` of a two-space path."""
    return _open(svc, b)


SpaceArg = Annotated[Space, Depends(open_space)]
SpaceA = Annotated[Space, Depends(open_a)]
SpaceB = Annotated[Space, Depends(open_b)]


def json_response(out: Any, headers: dict[str, str] | None = None) -> Response:
    """``out`` as a JSON response (non-ASCII kept as is)."""
    return Response(json.dumps(out, ensure_ascii=False).encode(), media_type="application/json", headers=headers)


def json_body(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads its JSON itself (:func:`parse`)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


def parse(model: type[M], body: bytes) -> M:
    """A request body validated by pydantic's JSON reader; errors become FastAPI's (a 422 with one line), but a
    rule of the library's, which is a 400 as when the library finds it."""
    try:
        return model.model_validate_json(body)
    except ValidationError as e:
        errors = e.errors(include_url=False)
        cause = (errors[0].get("ctx") or {}).get("error") if errors else None
        if isinstance(cause, InputError):
            raise cause from None
        raise RequestValidationError(errors) from None
