"""bench_search's filtered part: knn(where=...) with the default planner vs FAISS HNSW + IDSelectorBitmap."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common as c
import numpy as np
from search_common import (
    BUCKETS,
    FAISS_FILTER_EF,
    FILTER_THREADS,
    FILTERS,
    K,
    MAX_EF,
    RECALL_GOAL,
    SLOW_S,
    recall,
    threads,
)


def filtered(label: str, space: Any, f_index: Any, base_n: np.ndarray, q: np.ndarray,
             p: dict[str, Any]) -> list[dict[str, Any]]:
    """Filtered knn with the default planner vs FAISS HNSW + IDSelectorBitmap, per selectivity."""
    import faiss

    from repspace.workflows.search import exact_search, knn

    n = len(base_n)
    qn = c.normalized(q)
    bucket = np.arange(n) % BUCKETS
    out = []
    for share, where in FILTERS:
        if where is None:
            match = np.arange(n)
        else:
            match = np.flatnonzero(bucket < int(where.split("<")[1]))
            got = space.filter_rows(where)
            if not np.array_equal(got, match):
                raise AssertionError(f"filter {where!r}: the store's matches differ from bucket = i % {BUCKETS}")
        truth = match[exact_search(qn, base_n[match], K, "ip")[1]]
        mask = np.zeros(n, dtype=bool)
        mask[match] = True
        bitmap = np.packbits(mask, bitorder="little")
        raised = int(min(MAX_EF, max(FAISS_FILTER_EF, FAISS_FILTER_EF * n / len(match))))

        def faiss_fn(ef: int, bitmap: np.ndarray = bitmap, everything: bool = where is None) -> np.ndarray:
            sp = faiss.SearchParametersHNSW(efSearch=ef)
            if not everything:
                sp.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
            return f_index.search(qn, K, params=sp)[1]

        fns: dict[str, Callable[[], np.ndarray]] = {
            "repspace": lambda where=where: knn(space, q, K, where=where).rows,
            "faiss_ef64": lambda: faiss_fn(FAISS_FILTER_EF),
        }
        if raised != FAISS_FILTER_EF:
            fns["faiss_raised"] = lambda raised=raised: faiss_fn(raised)
        times: dict[str, list[float]] = {k: [] for k in fns}
        values: dict[str, np.ndarray] = {}
        with threads(FILTER_THREADS):
            plan = knn(space, q[:2], K, where=where).plan  # also the warm-up of the planner's path
            gc.collect()
            with c.no_gc():
                for _ in range(p["filter_repeats"]):
                    for key, fn in fns.items():
                        if times[key] and times[key][0] > SLOW_S:
                            continue  # slow: best of 1
                        seconds, value = c.timed(fn, collect=False)
                        times[key].append(seconds)
                        values[key] = np.asarray(value).astype(np.int64)
        point: dict[str, Any] = {"dataset": label, "selectivity": share, "where": where, "matches": len(match),
                                 "plan_method": plan.method, "plan_ef": plan.ef, "plan_reason": plan.reason,
                                 "faiss_raised_ef": raised}
        for key in fns:
            point[f"recall_{key}"] = round(recall(values[key], truth), 4)
            point[f"qps_{key}"] = round(len(q) / min(times[key]), 1)
            point[f"runs_{key}"] = len(times[key])
        c.log(f"search {label} filter {where}: repspace {plan.method} ef={plan.ef} recall "
              f"{point['recall_repspace']:.3f} {point['qps_repspace']:.0f} q/s; faiss ef64 recall "
              f"{point['recall_faiss_ef64']:.3f} {point['qps_faiss_ef64']:.0f} q/s")
        out.append(point)
    return out


def profile_filtered(space: Any, q: np.ndarray, points: list[dict[str, Any]]) -> dict[str, Any]:
    """Where the planner's HNSW path is slowest against FAISS at the same ef: the filter's own cost, and a profile."""
    from repspace.workflows.search import knn

    same = [pt for pt in points if pt["plan_method"] == "hnsw" and pt["where"] and "qps_faiss_raised" in pt
            and pt["faiss_raised_ef"] == pt["plan_ef"]]
    if not same:
        return {}
    worst = min(same, key=lambda pt: pt["qps_repspace"] / pt["qps_faiss_raised"])
    where = worst["where"]
    with threads(FILTER_THREADS):
        filter_s = min(c.timed(lambda: space.filter_rows(where))[0] for _ in range(3))
        prof = c.profile_top(lambda: knn(space, q, K, where=where))
    return {f"filtered {where}": {
        "breakdown_filter": {"space_filter_rows_s": round(filter_s, 4),
                             "batch_at_repspace_qps_s": round(len(q) / worst["qps_repspace"], 4),
                             "batch_at_faiss_same_ef_qps_s": round(len(q) / worst["qps_faiss_raised"], 4)},
        f"profile knn(where={where!r}) ({FILTER_THREADS} threads, {len(q):,} queries)": prof}}


def filter_rows_of(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for pt in points:
        sel = f"{100 * pt['selectivity']:g}%"
        r = c.row(f"{pt['dataset']}: filtered recall@10 at {sel} ({pt['where'] or 'no filter'})",
                  pt["recall_repspace"], "recall@10", f"FAISS HNSW + bitmap, ef={FAISS_FILTER_EF}",
                  pt["recall_faiss_ef64"],
                  note=(f"repspace {pt['plan_method']}"
                        + (f" ef={pt['plan_ef']}" if pt["plan_ef"] else "")
                        + f", {pt['qps_repspace']:,.0f} q/s vs FAISS {pt['qps_faiss_ef64']:,.0f} q/s; goal on "
                          "repspace's recall itself"))
        r["goal"] = f">= {RECALL_GOAL:g} (recall)"
        r["status"] = "PASS" if pt["recall_repspace"] >= RECALL_GOAL else "MISS"
        rows.append({**r, "dataset": pt["dataset"], "selectivity": pt["selectivity"]})
    return rows



def plot_filtered(points: list[dict[str, Any]], folder: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(pt["dataset"] for pt in points))
    fig, axes = plt.subplots(2, len(datasets), figsize=(6.5 * len(datasets), 8), squeeze=False)
    for j, label in enumerate(datasets):
        pts = [pt for pt in points if pt["dataset"] == label]
        x = [100 * pt["selectivity"] for pt in pts]
        for key, name, style in (("repspace", "repspace knn(where=...) (planner)", "-s"),
                                 ("faiss_ef64", f"FAISS HNSW + bitmap, ef={FAISS_FILTER_EF}", "--o"),
                                 ("faiss_raised", "FAISS HNSW + bitmap, ef raised like repspace", ":^")):
            rec = [pt.get(f"recall_{key}", pt["recall_faiss_ef64"] if key == "faiss_raised" else None) for pt in pts]
            qps = [pt.get(f"qps_{key}", pt["qps_faiss_ef64"] if key == "faiss_raised" else None) for pt in pts]
            axes[0][j].plot(x, rec, style, label=name)
            axes[1][j].plot(x, qps, style, label=name)
        axes[0][j].axhline(RECALL_GOAL, color="grey", linewidth=0.8, linestyle=":")
        for ax in axes[:, j]:
            ax.set_xscale("log")
            ax.set_xlabel("share of items matching the filter (%)")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][j].set_ylabel("recall@10 (vs exact over the matches)")
        axes[1][j].set_ylabel(f"queries/s ({FILTER_THREADS} threads, log scale)")
        axes[1][j].set_yscale("log")
        axes[0][j].set_title(f"{label}: filtered recall@10")
        axes[1][j].set_title(f"{label}: filtered queries/s")
    axes[0][0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path = folder / "search-filtered.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.relative_to(c.REPO).as_posix()


