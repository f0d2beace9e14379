"""The HTTP service through a real uvicorn on 127.0.0.1: answers equal the library's, errors are one line
with a 4xx, the store is read-only unless --writable, and the host, token and size checks hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from _http_server import DIM, N, Server, _free_port, make_store

from repspace import Store
from repspace.interfaces.cli import main


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("served") / "s.db")


@pytest.fixture(scope="module")
def server(store_path) -> Iterator[Server]:
    with Server(store_path) as s:
        yield s


@pytest.fixture(scope="module")
def writable(tmp_path_factory) -> Iterator[Server]:
    path = make_store(tmp_path_factory.mktemp("writable") / "s.db")
    with Server(path, "--writable", env={"REPSPACE_TOKEN": "s3cret"}) as s:
        s.store = path  # type: ignore[attr-defined]
        yield s


def _one_line(r: httpx.Response, status: int, fragment: str = "") -> None:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and fragment in body["error"], body


def test_spaces_and_space(server):
    spaces = httpx.get(server.url + "/api/v1/spaces").json()
    assert [(s["name"], s["count"], s["dim"], s["metric"]) for s in spaces] == [("docs", N, DIM, "cosine")]
    one = httpx.get(server.url + "/api/v1/spaces/docs").json()
    assert one["provenance"] == {} and one["generation"] >= 1
    _one_line(httpx.get(server.url + "/api/v1/spaces/nope"), 404, "nope")


def test_search_answers_as_the_library_does(server, store_path):
    sp = Store(store_path, readonly=True).space("docs")
    q = np.random.default_rng(1).standard_normal(DIM)
    cases = [({"vector": q.tolist(), "k": 5}, dict(query=q, k=5)),
             ({"id": "d3", "k": 4, "where": "lang = 'de' and n > 100"}, dict(id="d3", k=4, where="lang = 'de' and n > 100")),
             ({"vector": q.tolist(), "k": 3, "index": "hnsw16"}, dict(query=q, k=3, index="hnsw16"))]
    for body, kwargs in cases:
        r = httpx.post(server.url + "/api/v1/spaces/docs/search", json=body, timeout=60)
        assert r.status_code == 200, r.text
        got = r.json()
        want = sp.search(kwargs.pop("query", None), **kwargs)
        assert [h["id"] for h in got["hits"]] == [h.id for h in want]
        assert [h["metadata"] for h in got["hits"]] == [h.metadata for h in want]
        np.testing.assert_allclose([h["score"] for h in got["hits"]], [h.score for h in want], rtol=1e-6)
        assert got["plan"]["method"] in ("exact", "hnsw16", "hnsw")


def test_item_with_its_neighbours(server, store_path):
    r = httpx.get(server.url + "/api/v1/spaces/docs/items/d7")
    assert r.status_code == 200
    item = r.json()
    assert (item["text"], item["metadata"]) == ("doc number 7", {"n": 7, "lang": "de"})
    exact = Store(store_path, readonly=True).space("docs").search(id="d7", k=10, index="exact")
    assert [n["id"] for n in item["exact"]] == [h.id for h in exact]
    # the approximate list comes from an index earlier tests of this module built, or is null: none is built for it
    assert (item["approximate"] is None) == (item["index"] is None)
    assert item["neighbours"] == (item["approximate"] or item["exact"])
    _one_line(httpx.get(server.url + "/api/v1/spaces/docs/items/nope"), 404, "nope")


@pytest.mark.parametrize("body, status, fragment", [
    ({"vector": [1.0] * DIM, "where": "n >"}, 400, ""),
    ({"vector": [1.0] * 3}, 400, "dimension"),
    ({"vector": [1.0] * DIM, "k": 0}, 422, "k"),
    ({"vector": [1.0] * DIM, "k": 10**9}, 422, "k"),
    ({"vector": [1.0] * DIM, "id": "d1"}, 422, "exactly one"),
    ({}, 422, "exactly one"),
    ({"vector": [1.0] * DIM, "colour": "red"}, 422, "colour"),
    ({"vector": "abc"}, 422, "vector"),
    ({"id": "d1", "index": "nonsense99"}, 400, ""),
    ({"id": "d1", "hubness": "bogus"}, 422, "hubness"),
    ({"vector": [1.0] * DIM, "ef": 10**9}, 422, "ef"),
])
def test_bad_searches_are_one_line_and_never_a_500(server, body, status, fragment):
    _one_line(httpx.post(server.url + "/api/v1/spaces/docs/search", json=body), status, fragment)


def test_malformed_json_and_nan(server):
    r = httpx.post(server.url + "/api/v1/spaces/docs/search", content=b"{not json",
                   headers={"content-type": "application/json"})
    assert r.status_code == 422 and set(r.json()) == {"error"}
    nan = '{"vector": [NaN, 1, 1, 1, 1, 1, 1, 1]}'
    r = httpx.post(server.url + "/api/v1/spaces/docs/search", content=nan, headers={"content-type": "application/json"})
    assert r.status_code in (400, 422) and set(r.json()) == {"error"}


def test_a_foreign_host_header_is_refused(server):
    _one_line(httpx.get(server.url + "/api/v1/spaces", headers={"host": "evil.example"}), 400, "Host")
    assert httpx.get(server.url + "/api/v1/spaces", headers={"host": f"localhost:{server.port}"}).status_code == 200


def test_a_read_only_service_refuses_writes(server, store_path):
    body = {"items": [{"id": "new", "vector": [1.0] * DIM}]}
    _one_line(httpx.post(server.url + "/api/v1/spaces/docs/items", json=body), 403, "read-only")
    assert Store(store_path, readonly=True).space("docs").info().count == N


def test_a_body_beyond_the_limit_is_413(server):
    big = b'{"vector": [' + b"1.0, " * 4_000_000 + b'1.0]}'
    _one_line(httpx.post(server.url + "/api/v1/spaces/docs/search", content=big,
                         headers={"content-type": "application/json"}), 413, "larger")


def test_openapi_schema(server):
    schema = httpx.get(server.url + "/api/v1/openapi.json").json()
    assert {"/api/v1/health", "/api/v1/spaces", "/api/v1/spaces/{space}", "/api/v1/spaces/{space}/search",
            "/api/v1/spaces/{space}/items/{item_id}", "/api/v1/spaces/{space}/items"} <= set(schema["paths"])


def test_writes_need_the_token_and_are_all_or_nothing(writable):
    url = writable.url + "/api/v1/spaces/docs"
    auth = {"authorization": "Bearer s3cret"}
    _one_line(httpx.get(url), 401, "Bearer")  # a token service: every request needs it
    _one_line(httpx.get(url, headers={"authorization": "Bearer wrong"}), 401)
    good = {"items": [{"id": "new1", "vector": [1.0] + [0.0] * (DIM - 1), "metadata": {"n": -1}},
                      {"id": "new2", "vector": [0.0, 1.0] + [0.0] * (DIM - 2)}]}
    r = httpx.post(url + "/items", json=good, headers=auth)
    assert r.status_code == 200 and r.json()["added"] == 2, r.text
    hits = httpx.post(url + "/search", json={"vector": good["items"][0]["vector"], "k": 1}, headers=auth).json()
    assert hits["hits"][0]["id"] == "new1"
    bad = {"items": [{"id": "new3", "vector": [1.0] * DIM}, {"id": "new4", "vector": [1.0] * (DIM - 1)}]}
    _one_line(httpx.post(url + "/items", json=bad, headers=auth), 400)
    mixed = {"items": [{"id": "new5", "vector": [1.0] * DIM}, {"id": "new6", "text": "t"}]}
    _one_line(httpx.post(url + "/items", json=mixed, headers=auth), 400, "every item a vector")
    assert httpx.get(url, headers=auth).json()["count"] == N + 2  # nothing of the bad batches
    _one_line(httpx.post(writable.url + "/api/v1/spaces/nope/items", json=good, headers=auth), 404)


@pytest.mark.parametrize("args, fragment", [(["serve", "--host", "0.0.0.0"], "without a token"),
                                            (["serve", "--writable"], "needs a token")])
def test_serve_refuses_unsafe_settings(capsys, store_path, monkeypatch, args, fragment):
    monkeypatch.delenv("REPSPACE_TOKEN", raising=False)
    code = main(["--store", str(store_path), *args, "--port", str(_free_port())])
    err = capsys.readouterr().err
    assert code != 0 and err.strip().splitlines()[-1].startswith("error: ") and fragment in err


def test_serving_a_missing_store_is_an_error(capsys, tmp_path):
    code = main(["--store", str(tmp_path / "none.db"), "serve", "--port", str(_free_port())])
    assert code != 0 and "no store at" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_the_schema_is_json(server):
    json.dumps(httpx.get(server.url + "/api/v1/openapi.json").json())


def test_serve_json_names_where_it_listens(server, store_path):
    assert server.info == {"url": f"http://127.0.0.1:{server.port}/api/v1",
                           "explorer": f"http://127.0.0.1:{server.port}/", "store": str(store_path),
                           "writable": False, "token": False}


def test_the_map_is_the_library_layout_in_json_and_arrow(server, store_path):
    import pyarrow as pa

    from repspace.workflows.layout import space_layout

    want = space_layout(Store(store_path, readonly=True).space("docs"))
    r = httpx.get(server.url + "/api/v1/spaces/docs/map")
    assert r.status_code == 200 and r.headers["x-repspace-method"] == "pca"
    got = r.json()
    assert got["ids"] == want.ids and len(got["x"]) == N
    np.testing.assert_allclose(np.c_[got["x"], got["y"]], want.coords, rtol=1e-6, atol=1e-6)
    r = httpx.get(server.url + "/api/v1/spaces/docs/map", params={"format": "arrow"})
    table = pa.ipc.open_stream(r.content).read_all()
    assert table.column("id").to_pylist() == want.ids
    np.testing.assert_array_equal(table.column("x").to_numpy(), want.coords[:, 0])
    r = httpx.get(server.url + "/api/v1/spaces/docs/map", params={"format": "f32"})
    assert r.headers["content-type"] == "application/octet-stream" and r.headers["x-repspace-count"] == str(N)
    np.testing.assert_array_equal(np.frombuffer(r.content, "<f4").reshape(-1, 2), want.coords)
    got = httpx.get(server.url + "/api/v1/spaces/docs/map", params={"format": "ids"}).json()
    assert got["ids"] == want.ids
    _one_line(httpx.get(server.url + "/api/v1/spaces/docs/map", params={"method": "tsne"}), 422, "tsne")
    _one_line(httpx.get(server.url + "/api/v1/spaces/docs/map", params={"format": "xml"}), 422, "xml")


def _two_spaces(path: Path) -> Store:
    """A store at ``path`` with spaces ``a`` and ``b`` over the same 200 ids (8-d), ``b`` a noisy copy of ``a``."""
    store = Store(path)
    x = np.random.default_rng(3).standard_normal((200, 8)).astype(np.float32)
    ids = [f"i{i}" for i in range(200)]
    store.create_space("a", dim=8).add(ids, x)
    store.create_space("b", dim=8).add(ids, x + np.random.default_rng(4).normal(0, 0.3, x.shape).astype(np.float32))
    return store


def test_compare_two_spaces_as_the_library_does(tmp_path):
    from repspace.workflows.compare import compare_spaces

    path = tmp_path / "two.db"
    store = _two_spaces(path)
    want = compare_spaces(store.space("a"), store.space("b"), changed=5).to_dict()
    store.close()
    s = Server(path)
    try:
        r = httpx.get(s.url + "/api/v1/compare/a/b", params={"changed": 5}, timeout=120)
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["changed"] == want["changed"] and len(got["changed"]) == 5
        assert got["n_shared"] == 200 and abs(got["cka_linear"] - want["cka_linear"]) < 1e-9
        _one_line(httpx.get(s.url + "/api/v1/compare/a/nope"), 404, "nope")
        _one_line(httpx.get(s.url + "/api/v1/compare/a/b", params={"changed": 10**6}), 422, "changed")
        _one_line(httpx.get(s.url + "/api/v1/compare/a/b", params={"measures": "bogus"}), 400, "bogus")
    finally:
        s.stop()


def test_fields_and_columns_for_colouring_the_map(server, store_path):
    from repspace.workflows.explore import map_column

    got = httpx.get(server.url + "/api/v1/spaces/docs/fields").json()
    assert {(f["name"], f["kind"], f["count"]) for f in got["fields"]} == {("n", "number", N), ("lang", "category", N)}
    assert [o["name"] for o in got["overlays"]] == ["@map_agreement", "@recall"]
    sp = Store(store_path, readonly=True).space("docs")
    for name in ("lang", "n", "@map_agreement"):
        r = httpx.get(server.url + "/api/v1/spaces/docs/column", params={"name": name}, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json() == json.loads(json.dumps(map_column(sp, name).to_dict()))
    _one_line(httpx.get(server.url + "/api/v1/spaces/docs/column", params={"name": "@bogus"}), 400, "bogus")
    _one_line(httpx.get(server.url + "/api/v1/spaces/docs/column"), 422, "name")


def test_two_space_routes(tmp_path):
    from repspace.workflows.explore import pair_item, pair_jaccard

    path = tmp_path / "two.db"
    store = _two_spaces(path)
    want_j = pair_jaccard(store.space("a"), store.space("b"), 10).to_dict()
    want_i = pair_item(store.space("a"), store.space("b"), "i7", 10).to_dict()
    store.close()
    s = Server(path)
    try:
        assert httpx.get(s.url + "/api/v1/compare/a/b/jaccard", timeout=60).json() == want_j
        assert httpx.get(s.url + "/api/v1/compare/a/b/items/i7").json() == want_i
        r = httpx.post(s.url + "/api/v1/compare/a/b/search", json={"id": "i7", "k": 3}).json()
        assert r["map"] is None and r["mapped"] is None and [len(r["a"]), len(r["b"])] == [3, 3]
        _one_line(httpx.post(s.url + "/api/v1/compare/a/b/search", json={"k": 3}), 422, "exactly one")
        _one_line(httpx.get(s.url + "/api/v1/compare/a/b/items/nope"), 404, "nope")
    finally:
        s.stop()


def test_a_browser_trades_the_token_in_the_url_for_a_strict_cookie(tmp_path):
    path = tmp_path / "t.db"
    make_store(path)
    s = Server(path, "--token", "tok;en with spaces")
    try:
        _one_line(httpx.get(s.url + "/api/v1/spaces"), 401, "Bearer")
        _one_line(httpx.get(s.url + "/", params={"token": "wrong"}), 401, "wrong token")
        r = httpx.get(s.url + "/", params={"token": "tok;en with spaces"})
        assert r.status_code == 303 and r.headers["location"] == "/"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "tok;en" not in cookie
        with httpx.Client(base_url=s.url, cookies=r.cookies) as browser:
            assert browser.get("/api/v1/spaces").status_code == 200
            assert browser.post("/api/v1/spaces/docs/search", json={"id": "d1", "k": 2}).status_code == 200
            _one_line(browser.post("/api/v1/spaces/docs/items", json={"items": [{"id": "x", "vector": [1] * DIM}]}),
                      401, "Bearer")  # a write needs the header, never the cookie
        with httpx.Client(base_url=s.url, cookies={"repspace_token": "forged"}) as other:
            _one_line(other.get("/api/v1/spaces"), 401)
    finally:
        s.stop()


def test_a_search_beyond_the_query_timeout_is_408(tmp_path):
    path = tmp_path / "q.db"
    make_store(path)
    s = Server(path, "--query-timeout", "0.001", "--writable", env={"REPSPACE_TOKEN": "t"})
    try:  # building an HNSW index (and loading FAISS) takes far longer than a millisecond (a writable store builds)
        _one_line(httpx.post(s.url + "/api/v1/spaces/docs/search", json={"id": "d1", "index": "hnsw16"},
                             headers={"authorization": "Bearer t"}), 408, "--query-timeout")
    finally:
        s.stop()
