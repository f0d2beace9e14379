"""The HTTP service (``repspace serve``): a JSON API over one store, safe by default.

:func:`create_app` builds the ASGI app (FastAPI); :func:`serve` runs it with uvicorn.
Routes are in :mod:`repspace.interfaces.server.app`, request and response bodies in
:mod:`repspace.interfaces.server.schemas` (which are also the OpenAPI schema), the host, token,
content-type and size checks in :mod:`repspace.interfaces.server.security`, the one error shape in
:mod:`repspace.interfaces.server.errors`, and the HTTP protocol with its header deadline in
:mod:`repspace.interfaces.server.protocol`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repspace.core.errors import InputError

__all__ = ["create_app", "serve", "is_loopback"]


def create_app(*args: Any, **kwargs: Any) -> Any:
    """See :func:`repspace.interfaces.server.app.create_app` (imported lazily: FastAPI loads on use).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from starlette.testclient import TestClient
    >>> from repspace.store import Store
    >>> path = os.path.join(tempfile.mkdtemp(), "s.db")
    >>> _ = Store(path).create_space("toy", dim=2).add(["a", "b"], np.eye(2))
    >>> app = create_app(path)  # read-only: writes are not served
    >>> app.title, app.state.store.readonly
    ('repspace', True)
    >>> client = TestClient(app, base_url="http://127.0.0.1")
    >>> [s["name"] for s in client.get("/api/v1/spaces").json()]
    ['toy']
    >>> TestClient(app, base_url="http://evil.example").get("/api/v1/spaces").status_code  # a foreign Host
    400
    >>> create_app(path, writable=True)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: a writable service needs a token (--token or $REPSPACE_TOKEN)
    """
    from repspace.interfaces.server.app import create_app as make

    return make(*args, **kwargs)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``127.0.0.1``, ``::1``, ``localhost``).

    Examples
    --------
    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0"), is_loopback("10.0.0.2")
    (True, True, False, False)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(store_path: str | Path, *, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
          writable: bool = False, cors: list[str] | None = None, query_timeout: float = 30.0,
          on_ready: Callable[[str], None] | None = None, rerankers: dict[str, str] | None = None) -> None:
    """Run the service until interrupted.

    A non-loopback address needs a token (anyone on the network could read the store
    otherwise); a writable service needs one whatever the address; an empty or
    whitespace-only token is refused. A loopback service answers to the loopback names and
    to the address it was given (``127.0.0.2``); on another address the token guards every
    request, whatever the Host. The socket is bound before the app starts, so
    ``on_ready(url)`` gets the real port (``port=0``: any free one). Idle kept-alive
    connections close after :data:`~repspace.interfaces.server.protocol.KEEP_ALIVE` seconds,
    and a request's headers must arrive within
    :data:`~repspace.interfaces.server.protocol.HEADER_TIMEOUT` seconds.

    Examples
    --------
    Its refusals come before any socket is opened:

    >>> import tempfile, os
    >>> from repspace.store import Store
    >>> path = os.path.join(tempfile.mkdtemp(), "s.db")
    >>> _ = Store(path)
    >>> serve(path, host="0.0.0.0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: refusing to serve on 0.0.0.0 without a token: anyone on the network could ...
    >>> serve(path, writable=True)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: a writable service needs a token (--token or $REPSPACE_TOKEN)
    """
    import socket

    import uvicorn

    from repspace.interfaces.server.protocol import KEEP_ALIVE, HeaderDeadlineProtocol
    from repspace.interfaces.server.security import LOOPBACK_HOSTS, check_token

    if token is not None:
        check_token(token)
    if not is_loopback(host) and not token:
        raise InputError(f"refusing to serve on {host} without a token: anyone on the network could read the "
                         "store (give --token or $REPSPACE_TOKEN, or bind 127.0.0.1)")
    hosts = [*LOOPBACK_HOSTS, host] if is_loopback(host) else ["*"]  # on a network address the token guards all
    app = create_app(store_path, token=token, writable=writable, cors=cors, hosts=hosts, query_timeout=query_timeout,
                     rerankers=rerankers)
    bare = host.strip("[]")
    sock = socket.socket(socket.AF_INET6 if ":" in bare else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bare, port))
    except OSError as e:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(2048)
    shown = f"[{bare}]" if ":" in bare else bare
    if on_ready is not None:
        on_ready(f"http://{shown}:{sock.getsockname()[1]}")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", server_header=False, http=HeaderDeadlineProtocol,
                                           timeout_keep_alive=KEEP_ALIVE))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
