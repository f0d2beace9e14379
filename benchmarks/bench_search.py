"""Search: repspace's index specs against FAISS HNSW, hnswlib and usearch used directly.

Recall@10, queries/s (1 and 2 threads), memory and build time, in one process and
one run, on two real data sets (cosine):

* ``glove``: the GloVe 6B 50-d vectors (``common.glove()``, 400,000 words); 1,000
  words drawn at random (seed 2) are held out as queries, the other 399,000 are
  indexed (quick: 10,000 of them and 200 queries);
* ``minilm``: a 384-d all-MiniLM-L6-v2 space (``get_encoder("minilm")``) of real
  texts: the 100,000 most frequent GloVe vocabulary words (real English tokens,
  short, so they embed at ~800/s on 2 cores) followed by every distinct sentence
  of STS-B train, dev and test (``/work/shared/data/stsb``) not already among
  them; 1,000 of these texts drawn at random (seed 11) are held out as queries,
  the rest (~115,000) indexed (quick: 10,000 words + 500 sentences, 200
  queries). The embedding is cached as ``.npy`` under ``benchmarks/.cache/``
  (keyed by a hash of the texts), so reruns skip it.

Ground truth is exact search (``repspace.engines.search.exact_search`` on the normalised
vectors). The base vectors go into a real repspace store (with metadata
``bucket = i % 1000``) and repspace is measured through ``knn`` (planner, index
stamps, and the rescoring stage, which scores the shortlist in the rescoring tier,
a memory-mapped copy of the vectors beside the store, ``repspace.workflows.search.vectorfile``:
that cost is part of its figure; the tier's size on disk is reported beside the
memory).

Contenders, all built with 2 threads, M=32 and efConstruction=100 where there is
a graph:

* FAISS ``IndexHNSWFlat(d, 32, METRIC_INNER_PRODUCT)`` on normalised vectors;
* hnswlib ``Index(space="ip")`` on normalised vectors (what ``space="cosine"``
  does internally), ``init_index(n, M=32, ef_construction=100)``;
* usearch ``Index(metric="ip", dtype="f32", connectivity=32, expansion_add=100)``
  on normalised vectors (``f32`` like the others; usearch's own default on this
  CPU would be ``bf16``, half the memory: on the 384-d space that variant is
  measured too, as ``usearch-bf16``, and shown, but the anchor is "the best of
  the three" at comparable parameters, so it is not in it);
* repspace: ``hnsw32`` and funnel specs (see ``specs()``: on the 384-d space
  ``hnsw32,int8>rescore`` (the graph over int8 codes), ``pca160,hnsw32,int8>rerank``
  (the graph over int8 codes of 160 PCA components), ``prefix64,hnsw32>rerank``, ``int8>rescore4``,
  ``binary>rescore``, ``pca64>rerank``, ``ivf1024,pq32>rerank`` and ``exact``; on
  GloVe ``pca32,hnsw32>rerank``, ``ivf1024,pq10>rerank`` and ``exact`` -- no
  ``int8`` there: its exhaustive scan of 399,000 codes takes ~27 s per batch of
  1,000 queries, which the run's time cannot afford), built with
  ``build_index`` (reads the vectors from the store, trains, adds, writes the
  file), then searched with ``knn(space, Q, 10, index=spec)``.

Library queries are normalised outside the timing; repspace normalises inside
``knn``. Every contender sweeps its search-time knob (efSearch for graphs, the
refine factor / ef / nprobe for funnels) on a batch of all the queries at 1 and at
2 threads (``faiss.omp_set_num_threads`` and threadpoolctl for FAISS and repspace,
``num_threads=`` for hnswlib, ``threads=`` for usearch); within one thread count
every (contender, setting) runs in turn, round after round (alternating), best of
3 (settings slower than 3 s per batch: best of 1). efSearch: 16, 32, 64, 128, 256;
graph funnels: (ef, refine factor) (32, 2), (64, 4), (128, 4), (128, 10), (256, 10),
(256, 20); ``hnsw32,int8``: efSearch 16 ... 128 with refine factor 2; ``pca160,hnsw32,int8``:
(24, 3), (32, 3), (48, 3), (64, 3), (64, 4), (128, 4). Memory: FAISS the size of
``faiss.serialize_index`` (vectors + graph), hnswlib ``index_file_size()``,
usearch the smaller of ``memory_usage`` (arenas as allocated) and ``serialized_length``,
repspace ``hnsw32`` its index file, repspace funnels
``FunnelIndex.memory_bytes()`` (codes, labels, graph, trained model: the float
vectors stay in the store and are read for the shortlist only).

Goals (384-d space): at recall@10 >= 0.95, each repspace spec's best queries/s
>= 1.0x the best of the three libraries' best queries/s at recall >= 0.95 (per
thread count), and its memory <= 0.5x that library's. GloVe rows carry the same
ratios without a goal.

Filtered: ``knn(space, Q, 10, where="bucket < b")`` with the default planner
(``plan.method``, ``plan.ef``, ``plan.reason`` recorded) at selectivities 0.1%,
1%, 10%, 50% and 100% (no filter), against FAISS ``IndexHNSWFlat`` with an
``IDSelectorBitmap`` of the matches at efSearch 64 and at efSearch raised as
repspace raises it (``64 * n / matches``, at most 4096); recall@10 against exact
search over the matches, queries/s at 2 threads (alternating, best of 3). Goal:
repspace's recall >= 0.95 at every selectivity.

Reduction (``search_reduction.py``): ``tldrD`` against ``pcaD`` first stages at the same widths
(GloVe 100k: 8/16/32; MiniLM: 32/64/128), recall@10 of the first stage alone and with
``>rerank10``, and each map's training time; ``--parts reduction`` measures this part alone.

Compression (``search_compression.py``): on the 384-d set, ``opq32,ivf1024,pq32`` against
``ivf1024,pq32`` at the same 32 bytes per vector (goal: higher recall@10 at every nprobe, first
stage alone), and AdANNS' ``prefix64,ivf1024``/``prefix128,ivf1024`` with ``>rerank10``; recall
and memory of ``FunnelIndex`` built on the base vectors directly (no store). ``--parts
compression`` measures this part alone and replaces its rows in the stored results;
``--compression-base N`` reduces it to the first N base rows (for a loaded machine).

The parts live in ``search_*.py`` beside this file: ``search_common`` (settings, helpers),
``search_data`` (the data sets), ``search_sweep`` (builds, sweep, headline),
``search_filtered`` (the filtered part) and ``search_compression``.

Curves (recall vs queries/s per data set, filtered recall vs selectivity) are
written to ``benchmarks/results/search-*.png``. Where repspace misses, cProfile
tables are stored: on the 384-d space the slowest spec that missed and the
graph-based ones (1 thread), a per-stage timing of each funnel (first stage,
reading the shortlist, whole search), and, per data set, the filtered case where
the planner's HNSW path is slowest against FAISS at the same efSearch.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
from pathlib import Path
from typing import Any

import common as c
import numpy as np
from search_common import (
    EXTRA_LIBRARIES,
    FILTER_THREADS,
    GOAL_DATASET,
    K,
    LIBRARIES,
    TARGET,
    THREADS,
    BUCKETS,
    EF_CONSTRUCTION,
    M,
    threads,
)
from search_data import CACHE, embed_cached, glove_set, minilm_set, minilm_texts  # noqa: F401  (used by others)
import search_compression
import search_reduction
from search_filtered import filter_rows_of, filtered, plot_filtered, profile_filtered
from search_sweep import at_target, build_libraries, build_repspace, fill_store, headline, sweep

NAME = "search"
#: The parts of the benchmark: the recall/speed sweep with its filtered part, compression (OPQ, AdANNS), and
#: learned reductions (TLDR against PCA).
PARTS = ("sweep", "compression", "reduction")


def sizes(quick: bool) -> dict[str, Any]:
    if quick:
        return {"glove_base": 10_000, "queries": 200, "minilm_words": 10_000, "minilm_sentences": 500,
                "efs": [16, 64, 256], "repeats": 2, "threads": list(THREADS), "nlist": 64,
                "filter_repeats": 2, "compression_base": None, "reduction_base": 10_000, "reduction_queries": 200}
    return {"glove_base": 399_000, "queries": 1_000, "minilm_words": 100_000, "minilm_sentences": None,
            "efs": [16, 32, 64, 128, 256], "repeats": 3, "threads": list(THREADS), "nlist": 1024,
            "filter_repeats": 3, "compression_base": None, "reduction_base": 100_000, "reduction_queries": 500}


# ---------------------------------------------------------------------- specs
def specs(label: str, p: dict[str, Any], quick: bool) -> dict[str, list[str]]:
    """repspace's contenders: family (one build, one curve) -> the spec of each sweep point."""
    nlist = p["nlist"]
    efs = p["efs"]
    if quick:
        grid = [(32, 2), (64, 4), (128, 10)]
        graph_codes_grid = [(32, 2), (64, 2)]
        reduced_grid = [(32, 3), (64, 4)]
    else:
        grid = [(32, 2), (64, 4), (128, 4), (128, 10), (256, 10), (256, 20)]
        # graphs over int8 codes rank almost as the float graph: rescoring 2k fixes the order
        graph_codes_grid = [(16, 2), (24, 2), (32, 2), (48, 2), (64, 2), (128, 2)]
        # 160 PCA components of 384 keep the neighbourhoods; 3-4k candidates recover the rest
        reduced_grid = [(24, 3), (32, 3), (48, 3), (64, 3), (64, 4), (128, 4)]

    def graph_funnel(first: str) -> list[str]:
        return [f"{first},ef{ef}>rerank{f}" for ef, f in grid]

    out: dict[str, list[str]] = {"hnsw32": [f"hnsw32,ef{ef}" for ef in efs]}
    if label == "glove":  # 50-d: reduce to 32 dimensions; PQ sub-quantizers must divide 50
        out["pca32,hnsw32>rerank"] = graph_funnel("pca32,hnsw32")
        out[f"ivf{nlist},pq10>rerank"] = [f"ivf{nlist},pq10,nprobe{n}>rerank10" for n in (8, 16, 32, 64)]
    else:
        out["hnsw32,int8>rescore"] = [f"hnsw32,int8,ef{ef}>rescore{f}" for ef, f in graph_codes_grid]
        out["pca160,hnsw32,int8>rerank"] = [f"pca160,hnsw32,int8,ef{ef}>rerank{f}" for ef, f in reduced_grid]
        out["prefix64,hnsw32>rerank"] = graph_funnel("prefix64,hnsw32")
        out["int8>rescore"] = ["int8>rescore4"]
        out["binary>rescore"] = ["binary>rescore8", "binary>rescore16"]
        out["pca64>rerank"] = ["pca64>rerank10"]
        out[f"ivf{nlist},pq32>rerank"] = [f"ivf{nlist},pq32,nprobe{n}>rerank10" for n in (16, 32, 64)]
    out["exact"] = ["exact"]
    return out




