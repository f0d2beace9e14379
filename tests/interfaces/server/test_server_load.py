"""A bounded load test on loopback: 8 clients search, filter and read items for 8 s while a writer adds
batches through the API. No 5xx, and no reader ever sees part of a batch."""

from __future__ import annotations

import random
import threading
import time

import httpx
import numpy as np
import pytest
from _http_server import DIM, N, Server, make_store

CLIENTS = 8
SECONDS = 8.0
BATCH = 20


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = make_store(tmp_path_factory.mktemp("load") / "s.db")
    with Server(path, "--writable", env={"REPSPACE_TOKEN": "t0ken"}) as server:
        yield server


def test_readers_never_see_half_a_batch_and_nothing_fails(served):
    auth = {"authorization": "Bearer t0ken"}
    base = served.url + "/api/v1/spaces/docs"
    stop = time.monotonic() + SECONDS
    written: list[int] = []  # batch numbers whose write returned
    problems: list[str] = []
    calls = {"search": 0, "filtered": 0, "item": 0, "count": 0, "write": 0}
    lock = threading.Lock()

    def writer() -> None:
        rng = np.random.default_rng(1)
        with httpx.Client(headers=auth, timeout=60) as client:
            b = 0
            while time.monotonic() < stop:
                items = [{"id": f"w{b}-{i}", "vector": rng.standard_normal(DIM).tolist(), "metadata": {"batch": b}}
                         for i in range(BATCH)]
                r = client.post(base + "/items", json={"items": items})
                with lock:
                    calls["write"] += 1
                    if r.status_code != 200 or r.json()["added"] != BATCH:
                        problems.append(f"write {b}: {r.status_code} {r.text[:200]}")
                    written.append(b)
                b += 1
                time.sleep(0.05)

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(headers=auth, timeout=60) as client:
            while time.monotonic() < stop:
                kind = rng.choice(["search", "filtered", "item", "count"])
                if kind == "search":
                    r = client.post(base + "/search", json={"vector": [rng.gauss(0, 1) for _ in range(DIM)], "k": 10})
                    ok = r.status_code == 200 and len(r.json()["hits"]) == 10
                elif kind == "filtered":
                    with lock:
                        b = rng.choice(written) if written and rng.random() < 0.8 else rng.randrange(0, 10_000)
                    r = client.post(base + "/search", json={"vector": [1.0] * DIM, "k": 50, "where": f"batch = {b}"})
                    ok = r.status_code == 200 and len(r.json()["hits"]) in (0, BATCH)  # all of a batch or none
                elif kind == "item":
                    r = client.get(base + f"/items/d{rng.randrange(N)}")
                    ok = r.status_code == 200 and len(r.json()["neighbours"]) == 10
                else:
                    r = client.get(base)
                    ok = r.status_code == 200 and (r.json()["count"] - N) % BATCH == 0
                with lock:
                    calls[kind] += 1
                    if not ok:
                        problems.append(f"{kind}: {r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SECONDS + 120)
    assert not any(t.is_alive() for t in threads)
    assert problems == []
    assert calls["write"] >= 5 and min(calls[k] for k in ("search", "filtered", "item", "count")) >= 5, calls
    final = httpx.get(base, headers=auth).json()["count"]
    assert final == N + BATCH * len(written)
