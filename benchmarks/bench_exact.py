"""Exact search: ``knn(space, Q, 10, method="exact")`` against FAISS ``IndexFlatIP`` in the same run.

Batch throughput: m = 1,000 random queries against the n = 1,000,000 x 384
cosine space of the ingest benchmark. The figure is GFLOP/s = 2 m n d / t
(t: best of 3). The anchor is FAISS ``IndexFlatIP.search`` on the same
normalised vectors (exact k-NN with its own blocked BLAS and heaps), what a
user would call instead and what ``exact_search`` itself hands batches of 20
or more queries to; the two alternate, three runs each.

Single-query latency: knn with one query against FAISS ``IndexFlatIP`` with one
query (the anchor) and numpy ``X @ q`` + ``argpartition`` on the normalised base
(a reference: the least one query needs). For every query the three run in
turn, so each gets the same number of runs under the same noise; the figure is
the median over the queries. The space is loaded and normalised once before
timing (that first call is reported separately). When a ratio misses, a cProfile
of one batch search is stored in the result file.
"""

from __future__ import annotations

import argparse
import gc
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "exact"
K = 10
#: repspace's batch rate as a share of FAISS's (batches go through FAISS, plus id handling and ties).
GOAL_BATCH = (">=", 0.8)
#: FAISS's single-query latency over repspace's (per-call overhead: store, freshness, hits).
GOAL_LATENCY = (">=", 0.5)


def sizes(quick: bool) -> dict[str, Any]:
    return {"n": 50_000 if quick else 1_000_000, "dim": 384, "m": 200 if quick else 1_000, "k": K,
            "single_queries": 5 if quick else 20}


def numpy_single(base: np.ndarray, q: np.ndarray) -> Callable[[], np.ndarray]:
    def go() -> np.ndarray:
        s = base @ q
        top = np.argpartition(-s, K - 1)[:K]
        return top[np.argsort(-s[top])]

    return go


def batch_rows(space: Any, q: np.ndarray, base: np.ndarray, flat: Any) -> tuple[list[dict[str, Any]], dict]:
    from repspace.workflows.search import knn

    n, d = base.shape
    m = len(q)
    flops = 2.0 * m * n * d
    qn = c.normalized(q)
    times = c.alternate({
        "repspace": lambda: knn(space, q, K, method="exact"),
        "faiss": lambda: flat.search(qn, K),
    }, 3)
    r, f = c.best(times["repspace"]), c.best(times["faiss"])
    shape = f"{m:,} queries x {n:,} x {d}"
    rows = [
        c.row(f"batch {shape}: GFLOP/s", flops / r / 1e9, "GFLOP/s", "faiss IndexFlatIP",
              flops / f / 1e9, f / r, GOAL_BATCH, seconds=r, anchor_seconds=f),
    ]
    return rows, {"times_s": times}


def latency_rows(space: Any, q: np.ndarray, base: np.ndarray, flat: Any, count: int) -> tuple[list[dict], dict]:
    from repspace.workflows.search import knn

    qn = c.normalized(q)
    ms: dict[str, list[float]] = {"repspace": [], "faiss": [], "numpy": []}
    gc.collect()
    with c.no_gc():
        for i in range(count):
            for name, fn in (("repspace", lambda: knn(space, q[i : i + 1], K, method="exact")),
                             ("faiss", lambda: flat.search(qn[i : i + 1], K)),
                             ("numpy", numpy_single(base, qn[i]))):
                ms[name].append(1e3 * c.timed(fn, collect=False)[0])
    ours, fai, npy = (statistics.median(ms[k]) for k in ("repspace", "faiss", "numpy"))
    n, d = base.shape
    rows = [
        c.row(f"single query over {n:,} x {d}: latency", ours, "ms", "faiss IndexFlatIP", fai, fai / ours,
              GOAL_LATENCY),
        c.row(f"single query over {n:,} x {d}: latency vs numpy", ours, "ms", "numpy X@q + argpartition", npy,
              npy / ours),
    ]
    return rows, {"median_ms": {"repspace": ours, "faiss": fai, "numpy": npy}, "runs_ms": ms}


def check_same(space: Any, q: np.ndarray, flat: Any) -> float:
    """Share of the top-10 ids that repspace and FAISS agree on (ties may differ)."""
    from repspace.workflows.search import knn

    ours = knn(space, q[:50], K, method="exact").rows
    _, theirs = flat.search(c.normalized(q[:50]), K)
    return float(np.mean([len(set(a) & set(b)) / K for a, b in zip(ours, theirs)]))


def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    import faiss

    from repspace import Store
    from repspace.workflows.search import knn

    p = sizes(quick)
    db, _ = c.ensure_random_store(p["n"], p["dim"])
    store = Store(db)
    space = store.space("random")
    q = np.random.default_rng(1).standard_normal((p["m"], p["dim"]), dtype=np.float32)
    c.log(f"exact: first call (load + normalise {p['n']:,} x {p['dim']})")
    first_s, _ = c.timed(lambda: knn(space, q[:1], K, method="exact"))
    base = c.normalized(space.vectors())
    flat = faiss.IndexFlatIP(p["dim"])
    flat.add(base)
    agreement = check_same(space, q, flat)
    c.log("exact: batch")
    results, details = batch_rows(space, q, base, flat)
    c.log("exact: single queries")
    rows, lat = latency_rows(space, q, base, flat, p["single_queries"])
    results += rows
    details.update(lat)
    results.append(c.row("first knn call on a fresh Store (load + normalise + 1 query)", first_s, "s",
                         note="not a ratio: what the batch and latency figures exclude"))
    details["top10_agreement_with_faiss"] = agreement
    if any(r["status"] == "MISS" for r in results):
        details["profile_batch"] = c.profile_top(lambda: knn(space, q, K, method="exact"))
        details["profile_single"] = c.profile_top(lambda: [knn(space, q[i : i + 1], K, method="exact")
                                                           for i in range(5)])
    store.close()
    return c.write_result(NAME, {**p, "metric": "cosine", "repeats": 3, "queries": "standard normal, seed 1"},
                          results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
