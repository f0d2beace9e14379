"""One query per call, filtered or not: what the CLI, an application loop and the HTTP service do.

Data sets (cosine, k = 10, an integer metadata field ``sel = i % 1000``):

* ``glove``: the real GloVe 6B 50-d vectors; the last 300 words are the queries,
  the other 399,700 are stored;
* ``minilm``: 100,000 real all-MiniLM-L6-v2 vectors (bench_search's set, cached),
  300 further vectors of the set as queries.

Filters ``sel < t`` keep 0.1%, 1%, 10%, 50% of the items, and no filter 100%.
Every contender is called once per query, returns its 10 hits with their
metadata (ids for FAISS), and is timed over the same 300 queries, the
contenders alternating in an order rotated every round, best of 3 rounds filtered and 9 unfiltered (300
queries take 50-60 ms: rounds of one contender differed by 10% on a quiet machine) (a contender that needs more
than 15 s for the 300 queries is timed once, on the queries it finished in 15 s, at least 30):

* ``repspace search``: ``space.search(q, k=10, where=...)``, the planner's choice;
* ``repspace search index=hnsw32``: the same, naming the HNSW index;
* ``repspace knn``: ``knn(space, q, 10, where=...)`` (rows, no hits);
* ``faiss``: ``IndexHNSWFlat`` (M 32, efConstruction 100, efSearch 64) over the
  normalised vectors, searched directly as a cosine user calls it (the query copied and
  ``faiss.normalize_L2``-ed in the call, as FAISS's documentation does for cosine: the
  work ``repspace`` does on its side), the filter as an ``IDSelectorBitmap`` computed
  before the timing (a cost FAISS users pay elsewhere);
* ``faiss prenormalised`` (unfiltered): the same search given queries normalised before
  the timing (reported beside, no goal: it leaves out work the cosine search needs);
* ``faiss equal recall`` (filtered settings): the same with its efSearch swept
  (``EF_SWEEP``) to the smallest that reaches ``repspace search``'s recall on these
  queries, or the one of the highest recall below it when none does (the planner
  may scan the matches exactly, at recall 1);
* ``lancedb``: a table with a scalar index on ``sel`` and an ``HnswFlat`` index
  (M 32, efConstruction 100), ``search(q).where(f, prefilter=True).limit(10)``;
* ``chroma``: a persistent collection (HNSW, cosine), ``query(..., where={"sel": {"$lt": t}})``.

Builds use every core; queries one thread for repspace and FAISS (LanceDB and
Chroma use their own thread pools, which this cannot set). Recall@10 of each
is against exact search over the filter's matches. Goals
(issue 14): ``repspace search`` >= 0.8x FAISS's one-query rate unfiltered and
``repspace knn`` >= 0.9x; filtered search >= 0.5x the unfiltered rate; faster than
LanceDB and Chroma at every selectivity (rows say the recall of both sides). Issue 33:
filtered ``repspace search`` at 10% >= 0.8x FAISS with a selector at equal recall; unfiltered
``repspace search`` >= 0.9x FAISS (issue 14 asked 0.8);
``knn`` of all the queries in one call >= 1.0x FAISS searching the same batch.

Filters over 1,000,000 items (random 4-d vectors; ``sel``, ``lang``, ``year`` metadata): a
new filter in a fresh process (nothing in memory: the columns are read from the
files beside the store; goal <= 50 ms), a new filter on fields the process has
read, and the first filter after a write (the fields read from SQL), against
the SQL compiler evaluating the same filter (the reference).

The cold path: ``repspace search stdlib-docs "parse a date"`` in a new process
on the quick demo's store, against ``python -c "import sentence_transformers"``
and ``repspace search stdlib-docs --id ...``; alternating, best of 3.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import common as c
import numpy as np

NAME = "onequery"
K = 10
SELECTIVITIES = (0.001, 0.01, 0.1, 0.5, 1.0)
#: Unfiltered ``repspace search`` against FAISS (issue 14 asked 0.8, issue 33 raised it to 0.9).
GOAL_SEARCH = (">=", 0.9)
GOAL_KNN = (">=", 0.9)
GOAL_FILTERED = (">=", 0.5)
GOAL_RIVALS = (">=", 1.0)
GOAL_COLD = ("<=", 2.0)
GOAL_FILTERED_FAISS = (">=", 0.8)
#: Batched knn (all the queries in one call) against FAISS searching the same batch (issue 33).
GOAL_BATCH = (">=", 1.0)
#: Rounds of the batch contest (alternating, best of).
BATCH_ROUNDS = 7
#: The selectivity whose filtered row against FAISS at equal recall carries GOAL_FILTERED_FAISS (issue 33).
GOAL_FILTERED_AT = 0.1
#: efSearch values FAISS with a selector is swept over to reach repspace's recall.
EF_SWEEP = (16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
#: Seconds one contender spends on one setting's queries at most (after MIN_QUERIES): the
#: slowest stores take seconds per filtered query at 400k items.
BUDGET_S = 15.0
MIN_QUERIES = 30
#: Queries each contender runs untimed right before its timed ones in every round, after waiting for the
#: process's threads to idle (``common.settle``), in an order rotated every round (``common.rotated``): the
#: contender timed first after the builds otherwise shares the cores with Chroma's and LanceDB's background
#: threads (GloVe: 0.674 for ``search`` timed first against 0.825 for the same search timed second).
WARM_QUERIES = 20


def sizes(quick: bool) -> dict[str, Any]:
    return {"glove_n": 20_000 if quick else 399_700, "minilm_n": 10_000 if quick else 100_000,
            "filter_n": 60_000 if quick else 1_000_000,
            "queries": 50 if quick else 300, "rounds": 3, "rounds_unfiltered": 3 if quick else 9,
            "cold_runs": 2 if quick else 3}


def datasets(p: dict[str, Any]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    words, vectors = c.glove()
    n, m = p["glove_n"], p["queries"]
    out = {"glove": (vectors[:n], vectors[len(vectors) - m:])}
    from bench_diagnose import minilm_vectors

    x, _ = minilm_vectors(False)
    out["minilm"] = (x[: p["minilm_n"]], x[p["minilm_n"] : p["minilm_n"] + m])
    return out


def truth(xn: np.ndarray, qn: np.ndarray, keep: np.ndarray | None) -> np.ndarray:
    """Exact top-10 row numbers of each query among the kept rows."""
    rows = np.arange(len(xn)) if keep is None else np.flatnonzero(keep)
    scores = qn @ xn[rows].T
    top = np.argsort(-scores, axis=1, kind="stable")[:, :K]
    return rows[top]


def recall(got: list[list[int]], want: np.ndarray) -> float:
    return float(np.mean([len(set(g) & set(w)) / len(w) for g, w in zip(got, want)]))


def build(name: str, x: np.ndarray) -> dict[str, Any]:
    """Each contender's store/index over the same vectors and metadata; build seconds."""
    import chromadb
    import faiss
    import lancedb
    import pyarrow as pa
    from lancedb.index import HnswFlat

    from repspace import Store

    n, d = x.shape
    sel = np.arange(n) % 1000
    ids = [f"i{i}" for i in range(n)]
    shutil.rmtree(c.work_dir(NAME, name))  # a run stopped half-way left its files
    folder = c.work_dir(NAME, name)
    built: dict[str, Any] = {"sel": sel, "seconds": {}}
    t0 = time.perf_counter()
    store = Store(folder / "repspace.db")
    space = store.create_space(name, dim=d, metric="cosine")
    for lo in range(0, n, 100_000):
        hi = min(n, lo + 100_000)
        space.add(ids[lo:hi], x[lo:hi], metadata=[{"sel": int(s)} for s in sel[lo:hi]])
    space.search(x[0], k=K, index="hnsw32")  # builds and persists the index
    built["seconds"]["repspace"] = time.perf_counter() - t0
    built["store"], built["space"] = store, space

    t0 = time.perf_counter()
    xn = c.normalized(x)
    flat = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
    flat.hnsw.efConstruction = 100
    flat.add(xn)
    built["seconds"]["faiss"] = time.perf_counter() - t0
    built["faiss"], built["xn"] = flat, xn

    t0 = time.perf_counter()
    db = lancedb.connect(str(folder / "lance"))
    table = db.create_table("t", pa.table({"id": ids, "vector": pa.FixedSizeListArray.from_arrays(
        pa.array(x.ravel()), d), "sel": sel}))
    table.create_scalar_index("sel")
    table.create_index("vector", config=HnswFlat(distance_type="cosine", m=32, ef_construction=100))
    built["seconds"]["lancedb"] = time.perf_counter() - t0
    built["lancedb"] = table

    t0 = time.perf_counter()
    client = chromadb.PersistentClient(path=str(folder / "chroma"))
    col = client.create_collection(f"{name}-bench", configuration={"hnsw": {"space": "cosine"}})
    step = client.get_max_batch_size()
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        col.add(ids=ids[lo:hi], embeddings=x[lo:hi], metadatas=[{"sel": int(s)} for s in sel[lo:hi]])
    built["seconds"]["chroma"] = time.perf_counter() - t0
    built["chroma"] = col
    return built