# ---------------------------------------------------------------------- figures
def plot_curves(label: str, points: list[dict[str, Any]], folder: Path, title: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    thread_list = sorted({pt["threads"] for pt in points})
    fig, axes = plt.subplots(1, len(thread_list), figsize=(7 * len(thread_list), 5.5), squeeze=False)
    contenders = list(dict.fromkeys(pt["contender"] for pt in points))
    for ax, t in zip(axes[0], thread_list):
        for who in contenders:
            pts = sorted((pt for pt in points if pt["contender"] == who and pt["threads"] == t),
                         key=lambda pt: pt["recall"])
            if not pts:
                continue
            lib = who in LIBRARIES or who in EXTRA_LIBRARIES
            ax.plot([pt["recall"] for pt in pts], [pt["qps"] for pt in pts], marker="o" if lib else "s",
                    linestyle="--" if lib else "-", markersize=4, label=who if lib else f"repspace {who}")
        ax.axvline(TARGET, color="grey", linewidth=0.8, linestyle=":")
        ax.set_yscale("log")
        ax.set_xlabel("recall@10")
        ax.set_ylabel("queries/s (batch, log scale)")
        ax.set_title(f"{title}: {t} thread{'s' if t > 1 else ''}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    path = folder / f"search-{label}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.relative_to(c.REPO).as_posix()



# ---------------------------------------------------------------------- profile
def profile_misses(space: Any, q: np.ndarray, goal_rows: list[dict[str, Any]], limit: int = 4) -> dict[str, Any]:
    """cProfile of the knn calls of the repspace specs that missed the queries/s goal (slowest first)."""
    from repspace.workflows.search import knn

    missed = [r for r in goal_rows if r.get("status") == "MISS" and r.get("setting") and r.get("threads") == 1]
    missed.sort(key=lambda r: r["ratio"])
    # the slowest path, and every graph-based spec (the candidates for the goal)
    chosen = missed[:1] + [r for r in missed[1:] if "hnsw" in r["setting"]][: limit - 1]
    out: dict[str, Any] = {}
    with threads(1):
        for r in chosen:
            spec = r["setting"]
            out[f"profile {spec} (1 thread, {len(q):,} queries)"] = c.profile_top(
                lambda spec=spec: knn(space, q, K, index=spec))
    return out


def stage_breakdown(space: Any, q: np.ndarray, spec_text: str) -> dict[str, float]:
    """Seconds of a funnel's parts for one batch at 1 thread: first stage, reading the shortlist, rescoring."""
    from repspace.workflows.search import ensure_funnel, knn, parse_spec
    from repspace.engines.search.hnsw import prepare

    spec = parse_spec(spec_text)
    ix = ensure_funnel(space, spec).index.with_search_params(spec)
    kk = K * (spec.refine_factor or 1)
    with threads(1):
        prepared = prepare(np.asarray(q, np.float32), ix.metric)
        t_first, (_, rows) = c.timed(lambda: ix._first_stage(prepared, kk, None, None))
        uniq = np.unique(rows[rows >= 0])
        t_sqlite, _ = c.timed(lambda: space.read_rows(uniq))
        t_all, _ = c.timed(lambda: knn(space, q, K, index=spec))
    return {"first_stage_s": t_first, "whole_knn_s": t_all,
            "rescoring_and_overhead_s": max(0.0, t_all - t_first),
            "for_comparison_read_shortlisted_rows_from_sqlite_s": t_sqlite,
            "shortlisted_distinct_rows": float(len(uniq))}


# ------------------------------------------------------------------------ main
def one_dataset(data: dict[str, Any], p: dict[str, Any], quick: bool,
                folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from repspace.workflows.search import exact_search

    label, ids, base, q = data["label"], data["ids"], data["base"], data["q"]
    shape = f"{len(base):,} x {base.shape[1]}"
    c.log(f"search {label} {shape}: store")
    store, space, fill_s = fill_store(label, ids, base)
    base_n = c.normalized(base)
    c.log(f"search {label}: exact ground truth")
    truth = exact_search(c.normalized(q), base_n, K, "ip")[1]
    c.log(f"search {label}: library builds")
    extras = EXTRA_LIBRARIES if label == GOAL_DATASET else ()
    libs = build_libraries(base_n, extras)
    families = specs(label, p, quick)
    c.log(f"search {label}: repspace builds")
    ours = build_repspace(space, families)
    builds = {**{k: {kk: v for kk, v in d.items() if kk != "index"} for k, d in libs.items()}, **ours}
    points = sweep(label, space, libs, families, q, truth, p)
    contenders = [*LIBRARIES, *extras, *families]
    table_rows, goal_rows = headline(label, points, builds, contenders, p["threads"])
    c.log(f"search {label}: filtered")
    fpoints = filtered(label, space, libs["faiss"]["index"], base_n, q, p)
    filter_profile = profile_filtered(space, q, fpoints)
    figure = plot_curves(label, points, folder, f"{label} {shape}")
    details: dict[str, Any] = {
        "source": data["source"], "shape": [len(base), int(base.shape[1])], "store_fill_s": round(fill_s, 1),
        "builds": builds, **({"embedding": data["embedding"]} if "embedding" in data else {}), **filter_profile,
    }
    if label == GOAL_DATASET:
        details.update(profile_misses(space, q, goal_rows))
        for family, settings in families.items():
            if ">" in family and not family.startswith("int8"):  # int8's first stage is exhaustive: seconds
                pt = at_target(points, family, 1)
                spec = pt["setting"] if pt else settings[-1]
                details.setdefault("stage_seconds", {})[spec] = {
                    k: round(v, 4) for k, v in stage_breakdown(space, q, spec).items()}
    store.close()
    del libs
    gc.collect()
    return goal_rows, {"details": details, "points": points, "headline": table_rows, "filtered": fpoints,
                       "figure": figure}


def run(quick: bool = False, parts: tuple[str, ...] = PARTS, compression_base: int | None = None) -> Path:
    """Measure ``parts`` (default all) and write ``results/search.json``.

    A full-size run of some parts only replaces their rows and details in the stored file.
    ``compression_base``: the compression part on the first rows of the MiniLM base only (a
    reduced run, for a loaded machine; its rows say so).
    """
    c.begin(NAME, quick)
    p = sizes(quick)
    if compression_base is not None:
        p["compression_base"] = compression_base
    folder = c.QUICK_RESULTS if quick else c.RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    comp_rows, comp_details = [], {}
    if "compression" in parts:
        comp_rows, comp_details = search_compression.measure(minilm_set(p), p)
        for r in comp_rows:
            r["note"] += f"; load average (1 min) {os.getloadavg()[0]:.1f} at the end of the part"
    if "reduction" in parts:
        red_rows, red_details = search_reduction.measure([glove_set(p), minilm_set(p)], p)
        for r in red_rows:
            r["note"] += f"; load average (1 min) {os.getloadavg()[0]:.1f} at the end of the part"
        comp_rows, comp_details = comp_rows + red_rows, {**comp_details, "reduction": red_details}
    if "sweep" not in parts:
        stored = folder / f"{NAME}.json"
        if stored.exists():
            return _merge(stored, comp_rows, comp_details, p, parts)
        return c.write_result(NAME, p, comp_rows, details={"compression": comp_details})
    results: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    points: list[dict[str, Any]] = []
    heads: dict[str, list[dict[str, Any]]] = {}
    fpoints: list[dict[str, Any]] = []
    figures: dict[str, str] = {}
    for make in (minilm_set, glove_set):
        data = make(p)
        label = data["label"]
        rows, extra = one_dataset(data, p, quick, folder)
        results += rows
        details[label] = extra["details"]
        points += extra["points"]
        heads[label] = extra["headline"]
        fpoints += extra["filtered"]
        figures[f"{label}: recall@10 vs queries/s"] = extra["figure"]
        del data
        gc.collect()
    results += filter_rows_of(fpoints) + comp_rows
    details["compression"] = comp_details
    figures["filtered recall@10 and queries/s vs selectivity"] = plot_filtered(fpoints, folder)
    params = {**p, "k": K, "m": M, "ef_construction": EF_CONSTRUCTION, "metric": "cosine", "target_recall": TARGET,
              "build_threads": max(THREADS), "filter_threads": FILTER_THREADS, "buckets": BUCKETS,
              "libraries": list(LIBRARIES), "extra_libraries": list(EXTRA_LIBRARIES)}
    return c.write_result(NAME, params, results, details=details, headline=heads, curves=points,
                          filtered=fpoints, figures=figures)


def _merge(path: Path, rows: list[dict[str, Any]], details: dict[str, Any], p: dict[str, Any],
           parts: tuple[str, ...]) -> Path:
    """A run without the sweep: replace the measured parts' rows and details in the stored file, keep the rest.

    The reduction part's details sit under ``details["compression"]["reduction"]``.
    """
    doc = json.loads(path.read_text())
    doc["results"] = [r for r in doc["results"] if r.get("part") not in parts] + rows
    stored = doc.setdefault("details", {}).setdefault("compression", {})
    if "compression" in parts:  # its own details replaced, the reduction's kept
        stored = {k: v for k, v in details.items() if k != "reduction"} | (
            {"reduction": stored["reduction"]} if "reduction" in stored else {})
    if "reduction" in parts:
        stored["reduction"] = details["reduction"]
    doc["details"]["compression"] = stored
    for key in ("compression_base", "reduction_base", "reduction_queries"):
        doc["params"][key] = p[key]
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                    help="measure only these (the stored rows of the others are kept)")
    ap.add_argument("--compression-base", type=int, default=None,
                    help="the compression part on the first N base rows only (a reduced run)")
    args = ap.parse_args()
    print(run(args.quick, tuple(args.parts), args.compression_base))
