"""Every error of the service has one shape: ``{"error": "one line"}`` with the status that says what happened.

The handlers here turn each kind of failure into that shape: the library's errors
(:class:`~repspace.core.errors.RepspaceError`: 400, 404, 409, 503; 507 for a full disk), the service's own refusals
(:class:`~repspace.interfaces.server.security.Refused`: 401, 403, 408, 413, 415, ...), request
validation (422), Starlette's routing errors (404 for an unknown route, 405 for a method a
route does not take, with its ``Allow`` header) and anything unexpected (500, naming only the
kind of error; the traceback goes to the server's log). The line is capped and its control
characters escaped (:func:`~repspace.core.printable.one_line`), and paths are never shown
absolute: relative to the store's folder when inside it, else by their file name.

Examples
--------
>>> error_body("line one\\nline two")
b'{"error": "line one\\\\\\\\nline two"}'
>>> hidden_paths("cannot read /srv/data/s.db.idx/docs.faiss: damaged", "/srv/data")
'cannot read s.db.idx/docs.faiss: damaged'
>>> hidden_paths("no model at /opt/models/minilm", "/srv/data")
'no model at minilm'
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from repspace.core.errors import (
    BackendError,
    ConflictError,
    DiskFullError,
    NotFoundError,
    RepspaceError,
    StoreError,
)
from repspace.core.printable import excerpt, one_line, shown_paths

__all__ = ["Refused", "error_body", "error_response", "hidden_paths", "install"]

#: How FastAPI's body reader says that a body is not JSON it can decode (its HTTPException of status 400).
_BODY_PARSE = "There was an error parsing the body"
#: An absolute POSIX path of two or more parts standing on its own in a message (not inside a longer word).
_ABSOLUTE = re.compile(r"(?<![\w.~/'\"-])/(?:[^\s/'\"]+/)+([^\s/'\"]+)")


class Refused(Exception):
    """A request the service will not serve: its status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def error_body(message: str) -> bytes:
    """The JSON error body: ``message`` as one capped line."""
    return json.dumps({"error": one_line(message)}).encode()


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    """A response of status ``status`` with the JSON error body."""
    from starlette.responses import Response

    return Response(error_body(message), status_code=status, media_type="application/json", headers=headers)


def hidden_paths(message: str, folder: str | Path) -> str:
    """``message`` with paths inside ``folder`` relative to it and every other absolute path cut to its file name."""
    return _ABSOLUTE.sub(lambda m: m.group(1), shown_paths(message, base=folder))


def _allowed(request: Any) -> str:
    """The methods the routes of ``request``'s path take, as an ``Allow`` header."""
    from starlette.routing import Match

    methods: set[str] = set()
    for route in _routes(request.app.router.routes):
        if getattr(route, "methods", None) and route.matches(request.scope)[0] is not Match.NONE:
            methods |= set(route.methods)
    return ", ".join(sorted(methods))


def _routes(routes: Any) -> Any:
    """Every route, those of included routers too (FastAPI wraps an included router's routes)."""
    for route in routes:
        inner = getattr(route, "effective_candidates", None)
        if inner is not None and not hasattr(route, "methods"):
            yield from _routes(inner() if callable(inner) else inner)
        else:
            yield route


def install(app: Any, store_folder: str | Path) -> None:
    """Register the handlers of every error on ``app`` (a FastAPI app serving the store in ``store_folder``)."""
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    async def library(request: Any, e: RepspaceError) -> Any:
        status = (404 if isinstance(e, NotFoundError) else 409 if isinstance(e, ConflictError)
                  else 507 if isinstance(e, DiskFullError) else 503 if isinstance(e, (StoreError, BackendError))
                  else 400)
        message = str(e.args[0]) if isinstance(e, NotFoundError) and e.args else str(e)
        return error_response(status, hidden_paths(message, store_folder))

    async def refused(request: Any, e: Refused) -> Any:
        return error_response(e.status, str(e))

    async def invalid(request: Any, e: RequestValidationError) -> Any:
        errors = e.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        message = f"{where}: {first['msg']}" if where else str(first["msg"])
        given = first.get("input")
        if isinstance(given, (str, int, float)) and not isinstance(given, bool) and first.get("type") != "missing":
            message += f", not {excerpt(given)}"
        return error_response(422, message)

    async def http(request: Any, e: HTTPException) -> Any:
        what = f"{request.method} {excerpt(request.url.path, 200)}"
        if e.status_code == 404:
            message = f"not found: {what}"
        elif e.status_code == 405:  # Allow: every method of every route of this path (Starlette names the first's)
            allowed = _allowed(request)
            message = f"method not allowed: {what} (allowed: {allowed})"
            return error_response(405, message, headers={"Allow": allowed})
        elif e.status_code == 400 and str(e.detail).startswith(_BODY_PARSE):  # FastAPI's, for a body not UTF-8 text
            return error_response(422, "the body is not JSON text (JSON is UTF-8)")
        else:
            message = str(e.detail)
        return error_response(e.status_code, message, headers=dict(e.headers) if e.headers else None)

    async def bug(request: Any, e: Exception) -> Any:
        return error_response(500, f"internal error ({type(e).__name__}); the service's log has the details")

    app.add_exception_handler(RepspaceError, library)
    app.add_exception_handler(Refused, refused)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http)
    app.add_exception_handler(Exception, bug)
