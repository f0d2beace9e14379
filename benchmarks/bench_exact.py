"""Exact search: ``knn(space, Q, 10, method="exact")`` against the machine's own sgemm rate.

Batch throughput: m = 1,000 random queries against the n = 1,000,000 x 384
cosine space of the ingest benchmark. The figure is GFLOP/s = 2 m n d / t
(t: best of 3). Anchors, timed in the same run and alternating with repspace:

* sgemm: numpy float32 ``Q @ X_block.T`` over the same (normalised) base in the
  same block shapes as ``exact_search`` uses, nothing else (best of 3); the
  ratio is repspace's share of the machine's sgemm rate;
* FAISS ``IndexFlatIP.search`` on the same normalised vectors (exact k-NN with
  its own blocked BLAS and heaps), as a practical reference.

Single-query latency: knn with one query (median of 20) against the minimum
one query needs: numpy ``X @ q`` + ``argpartition`` on the normalised base, and
FAISS ``IndexFlatIP`` with one query. The space is loaded and normalised once
before timing (that first call is reported separately). When a ratio misses,
a cProfile of one batch search is stored in the result file.
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
GOAL_SHARE = (">=", 0.5)
GOAL_LATENCY = (">=", 0.5)


def sizes(quick: bool) -> dict[str, Any]:
    return {"n": 50_000 if quick else 1_000_000, "dim": 384, "m": 200 if quick else 1_000, "k": K,
            "single_queries": 5 if quick else 20}


def sgemm_anchor(q: np.ndarray, base: np.ndarray) -> Callable[[], None]:
    """The BLAS products exact_search does, in its block shapes, and nothing else."""
    from repspace.core.exact import BLOCK_ENTRIES

    block = max(K, min(len(base), BLOCK_ENTRIES // max(1, len(q))))

    def go() -> None:
        for start in range(0, len(base), block):
            q @ base[start : start + block].T

    return go


def numpy_single(base: np.ndarray, q: np.ndarray) -> Callable[[], np.ndarray]:
    def go() -> np.ndarray:
        s = base @ q
        top = np.argpartition(-s, K - 1)[:K]
        return top[np.argsort(-s[top])]

    return go


def median_ms(fn_for: Callable[[int], Callable[[], Any]], count: int) -> float:
    """Median milliseconds of ``fn_for(i)()`` over ``i < count`` (one collection first, none between)."""
    gc.collect()
    with c.no_gc():
        return 1e3 * statistics.median(c.timed(fn_for(i), collect=False)[0] for i in range(count))


def batch_rows(space: Any, q: np.ndarray, base: np.ndarray, flat: Any) -> tuple[list[dict[str, Any]], dict]:
    from repspace.workflows.search import knn

    n, d = base.shape
    m = len(q)
    flops = 2.0 * m * n * d
    qn = c.normalized(q)
    times = c.alternate({
        "repspace": lambda: knn(space, q, K, method="exact"),
        "sgemm": sgemm_anchor(qn, base),
        "faiss": lambda: flat.search(qn, K),
    }, 3)
    r, g, f = (c.best(times[k]) for k in ("repspace", "sgemm", "faiss"))
    shape = f"{m:,} queries x {n:,} x {d}"
    rows = [
        c.row(f"batch {shape}: GFLOP/s (share of sgemm)", flops / r / 1e9, "GFLOP/s", "numpy sgemm, same blocks",
              flops / g / 1e9, g / r, GOAL_SHARE, seconds=r, anchor_seconds=g),
        c.row(f"batch {shape}: GFLOP/s vs FAISS IndexFlatIP", flops / r / 1e9, "GFLOP/s", "faiss IndexFlatIP",
              flops / f / 1e9, f / r, seconds=r, anchor_seconds=f),
    ]
    return rows, {"times_s": times}


def latency_rows(space: Any, q: np.ndarray, base: np.ndarray, flat: Any, count: int) -> tuple[list[dict], dict]:
    from repspace.workflows.search import knn

    qn = c.normalized(q)
    ours = median_ms(lambda i: lambda: knn(space, q[i : i + 1], K, method="exact"), count)
    npy = median_ms(lambda i: numpy_single(base, qn[i]), count)
    fai = median_ms(lambda i: lambda: flat.search(qn[i : i + 1], K), count)
    ours2 = median_ms(lambda i: lambda: knn(space, q[i : i + 1], K, method="exact"), count)  # bracket the anchors
    ours = min(ours, ours2)
    n, d = base.shape
    rows = [
        c.row(f"single query over {n:,} x {d}: latency", ours, "ms", "numpy X@q + argpartition", npy, npy / ours,
              GOAL_LATENCY),
        c.row(f"single query over {n:,} x {d}: latency vs FAISS", ours, "ms", "faiss IndexFlatIP", fai, fai / ours),
    ]
    return rows, {"median_ms": {"repspace": ours, "numpy": npy, "faiss": fai}}


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
