"""The OpenAPI schema of a real ``repspace serve`` tells the truth: what the code checks, the schema says (the
quick companion of test_http_fuzz.py, which lets Schemathesis find any difference). Each rule is checked both
ways: a request the schema forbids is refused, and the schema forbids what the code refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import jsonschema
import pytest
from _http_server import Server, make_store


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, dict]]:
    with Server(make_store(tmp_path_factory.mktemp("openapi") / "s.db")) as server:
        yield server, httpx.get(server.url + "/api/v1/openapi.json").json()


def _parameter(schema: dict, path: str, name: str) -> dict:
    (p,) = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name]
    return p["schema"]


def _body(schema: dict, path: str) -> jsonschema.Draft202012Validator:
    body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return jsonschema.Draft202012Validator({**body, "components": schema.get("components", {})})


def test_choices_and_lengths_are_in_the_schema(served):
    server, schema = served
    layout = _parameter(schema, "/api/v1/spaces/{space}/map", "method")
    assert layout.get("enum") == ["pca", "umap"], layout
    assert _parameter(schema, "/api/v1/spaces/{space}/map", "format").get("enum") == ["json", "arrow", "f32", "ids"]
    assert _parameter(schema, "/api/v1/spaces/{space}/column", "method").get("enum") == ["pca", "umap"]
    for path in ("/api/v1/spaces/{space}/items/{item_id}", "/api/v1/compare/{a}/{b}/items/{item_id}"):
        item = _parameter(schema, path, "item_id")
        assert item["minLength"] == 1 and item["maxLength"] == 1024 and item["pattern"] == r"\S", item
    assert _parameter(schema, "/api/v1/spaces/{space}/items", "id")["minLength"] == 1
    name = _parameter(schema, "/api/v1/spaces/{space}/column", "name")
    assert re.search(name["pattern"], "@recall") and not re.search(name["pattern"], "@bogus")
    r = httpx.get(server.url + "/api/v1/spaces/docs/column", params={"name": "@bogus"})
    assert r.status_code == 400  # and the code refuses what the pattern forbids
    r = httpx.get(server.url + "/api/v1/spaces/docs/map", params={"method": "tsne"})
    assert r.status_code == 422 and set(r.json()) == {"error"}


SEARCH = [
    ({"text": "a"}, True), ({"vector": [1.0]}, True), ({"id": "d1"}, True), ({"id": "d1", "text": None}, True),
    ({}, False), ({"text": "a", "id": "d1"}, False), ({"vector": [1.0], "id": "d1"}, False),
    ({"id": "d1", "hybrid": True}, False), ({"text": "a", "hybrid": True}, True),
    ({"text": "a", "hybrid": True, "hubness": "csls"}, False), ({"id": ""}, False), ({"id": "  "}, False),
    ({"id": "nul\u0000"}, False), ({"text": "   "}, False), ({"vector": []}, False), ({"id": "d1", "k": 0}, False),
]
PAIR_SEARCH = [({"text": "a"}, True), ({"id": "d1"}, True), ({}, False), ({"text": "a", "id": "d1"}, False),
               ({"id": ""}, False), ({"text": "x" * 10_001}, False)]
WRITE = [
    ({"items": [{"id": "a", "vector": [1.0]}, {"id": "b", "vector": [2.0]}]}, True),
    ({"items": [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]}, True),
    ({"items": [{"id": "a", "vector": [1.0]}, {"id": "b", "text": "y"}]}, False),
    ({"items": [{"id": "a"}]}, False), ({"items": [{"id": "", "vector": [1.0]}]}, False), ({"items": []}, False),
]


def test_the_search_body_rules_are_in_the_schema(served):
    server, schema = served
    validator = _body(schema, "/api/v1/spaces/{space}/search")
    wrong = [body for body, valid in SEARCH if validator.is_valid(body) != valid]
    assert not wrong, wrong
    for body in [b for b, valid in SEARCH if not valid]:  # what the schema forbids, the service refuses
        r = httpx.post(server.url + "/api/v1/spaces/docs/search", json=body)
        assert 400 <= r.status_code < 500 and set(r.json()) == {"error"}, (body, r.text)


def test_the_two_space_search_and_write_rules_are_in_the_schema(served):
    _, schema = served
    for path, cases in (("/api/v1/compare/{a}/{b}/search", PAIR_SEARCH), ("/api/v1/spaces/{space}/items", WRITE)):
        validator = _body(schema, path)
        wrong = [body for body, valid in cases if validator.is_valid(body) != valid]
        assert not wrong, (path, wrong)
