"""``POST .../search`` with ``"rerank": NAME`` through a real ``repspace serve --reranker NAME=PATH``: the library's
answer on a read-only service; a name the service did not load is a 404 JSON line (a client never names a file the
service reads); the body must be JSON, the token and the Host checks hold."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from _cranfield_space import cranfield_store
from _cli_process import store_dump
from _http_server import Server, make_store, refused_start

from repspace import Store
from repspace.workflows.rerank import RerankTrainRequest, train_reranker

pytestmark = pytest.mark.slow

ROUTE = "/api/v1/spaces/cran/search"
TOKEN = "rr-t0ken"
QUERY = "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft"


@pytest.fixture(scope="module")
def served(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rerank-http")
    db = cranfield_store(shared_data, folder)
    model = folder / "ranker.json"
    store = Store(db)
    train_reranker(store.space("cran"), RerankTrainRequest(qrels=str(shared_data / "cranfield-beir"),
                                                           out=str(model), bootstrap=0, n_estimators=40))
    store.close()
    return db, model


@pytest.fixture(scope="module")
def server(served) -> Iterator[Server]:
    db, model = served
    with Server(db, "--reranker", f"cran={model}") as s:
        yield s


def _one_line(r: httpx.Response, status: int, fragment: str = "") -> None:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and fragment in body["error"], body


def test_answers_as_the_library_does_and_changes_nothing(server, served) -> None:
    db, model = served
    before = store_dump(db)
    sp = Store(db, readonly=True).space("cran")
    for hybrid in (False, True):
        r = httpx.post(server.url + ROUTE, json={"text": QUERY, "k": 5, "rerank": "cran", "hybrid": hybrid},
                       timeout=120)
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json"), r.text
        want = sp.search(QUERY, k=5, rerank=str(model), hybrid=hybrid)
        assert [h["id"] for h in r.json()["hits"]] == [h.id for h in want]
        np.testing.assert_allclose([h["score"] for h in r.json()["hits"]], [h.score for h in want], rtol=1e-6)
        assert r.json()["plan"]["method"].endswith("+ rerank")
    assert store_dump(db) == before


@pytest.mark.parametrize("body, status, fragment", [
    ({"text": QUERY, "rerank": "other"}, 404, "no reranker named 'other'"),
    ({"text": QUERY, "rerank": "/etc/passwd"}, 404, "no reranker named"),  # a name, never a path read
    ({"text": QUERY, "rerank": "a b"}, 422, "rerank"),
    ({"text": QUERY, "rerank": ""}, 422, "rerank"),
    ({"id": "1", "rerank": "cran"}, 400, "give a text"),
    ({"text": QUERY, "bm25": True, "rerank": "cran"}, 400, "not bm25"),
])
def test_bad_bodies_are_one_json_line(server, body, status, fragment) -> None:
    _one_line(httpx.post(server.url + ROUTE, json=body, timeout=60), status, fragment)


def test_the_body_must_be_json_and_the_host_ours(server) -> None:
    body = json.dumps({"text": QUERY, "rerank": "cran"})
    _one_line(httpx.post(server.url + ROUTE, content=body, headers={"content-type": "text/plain"}), 415)
    _one_line(httpx.post(server.url + ROUTE, content=body, headers={"content-type": "application/json",
                                                                      "host": "evil.example"}), 400, "Host")


def test_the_token_guards_it(served) -> None:
    db, model = served
    with Server(db, "--reranker", f"cran={model}", env={"REPSPACE_TOKEN": TOKEN}) as guarded:
        _one_line(httpx.post(guarded.url + ROUTE, json={"text": QUERY, "rerank": "cran"}), 401)
        r = httpx.post(guarded.url + ROUTE, json={"text": QUERY, "rerank": "cran", "k": 2},
                       headers={"authorization": f"Bearer {TOKEN}"}, timeout=120)
        assert r.status_code == 200 and len(r.json()["hits"]) == 2, r.text


def test_a_missing_model_or_a_bad_spec_refuses_to_start(served, tmp_path) -> None:
    db, _ = served
    code, err = refused_start(db, "--reranker", f"cran={tmp_path / 'none.json'}")
    assert code == 3 and "no reranker model at" in err, err  # 3: not found, as a missing store
    code, err = refused_start(db, "--reranker", "just-a-path.json")
    assert code == 2 and "give NAME=PATH" in err, err


@pytest.mark.parametrize("name", ["a b", "caf\u00e9", "x\x85", "r" * 101])
def test_a_name_no_search_could_give_refuses_to_start(tmp_path, name) -> None:
    """``--reranker NAME=PATH`` with a NAME outside a search body's ``rerank`` pattern: one error line, exit 2, before
    any model file is read (the other spec names a good name and a missing file, which would be exit 3)."""
    db = make_store(tmp_path / "s.db")
    code, err = refused_start(db, "--reranker", f"ok={tmp_path / 'none.json'}",
                              "--reranker", f"{name}={tmp_path / 'none.json'}")
    assert code == 2, (code, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: the reranker name ") and "Traceback" not in err, err
    assert 'is not one a search can give as "rerank"' in err, err
