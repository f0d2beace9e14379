"""Host and token checks that mean what they say, against a real ``repspace serve``: the Host header is parsed as
a URL authority (a name that merely starts like a loopback address, user information, two ports, an empty host:
refused); the address the service was given is accepted (``--host 127.0.0.2``); tokens are compared as the
UTF-8 bytes a client sends (header and ``/?token=``); an empty, whitespace-only or whitespace-padded token is
refused at start with one error line and exit 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from _http_server import Server, make_store, raw_request, refused_start, request_bytes

REFUSED_HOSTS = ["[::1].evil.com", "127.0.0.1.evil.com", "localhost@evil.com", "127.0.0.1:80:80", "", "evil.com",
                 "localhost.evil.com:80", "[::1]x", "[::1", "::1", "127.0.0.1:8765@evil.com", "localhost:port",
                 "localhost:99999", "local host", "localhost/", "[::2]", "127.0.0.2",
                 "[::ffff:127.0.0.1].evil.com"]
ACCEPTED_HOSTS = ["[::1]:8765", "LOCALHOST:1", "127.0.0.1", "localhost", "[::1]", "127.0.0.1:8765",
                  "[0:0:0:0:0:0:0:1]:80", "localhost:"]
TOKEN = "clé-ü€ 🔑"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("host") / "s.db")


@pytest.fixture(scope="module")
def served(store_path) -> Iterator[Server]:
    with Server(store_path) as server:
        yield server


def _status(server: Server, host: str, **headers: str) -> int:
    head = f"GET /api/v1/spaces HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n".encode("utf-8")
    head += b"".join(f"{k}: ".encode() + v.encode("utf-8") + b"\r\n" for k, v in headers.items())
    r = raw_request(server.port, head + b"\r\n", host=server.host)
    if r.status != 200:
        assert set(r.json()) == {"error"}, r.body  # type: ignore[arg-type]
    return r.status


def test_the_host_header_is_parsed_as_an_authority(served):
    refused = {h: _status(served, h) for h in REFUSED_HOSTS}
    assert all(s == 400 for s in refused.values()), {h: s for h, s in refused.items() if s != 400}
    accepted = {h: _status(served, h) for h in ACCEPTED_HOSTS}
    assert all(s == 200 for s in accepted.values()), {h: s for h, s in accepted.items() if s != 200}


def test_the_served_host_is_accepted(store_path):
    server = Server(store_path, "--host", "127.0.0.2")
    try:
        assert server.url.startswith("http://127.0.0.2:")
        assert _status(server, f"127.0.0.2:{server.port}") == 200
        assert _status(server, "127.0.0.2") == 200
        assert _status(server, "localhost") == 200  # the loopback names still
        assert _status(server, "127.0.0.2.evil.com") == 400
        assert _status(server, "127.0.0.3") == 400
    finally:
        server.stop()


def test_a_non_ascii_token_is_compared_as_utf8_bytes(store_path):
    server = Server(store_path, "--token", TOKEN)
    try:
        assert _status(server, "127.0.0.1", Authorization=f"Bearer {TOKEN}") == 200  # the UTF-8 bytes a client sends
        assert _status(server, "127.0.0.1", Authorization=f"bearer   {TOKEN}") == 200
        assert _status(server, "127.0.0.1", Authorization=f"Bearer {TOKEN[:-1]}") == 401
        assert _status(server, "127.0.0.1", Authorization="Bearer " + TOKEN.encode("utf-8").decode("latin-1")) == 401
        assert _status(server, "127.0.0.1", Authorization=f"Basic {TOKEN}") == 401
        assert _status(server, "127.0.0.1") == 401
        r = raw_request(server.port, request_bytes("GET", "/?token=" + quote(TOKEN)))  # percent-encoded UTF-8
        assert r.status == 303 and "repspace_token=" in r.headers["set-cookie"], r.body
        cookie = r.headers["set-cookie"].split(";")[0]
        assert _status(server, "127.0.0.1", Cookie=cookie) == 200
        r = raw_request(server.port, request_bytes("GET", "/?token=" + quote(TOKEN[:-1])))
        assert r.status == 401, r.body
    finally:
        server.stop()


@pytest.mark.parametrize("args, env", [
    (["--token", ""], None), (["--token", "   "], None), (["--token", "\t"], None), ([], {"REPSPACE_TOKEN": ""}),
    ([], {"REPSPACE_TOKEN": "  "}), (["--token", " s3cret"], None), (["--token", "s3cret\n"], None),
    (["--token", "s3\x00cret"], None), (["--writable", "--token", " "], None),
])
def test_an_unusable_token_is_refused_at_start(store_path, args, env):
    code, err = refused_start(store_path, *args, env=env)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "token" in lines[0], (code, err)
