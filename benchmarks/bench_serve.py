"""The HTTP service under load on loopback: search against the server's own floor, and against in-process calls.

Data: 100,000 real all-MiniLM-L6-v2 vectors (bench_diagnose's cached set; 10,000 with
``--quick``), metadata ``sel = i % 1000``, an HNSW index built before the server starts.
``repspace serve`` runs in its own process on 127.0.0.1; the clients are threads of this
process, each with its own keep-alive connection (httpx), one request at a time.

Settings, each run for a fixed time, 8 concurrent clients (and 1 client for latency):

* ``health``: ``GET /api/v1/health``, a route that does no store work: the HTTP floor of
  this server, client and machine;
* ``search``: ``POST .../search`` with a held-out vector, k = 10 (hits with metadata);
* ``filtered``: the same with ``where="sel < 100"`` (10% of the items);
* ``item``: ``GET .../items/{id}`` (text, metadata, 10 neighbours).

Goals (issue 16): search >= 0.5x the health rate with 8 clients; a filtered search at
least half the unfiltered rate; p50 and p99 reported, with the same search made
in-process (``space.search``) one call at a time for comparison.

On this 2-core machine the clients, the server and its worker threads share the two
cores: the figures are what one machine serving itself gets, not a server's capacity.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import common as c
import numpy as np

NAME = "serve"
CLIENTS = 8
GOAL_VS_FLOOR = (">=", 0.5)
GOAL_FILTERED = (">=", 0.5)


def sizes(quick: bool) -> dict[str, Any]:
    return {"n": 10_000 if quick else 100_000, "queries": 500, "seconds": 3.0 if quick else 10.0,
            "clients": CLIENTS, "k": 10}


def _start(store: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``repspace serve --port 0 --json``: the URL it listens on is its first line."""
    import httpx

    code = ("import sys; from repspace.interfaces.cli import main; "
            f"sys.exit(main(['-q', '--store', {str(store)!r}, 'serve', '--port', '0', '--json']))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(30)
        raise RuntimeError(f"the server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
    url = json.loads(line)["url"].removesuffix("/api/v1")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/api/v1/health", timeout=1.0)
            return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not answer in 120 s")


def _load(url: str, call: Callable[[Any, int], Any], clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` threads calling ``call(client, i)`` for ``seconds``: rate, p50, p99 (ms), errors."""
    import httpx

    stop = time.monotonic() + seconds
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients

    def work(j: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            i = j
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                r = call(client, i)
                latencies[j].append(time.perf_counter() - t0)
                if r.status_code != 200:
                    errors[j] += 1
                i += clients

    threads = [threading.Thread(target=work, args=(j,)) for j in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat = np.concatenate([np.array(x) for x in latencies]) * 1e3
    return {"rate": len(lat) / wall, "p50_ms": float(np.percentile(lat, 50)), "p99_ms": float(np.percentile(lat, 99)),
            "calls": int(len(lat)), "errors": int(sum(errors))}


def run(quick: bool = False) -> Path:
    from bench_diagnose import minilm_vectors

    from repspace import Store
    from repspace.core.threads import set_threads

    c.begin(NAME, quick)
    p = sizes(quick)
    n, m = p["n"], p["queries"]
    xx, _ = minilm_vectors(False)
    x, q = xx[:n], xx[n : n + m]
    folder = c.work_dir(NAME)
    shutil.rmtree(folder)
    folder = c.work_dir(NAME)
    c.log(f"serve: a store of {n:,} MiniLM vectors, HNSW built before the server starts")
    store = Store(folder / "s.db")
    space = store.create_space("docs", dim=x.shape[1], metric="cosine")
    space.add([f"d{i}" for i in range(n)], x, texts=[f"document {i}" for i in range(n)],
              metadata=[{"sel": i % 1000} for i in range(n)])
    space.search(q[0], k=10, index="hnsw32")
    space.search(q[0], k=10)  # the planner's own choice, built and persisted too
    proc, url = _start(folder / "s.db")
    queries = [v.tolist() for v in q]
    calls: dict[str, Callable[[Any, int], Any]] = {
        "health": lambda cl, i: cl.get("/api/v1/health"),
        "search": lambda cl, i: cl.post("/api/v1/spaces/docs/search", json={"vector": queries[i % m], "k": 10}),
        "filtered": lambda cl, i: cl.post("/api/v1/spaces/docs/search",
                                          json={"vector": queries[i % m], "k": 10, "where": "sel < 100"}),
        "item": lambda cl, i: cl.get(f"/api/v1/spaces/docs/items/d{(i * 7919) % n}"),
    }
    details: dict[str, Any] = {"concurrent": {}, "one_client": {}}
    try:
        for label, call in calls.items():  # warm: the index loaded, the filter's columns read
            _load(url, call, 1, 0.5)
        for label, call in calls.items():
            details["concurrent"][label] = _load(url, call, p["clients"], p["seconds"])
            details["one_client"][label] = _load(url, call, 1, p["seconds"] / 2)
            c.log(f"serve {label}: {details['concurrent'][label]} | one client {details['one_client'][label]}")
    finally:
        proc.terminate()
        proc.wait(30)
    set_threads(1)
    local: list[float] = []
    stop = time.monotonic() + p["seconds"] / 2
    i = 0
    while time.monotonic() < stop:
        t0 = time.perf_counter()
        space.search(q[i % m], k=10)
        local.append(time.perf_counter() - t0)
        i += 1
    loc = np.array(local) * 1e3
    details["in_process"] = {"rate": len(loc) / (p["seconds"] / 2), "p50_ms": float(np.percentile(loc, 50)),
                             "p99_ms": float(np.percentile(loc, 99))}
    store.close()
    cc, one = details["concurrent"], details["one_client"]
    errors = sum(v["errors"] for v in cc.values()) + sum(v["errors"] for v in one.values())
    rows = [
        c.row(f"search, {p['clients']} clients, vs the server's no-op route", cc["search"]["rate"], "req/s",
              "GET /api/v1/health, same clients", cc["health"]["rate"], cc["search"]["rate"] / cc["health"]["rate"],
              GOAL_VS_FLOOR, p50_ms=cc["search"]["p50_ms"], p99_ms=cc["search"]["p99_ms"],
              floor_p50_ms=cc["health"]["p50_ms"], floor_p99_ms=cc["health"]["p99_ms"]),
        c.row(f"filtered search (10%), {p['clients']} clients, vs unfiltered", cc["filtered"]["rate"], "req/s",
              "unfiltered search, same clients", cc["search"]["rate"], cc["filtered"]["rate"] / cc["search"]["rate"],
              GOAL_FILTERED, p50_ms=cc["filtered"]["p50_ms"], p99_ms=cc["filtered"]["p99_ms"]),
        c.row(f"item with 10 neighbours, {p['clients']} clients", cc["item"]["rate"], "req/s",
              "GET /api/v1/health, same clients", cc["health"]["rate"], cc["item"]["rate"] / cc["health"]["rate"],
              p50_ms=cc["item"]["p50_ms"], p99_ms=cc["item"]["p99_ms"]),
        c.row("search, one client: p50 latency over HTTP vs in-process", one["search"]["p50_ms"], "ms",
              "space.search in-process, p50", details["in_process"]["p50_ms"],
              one["search"]["p50_ms"] / details["in_process"]["p50_ms"], p99_ms=one["search"]["p99_ms"],
              in_process_p99_ms=details["in_process"]["p99_ms"], note="ratio = HTTP / in-process (lower is better)"),
        c.row("requests answered with an error (all settings)", float(errors), "requests",
              note=f"of {sum(v['calls'] for v in cc.values()) + sum(v['calls'] for v in one.values()):,}"),
    ]
    shutil.rmtree(folder, ignore_errors=True)
    return c.write_result(NAME, p, rows, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
