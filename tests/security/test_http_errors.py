"""One error shape, against a real ``repspace serve``: every error the service gives is ``{"error": "one line"}``
with the status that says what happened: unknown routes (404) and methods (405, with ``Allow``), bodies that do
not parse on every route that reads one (422), a chunked body over the limit (413, as with a Content-Length).
Error lines are capped (an echoed input is cut, never 100 KB) and never show an absolute path (the store's file
is named relative to its folder).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _http_server import DIM, Server, chunked, make_store, raw_request, request_bytes

AUTH = {"authorization": "Bearer s3cret"}
LIMIT = 16 * 1024 * 1024
#: repspace.core.printable.MESSAGE_LIMIT: the longest error line (written here so that the test also runs on code
#: that predates that module).
MESSAGE_LIMIT = 1000
BODY_ROUTES = ["/api/v1/spaces/docs/search", "/api/v1/compare/docs/docs/search", "/api/v1/spaces/docs/items"]
#: An absolute path of two parts or more, anywhere in a message.
ABSOLUTE = re.compile(r"(?<![\w.~])/(?:[^\s/'\"]+/)+[^\s/'\"]+")


def machine_paths(message: str) -> list[str]:
    """The absolute paths of this machine in ``message`` (a URL path such as ``/api/v1/...`` is none)."""
    return [m for m in ABSOLUTE.findall(message) if Path("/" + m.split("/")[1]).exists()]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, Path]]:
    path = make_store(tmp_path_factory.mktemp("errors") / "s.db")
    with Server(path, "--writable", env={"REPSPACE_TOKEN": "s3cret"}) as server:
        yield server, path


def one_line(r: httpx.Response, status: int, fragment: str = "") -> str:
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"error"} and isinstance(body["error"], str), body
    message = body["error"]
    assert "\n" not in message and len(message) <= MESSAGE_LIMIT + 40 and fragment in message, message
    return message


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/api/v1/nope", 404), ("GET", "/nope/at/all", 404), ("GET", "/static/missing.js", 404),
    ("POST", "/api/v1/nope", 404), ("DELETE", "/api/v1/spaces", 405), ("PUT", "/api/v1/spaces/docs", 405),
    ("POST", "/api/v1/health", 405), ("PATCH", "/api/v1/spaces/docs/items/d1", 405),
    ("GET", "/api/v1/spaces/docs/search", 405),
])
def test_unknown_routes_and_methods_answer_the_error_shape(served, method, path, status):
    server, _ = served
    r = httpx.request(method, server.url + path, headers=AUTH)
    one_line(r, status)
    if status == 405:
        assert r.headers.get("allow"), r.headers  # which methods the route takes


#: Bodies that are not a JSON object pydantic can read: broken JSON, other JSON values, nothing, not UTF-8.
UNPARSED = [b"{not json", b"[1, 2]", b'"text"', b"null", b"", b"\xff\xfe{}", b'{"k": 1', b"{}" * 3,
            b'{"items": "\x80"}', b'{"id": "\xc3"}', b"\x80"]


def test_a_body_that_does_not_parse_is_422_on_every_route(served):
    server, _ = served
    for route in BODY_ROUTES:
        for body in UNPARSED:
            r = httpx.post(server.url + route, content=body, headers={**AUTH, "content-type": "application/json"})
            assert r.status_code == 422, (route, body, r.status_code, r.text)
            one_line(r, 422)


def test_a_chunked_body_over_the_limit_is_413_on_every_route(served):
    server, path = served
    body = b'{"text": "' + b"x" * (LIMIT - 11) + b'"}'  # one byte over the limit, sent without a length
    assert len(body) == LIMIT + 1
    head = ("POST {route} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    for route in BODY_ROUTES:
        r = raw_request(server.port, [head.format(route=route).encode(), *chunked(body)], timeout=60)
        assert r.status == 413, (route, r.status, r.body[:300])
        assert set(r.json()) == {"error"} and "larger" in r.json()["error"], r.body[:300]  # type: ignore[arg-type]
    small = b'{"items": [{"id": "chunked", "vector": [' + b", ".join([b"1.0"] * DIM) + b"]}]}"
    ok = raw_request(server.port, [head.format(route="/api/v1/spaces/docs/items").encode(), *chunked(small, 7)])
    assert ok.status == 200, ok.body  # a chunked body within the limit is read whole


def test_errors_are_capped_and_show_no_absolute_path(served):
    server, path = served
    base = server.url + "/api/v1"
    cases = [
        httpx.post(base + "/spaces/docs/search", json={"id": "d1", "index": "x" * 100_000}, headers=AUTH),
        httpx.get(base + "/spaces/docs/items/" + "y" * 10_000, headers=AUTH),
        httpx.get(base + "/spaces/docs/column", params={"name": "@" + "z" * 199}, headers=AUTH),
        httpx.get(base + "/spaces/nope", headers=AUTH),
        httpx.post(base + "/compare/nope/docs/search", json={"id": "d1"}, headers=AUTH),
        httpx.get(base + "/spaces/docs/items/nope", headers=AUTH),
        httpx.get(base + "/" + "q" * 10_000, headers=AUTH),
    ]
    folder = str(path.parent.resolve())
    for r in cases:
        assert 400 <= r.status_code < 500, (r.status_code, r.text[:200])
        message = one_line(r, r.status_code)
        assert folder not in message and str(path) not in message, message
        assert not machine_paths(message), message
    assert "s.db" in one_line(cases[3], 404, "nope")  # the store is named by its file name


def test_every_error_status_the_service_gives_has_the_shape(served, tmp_path):
    server, _ = served
    base = server.url + "/api/v1"
    one_line(httpx.get(base + "/spaces"), 401)
    one_line(httpx.get(base + "/spaces", headers={**AUTH, "host": "evil.example"}), 400, "Host")
    one_line(httpx.post(base + "/spaces/docs/search", content=b"{}", headers={**AUTH, "content-type": "text/plain"}),
             415)
    one_line(httpx.post(base + "/spaces/docs/search", content=b"x" * (LIMIT + 1),
                        headers={**AUTH, "content-type": "application/json"}), 413)
    one_line(httpx.post(base + "/spaces/docs/search", json={"id": "d1", "k": 0}, headers=AUTH), 422, "k")
    one_line(httpx.post(base + "/spaces/docs/search", json={"id": "d1", "where": "n >"}, headers=AUTH), 400)
    for bad in (b"GET /api/v1/spaces HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n",
                b"GARBAGE\r\n\r\n"):  # refused by the HTTP parser, before the app
        r = raw_request(server.port, bad)
        assert r.status == 400 and set(r.json()) == {"error"}, r.body  # type: ignore[arg-type]
    path = tmp_path / "ro.db"
    make_store(path)
    ro = Server(path)
    try:
        one_line(httpx.post(ro.url + "/api/v1/spaces/docs/items", json={"items": [{"id": "x", "vector": [1] * DIM}]}),
                 403, "read-only")
    finally:
        ro.stop()
