"""What keeps the service safe by default (the conventions of Jupyter, Datasette and TensorBoard).

* **Host header**: a request naming another host than the ones served (a DNS-rebinding page
  in the user's browser) is refused with 400 before any route runs.
* **Token**: when the service has one, every request carries ``Authorization: Bearer TOKEN``
  (compared in constant time) or gets 401; writes always need it, and a service without
  ``--writable`` refuses them with 403. A browser opens ``/?token=TOKEN`` once (Jupyter's
  convention): the answer is a redirect to ``/`` that sets the token as an ``HttpOnly``,
  ``SameSite=Strict`` cookie, which then stands for the header on reads (never on writes:
  they need the header). A cookie that is never sent cross-site cannot be used by another
  page (no CSRF).
* **Body size**: a body beyond the limit (by ``Content-Length`` or as it streams) is a 413.
* **CORS**: none, unless origins are named.

Written as one plain ASGI middleware (Starlette's ``BaseHTTPMiddleware`` costs a task per
request); errors are JSON ``{"error": ...}`` like every other one of the API.
"""

from __future__ import annotations

import hashlib
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
        return scheme.lower() == "bearer" and self.same(given.strip())

    def same(self, given: str) -> bool:
        """``given`` is the token (constant time)."""
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def cookie_value(self) -> str:
        """What the browser's cookie holds: a digest of the token (any token, whatever its characters,
        makes a valid cookie value; the token itself is not kept by the browser)."""
        return hashlib.sha256(f"repspace-cookie:{self.token}".encode()).hexdigest()


#: The cookie a browser keeps the token in after opening ``/?token=...``.
COOKIE = "repspace_token"


def _cookie(headers: dict[str, str]) -> str | None:
    from http.cookies import SimpleCookie

    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001  (a malformed Cookie header is no token)
        return None
    return jar[COOKIE].value if COOKIE in jar else None


def _is_write(scope: Scope) -> bool:
    return scope.get("method") == "POST" and str(scope.get("path", "")).endswith("/items")


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
        if self.guard.token is not None and scope.get("method") == "GET" and scope.get("path") == "/":
            from urllib.parse import parse_qs

            given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
            if given is not None:
                if not self.guard.same(given):
                    await _reply(send, 401, "wrong token")
                    return
                await send({"type": "http.response.start", "status": 303, "headers": [
                    (b"location", b"/"), (b"content-length", b"0"),
                    (b"set-cookie", f"{COOKIE}={self.guard.cookie_value()}; HttpOnly; SameSite=Strict; Path=/".encode("latin-1"))]})
                await send({"type": "http.response.body", "body": b""})
                return
        if scope.get("method") != "OPTIONS" and not self.guard.token_ok(headers.get("authorization", "")):
            cookie = None if _is_write(scope) or self.guard.token is None else _cookie(headers)
            if cookie is None or not hmac.compare_digest(cookie.encode(), self.guard.cookie_value().encode()):
                await _reply(send, 401, "this service needs Authorization: Bearer TOKEN (a browser: open /?token=TOKEN)")
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
