"""The service's HTTP/1.1 protocol: uvicorn's h11 protocol with a deadline on a request's headers.

uvicorn (0.55, h11 or httptools) closes an idle kept-alive connection after
``timeout_keep_alive`` seconds, but sets no deadline on the request line and
headers themselves: a client that connects and sends them a byte at a time
(slowloris) holds its connection, and a file descriptor, for as long as it likes.
:class:`HeaderDeadlineProtocol` closes a connection whose request line and headers
are not complete :data:`HEADER_TIMEOUT` seconds after the connection opened, or
after the first byte of a later request on a kept-alive connection. A body is
not under this deadline (the routes read at most the service's body limit).
A request h11 cannot parse (a request line or headers beyond its 16 KiB, a
malformed header) is answered 400 with the service's JSON error shape, like
every other error.

Examples
--------
>>> HEADER_TIMEOUT, KEEP_ALIVE
(5.0, 5)
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from repspace.core.limits import HEADER_TIMEOUT

__all__ = ["HEADER_TIMEOUT", "KEEP_ALIVE", "HeaderDeadlineProtocol"]

#: Seconds an idle kept-alive connection stays open (uvicorn's ``timeout_keep_alive``).
KEEP_ALIVE = 5


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol; a request whose headers are not all in after :data:`HEADER_TIMEOUT` seconds
    closes its connection."""

    header_timeout: float = HEADER_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:  # a request begun, its headers not complete yet
            self._arm()
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 cannot parse, in the service's error shape."""
        from repspace.interfaces.server.errors import error_body

        body = error_body(f"invalid HTTP request ({msg.rstrip('.').lower()}): its request line or headers are "
                          "malformed or longer than 16 KiB")
        headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                   (b"content-length", str(len(body)).encode())]
        try:
            self.transport.write(self.conn.send(h11.Response(status_code=400, headers=headers)))
            self.transport.write(self.conn.send(h11.Data(data=body)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:  # a response had already begun: nothing more can be said
            pass
        self.transport.close()

    def _arm(self) -> None:
        if self._deadline is None and not self.transport.is_closing():
            self._deadline = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()
