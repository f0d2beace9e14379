"""A request with a body must be JSON: anything a browser sends cross-site without asking (text/plain, a form)
or a body without a Content-Type is a 415 with one line, before any work, against a real ``repspace serve``.

The case found: a token-less read-only server accepted a cross-site ``text/plain`` POST to ``/search`` whose
``index`` made it build (and keep) an HNSW index beside the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from _http_server import DIM, Server, make_store, raw_request, request_bytes

SEARCH = {"id": "d1", "k": 3, "index": "hnsw16"}
REFUSED_TYPES = ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data",
                 "application/xml", "application/json; charset=latin-1", "application/jsonx", "json",
                 "application/+json"]
JSON_TYPES = ["application/json", "application/json; charset=utf-8", 'Application/JSON; Charset="UTF-8"',
              "application/vnd.api+json"]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, Path]]:
    path = make_store(tmp_path_factory.mktemp("ctype") / "s.db")
    with Server(path) as server:
        yield server, path


@pytest.fixture(scope="module")
def writable(tmp_path_factory) -> Iterator[tuple[Server, Path]]:
    path = make_store(tmp_path_factory.mktemp("ctype-w") / "s.db")
    with Server(path, "--writable", env={"REPSPACE_TOKEN": "s3cret"}) as server:
        yield server, path


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*") if p.is_file()
            and not p.name.endswith(("-wal", "-shm"))}


def _refused(r: httpx.Response | object, status: int = 415) -> None:
    got_status = getattr(r, "status_code", None) or getattr(r, "status")
    body = r.json()  # type: ignore[attr-defined]
    assert got_status == status, (got_status, body)
    assert set(body) == {"error"} and "\n" not in body["error"] and "JSON" in body["error"], body


@pytest.mark.parametrize("kind", REFUSED_TYPES)
def test_a_cross_site_search_body_that_is_not_json_is_415_and_builds_nothing(served, kind):
    server, path = served
    before = _files(path.parent)
    r = httpx.post(server.url + "/api/v1/spaces/docs/search", content=json.dumps(SEARCH),
                   headers={"content-type": kind, "origin": "http://evil.example"}, timeout=60)
    _refused(r)
    assert _files(path.parent) == before  # no index built: refused before any work


def test_a_body_without_a_content_type_is_415_and_json_types_are_served(served):
    server, _ = served
    r = raw_request(server.port, request_bytes("POST", "/api/v1/spaces/docs/search", body=json.dumps(SEARCH).encode()))
    _refused(r)
    for kind in JSON_TYPES:  # a +json type, a charset of utf-8, any case
        r = httpx.post(server.url + "/api/v1/spaces/docs/search", content=json.dumps({"id": "d1", "k": 3}),
                       headers={"content-type": kind}, timeout=60)
        assert r.status_code == 200 and len(r.json()["hits"]) == 3, (kind, r.text)
    # a GET carries no body: its Content-Type is not looked at
    assert httpx.get(server.url + "/api/v1/spaces", headers={"content-type": "text/plain"}).status_code == 200


def test_the_two_space_search_wants_json_too(served):
    server, _ = served
    r = httpx.post(server.url + "/api/v1/compare/docs/docs/search", content=json.dumps({"id": "d1", "k": 3}),
                   headers={"content-type": "text/plain"}, timeout=60)
    _refused(r)


def test_a_write_that_is_not_json_is_415_and_writes_nothing(writable):
    server, path = writable
    body = json.dumps({"items": [{"id": "new", "vector": [1.0] * DIM}]})
    auth = {"authorization": "Bearer s3cret"}
    for kind in ("text/plain", "application/x-www-form-urlencoded"):
        _refused(httpx.post(server.url + "/api/v1/spaces/docs/items", content=body,
                            headers={**auth, "content-type": kind}))
    assert httpx.get(server.url + "/api/v1/spaces/docs", headers=auth).json()["count"] == 300
    ok = httpx.post(server.url + "/api/v1/spaces/docs/items", content=body,
                    headers={**auth, "content-type": "application/json"})
    assert ok.status_code == 200 and ok.json()["added"] == 1, ok.text
