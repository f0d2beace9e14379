"""Ids are data over HTTP: any id the library stores round-trips through every route that names an item, against
a real ``repspace serve``: written by ``POST .../items``, read back by ``GET .../items/{id}`` (the id
percent-encoded in the path, ``/`` included) and ``GET .../items?id=``, compared by both two-space item routes,
searched by id in one space and in two, found by its vector, and listed by the map. An id with a control
character is refused at the door: a 400 with one line, nothing written.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import numpy as np
import pytest
from _http_server import Server

from repspace import Store

DIM = 8
#: Ids no route may lose or change: path syntax, percent signs, query and fragment marks, spaces, line and
#: paragraph separators, bidirectional controls, emoji, dot segments, route names, markup.
HOSTILE = ["a/b", "/lead", "trail/", "a//b", "x/search", "jaccard", "100%", "%2F", "%", "q?x=1&y=2", "h#frag",
           "sp ace", " lead and trail ", "line\u2028sep", "para\u2029graph", "\u202eevil\u202c", "\u200f\u05d0",
           "emoji \U0001f600", "\U0001f469\u200d\U0001f52c", ".", "..", "a/../b", "./x", "+plus+", "&amp;", "ünï ©",
           "back\\slash", "<b>x</b>", "[bold]x[/bold]", "'quote\"", "\ufeffbom", "tab\u00a0nbsp", "x" * 1024]
AUTH = {"authorization": "Bearer s3cret"}


def encoded(item_id: str) -> str:
    """The id as one path segment: every reserved character and every dot percent-encoded (a client library
    would resolve a literal ``.`` or ``..`` segment)."""
    return quote(item_id, safe="").replace(".", "%2E")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("ids") / "s.db"
    store = Store(path)
    rng = np.random.default_rng(0)
    base = [f"n{i}" for i in range(60)]
    x = rng.standard_normal((60, DIM)).astype(np.float32)
    store.create_space("a", dim=DIM).add(base, x)
    store.create_space("b", dim=DIM).add(base, x + rng.normal(0, 0.2, x.shape).astype(np.float32))
    store.close()
    server = Server(path, "--writable", env={"REPSPACE_TOKEN": "s3cret"})
    vectors = rng.standard_normal((len(HOSTILE), DIM))
    for name in ("a", "b"):  # the write route: the hostile ids arrive as JSON
        items = [{"id": i, "vector": v.tolist(), "text": f"text of {i}", "metadata": {"id": i}}
                 for i, v in zip(HOSTILE, vectors)]
        r = httpx.post(f"{server.url}/api/v1/spaces/{name}/items", json={"items": items}, headers=AUTH, timeout=60)
        assert r.status_code == 200 and r.json()["added"] == len(HOSTILE), r.text
    server.vectors = dict(zip(HOSTILE, vectors.tolist()))  # type: ignore[attr-defined]
    yield server
    server.stop()


def _get(server: Server, path: str, **params: object) -> httpx.Response:
    return httpx.get(f"{server.url}/api/v1/{path}", params=params or None, headers=AUTH, timeout=60)


@pytest.mark.parametrize("item_id", HOSTILE, ids=range(len(HOSTILE)))
def test_an_id_round_trips_through_every_route(served, item_id):
    for r in (_get(served, f"spaces/a/items/{encoded(item_id)}"), _get(served, "spaces/a/items", id=item_id)):
        assert r.status_code == 200, (r.status_code, r.text)
        got = r.json()
        assert (got["id"], got["text"], got["metadata"]) == (item_id, f"text of {item_id}", {"id": item_id})
        assert len(got["exact"]) == 10
    for r in (_get(served, f"compare/a/b/items/{encoded(item_id)}", k=5), _get(served, "compare/a/b/items",
                                                                             id=item_id, k=5)):
        assert r.status_code == 200, (r.status_code, r.text)
        assert r.json()["id"] == item_id and len(r.json()["a"]) == 5
    r = httpx.post(f"{served.url}/api/v1/spaces/a/search", json={"id": item_id, "k": 5}, headers=AUTH, timeout=60)
    assert r.status_code == 200 and item_id not in [h["id"] for h in r.json()["hits"]], r.text  # left out
    r = httpx.post(f"{served.url}/api/v1/spaces/a/search", json={"vector": served.vectors[item_id], "k": 1},
                   headers=AUTH, timeout=60)
    assert r.status_code == 200 and r.json()["hits"][0]["id"] == item_id, r.text
    r = httpx.post(f"{served.url}/api/v1/compare/a/b/search", json={"id": item_id, "k": 3}, headers=AUTH, timeout=60)
    assert r.status_code == 200 and len(r.json()["a"]) == 3, r.text


def test_an_unencoded_slash_is_part_of_the_id_and_the_map_lists_every_id(served):
    r = _get(served, "spaces/a/items/a/b")  # the rest of the path is the id
    assert r.status_code == 200 and r.json()["id"] == "a/b", r.text
    r = _get(served, "compare/a/b/items/a//b")
    assert r.status_code == 200 and r.json()["id"] == "a//b", r.text
    ids = _get(served, "spaces/a/map", format="ids").json()["ids"]
    assert set(HOSTILE) <= set(ids)
    r = _get(served, "spaces/a/items/a/nope")
    assert r.status_code == 404 and set(r.json()) == {"error"}, r.text


@pytest.mark.parametrize("bad", ["nul\x00id", "esc\x1b[31m", "bell\x07", "nel\x85", "del\x7f", "line\nbreak"])
def test_an_id_with_a_control_character_is_refused_at_the_door(served, bad):
    before = _get(served, "spaces/a").json()["count"]
    r = httpx.post(f"{served.url}/api/v1/spaces/a/items", json={"items": [{"id": bad, "vector": [1.0] * DIM}]},
                   headers=AUTH, timeout=60)
    assert r.status_code == 400, (r.status_code, r.text)
    assert set(r.json()) == {"error"} and "\n" not in r.json()["error"] and "control" in r.json()["error"], r.text
    assert _get(served, "spaces/a").json()["count"] == before  # nothing written
    r = httpx.post(f"{served.url}/api/v1/spaces/a/items", json={"items": [{"id": bad, "vector": [1.0] * DIM}]},
                   headers=AUTH, timeout=60)
    assert r.status_code == 400, r.text  # again: the same answer, never a 500