def equal_recall_ef(index: Any, qn: np.ndarray, want: np.ndarray, bitmap: np.ndarray, target: float
                    ) -> tuple[int, float]:
    """``(efSearch, recall)`` of FAISS with the selector over ``bitmap``: the smallest efSearch of
    :data:`EF_SWEEP` whose recall reaches ``target``, else the one of the highest recall (the nearest below).

    Searched as a batch: FAISS's graph search of a query does not depend on the batch, so the recall
    is the one-query-per-call recall.
    """
    import faiss

    best = (EF_SWEEP[0], -1.0)
    for ef in EF_SWEEP:
        params = faiss.SearchParametersHNSW()
        params.efSearch = ef
        params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
        got = [[int(r) for r in rows if r >= 0] for rows in index.search(qn, K, params=params)[1]]
        rec = recall(got, want)
        if rec >= target - 1e-9:
            return ef, rec
        if rec > best[1]:
            best = (ef, rec)
    return best


def contenders(b: dict[str, Any], q: np.ndarray, t: int | None, equal_ef: int | None = None
               ) -> tuple[dict[str, Callable[[int], list[int]]], np.ndarray | None]:
    """Each contender as ``fn(i) -> row numbers of its hits`` for query i under ``sel < t`` (None: no
    filter), and the bitmap FAISS's selectors point into (the caller keeps it alive while searching).
    ``equal_ef``: the efSearch of the ``faiss equal recall`` contender (:func:`equal_recall_ef`)."""
    import faiss

    from repspace.workflows.search import knn

    space = b["space"]
    where = None if t is None else f"sel < {t}"
    qn = c.normalized(q)
    params = faiss.SearchParametersHNSW()
    params.efSearch = 64
    bitmap = None
    if t is not None:
        bitmap = np.packbits(b["sel"] < t, bitorder="little")
        params.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
    equal = None
    if equal_ef is not None and bitmap is not None:
        equal = faiss.SearchParametersHNSW()
        equal.efSearch = equal_ef
        equal.sel = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))
    lance_where = where
    chroma_where = None if t is None else {"sel": {"$lt": t}}

    def cosine(v: np.ndarray) -> np.ndarray:
        v = v.copy()  # FAISS's normalize_L2 works in place: a cosine user normalises a copy of the query
        faiss.normalize_L2(v)
        return v

    def row(item_id: str) -> int:
        return int(item_id[1:])

    def lance(i: int) -> list[int]:
        query = b["lancedb"].search(q[i]).distance_type("cosine").limit(K)
        if lance_where is not None:
            query = query.where(lance_where, prefilter=True)
        return [row(r["id"]) for r in query.to_list()]

    def chroma(i: int) -> list[int]:
        res = b["chroma"].query(query_embeddings=[q[i]], n_results=K, where=chroma_where,
                                include=["metadatas", "distances"])
        return [row(x) for x in res["ids"][0]]

    fns: dict[str, Callable[[int], list[int]]] = {
        "repspace search": lambda i: [h.row for h in space.search(q[i], k=K, where=where)],
        "repspace search index=hnsw32": lambda i: [h.row for h in space.search(q[i], k=K, where=where,
                                                                              index="hnsw32")],
        "repspace knn": lambda i: [int(r) for r in knn(space, q[i : i + 1], K, where=where).rows[0] if r >= 0],
        "faiss": lambda i: [int(r) for r in b["faiss"].search(cosine(q[i : i + 1]), K, params=params)[1][0]
                            if r >= 0],
        "lancedb": lance,
        "chroma": chroma,
    }
    if equal is not None:
        fns["faiss equal recall"] = lambda i: [int(r) for r in b["faiss"].search(cosine(q[i : i + 1]), K,
                                                                                 params=equal)[1][0] if r >= 0]
    else:
        fns["faiss prenormalised"] = lambda i: [int(r) for r in b["faiss"].search(qn[i : i + 1], K,
                                                                                  params=params)[1][0] if r >= 0]
    return fns, bitmap


