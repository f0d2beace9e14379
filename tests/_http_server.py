"""A repspace service in a child process for the HTTP tests (tests/interfaces/server)."""

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


def _make_store(path: Path) -> None:
    store = Store(path)
    sp = store.create_space("docs", dim=DIM, metric="cosine")
    x = np.random.default_rng(0).standard_normal((N, DIM)).astype(np.float32)
    sp.add([f"d{i}" for i in range(N)], x, texts=[f"doc number {i}" for i in range(N)],
           metadata=[{"n": i, "lang": ["en", "de", "fr"][i % 3]} for i in range(N)])
    store.close()


class Server:
    """``repspace serve --port 0 --json`` in a child process: the port it bound is read from its first line."""

    def __init__(self, store: Path, *args: str, env: dict[str, str] | None = None) -> None:
        code = ("import sys; from repspace.interfaces.cli import main; "
                f"sys.exit(main(['-q', '--store', {str(store)!r}, 'serve', '--port', '0', '--json', *{list(args)!r}]))")
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # printed once the socket listens (or nothing if it exits)
        if not line:
            self.proc.wait(30)
            raise RuntimeError(f"the server exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
        self.info = json.loads(line)
        self.url = self.info["url"].removesuffix("/api/v1")
        self.port = int(self.url.rsplit(":", 1)[1])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # listening already; wait for the app to answer
            try:
                httpx.get(self.url + "/api/v1/openapi.json", timeout=1.0)
                return
            except httpx.TransportError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("the server did not answer in 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
