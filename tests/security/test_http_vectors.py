"""JSON integers in vectors are never rounded silently, against a real ``repspace serve``: an integer component
beyond 2**24 that float32 cannot hold exactly is refused (400, one line) by the search and the write, as the
library refuses such integer arrays; the same value written as a float is rounded as floats are, and every
integer float32 holds (2**24, 2**25, -2**30) is taken as it is.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from _http_server import DIM, Server, make_store

AUTH = {"authorization": "Bearer s3cret"}
LOSSY = [2**24 + 1, -(2**24 + 1), 2**53 + 1, 123456789, 2**40 + 1, 10**400]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Server]:
    path = make_store(tmp_path_factory.mktemp("vectors") / "s.db")
    with Server(path, "--writable", env={"REPSPACE_TOKEN": "s3cret"}) as server:
        yield server


def _vector(value: object, at: int = 3) -> str:
    """A vector as JSON text, ``value`` written as it is at position ``at`` (a JSON integer stays one)."""
    parts = ["0.25"] * DIM
    parts[at] = str(value)
    return "[" + ", ".join(parts) + "]"


def _post(server: Server, path: str, body: str) -> httpx.Response:
    return httpx.post(f"{server.url}/api/v1/spaces/docs/{path}", content=body,
                      headers={**AUTH, "content-type": "application/json"}, timeout=60)


def _count(server: Server) -> int:
    return httpx.get(f"{server.url}/api/v1/spaces/docs", headers=AUTH).json()["count"]


@pytest.mark.parametrize("value", LOSSY)
def test_an_integer_float32_cannot_hold_is_refused_by_search_and_write(served, value):
    r = _post(served, "search", f'{{"vector": {_vector(value)}, "k": 3}}')
    assert r.status_code == 400, (r.status_code, r.text)
    assert set(r.json()) == {"error"} and "\n" not in r.json()["error"] and "float32" in r.json()["error"], r.text
    before = _count(served)
    r = _post(served, "items", f'{{"items": [{{"id": "ok", "vector": {_vector(1)}}}, '
                               f'{{"id": "lossy", "vector": {_vector(value, at=0)}}}]}}')
    assert r.status_code == 400 and "float32" in r.json()["error"], (r.status_code, r.text)
    assert _count(served) == before  # all or nothing: not even the good item


def test_floats_and_exact_integers_are_taken(served):
    for value in (2**24, 2**25, -(2**30), 7, "16777217.0", "1.6777217e7", "0.1"):
        r = _post(served, "search", f'{{"vector": {_vector(value)}, "k": 3}}')
        assert r.status_code == 200 and len(r.json()["hits"]) == 3, (value, r.text)
    r = _post(served, "items", f'{{"items": [{{"id": "rounded", "vector": {_vector("16777217.0")}}}]}}')
    assert r.status_code == 200 and r.json()["added"] == 1, r.text
    r = _post(served, "items", f'{{"items": [{{"id": "lossy-int", "vector": {_vector(2**24 + 1)}}}]}}')
    assert r.status_code == 400, r.text  # the integer of the same value is not
    got = httpx.post(f"{served.url}/api/v1/spaces/docs/search", json={"id": "rounded", "k": 1}, headers=AUTH)
    assert got.status_code == 200 and np.float32(16777217.0) == 16777216.0