def run_dataset(name: str, x: np.ndarray, q: np.ndarray, p: dict[str, Any]) -> tuple[list[dict], dict]:
    import os

    from repspace.core.threads import set_threads

    c.log(f"onequery {name}: building repspace, FAISS, LanceDB and Chroma over {len(x):,} x {x.shape[1]}")
    set_threads(os.cpu_count() or 1)  # builds on every core, as each library does by default
    b = build(name, x)
    set_threads(1)  # one query per call, one thread: what a service worker does
    rows: list[dict[str, Any]] = []
    details: dict[str, Any] = {"build_s": b["seconds"], "qps": {}, "recall": {}}
    qn = c.normalized(q)
    unfiltered: dict[str, float] = {}
    for s in SELECTIVITIES[::-1]:  # 100% first: the filtered rows compare with it
        t = None if s == 1.0 else int(round(s * 1000))
        keep = None if t is None else b["sel"] < t
        want = truth(b["xn"], qn, keep)
        equal_ef = None
        if keep is not None:  # FAISS's efSearch for repspace search's recall (a warm-up of repspace too)
            ours = [[h.row for h in b["space"].search(qv, k=K, where=f"sel < {t}")] for qv in q]
            bitmap = np.packbits(keep, bitorder="little")
            equal_ef, _ = equal_recall_ef(b["faiss"], qn, want, bitmap, recall(ours, want))
            del bitmap
        fns, keep_alive = contenders(b, q, t, equal_ef)
        for fn in fns.values():  # warm up: indexes loaded, filters read, caches filled
            fn(0)
        qps: dict[str, float] = {}
        got: dict[str, list[list[int]]] = {}
        for r in range(p["rounds_unfiltered"] if t is None else p["rounds"]):
            for label in c.rotated(list(fns), r):
                fn = fns[label]
                if r and len(got[label]) < len(q):
                    continue  # a contender slower than the budget runs one round
                # untimed: its own caches refilled, the previous contender's threads (Chroma's, LanceDB's) settled
                c.settle()
                for i in range(min(WARM_QUERIES, len(q))):
                    fn(i)
                out: list[list[int]] = []
                t0 = time.perf_counter()
                for i in range(len(q)):
                    out.append(fn(i))
                    if time.perf_counter() - t0 > BUDGET_S and len(out) >= MIN_QUERIES:
                        break  # the rate of the queries done; recall over the same queries
                seconds = time.perf_counter() - t0
                qps[label] = max(qps.get(label, 0.0), len(out) / seconds)
                got.setdefault(label, out)
        del keep_alive
        rec = {label: recall(got[label], want[: len(got[label])]) for label in fns}
        tag = f"{name} {s:.1%} of {len(x):,}"
        details["qps"][tag], details["recall"][tag] = qps, rec
        if t is None:
            unfiltered = qps
            rows.append(c.row(f"{tag}: repspace search, one query per call, hits with metadata",
                              qps["repspace search"], "q/s", "faiss IndexHNSWFlat directly", qps["faiss"],
                              qps["repspace search"] / qps["faiss"], GOAL_SEARCH, recall=rec["repspace search"],
                              anchor_recall=rec["faiss"]))
            rows.append(c.row(f"{tag}: repspace search vs faiss given queries normalised before the timing",
                              qps["repspace search"], "q/s", "faiss IndexHNSWFlat, queries prenormalised",
                              qps["faiss prenormalised"], qps["repspace search"] / qps["faiss prenormalised"],
                              recall=rec["repspace search"], anchor_recall=rec["faiss prenormalised"]))
            rows.append(c.row(f"{tag}: repspace knn, one query per call", qps["repspace knn"], "q/s",
                              "faiss IndexHNSWFlat directly", qps["faiss"], qps["repspace knn"] / qps["faiss"],
                              GOAL_KNN, recall=rec["repspace knn"], anchor_recall=rec["faiss"]))
        else:
            rows.append(c.row(f"{tag}: repspace search, filtered, vs its unfiltered rate", qps["repspace search"],
                              "q/s", "repspace search without a filter", unfiltered["repspace search"],
                              qps["repspace search"] / unfiltered["repspace search"], GOAL_FILTERED,
                              recall=rec["repspace search"],
                              recall_index_hnsw32=rec["repspace search index=hnsw32"],
                              qps_index_hnsw32=qps["repspace search index=hnsw32"]))
            rows.append(c.row(f"{tag}: faiss with a selector bitmap (reference)", qps["faiss"], "q/s",
                              note=f"recall {rec['faiss']:.3f} at efSearch 64"))
            rows.append(c.row(f"{tag}: repspace search, filtered, vs faiss with a selector at equal recall",
                              qps["repspace search"], "q/s", f"faiss IndexHNSWFlat + IDSelectorBitmap, efSearch "
                              f"{equal_ef} (swept to repspace's recall)", qps["faiss equal recall"],
                              qps["repspace search"] / qps["faiss equal recall"],
                              GOAL_FILTERED_FAISS if s == GOAL_FILTERED_AT else None,
                              recall=rec["repspace search"], anchor_recall=rec["faiss equal recall"],
                              faiss_ef=equal_ef, plan=b["space"].search(q[0], k=K, where=f"sel < {t}").plan.method))
        if t is None:
            rows.append(batch_row(b, q, qn, want, tag))
        rival = max(("lancedb", "chroma"), key=lambda r: qps[r])
        rows.append(c.row(f"{tag}: repspace search vs the faster of LanceDB and Chroma", qps["repspace search"],
                          "q/s", rival, qps[rival], qps["repspace search"] / qps[rival], GOAL_RIVALS,
                          recall=rec["repspace search"], anchor_recall=rec[rival],
                          lancedb_qps=qps["lancedb"], lancedb_recall=rec["lancedb"],
                          chroma_qps=qps["chroma"], chroma_recall=rec["chroma"]))
        c.log(f"onequery {tag}: " + ", ".join(f"{k} {v:,.0f} q/s (recall {rec[k]:.3f})" for k, v in qps.items()))
    b["store"].close()
    shutil.rmtree(c.work_dir(NAME, name), ignore_errors=True)
    return rows, details


