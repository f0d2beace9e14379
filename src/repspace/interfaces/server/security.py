"""What keeps the service safe by default (the conventions of Jupyter, Datasette and TensorBoard).

* **Host header**: a request naming another host than the ones served (a DNS-rebinding page
  in the user's browser) is refused with 400 before any route runs.
* **Token**: when the service has one, every request carries ``Authorization: Bearer TOKEN``
  (compared in constant time) or gets 401; writes always need it, and a service without
  ``--writable`` refuses them with 403.
* **Body size**: a body beyond the limit (by ``Content-Length`` or as it streams) is a 413.
* **CORS**: none, unless origins are named.

Written as one plain ASGI middleware (Starlette's ``BaseHTTPMiddleware`` costs a task per
request); errors are JSON ``{"error": ...}`` like every other one of the API.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI, Request

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Host names a loopback service answers to (the port is not compared).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class Refused(Exception):
    """A request the service will not serve: its status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Guard:
    """The host, token and body-size checks, and CORS when asked for.

    Parameters
    ----------
    token : str, optional
    hosts : Host header names accepted (default :data:`LOOPBACK_HOSTS`; ``["*"]``: any).
    cors : browser origins allowed (none by default).
    max_body : bytes.
    """

    def __init__(self, *, token: str | None, hosts: list[str] | None, cors: list[str] | None, max_body: int) -> None:
        self.token = token
        self.hosts = {h.strip("[]").lower() for h in (hosts or LOOPBACK_HOSTS)}
        self.cors = list(cors or [])
        self.max_body = max_body

    def install(self, app: FastAPI) -> None:
        @app.exception_handler(Refused)
        async def _refused(request: Request, e: Refused) -> Any:
            from fastapi.responses import JSONResponse

            return JSONResponse({"error": str(e)}, status_code=e.status)

        if self.cors:
            from starlette.middleware.cors import CORSMiddleware

            app.add_middleware(CORSMiddleware, allow_origins=self.cors, allow_methods=["GET", "POST"],
                               allow_headers=["Authorization", "Content-Type"])
        app.add_middleware(_GuardMiddleware, guard=self)  # added last: runs first

    def host_ok(self, host_header: str) -> bool:
        if "*" in self.hosts:  # a token-protected service on a network address: the token is the check
            return True
        host = host_header.strip().lower()
        if host.startswith("["):  # [::1]:8765
            host = host[1:host.find("]")] if "]" in host else host
        elif host.count(":") == 1:
            host = host.split(":")[0]
        return host in self.hosts

    def token_ok(self, authorization: str) -> bool:
        if self.token is None:
            return True
        scheme, _, given = authorization.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode())


def require_writer(*, writable: bool) -> None:
    """Writes: only on a ``--writable`` service (which always has a token, checked on every request above)."""
    if not writable:
        raise Refused(403, "this service is read-only (start it with --writable and a token to accept writes)")


class _GuardMiddleware:
    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app, self.guard = app, guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not self.guard.host_ok(headers.get("host", "")):
            await _reply(send, 400, "this service does not answer to that Host header")
            return
        if scope.get("method") != "OPTIONS" and not self.guard.token_ok(headers.get("authorization", "")):
            await _reply(send, 401, "this service needs Authorization: Bearer TOKEN")
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.guard.max_body):
            await _reply(send, 413, f"the request body is larger than {self.guard.max_body} bytes")
            return
        seen = 0
        limit = self.guard.max_body

        async def bounded() -> Message:  # a body sent in chunks without a length is counted as it comes
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise Refused(413, f"the request body is larger than {limit} bytes")
            return message

        await self.app(scope, bounded if length is None else receive, send)


async def _reply(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
