"""A repspace service in a child process for the HTTP tests (tests/interfaces/server, tests/security), and the
raw-socket client the hostile-input tests need (bodies, paths and headers no HTTP library would send)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

from repspace import Store

N, DIM = 300, 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_store(path: Path) -> Path:
    """A store at ``path`` holding space ``docs``: N random DIM-d vectors with texts and metadata ``n``, ``lang``."""
    store = Store(path)
    sp = store.create_space("docs", dim=DIM, metric="cosine")
    x = np.random.default_rng(0).standard_normal((N, DIM)).astype(np.float32)
    sp.add([f"d{i}" for i in range(N)], x, texts=[f"doc number {i}" for i in range(N)],
           metadata=[{"n": i, "lang": ["en", "de", "fr"][i % 3]} for i in range(N)])
    store.close()
    return path


def _serve_command(store: Path, args: tuple[str, ...]) -> list[str]:
    code = ("import sys; from repspace.interfaces.cli import main; "
            f"sys.exit(main(['-q', '--store', {str(store)!r}, 'serve', '--port', '0', '--json', *{list(args)!r}]))")
    return [sys.executable, "-c", code]


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "REPSPACE_TOKEN"}  # a token only where a test gives one
    return {**out, **(env or {})}


def refused_start(store: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int | None, str]:
    """``repspace serve ARGS`` that is expected to refuse to start: its exit code and stderr, or None and
    ``"started"`` when it listened instead (it is stopped at once)."""
    proc = subprocess.Popen(_serve_command(store, args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_environment(env))
    assert proc.stdout is not None and proc.stderr is not None
    if proc.stdout.readline():  # the --json line: it is listening
        proc.terminate()
        proc.communicate(timeout=30)
        return None, "started"
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode("utf-8", "replace")


class Server:
    """``repspace serve --port 0 --json`` in a child process: the port it bound is read from its first line.

    As a context manager it stops the child when the block ends (a fixture yields inside the block).
    """

    def __init__(self, store: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(_serve_command(store, args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=_environment(env))
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # printed once the socket listens (or nothing if it exits)
        if not line:
            self.proc.wait(30)
            raise RuntimeError(f"the server exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
        self.info = json.loads(line)
        self.url = self.info["url"].removesuffix("/api/v1")
        self.port = int(self.url.rsplit(":", 1)[1])
        self.host = self.url.split("//", 1)[1].rsplit(":", 1)[0].strip("[]")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # listening already; wait for the app to answer
            try:
                httpx.get(self.url + "/api/v1/health", timeout=1.0)
                return
            except httpx.TransportError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("the server did not answer in 60 s")

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class RawResponse:
    """An HTTP/1.1 response read off a socket: status, headers (lower-case names) and body."""

    def __init__(self, data: bytes) -> None:
        head, _, self.body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
        self.headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}

    def json(self) -> object:
        return json.loads(self.body)


def raw_request(port: int, request: bytes | list[bytes], *, host: str = "127.0.0.1", timeout: float = 30.0
                ) -> RawResponse:
    """Send ``request`` (bytes exactly as given, or a list of pieces sent one after another) on a new
    connection and read the response until the server closes it or its Content-Length is in."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        for piece in [request] if isinstance(request, bytes) else request:
            sock.sendall(piece)
        data = b""
        while True:
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep:
                length = RawResponse(data).headers.get("content-length")
                if length is not None and len(body) >= int(length):
                    break
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    return RawResponse(data)


def request_bytes(method: str, target: str, *, host: str = "127.0.0.1", body: bytes | None = None,
                  headers: dict[str, str] | None = None) -> bytes:
    """One HTTP/1.1 request as bytes: ``target`` sent exactly as given (no normalising of the path)."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + (body or b"")


def chunked(body: bytes, size: int = 1 << 20) -> list[bytes]:
    """``body`` as the pieces of a chunked transfer (no Content-Length), the last chunk included."""
    pieces = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size]) for i in range(0, len(body), size)]
    return pieces + [b"0\r\n\r\n"]