def batch_row(b: dict[str, Any], q: np.ndarray, qn: np.ndarray, want: np.ndarray, tag: str) -> dict[str, Any]:
    """``knn(space, Q, 10, index="hnsw32")`` with every query in one call against FAISS searching the same batch at
    the same efSearch (64), its copy normalised in the call, one thread, alternating, best of :data:`BATCH_ROUNDS`."""
    import faiss

    from repspace.workflows.search import knn

    params = faiss.SearchParametersHNSW()
    params.efSearch = 64
    space = b["space"]
    def faiss_batch() -> np.ndarray:
        v = q.copy()  # normalised in the call, as repspace does (a cosine user's FAISS code)
        faiss.normalize_L2(v)
        return b["faiss"].search(v, K, params=params)[1]

    fns = {"repspace": lambda: knn(space, q, K, index="hnsw32").rows, "faiss": faiss_batch}
    times, values = c.alternate_values(fns, BATCH_ROUNDS)
    qps = {label: len(q) / min(ts) for label, ts in times.items()}
    rec = {label: recall([[int(r) for r in row if r >= 0] for row in values[label]], want) for label in fns}
    return c.row(f"{tag}: repspace knn index=hnsw32, all {len(q)} queries in one call", qps["repspace"], "q/s",
                 "faiss IndexHNSWFlat, the same batch", qps["faiss"], qps["repspace"] / qps["faiss"], GOAL_BATCH,
                 recall=rec["repspace"], anchor_recall=rec["faiss"])


