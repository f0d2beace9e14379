"""Every route that reads the store or runs an engine is under ``--query-timeout``, against a real
``repspace serve``: with a timeout of a millisecond, the map, the fields, a column, the three comparison routes
and the two-space item answer 408 with one line (each does far more than a millisecond of work on 4,000 items,
read for the first time: every route asks about spaces of its own, so that nothing a route before it computed
is at hand) and the service goes on answering.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from _http_server import Server

from repspace import Store

N, DIM = 4000, 32
#: Items of the two spaces the two-space item route is asked about.
BIG = 200_000
ROUTES = ["spaces/m1/map", "spaces/m2/map?format=f32", "spaces/f1/fields", "spaces/c1/column?name=lang",
          "compare/p1/q1", "compare/p2/q2/jaccard", "compare/p3/q3/items/i7"]
SPACES = ["m1", "m2", "f1", "c1", "p1", "q1", "p2", "q2"]
PAIR_ITEM = ["p3", "q3"]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Server]:
    path = tmp_path_factory.mktemp("timeout") / "s.db"
    store = Store(path)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, DIM)).astype(np.float32)
    ids = [f"i{i}" for i in range(N)]
    meta = [{"n": i, "lang": ["en", "de", "fr"][i % 3], "text": f"t{i % 97}"} for i in range(N)]
    for name in SPACES:
        store.create_space(name, dim=DIM).add(ids, x + rng.normal(0, 0.3, x.shape).astype(np.float32), metadata=meta)
    # One item of two spaces is two exact searches: milliseconds on 4,000 items, which a loaded machine's event
    # loop can take to notice the timeout (Python's wait_for then returns the finished result). On BIG items
    # (50 MB of vectors read for the first time) the work takes far longer than any such stall.
    big = rng.standard_normal((BIG, DIM)).astype(np.float32)
    for name in PAIR_ITEM:
        store.create_space(name, dim=DIM).add([f"i{i}" for i in range(BIG)], big + rng.normal(0, 0.3, big.shape)
                                              .astype(np.float32))
    store.close()
    server = Server(path, "--query-timeout", "0.001")
    yield server
    server.stop()


@pytest.mark.parametrize("route", ROUTES)
def test_a_route_beyond_the_query_timeout_is_408(served, route):
    r = httpx.get(f"{served.url}/api/v1/{route}", timeout=120)
    assert r.status_code == 408, (r.status_code, r.text[:200])
    assert set(r.json()) == {"error"} and "--query-timeout" in r.json()["error"] and "\n" not in r.json()["error"]
    assert httpx.get(f"{served.url}/api/v1/health").json() == {"ok": True}
