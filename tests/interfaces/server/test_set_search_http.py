"""``POST /api/v1/spaces/{space}/set-search`` through a real ``repspace serve``: the library's answer on a
read-only service; the body must be JSON, the token and Host checks hold, bad input is one JSON error line with
a 4xx; and the body's JSON schema refuses what the model refuses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from _http_server import Server, make_store
from pydantic import ValidationError

from repspace import Store
from repspace.interfaces.server import schemas as S
from repspace.workflows.search.set_request import SetQuery
from repspace.workflows.search.set_search import set_search

ROUTE = "/api/v1/spaces/docs/set-search"
TOKEN = "s3t-t0ken"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("sets") / "s.db")


@pytest.fixture(scope="module")
def server(store_path) -> Iterator[Server]:
    with Server(store_path) as s:
        yield s


def _one_line(r: httpx.Response, status: int, fragment: str = "") -> None:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and fragment in body["error"], body


@pytest.mark.slow
def test_answers_as_the_library_does_on_a_read_only_service(server, store_path) -> None:
    sp = Store(store_path, readonly=True).space("docs")
    for body in ({"all_of": ["d1", "d2"], "none_of": ["d3"], "k": 5},
                 {"none_of": ["d7"], "k": 4, "where": "lang = 'de' and n > 100"},
                 {"all_of": ["d9"], "k": 3, "index": "hnsw16"}):
        r = httpx.post(server.url + ROUTE, json=body, timeout=60)
        assert r.status_code == 200, r.text
        got = r.json()
        want = set_search(sp, SetQuery.model_validate(body))
        assert [h["id"] for h in got["hits"]] == [h.id for h in want] and len(got["hits"]) == body["k"]
        np.testing.assert_allclose([h["score"] for h in got["hits"]], [h.score for h in want], rtol=1e-6)
        assert not {h["id"] for h in got["hits"]} & {*body.get("all_of", []), *body.get("none_of", [])}
        assert got["plan"]["reason"].startswith("SetCSE")
    assert "/api/v1/spaces/{space}/set-search" in httpx.get(server.url + "/api/v1/openapi.json").json()["paths"]


@pytest.mark.slow
@pytest.mark.parametrize("body, status, fragment", [
    ({}, 400, "at least one example"),
    ({"all_of": [], "none_of": []}, 400, "at least one example"),
    ({"all_of": ["d1"], "none_of": ["d1"]}, 400, "in both"),
    ({"all_of": ["d1", "d1"]}, 400, "twice"),
    ({"all_of": ["d1", "nope"]}, 404, "nope"),
    ({"all_of": "d1"}, 422, "all_of"),
    ({"all_of": ["d1"], "k": 0}, 422, "k"),
    ({"all_of": ["d1"], "k": 10**9}, 422, "k"),
    ({"all_of": ["d1"], "colour": "red"}, 422, "colour"),
    ({"all_of": ["d1"], "where": "n >"}, 400, ""),
    ({"all_of": ["d1"], "method": "exact", "index": "hnsw16"}, 400, "not both"),
    ({"all_of": ["x" * 2000]}, 422, "all_of"),
])
def test_bad_bodies_are_one_json_line(server, body, status, fragment) -> None:
    _one_line(httpx.post(server.url + ROUTE, json=body, timeout=60), status, fragment)


@pytest.mark.slow
def test_the_body_must_be_json_and_the_host_ours(server) -> None:
    body = json.dumps({"all_of": ["d1"]})
    for kind in ("text/plain", "application/x-www-form-urlencoded"):
        _one_line(httpx.post(server.url + ROUTE, content=body, headers={"content-type": kind,
                                                                          "origin": "http://evil.example"}), 415)
    _one_line(httpx.post(server.url + ROUTE, content=b"{not json", headers={"content-type": "application/json"}), 422)
    _one_line(httpx.post(server.url + ROUTE, content=body, headers={"content-type": "application/json",
                                                                      "host": "evil.example"}), 400, "Host")


@pytest.mark.slow
def test_the_token_guards_it(store_path) -> None:
    with Server(store_path, env={"REPSPACE_TOKEN": TOKEN}) as guarded:
        _one_line(httpx.post(guarded.url + ROUTE, json={"all_of": ["d1"]}), 401)
        _one_line(httpx.post(guarded.url + ROUTE, json={"all_of": ["d1"]},
                             headers={"authorization": "Bearer wrong"}), 401)
        r = httpx.post(guarded.url + ROUTE, json={"all_of": ["d1"], "k": 2},
                       headers={"authorization": f"Bearer {TOKEN}"}, timeout=60)
        assert r.status_code == 200 and len(r.json()["hits"]) == 2, r.text


#: Bodies the model refuses and the JSON schema can say so (an id in both lists it cannot: only the model).
REFUSED = [{}, {"all_of": []}, {"all_of": [], "none_of": []}, {"all_of": ["a", "a"]}, {"all_of": "a"},
           {"all_of": [""]}, {"all_of": ["a"], "k": 0}, {"all_of": ["a"], "k": 1001}, {"all_of": ["a"], "ef": 0},
           {"all_of": ["a"], "method": "fast"}, {"all_of": ["a"], "method": "exact", "index": "hnsw32"},
           {"all_of": ["a"], "extra": 1}, {"all_of": ["a"] + [f"i{i}" for i in range(1000)]}]


def test_the_json_schema_refuses_what_the_model_refuses() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(S.SetQuery.model_json_schema())
    for body in REFUSED:
        assert not validator.is_valid(body), body
        with pytest.raises((ValidationError, ValueError)):
            S.SetQuery.model_validate_json(json.dumps(body))
    for body in ({"all_of": ["a"]}, {"none_of": ["a", "b"], "k": 3, "where": "n > 1"},
                 {"all_of": ["a"], "none_of": ["b"], "index": "hnsw32"}):
        assert validator.is_valid(body), body
        S.SetQuery.model_validate_json(json.dumps(body))