def cold_rows(p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A cold CLI text query against importing sentence-transformers and a search by id."""
    folder = c.work_dir(NAME, "cold")
    db = folder / "demo.db"
    exe = Path(sys.executable).with_name("repspace")
    c.log("onequery cold: the quick demo's store")
    subprocess.run([str(exe), "--store", str(db), "demo", "--quick", "--json"], check=True, capture_output=True)
    runs = {
        "text": [str(exe), "--store", str(db), "search", "stdlib-docs", "parse a date", "-k", "10", "--json"],
        "id": [str(exe), "--store", str(db), "search", "stdlib-docs", "--id", "datetime.date.fromisoformat",
               "-k", "10", "--json"],
        "import": [sys.executable, "-c", "import sentence_transformers"],
    }
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(p["cold_runs"]):
        for key, cmd in runs.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times[key].append(time.perf_counter() - t0)
    text, by_id, imp = (min(times[k]) for k in ("text", "id", "import"))
    rows = [
        c.row("cold `repspace search stdlib-docs \"parse a date\"`: wall time", text, "s", "the issue's budget", 2.0,
              text / 2.0, GOAL_COLD, note="ratio = time / 2 s (lower is better)"),
        c.row("cold text search vs `python -c \"import sentence_transformers\"`", text, "s",
              "import sentence_transformers", imp, imp / text),
        c.row("cold text search vs `repspace search --id` (no encoder)", text, "s", "repspace search --id", by_id,
              by_id / text),
    ]
    shutil.rmtree(folder, ignore_errors=True)
    return rows, {"cold_s": times}


def filter_rows(p: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A new filter over a million items: in this process, in a fresh one (columns beside the store), after a write."""
    from repspace import Store
    from repspace.core.store import _selections

    n = p["filter_n"]
    folder = c.work_dir(NAME, "filters")
    shutil.rmtree(folder)
    folder = c.work_dir(NAME, "filters")
    c.log(f"onequery filters: {n:,} items with metadata sel, lang, year")
    store = Store(folder / "f.db")
    space = store.create_space("f", dim=4, metric="l2")
    x = np.random.default_rng(0).standard_normal((n, 4)).astype(np.float32)
    for lo in range(0, n, 200_000):
        ids = range(lo, min(n, lo + 200_000))
        space.add([f"i{i}" for i in ids], x[lo : lo + len(ids)],
                  metadata=[{"sel": i % 1000, "lang": ("en", "de", "fr")[i % 3], "year": 2000 + i % 25} for i in ids])
    filters = [f"sel < {t} and lang = 'de'" for t in (1, 10, 100, 500)] + ["year >= 2020 or sel = 7"]

    def timed(fn: Callable[[], Any]) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    times: dict[str, list[float]] = {"sql": [], "first read": [], "fresh process": [], "known fields": []}
    for r in range(3):  # a write (a new vector and metadata, so not skipped as unchanged): the files are stale
        space.add(["w"], np.full((1, 4), r + 1, np.float32), metadata=[{"sel": r}])
        _selections.clear()
        times["first read"].append(timed(lambda: space.filter_rows(filters[0])))  # SQL scan, files written
        _selections.clear()  # what a fresh process holds: nothing but the files
        times["fresh process"].append(timed(lambda: space.filter_rows(filters[1])))
        times["known fields"].append(float(np.median([timed(lambda f=f: space.filter_rows(f)) for f in filters[2:]])))
        times["sql"].append(timed(lambda: space.filter_rows_sql(filters[1])))
    best = {k: min(v) for k, v in times.items()}
    tag = f"a new filter over {n:,} items"
    rows = [
        c.row(f"{tag}, first filter of a fresh process (columns read from the files beside the store)",
              best["fresh process"] * 1e3, "ms", "the issue's budget", 50.0, best["fresh process"] * 1e3 / 50.0,
              ("<=", 1.0), note="ratio = time / 50 ms (lower is better)"),
        c.row(f"{tag} on fields this process has read", best["known fields"] * 1e3, "ms",
              "the SQL compiler, per call", best["sql"] * 1e3, best["sql"] / best["known fields"]),
        c.row(f"{tag}, first filter after a write (the fields read from SQL, files rewritten)",
              best["first read"] * 1e3, "ms", "the SQL compiler, per call", best["sql"] * 1e3,
              best["sql"] / best["first read"]),
    ]
    store.close()
    shutil.rmtree(folder, ignore_errors=True)
    return rows, {"filter_s": times}


def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    p = sizes(quick)
    results: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    for name, (x, q) in datasets(p).items():
        rows, det = run_dataset(name, x, q, p)
        results += rows
        details[name] = det
    for part in (filter_rows, cold_rows):
        rows, det = part(p)
        results += rows
        details.update(det)
    return c.write_result(NAME, {**p, "k": K, "selectivities": list(SELECTIVITIES), "threads": 1,
                                 "metric": "cosine", "filter": "sel < t, sel = i % 1000"}, results,
                          details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
