"""bench_search's sweep: the libraries and repspace's specs built, searched at every setting, the headline."""

from __future__ import annotations

import gc
import shutil
import time
from collections.abc import Callable
from typing import Any

import common as c
import numpy as np
from search_common import (
    EF_CONSTRUCTION,
    GOAL_DATASET,
    BUCKETS,
    K,
    LIBRARIES,
    EXTRA_LIBRARIES,
    M,
    MEM_GOAL,
    QPS_GOAL,
    SLOW_S,
    TARGET,
    THREADS,
    mib,
    recall,
    threads,
)


def build_libraries(base_n: np.ndarray, extras: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The three libraries (and usearch at its default dtype) built with 2 threads: index, seconds, bytes."""
    import faiss
    import hnswlib
    from usearch.index import Index

    n, d = base_n.shape
    keys = np.arange(n, dtype=np.int64)
    out: dict[str, dict[str, Any]] = {}
    with threads(max(THREADS)):
        index = faiss.IndexHNSWFlat(d, M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        s, _ = c.timed(lambda: index.add(base_n))
        out["faiss"] = {"index": index, "build_s": s, "memory_bytes": int(faiss.serialize_index(index).size)}
        c.log(f"  faiss built in {s:.1f} s")

    h = hnswlib.Index(space="ip", dim=d)

    def hnsw_build() -> None:
        h.init_index(max_elements=n, M=M, ef_construction=EF_CONSTRUCTION)
        h.add_items(base_n, keys, num_threads=max(THREADS))

    s, _ = c.timed(hnsw_build)
    out["hnswlib"] = {"index": h, "build_s": s, "memory_bytes": int(h.index_file_size())}
    c.log(f"  hnswlib built in {s:.1f} s")

    for name, dtype in (("usearch", "f32"), *((("usearch-bf16", None),) if "usearch-bf16" in extras else ())):
        u = Index(ndim=d, metric="ip", dtype=dtype, connectivity=M, expansion_add=EF_CONSTRUCTION,
                  expansion_search=64)
        s, _ = c.timed(lambda u=u: u.add(keys, base_n, threads=max(THREADS)))
        # memory_usage counts the arenas as allocated (growth headroom included); serialized_length the
        # vectors and graph alone: the smaller is taken (the stricter anchor for repspace), both recorded
        used, packed = int(u.memory_usage), int(u.serialized_length)
        out[name] = {"index": u, "build_s": s, "memory_bytes": min(used, packed), "memory_usage": used,
                     "serialized_length": packed, "dtype": str(u.dtype)}
        c.log(f"  {name} ({u.dtype}) built in {s:.1f} s")
    return out


def build_repspace(space: Any, families: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
    """``build_index`` for each family's first spec, timed with 2 threads (exact: nothing to build)."""
    from repspace.workflows.search import build_index, ensure_funnel, parse_spec

    from repspace.workflows.search.vectorfile import ensure_vector_file

    out: dict[str, dict[str, Any]] = {}
    with threads(max(THREADS)):
        # The rescoring tier (a memory-mapped copy of the vectors) is shared by every funnel with a
        # refine stage: built once here, so that no family's build time carries it.
        s, tier = c.timed(lambda: ensure_vector_file(space))
        tier_bytes = int(tier.index.nbytes)
        c.log(f"  repspace rescoring tier written in {s:.1f} s, {mib(tier_bytes):.1f} MiB on disk")
        for family, settings in families.items():
            if family == "exact":
                out[family] = {"build_s": 0.0, "memory_bytes": int(space.info().count) * space.dim * 4,
                               "note": "no index: the float matrix, read from the store and held by the space"}
                continue
            s, report = c.timed(lambda spec=settings[0]: build_index(space, spec))
            if report.action != "built":
                raise AssertionError(f"{family}: expected a fresh build, got {report.action}")
            info: dict[str, Any] = {"build_s": s, "memory_bytes": int(report.memory_bytes)}
            spec = parse_spec(settings[0])
            if spec.kind != "hnsw" or spec.codes is not None:
                info["memory_breakdown"] = ensure_funnel(space, spec).index.memory_breakdown()
                if spec.exact_rerank:
                    info["tier_disk_bytes"] = tier_bytes
                    info["tier_build_s"] = s
            else:
                info["note"] = "FAISS IndexHNSWFlat in an IndexIDMap2: file size"
            out[family] = info
            c.log(f"  repspace {family} built in {s:.1f} s, {mib(info['memory_bytes']):.1f} MiB")
    return out


def fill_store(label: str, ids: list[str], base: np.ndarray) -> tuple[Any, Any, float]:
    from repspace import Store

    folder = c.work_dir(f"search-{label}")
    for old in folder.iterdir():
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    store = Store(folder / "store.db")
    space = store.create_space(label, dim=base.shape[1], metric="cosine")
    t0 = time.perf_counter()
    step = 50_000
    for lo in range(0, len(ids), step):
        hi = min(len(ids), lo + step)
        space.add(ids[lo:hi], base[lo:hi], metadata=[{"bucket": i % BUCKETS} for i in range(lo, hi)])
    seconds = time.perf_counter() - t0
    if not np.array_equal(space.rows(), np.arange(len(ids))):
        raise AssertionError("expected the store's rows to be 0..n-1 in insertion order")
    return store, space, seconds


# ---------------------------------------------------------------------- sweep
def search_fns(space: Any, libs: dict[str, dict[str, Any]], families: dict[str, list[str]], q: np.ndarray,
               qn: np.ndarray, efs: list[int], nthreads: int) -> dict[tuple[str, str], Callable[[], np.ndarray]]:
    """(contender, setting) -> a function returning the (m, k) rows/labels of one batch."""
    import faiss

    from repspace.workflows.search import knn

    fns: dict[tuple[str, str], Callable[[], np.ndarray]] = {}
    f_index, h_index = libs["faiss"]["index"], libs["hnswlib"]["index"]
    for ef in efs:
        sp = faiss.SearchParametersHNSW(efSearch=ef)
        fns[("faiss", f"ef{ef}")] = lambda sp=sp: f_index.search(qn, K, params=sp)[1]

        def hnswlib_fn(ef: int = ef) -> np.ndarray:
            h_index.set_ef(ef)
            return h_index.knn_query(qn, k=K, num_threads=nthreads)[0]

        fns[("hnswlib", f"ef{ef}")] = hnswlib_fn
        for name in (n for n in libs if n.startswith("usearch")):
            u = libs[name]["index"]

            def usearch_fn(u: Any = u, ef: int = ef) -> np.ndarray:
                u.expansion_search = ef
                return u.search(qn, K, threads=nthreads).keys

            fns[(name, f"ef{ef}")] = usearch_fn
    for family, settings in families.items():
        for spec in settings:
            fns[(family, spec)] = lambda spec=spec: knn(space, q, K, index=spec).rows
    return fns


def sweep(label: str, space: Any, libs: dict[str, dict[str, Any]], families: dict[str, list[str]],
          q: np.ndarray, truth: np.ndarray, p: dict[str, Any]) -> list[dict[str, Any]]:
    """Every (contender, setting) at each thread count, alternating round by round; best of ``repeats``."""
    from repspace.workflows.search import knn

    qn = c.normalized(q)
    points: list[dict[str, Any]] = []
    for nthreads in p["threads"]:
        fns = search_fns(space, libs, families, q, qn, p["efs"], nthreads)
        times: dict[tuple[str, str], list[float]] = {key: [] for key in fns}
        values: dict[tuple[str, str], np.ndarray] = {}
        with threads(nthreads):
            for settings in families.values():  # load what a first call loads (indexes, the matrix)
                for spec in settings:
                    knn(space, q[:2], K, index=spec)
            gc.collect()
            with c.no_gc():
                for _ in range(p["repeats"]):
                    for key, fn in fns.items():
                        if times[key] and times[key][0] > SLOW_S:
                            continue  # slow: best of 1
                        seconds, value = c.timed(fn, collect=False)
                        times[key].append(seconds)
                        values[key] = np.asarray(value).astype(np.int64)
        for (who, setting), t in times.items():
            r = recall(values[(who, setting)], truth)
            qps = len(q) / min(t)
            points.append({"dataset": label, "contender": who, "setting": setting, "threads": nthreads,
                           "recall": round(r, 4), "qps": round(qps, 1), "runs": len(t),
                           "times_s": [round(x, 4) for x in t]})
        best = {who: max((pt["qps"] for pt in points if pt["contender"] == who and pt["threads"] == nthreads
                          and pt["recall"] >= TARGET), default=0)
                for who in dict.fromkeys(pt["contender"] for pt in points)}
        c.log(f"search {label}: sweep at {nthreads} thread(s) done: "
              + ", ".join(f"{w}:{q:.0f}" for w, q in best.items()))
    return points


def at_target(points: list[dict[str, Any]], who: str, nthreads: int) -> dict[str, Any] | None:
    """The fastest setting of a contender reaching recall >= TARGET at ``nthreads``."""
    ok = [pt for pt in points if pt["contender"] == who and pt["threads"] == nthreads and pt["recall"] >= TARGET]
    return max(ok, key=lambda pt: pt["qps"]) if ok else None


def headline(label: str, points: list[dict[str, Any]], builds: dict[str, dict[str, Any]],
             contenders: list[str], nthreads_list: list[int]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The headline table (one line per contender) and the goal rows (repspace vs the best library)."""
    table_rows, goal_rows = [], []
    best_lib: dict[int, tuple[str, dict[str, Any]] | None] = {}
    for t in nthreads_list:
        cands = [(lib, at_target(points, lib, t)) for lib in LIBRARIES]
        cands = [(lib, pt) for lib, pt in cands if pt is not None]
        best_lib[t] = max(cands, key=lambda x: x[1]["qps"]) if cands else None
    for who in contenders:
        line: dict[str, Any] = {"contender": who, "build_s": round(builds[who]["build_s"], 2),
                                "memory_mib": round(mib(builds[who]["memory_bytes"]), 2)}
        for t in nthreads_list:
            pt = at_target(points, who, t)
            line[f"setting_{t}t"] = pt["setting"] if pt else None
            line[f"recall_{t}t"] = pt["recall"] if pt else None
            line[f"qps_{t}t"] = pt["qps"] if pt else None
            best = best_lib[t]
            line[f"qps_ratio_{t}t"] = round(pt["qps"] / best[1]["qps"], 3) if pt and best else None
        best1 = best_lib[nthreads_list[0]]
        if best1:
            line["memory_ratio"] = round(builds[who]["memory_bytes"] / builds[best1[0]]["memory_bytes"], 3)
        line["top_recall"] = max((pt["recall"] for pt in points if pt["contender"] == who), default=None)
        table_rows.append(line)
    for who in contenders:
        if who in LIBRARIES or who in EXTRA_LIBRARIES:
            continue
        goal = label == GOAL_DATASET
        for t in nthreads_list:
            best = best_lib[t]
            pt = at_target(points, who, t)
            plural = "s" if t > 1 else ""
            case = f"{label}: {who} queries/s at recall@10 >= {TARGET}, {t} thread{plural}"
            if best is None:
                goal_rows.append(c.row(case, pt["qps"] if pt else float("nan"), "queries/s",
                                       note="no library reached the recall target"))
                continue
            anchor = f"best library: {best[0]} ({best[1]['setting']}, recall {best[1]['recall']:.3f})"
            if pt is None:
                top = max((x["recall"] for x in points if x["contender"] == who), default=0.0)
                r = c.row(case, 0.0, "queries/s", anchor, best[1]["qps"], 0.0, QPS_GOAL if goal else None,
                          note=f"never reached recall {TARGET} in the sweep (best recall {top:.3f})")
            else:
                r = c.row(case, pt["qps"], "queries/s", anchor, best[1]["qps"], pt["qps"] / best[1]["qps"],
                          QPS_GOAL if goal else None,
                          note=f"{pt['setting']}: recall {pt['recall']:.3f}", setting=pt["setting"],
                          recall=pt["recall"])
            goal_rows.append({**r, "dataset": label, "contender": who, "threads": t})
        seen: set[str] = set()
        for t in nthreads_list:
            best = best_lib[t]
            if best is None or best[0] in seen:
                continue
            seen.add(best[0])
            ours, theirs = builds[who]["memory_bytes"], builds[best[0]]["memory_bytes"]
            note = "ratio = repspace bytes / library bytes (lower is better)"
            if "tier_disk_bytes" in builds[who]:
                note += (f"; plus the rescoring tier, {mib(builds[who]['tier_disk_bytes']):.1f} MiB on disk, "
                         "memory-mapped (page cache: evictable, shared by all funnels)")
            r = c.row(f"{label}: {who} memory vs {best[0]} (best library at {t} thread{'s' if t > 1 else ''})",
                      mib(ours), "MiB", f"{best[0]} index in memory", mib(theirs), ours / theirs,
                      MEM_GOAL if goal else None, note=note)
            goal_rows.append({**r, "dataset": label, "contender": who})
    return table_rows, goal_rows


