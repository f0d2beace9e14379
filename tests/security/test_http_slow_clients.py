"""Slow sockets are closed, against a real ``repspace serve`` on raw sockets: a client that sends its request
line and headers a byte at a time (slowloris), one that connects and sends nothing, and one that dribbles its
second request on a kept-alive connection are all cut within a few seconds of the header deadline
(:data:`repspace.interfaces.server.protocol.HEADER_TIMEOUT`, 5 s); an idle kept-alive connection is closed
after ``timeout_keep_alive``. Bounded: every socket gives up after :data:`GIVE_UP` seconds.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from _http_server import Server, make_store

#: The header deadline and keep-alive time the service sets (5 s each), and the slack a loaded machine needs.
DEADLINE, SLACK = 5.0, 4.0
#: No socket of this test waits longer than this.
GIVE_UP = 20.0
REQUEST = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"z" * 200 + b"\r\n\r\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Server]:
    with Server(make_store(tmp_path_factory.mktemp("slow") / "s.db")) as server:
        yield server


def _closed_after(sock: socket.socket, pieces: list[bytes], gap: float) -> float | None:
    """Send ``pieces`` ``gap`` seconds apart (then wait) until the server closes the socket: the seconds it took,
    or None if it was still open after :data:`GIVE_UP` seconds."""
    start = time.monotonic()
    sock.settimeout(gap)
    i = 0
    while time.monotonic() - start < GIVE_UP:
        try:
            if i < len(pieces):
                sock.sendall(pieces[i])
                i += 1
            data = sock.recv(65536)
            if not data:
                return time.monotonic() - start
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return time.monotonic() - start
    return None


def test_slow_clients_are_cut_after_the_header_deadline(served):
    results: dict[str, float | None] = {}

    def slowloris() -> None:  # one byte of the request line and headers every 0.25 s, never the blank line
        with socket.create_connection(("127.0.0.1", served.port)) as s:
            results["slowloris"] = _closed_after(s, [bytes([b]) for b in REQUEST[:-2]], 0.25)

    def silent() -> None:  # connects, sends nothing
        with socket.create_connection(("127.0.0.1", served.port)) as s:
            results["silent"] = _closed_after(s, [], 0.25)

    def second_request() -> None:  # one whole request, then the next one a byte at a time on the same connection
        with socket.create_connection(("127.0.0.1", served.port)) as s:
            s.sendall(REQUEST)
            s.settimeout(10)
            got = b""
            while b'{"ok":true}' not in got:
                got += s.recv(65536)
            assert got.startswith(b"HTTP/1.1 200"), got
            results["second"] = _closed_after(s, [bytes([b]) for b in REQUEST[:-2]], 0.25)

    def idle() -> None:  # one whole request, then nothing: the keep-alive timeout closes it
        with socket.create_connection(("127.0.0.1", served.port)) as s:
            s.sendall(REQUEST)
            results["idle"] = _closed_after(s, [], 0.25)

    threads = [threading.Thread(target=f) for f in (slowloris, silent, second_request, idle)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(GIVE_UP + 15)
    assert set(results) == {"slowloris", "silent", "second", "idle"}, results
    for name, took in results.items():
        assert took is not None and took < DEADLINE + SLACK, (name, took, results)
    assert results["slowloris"] > DEADLINE - 1.0, results  # cut by the deadline, not refused at once
    # a client that sends its request at once is served as before
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as s:
        s.sendall(REQUEST.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200") and data.endswith(b'{"ok":true}'), data
