"""``POST /api/v1/spaces/{space}/search`` on a multi-vector space through a real ``repspace serve`` (read-only, no
token): the library's answer for an id or a token query, MUVERA + rescoring and exact; a dense-only option or a bad
body is one JSON error line with a 4xx."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from _http_server import Server

from repspace import Store
from repspace.workflows.search.request import SearchRequest

pytestmark = pytest.mark.slow
ROUTE = "/api/v1/spaces/tok/search"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mv") / "s.db"
    rng = np.random.default_rng(5)
    with Store(path) as store:
        sp = store.create_space("tok", dim=8, metric="ip", layout="multivector")
        sp.add([f"d{i}" for i in range(200)],
               [rng.standard_normal((int(t), 8)).astype(np.float32) for t in rng.integers(1, 9, size=200)],
               metadata=[{"n": i} for i in range(200)])
    return path


@pytest.fixture(scope="module")
def server(store_path) -> Iterator[Server]:
    with Server(store_path) as s:
        yield s


def test_answers_as_the_library_does(server, store_path) -> None:
    sp = Store(store_path, readonly=True).space("tok")
    for body in ({"id": "d3", "k": 5}, {"id": "d3", "k": 5, "method": "exact"},
                 {"id": "d8", "k": 4, "candidates": 30}, {"id": "d8", "k": 4, "where": "n < 50"},
                 {"vector": [0.5, 0.1, 0.0, 0.2, -0.3, 0.9, 0.0, 0.1], "k": 3}):
        r = httpx.post(server.url + ROUTE, json=body, timeout=60)
        assert r.status_code == 200, r.text
        want = sp.search(SearchRequest.model_validate(body))
        got = r.json()
        assert [h["id"] for h in got["hits"]] == [h.id for h in want] and len(got["hits"]) == body["k"]
        assert [h["score"] for h in got["hits"]] == pytest.approx([h.score for h in want], rel=1e-6)
        assert got["plan"]["method"] == want.plan.method
    methods = {name: httpx.post(server.url + ROUTE, json={"id": "d8", "k": 4, **extra}, timeout=60).json()["plan"]
               ["method"] for name, extra in (("default", {}), ("exact", {"method": "exact"}))}
    assert methods == {"default": "muvera>maxsim", "exact": "maxsim-exact"}


@pytest.mark.parametrize("body, status, fragment", [
    ({"id": "d1", "hubness": "csls"}, 400, "hubness does not apply to multi-vector"),
    ({"id": "d1", "mmr": 0.5}, 400, "mmr does not apply"),
    ({"id": "d1", "method": "exact", "candidates": 20}, 400, "do not combine with exact"),
    ({"id": "d1", "candidates": 0}, 422, "candidates"),
    ({"id": "d1", "candidates": 10**9}, 422, "candidates"),
    ({"id": "nope"}, 404, "nope"),
    ({"text": "a query"}, 400, "ingested precomputed"),
    ({"vector": [1.0, 2.0]}, 400, "(n_tokens, 8)"),
])
def test_bad_bodies_are_one_json_line(server, body, status, fragment) -> None:
    r = httpx.post(server.url + ROUTE, json=body, timeout=60)
    assert r.status_code == status, (r.status_code, r.text)
    err = r.json()
    assert set(err) == {"error"} and "\n" not in err["error"] and fragment in err["error"], err
