"""A repspace service in a child process for the HTTP tests (tests/interfaces/server)."""

from __future__ import annotations

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


def _make_store(path: Path) -> None:
    store = Store(path)
    sp = store.create_space("docs", dim=DIM, metric="cosine")
    x = np.random.default_rng(0).standard_normal((N, DIM)).astype(np.float32)
    sp.add([f"d{i}" for i in range(N)], x, texts=[f"doc number {i}" for i in range(N)],
           metadata=[{"n": i, "lang": ["en", "de", "fr"][i % 3]} for i in range(N)])
    store.close()


class Server:
    """``repspace serve`` in a child process, on a free loopback port."""

    def __init__(self, store: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        code = ("import sys; from repspace.interfaces.cli import main; "
                f"sys.exit(main(['--store', {str(store)!r}, 'serve', '--port', '{self.port}', *{list(args)!r}]))")
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.proc.stderr.read().decode()}")
            try:
                httpx.get(self.url + "/api/v1/openapi.json", timeout=1.0)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server did not start in 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
