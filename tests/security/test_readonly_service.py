"""A read-only service writes nothing: not the store, not one file beside it (issue 29).

Found by the hostile-input probe: a token-less read-only server, asked to search with an
index spec, built and persisted 40 index files (4.9 MB) beside the store. A read-only
store now reads what is built and current; otherwise it searches exactly (and says so in
the plan), or computes in its own memory what is cheap (BM25, layouts, overlays, filter
columns, neighbour statistics), and answers with one error line what would need a build
(hubness statistics of a large space, the recall overlay of a missing graph).

Every case runs against a real ``repspace serve`` process; the store is made by the real
CLI where a recipe matters (an encoder's space, a built index).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from _http_server import Server
from repspace import Store

#: Items of the large space: beyond the 50,000 up to which searches are exact and filter columns stay in memory.
BIG = 50_100


def _files(store: Path) -> dict[str, tuple[int, str]]:
    """Every file of the store and beside it (its index folder), by relative path: size and SHA-256.

    SQLite's ``-shm`` and ``-wal`` companions are left out: a read-only connection to a WAL
    store creates them empty when they are missing (SQLite's own protocol, no data); that
    they hold no data is checked apart.
    """
    out = {}
    folder = store.parent
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.name.endswith(("-shm", "-wal")):
            out[str(p.relative_to(folder))] = (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def _cli(store: Path, *args: str) -> str:
    code = "import sys; from repspace.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "-q", "--store", str(store), *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """``texts`` (120 texts embedded by the CLI with the static encoder), ``docs`` and ``docs2`` (300 items,
    the same ids, 8-d), ``big`` (50,100 items, 4-d, metadata ``n``)."""
    path = tmp_path_factory.mktemp("readonly") / "s.db"
    corpus = path.parent / "texts.jsonl"
    words = ["cats", "dogs", "birds", "trees", "rivers", "cities"]
    corpus.write_text("".join(json.dumps({"id": f"t{i}", "body": f"{words[i % 6]} and {words[(i * 5) % 6]} {i}"})
                              + "\n" for i in range(120)))
    _cli(path, "ingest", "texts", str(corpus), "--text-col", "body", "--id-col", "id", "--encoder", "static")
    rng = np.random.default_rng(0)
    with Store(path) as s:
        x = rng.standard_normal((300, 8)).astype(np.float32)
        ids = [f"d{i}" for i in range(300)]
        meta = [{"n": i, "lang": ["en", "de", "fr"][i % 3]} for i in range(300)]
        s.create_space("docs", dim=8).add(ids, x, texts=[f"doc {i}" for i in range(300)], metadata=meta)
        s.create_space("docs2", dim=8).add(ids, np.tanh(x + 0.1 * rng.standard_normal(x.shape)), metadata=meta)
        s.create_space("big", dim=4, metric="l2").add(
            [f"b{i}" for i in range(BIG)], rng.standard_normal((BIG, 4)).astype(np.float32),
            metadata=[{"n": i} for i in range(BIG)])
    return path


def _search(server: Server, space: str, body: dict) -> httpx.Response:
    return httpx.post(f"{server.url}/api/v1/spaces/{space}/search", json=body, timeout=120)


def test_a_read_only_service_writes_nothing_beside_the_store(store):
    before = _files(store)
    server = Server(store)
    try:
        url = server.url + "/api/v1"
        for spec in ("hnsw32", "int8>rescore4", "hnsw16,shards2", "pca4>rerank"):
            r = _search(server, "docs", {"id": "d1", "index": spec, "k": 5})
            assert r.status_code == 200, r.text
            plan = r.json()["plan"]
            assert plan["method"] == "exact" and "read-only" in plan["reason"], plan
            assert len(r.json()["hits"]) == 5
        # the exact answer it fell back to is the exact answer
        want = Store(store, readonly=True).space("docs").search(id="d1", k=5, index="exact")
        assert [h["id"] for h in r.json()["hits"]] == [h.id for h in want]
        # BM25 (hybrid), hubness statistics, filters: computed in this process's memory
        r = _search(server, "texts", {"text": "cats and dogs", "hybrid": True, "k": 3})
        assert r.status_code == 200 and r.json()["plan"]["method"].startswith("hybrid"), r.text
        assert _search(server, "docs", {"id": "d1", "hubness": "csls", "k": 3}).status_code == 200
        # a large space: no graph is built (exact instead), filter columns and vector tiers stay in memory
        r = _search(server, "big", {"id": "b1", "k": 3})
        assert r.status_code == 200 and r.json()["plan"]["method"] == "exact", r.text
        assert "read-only" in r.json()["plan"]["reason"]
        r = _search(server, "big", {"id": "b1", "k": 3, "where": "n < 500"})
        assert r.status_code == 200 and all(h["metadata"]["n"] < 500 for h in r.json()["hits"]), r.text
        r = _search(server, "big", {"id": "b1", "k": 3, "where": "n >= 100"})
        assert r.status_code == 200 and len(r.json()["hits"]) == 3, r.text
        # what would need a graph of the large space is refused in one line, nothing built
        r = _search(server, "big", {"id": "b1", "k": 3, "hubness": "csls"})
        assert r.status_code == 409 and "read-only" in r.json()["error"], r.text
        # the explorer's routes: layouts and overlays in memory, no index built for an item or a recall overlay
        for path in ("/spaces/docs/map", "/spaces/docs/map?format=f32", "/spaces/big/map?format=ids",
                     "/spaces/docs/fields", "/spaces/docs/column?name=lang", "/spaces/docs/column?name=@map_agreement",
                     "/spaces/docs/items/d3", "/compare/docs/docs2?changed=3", "/compare/docs/docs2/jaccard",
                     "/compare/docs/docs2/items/d3"):
            r = httpx.get(url + path, timeout=120)
            assert r.status_code == 200, (path, r.text)
        assert httpx.get(url + "/spaces/docs/items/d3", timeout=60).json()["approximate"] is None
        r = httpx.get(url + "/spaces/docs/column?name=@recall", timeout=60)
        assert r.status_code == 409 and "read-only" in r.json()["error"], r.text
        r = httpx.post(url + "/compare/docs/docs2/search", json={"id": "d3", "k": 3}, timeout=60)
        assert r.status_code == 200, r.text
        # asked twice, a layout is not recomputed: this process kept it
        assert httpx.get(url + "/spaces/docs/map", timeout=60).json() == httpx.get(url + "/spaces/docs/map").json()
    finally:
        server.stop()
    assert _files(store) == before
    assert not (store.parent / (store.name + ".indexes")).exists()
    wal = store.parent / (store.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_a_read_only_service_uses_a_current_index_and_goes_exact_past_it(store, tmp_path):
    path = tmp_path / "s.db"
    x = np.random.default_rng(1).standard_normal((400, 8)).astype(np.float32)
    with Store(path) as s:
        s.create_space("docs", dim=8).add([f"d{i}" for i in range(400)], x)
    _cli(path, "index", "build", "docs", "hnsw32")
    built = _files(path)
    assert any(name.endswith(".faiss") for name in built)
    server = Server(path)
    try:
        r = _search(server, "docs", {"id": "d1", "index": "hnsw32", "k": 5})
        assert r.status_code == 200 and r.json()["plan"]["method"] == "hnsw", r.text
        assert r.json()["plan"]["index_action"] == "loaded"
        with Store(path) as s:  # another process writes: the index is now behind by 3 rows
            s.space("docs").add(["new0", "new1", "new2"], x[:3] + 1e-3)
        after_write = _files(path)
        r = _search(server, "docs", {"vector": (x[0] + 1e-3).tolist(), "index": "hnsw32", "k": 2})
        assert r.status_code == 200, r.text
        plan = r.json()["plan"]
        assert plan["method"] == "exact" and "lacks the 3 rows added" in plan["reason"], plan
        assert r.json()["hits"][0]["id"] == "new0"  # the rows the index lacks are found
    finally:
        server.stop()
    assert _files(path) == after_write
    index_files = {k: v for k, v in after_write.items() if ".indexes" in k}
    assert index_files == {k: v for k, v in built.items() if ".indexes" in k}
