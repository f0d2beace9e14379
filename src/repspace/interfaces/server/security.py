"""What keeps the service safe by default (the conventions of Jupyter, Datasette and TensorBoard).

* **Host header**: parsed as a URL authority (``host[:port]``, an IPv6 address in brackets,
  no user information); a request naming another host than the ones served (a DNS-rebinding
  page in the user's browser) or a malformed one is refused with 400 before any route runs.
* **Token**: when the service has one, every request carries ``Authorization: Bearer TOKEN``
  or gets 401; writes always need it, and a service without ``--writable`` refuses them with
  403. Tokens are compared as UTF-8 bytes, in constant time (digests of equal length). A
  browser opens ``/?token=TOKEN`` once (Jupyter's convention; the value percent-encoded
  UTF-8): the answer is a redirect to ``/`` that sets the token as an ``HttpOnly``,
  ``SameSite=Strict`` cookie, which then stands for the header on reads (never on writes:
  they need the header). A cookie that is never sent cross-site cannot be used by another
  page (no CSRF).
* **Body**: a request with a body must say ``Content-Type: application/json`` (or a
  ``+json`` type; ``charset=utf-8`` at most): anything else is a 415 before any work, so a
  cross-site form or ``text/plain`` post (which a browser sends without asking) does nothing.
  A body beyond the limit (by ``Content-Length``, or counted as it streams in chunks) is a 413.
* **CORS**: none, unless origins are named.

Written as one plain ASGI middleware (Starlette's ``BaseHTTPMiddleware`` costs a task per
request); errors are JSON ``{"error": ...}`` like every other one of the API.

Examples
--------
>>> parse_host("[::1]:8765"), parse_host("LOCALHOST:1"), parse_host("127.0.0.1")
('::1', 'localhost', '127.0.0.1')
>>> [parse_host(h) for h in ("[::1].evil.com", "localhost@evil.com", "127.0.0.1:80:80", "")]
[None, None, None, None]
>>> json_media_type(b"application/json; charset=UTF-8"), json_media_type(b"text/plain")
(True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote_to_bytes

from repspace.core.errors import InputError
from repspace.core.printable import first_control
from repspace.interfaces.server.errors import Refused, error_body

__all__ = ["LOOPBACK_HOSTS", "COOKIE", "Guard", "Refused", "check_token", "json_media_type", "parse_host",
           "require_writer"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Host names a loopback service answers to (the port is not compared).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
#: The cookie a browser keeps the token in after opening ``/?token=...``.
COOKIE = "repspace_token"
#: A Host header: ``[IPv6]`` or a name / IPv4 address (RFC 3986 reg-name characters), then ``:port``.
_AUTHORITY = re.compile(r"(?:\[(?P<ip6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9\-._~!$&'()*+,;=%]+))"
                        r"(?::(?P<port>[0-9]{0,5}))?")
#: Methods that never carry a body the service reads (their body, if any, is not JSON-checked).
_BODYLESS = (b"GET", b"HEAD", b"OPTIONS")


def parse_host(value: str) -> str | None:
    """The host a ``Host`` header names, normalised (lower case, IP addresses in their short form), or None
    when the header is not a URL authority without user information (RFC 9110's ``uri-host [":" port]``).

    Examples
    --------
    >>> parse_host("[0:0:0:0:0:0:0:1]"), parse_host("127.0.0.2:8765"), parse_host("Example.ORG:")
    ('::1', '127.0.0.2', 'example.org')
    >>> parse_host("127.0.0.1.evil.com"), parse_host("[::1]x"), parse_host("localhost:99999")
    ('127.0.0.1.evil.com', None, None)
    """
    m = _AUTHORITY.fullmatch(value)
    if m is None or (m["port"] and int(m["port"]) > 65535):
        return None
    if m["ip6"] is not None:
        try:
            return str(ipaddress.IPv6Address(m["ip6"]))
        except ValueError:
            return None
    name = m["name"].lower()
    try:
        return str(ipaddress.IPv4Address(name))
    except ValueError:
        return name


def check_token(token: str) -> None:
    """Refuse a token that cannot guard anything or cannot be sent: empty, whitespace only, with whitespace
    at either end (an HTTP header drops it, RFC 9110 5.5, so no client could send the token as given), with a
    control character (no header carries it), or not encodable as UTF-8.

    Examples
    --------
    >>> check_token("s3cret wörd")
    >>> check_token("  ")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: the token is empty or only whitespace: give a secret (--token or $REPSPACE_TOKEN)
    """
    if not token.strip():
        raise InputError("the token is empty or only whitespace: give a secret (--token or $REPSPACE_TOKEN)")
    if token != token.strip():
        raise InputError("the token starts or ends with whitespace, which an HTTP header drops (no client could "
                         "send it as given): remove it")
    at = first_control(token)
    if at is not None:
        raise InputError(f"the token has a control character at position {at}, which no HTTP header carries")
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("the token is not valid UTF-8 text") from None


def json_media_type(value: bytes) -> bool:
    """Whether a ``Content-Type`` is JSON the service reads: ``application/json`` or ``application/*+json``,
    with no parameter but ``charset=utf-8`` (JSON is UTF-8, RFC 8259).

    Examples
    --------
    >>> [json_media_type(v) for v in (b"application/problem+json", b'application/json;charset="utf-8"',
    ...                                b"application/json; charset=latin-1", b"application/x-www-form-urlencoded")]
    [True, True, False, False]
    """
    kind, *params = value.decode("latin-1").split(";")
    major, _, minor = kind.strip().lower().partition("/")
    if major != "application" or not (minor == "json" or (minor.endswith("+json") and len(minor) > 5)):
        return False
    for param in params:
        name, _, val = param.strip().partition("=")
        if name.strip().lower() != "charset" or val.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


def _digest(secret: bytes) -> bytes:
    return hashlib.sha256(b"repspace-token:" + secret).digest()


class Guard:
    """The host, token, content-type and body-size checks, and CORS when asked for.

    Parameters
    ----------
    token : str, optional
        Checked by :func:`check_token`.
    hosts : Host header names accepted (default :data:`LOOPBACK_HOSTS`; ``["*"]``: any).
    cors : browser origins allowed (none by default).
    max_body : bytes.
    """

    def __init__(self, *, token: str | None, hosts: list[str] | None, cors: list[str] | None, max_body: int) -> None:
        if token is not None:
            check_token(token)
        self.token = token
        self.any_host = "*" in (hosts or ())
        names = [h if h.startswith("[") or ":" not in h else f"[{h}]" for h in (hosts or LOOPBACK_HOSTS) if h != "*"]
        self.hosts = {parse_host(h) for h in names} - {None}
        self.cors = list(cors or [])
        self.max_body = max_body
        self._token = _digest(token.encode("utf-8")) if token is not None else None
        self._cookie = (hashlib.sha256(b"repspace-cookie:" + token.encode("utf-8")).hexdigest().encode()
                        if token is not None else None)

    def install(self, app: Any) -> None:
        if self.cors:
            from starlette.middleware.cors import CORSMiddleware

            app.add_middleware(CORSMiddleware, allow_origins=self.cors, allow_methods=["GET", "POST"],
                               allow_headers=["Authorization", "Content-Type"])
        app.add_middleware(_GuardMiddleware, guard=self)  # added last: runs first

    def host_ok(self, host_header: str) -> bool:
        """Whether the Host header names a host this service answers to (any, on a network address: the
        token is the check there)."""
        return self.any_host or parse_host(host_header) in self.hosts

    def same(self, given: bytes) -> bool:
        """``given`` (the bytes a client sent) is the token, compared in constant time."""
        return self._token is not None and hmac.compare_digest(_digest(given), self._token)

    def token_ok(self, authorization: bytes) -> bool:
        """An ``Authorization`` header (raw bytes) carries the token (any, when the service has none)."""
        if self._token is None:
            return True
        scheme, _, given = authorization.strip(b" \t").partition(b" ")
        return scheme.lower() == b"bearer" and self.same(given.strip(b" \t"))

    def cookie_ok(self, value: str) -> bool:
        return self._cookie is not None and hmac.compare_digest(value.encode("latin-1"), self._cookie)

    def cookie_value(self) -> str:
        """What the browser's cookie holds: a digest of the token (any token, whatever its characters,
        makes a valid cookie value; the token itself is not kept by the browser)."""
        assert self._cookie is not None
        return self._cookie.decode()


def _cookie(header: bytes) -> str | None:
    from http.cookies import SimpleCookie

    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header.decode("latin-1"))
    except Exception:  # noqa: BLE001  (a malformed Cookie header is no token)
        return None
    return jar[COOKIE].value if COOKIE in jar else None


def _query_token(query: bytes) -> bytes | None:
    """The ``token`` of a query string, as the bytes it percent-encodes (a browser encodes UTF-8)."""
    for part in query.split(b"&"):
        name, eq, value = part.partition(b"=")
        if eq and unquote_to_bytes(name.replace(b"+", b" ")) == b"token":
            return unquote_to_bytes(value.replace(b"+", b" "))
    return None


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
        guard = self.guard
        headers: dict[bytes, bytes] = {}
        for k, v in scope.get("headers", []):
            headers.setdefault(k.lower(), v)
        if not guard.host_ok(headers.get(b"host", b"").decode("latin-1")):
            await _reply(send, 400, "this service does not answer to that Host header")
            return
        if guard.token is not None and scope.get("method") == "GET" and scope.get("path") == "/":
            given = _query_token(scope.get("query_string", b""))
            if given is not None:
                if not guard.same(given):
                    await _reply(send, 401, "wrong token")
                    return
                await send({"type": "http.response.start", "status": 303, "headers": [
                    (b"location", b"/"), (b"content-length", b"0"),
                    (b"set-cookie", f"{COOKIE}={guard.cookie_value()}; HttpOnly; SameSite=Strict; Path=/".encode())]})
                await send({"type": "http.response.body", "body": b""})
                return
        if scope.get("method") != "OPTIONS" and not guard.token_ok(headers.get(b"authorization", b"")):
            cookie = None if _is_write(scope) or guard.token is None else _cookie(headers.get(b"cookie", b""))
            if cookie is None or not guard.cookie_ok(cookie):
                await _reply(send, 401,
                             "this service needs Authorization: Bearer TOKEN (a browser: open /?token=TOKEN)")
                return
        length = headers.get(b"content-length")
        if length is not None and not length.strip().isdigit():
            await _reply(send, 400, "the Content-Length header is not a number")
            return
        if length is not None and int(length) > guard.max_body:
            await _reply(send, 413, f"the request body is larger than {guard.max_body} bytes")
            return
        chunked = b"transfer-encoding" in headers
        has_body = chunked or (length is not None and int(length) > 0)
        if has_body and scope.get("method", "").encode() not in _BODYLESS:
            kind = headers.get(b"content-type")
            if kind is None or not json_media_type(kind):
                await _reply(send, 415, "a request body must be JSON: send Content-Type: application/json")
                return
        if chunked:  # no length: read it all here, counting, so that a body over the limit is a 413 like any other
            body = await _read_bounded(receive, guard.max_body)
            if body is None:
                await _reply(send, 413, f"the request body is larger than {guard.max_body} bytes")
                return
            receive = _replay(body, receive)
        await self.app(scope, receive, send)


async def _read_bounded(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None as soon as it exceeds ``limit`` bytes (or the client went away)."""
    parts: list[bytes] = []
    seen = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then whatever the connection says (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _reply(send: Send, status: int, message: str) -> None:
    body = error_body(message)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
