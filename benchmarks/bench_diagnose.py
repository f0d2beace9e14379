"""Geometry (``repspace.engines.geometry``): the kNN graph against sgemm, ``diagnose`` on 100,000 real vectors,
intrinsic dimension against scikit-dimension, hubness against scikit-hubness's formulas.

Data: real 384-d vectors, the all-MiniLM-L6-v2 embeddings of the search
benchmark's ``minilm`` set (the 100,000 most frequent GloVe words and every
distinct STS-B sentence, 115,457 texts), loaded and, on a fresh machine,
embedded and cached exactly as ``bench_search`` does it (its ``minilm_texts``
and ``embed_cached``: ``benchmarks/.cache/minilm-115457-<hash>.npy``, about 4
minutes of encoding the first time). 462 of those vectors repeat an earlier one
exactly (texts that embed identically); they are dropped once, keeping first
occurrences, so that every contender gets the same distinct points
(scikit-dimension does not handle duplicates: its MLE returns 0 and its TwoNN
drops them). The distinct rows are put in a random order (seed 0) and each
size takes the first ``n``, so the 20,000 points are among the 50,000 and
those among the 100,000. Quick: the search benchmark's quick set (10,500
texts), sizes 2,000 and 5,000, ``diagnose`` on 10,000.

1. **kNN graph vs the sgemm floor.** ``knn_graph(X, 10, metric="cosine",
   exact=True)`` (the graph behind ``hubness``) at n = 20,000 and 50,000. The
   floor is the time of its 2·n²·d flops at the machine's sgemm rate, measured
   in the same run and alternating with it: a numpy float32 matmul in the
   shapes of the exact path's blocks (``QUERY_BLOCK`` = 8,192 query rows
   against base blocks of ``BLOCK_ENTRIES`` / 8,192 = 8,192 rows, two block
   pairs, into a preallocated output), best of the probes taken around each
   kNN run. Ratio = floor time / kNN time; goal >= 0.5.
2. **The whole report.** ``diagnose(X, k=10)`` on 100,000 x 384: one run
   (several minutes on a loaded 2-core machine), under cProfile (about 10,000
   Python calls, so the profiler's cost is nothing next to the run; the profile
   is stored when the run misses, and a breakdown by metric always). Goal: at
   most 60 s (the issue's budget on this 2-core machine), reported as
   60 s / time >= 1. Beside it the recall@k of its two HNSW graphs (hubness:
   cosine, k = 10; intrinsic dimension: Euclidean, k = 20) as ``diagnose``
   measures and reports it (against exact search on 1,000 sampled items);
   goal >= 0.95. Quick: 10,000 points with ``exact=False``, so that the same
   HNSW path runs.
3. **Intrinsic dimension vs scikit-dimension** on the same 20,000 and 50,000
   points: ``twonn(X)`` against ``skdim.id.TwoNN(discard_fraction=0.1,
   method="linear").fit(X).dimension_`` and ``mle(X)`` (k = 20) against
   ``skdim.id.MLE().fit(X, n_neighbors=20, comb="mle").dimension_`` (the
   mapping of ``tests/geometry/test_intrinsic.py``: scikit-dimension's
   defaults), same float32 array. Goals: equal within 1% (relative
   difference <= 0.01) and repspace >= 10x faster at 50,000 (reported, without
   a goal, at 20,000). scikit-dimension's TwoNN sorts every row of the full
   distance matrix above 25 dimensions (O(n² log n)); its MLE runs
   scikit-learn's kNN then a Python loop over points.
4. **Hubness vs scikit-hubness's formulas** on the same points, k = 10.
   scikit-hubness does not install on Python 3.11, so its ``Hubness(k=10,
   metric="cosine", algorithm="brute").fit(X).score()`` is written out here
   from ``skhubness/analysis/estimation.py`` (VarIr/scikit-hubness, the
   0.21-0.30 code): kNN by ``sklearn.neighbors.NearestNeighbors(n_neighbors=10,
   algorithm="brute", metric="cosine")`` ``.kneighbors()`` (the item itself
   excluded), k-occurrence by ``np.bincount``, ``scipy.stats.skew``, Robin Hood
   ``0.5 · Σ|N_k − mean N_k| / Σ N_k`` (``_calc_robinhood_index``), antihub
   rate ``#{N_k = 0} / n`` (``_calc_antihub_occurrence``), hub occurrence
   ``Σ_{N_k ≥ 2k} N_k / k / n`` (``_calc_hub_occurrence``, ``hub_size=2``) and
   Gini ``Σ_i Σ_j |N_i − N_j| / (2 n Σ N)`` with scikit-hubness's own
   algorithm (``_calc_gini_index``: ``limiting="space"``, a Python loop over
   items, above 10,000 items; the n × n broadcast below). Only the five
   figures repspace reports are computed (not its truncated-normal skewness,
   Atkinson index or groupie ratio). repspace's side is
   ``knn_graph(X, 10, metric="cosine", exact=True)`` (the very runs timed in
   1) plus ``hubness(graph)`` timed apart: exactly the two steps that
   ``hubness(X, k=10)`` takes at these sizes. Goals: each figure equal within
   1%, and repspace >= 10x faster at 50,000. A row without a goal compares
   with the anchor's kNN step alone, which shows how much of the ratio is the
   kNN (both sides are BLAS-bound there) and how much the formulas.

Method: contenders alternate in one process (repspace, anchor, repspace ...);
every contender runs equally often, twice at the smaller size and once at the
larger (scikit-dimension at 50,000 takes minutes), and the best time of each is
kept. Threads are the machine's defaults for everyone (BLAS, OpenMP). When a
speed figure misses, a cProfile of one repspace run at the smaller size is
stored (``knn_graph`` for 1 and 4, ``twonn`` / ``mle`` for 3).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "diagnose"
K = 10
#: Neighbours of the MLE (repspace's and scikit-dimension's default).
MLE_K = 20
#: TwoNN's discarded fraction of the largest ratios (repspace's and scikit-dimension's default).
DISCARD = 0.1
#: scikit-hubness: a hub occurs at least ``HUB_SIZE * k`` times.
HUB_SIZE = 2.0
#: scikit-hubness computes Gini with a Python loop (``limiting="space"``) above this many items.
SKHUBNESS_GINI_LOOP_ABOVE = 10_000
GOAL_FLOOR = (">=", 0.5)
GOAL_SPEEDUP = (">=", 10.0)
GOAL_AGREE = ("<=", 0.01)
GOAL_RECALL = (">=", 0.95)
#: The issue's budget for ``diagnose`` on 100,000 x 384 on this 2-core machine, seconds.
BUDGET_S = 60.0
GOAL_BUDGET = (">=", 1.0)
#: Block pairs in one sgemm probe.
PROBE_BLOCKS = 2
HUBNESS_FIGURES = ("k_skewness", "robin_hood", "antihub_rate", "hub_occurrence", "gini")


def sizes(quick: bool) -> dict[str, Any]:
    if quick:
        return {"ns": [2_000, 5_000], "dim": 384, "k": K, "diagnose_n": 10_000, "diagnose_exact": False,
                "repeats": [2, 1]}
    return {"ns": [20_000, 50_000], "dim": 384, "k": K, "diagnose_n": 100_000, "diagnose_exact": None,
            "repeats": [2, 1]}


# ------------------------------------------------------------------------ data
def distinct_first(x: np.ndarray) -> np.ndarray:
    """The rows of ``x`` without exact repeats (first occurrences, in order)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    rows = x.view(np.dtype((np.void, x.dtype.itemsize * x.shape[1]))).ravel()
    _, first = np.unique(rows, return_index=True)
    return x[np.sort(first)]


def minilm_vectors(quick: bool) -> tuple[np.ndarray, dict[str, Any]]:
    """bench_search's MiniLM set (its own loader and cache), distinct rows in a random order (seed 0)."""
    import bench_search

    texts, n_words, n_sent = bench_search.minilm_texts(bench_search.sizes(quick))
    x, info = bench_search.embed_cached(texts)
    distinct = distinct_first(x)
    order = np.random.default_rng(0).permutation(len(distinct))
    info = {**info, "texts": len(texts), "words": n_words, "sentences": n_sent,
            "duplicates_dropped": len(x) - len(distinct), "distinct": len(distinct)}
    return np.ascontiguousarray(distinct[order]), info


# ---------------------------------------------------------------------- timing
def contest(ours: Callable[[], Any], anchor: Callable[[], Any], repeats: int
            ) -> tuple[list[float], list[float], Any, Any]:
    """repspace and the anchor alternately, ``repeats`` runs each: (our times, anchor times, values)."""
    times, values = c.alternate_values({"ours": ours, "anchor": anchor}, repeats)
    return times["ours"], times["anchor"], values["ours"], values["anchor"]


def rel_diff(ours: float, theirs: float) -> float:
    """``|ours − theirs| / |theirs|`` (the absolute difference when the anchor's figure is 0)."""
    ours, theirs = float(ours), float(theirs)
    return abs(ours - theirs) / abs(theirs) if theirs != 0 else abs(ours - theirs)


def sgemm_probe(xn: np.ndarray) -> tuple[Callable[[], None], float, list[int]]:
    """A float32 matmul in the exact kNN path's block shapes; the function, its flops and shape."""
    from repspace.core.knn import QUERY_BLOCK
    from repspace.core.exact import BLOCK_ENTRIES

    n, d = xn.shape
    m = min(QUERY_BLOCK, n)
    b = max(1, min(n, BLOCK_ENTRIES // m))
    blocks = max(1, min(PROBE_BLOCKS, n // b))
    q = np.ascontiguousarray(xn[:m])
    bases = [np.ascontiguousarray(xn[j * b:(j + 1) * b]) for j in range(blocks)]
    out = np.empty((m, b), np.float32)

    def go() -> None:
        for base in bases:
            np.matmul(q, base.T, out=out)

    return go, 2.0 * m * b * d * blocks, [m, b, d, blocks]


# --------------------------------------------------------------- the anchors
def gini_skhubness(nk: np.ndarray) -> float:
    """scikit-hubness's ``_calc_gini_index`` as ``score()`` calls it (the loop above 10,000 items)."""
    n = nk.size
    if n > SKHUBNESS_GINI_LOOP_ABOVE:  # limiting="space"
        numerator = 0
        for i in range(n):
            numerator += np.sum(np.abs(nk[:] - nk[i]))
    else:  # limiting="time"
        numerator = np.sum(np.abs(nk.reshape(1, -1) - nk.reshape(-1, 1)))
    return float(numerator / (2 * n * np.sum(nk)))


def skhubness_score(X: np.ndarray, k: int) -> tuple[dict[str, Any], dict[str, float]]:
    """scikit-hubness's ``Hubness(k, metric="cosine", algorithm="brute").fit(X).score()``, its five
    figures as repspace names them, and the seconds of its kNN step and of its formulas."""
    from scipy import stats
    from sklearn.neighbors import NearestNeighbors

    t0 = time.perf_counter()
    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric="cosine").fit(X)
    indices = nn.kneighbors(return_distance=False)  # without X: the item itself is excluded
    t1 = time.perf_counter()
    n = X.shape[0]
    nk = np.bincount(indices.astype(int).ravel(), minlength=n)
    k_skewness = stats.skew(nk)
    gini = gini_skhubness(nk)
    robin_hood = 0.5 * float(np.sum(np.abs(nk - nk.mean()))) / float(np.sum(nk))
    antihub_rate = np.argwhere(nk == 0).ravel().size / nk.size
    hubs = np.argwhere(nk >= HUB_SIZE * k).ravel()
    hub_occurrence = nk[hubs].sum() / k / n
    t2 = time.perf_counter()
    figures = {"k_skewness": float(k_skewness), "robin_hood": float(robin_hood),
               "antihub_rate": float(antihub_rate), "hub_occurrence": float(hub_occurrence), "gini": gini}
    return {"figures": figures, "indices": indices}, {"knn_s": t1 - t0, "formulas_s": t2 - t1}


def slot_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Share of neighbour slots (row, neighbour) that two k-NN graphs have in common."""
    a, b = np.sort(a, axis=1), np.sort(b, axis=1)
    return float((a[:, :, None] == b[:, None, :]).any(axis=2).mean())


# ------------------------------------------------------------ 1 and 4: kNN, hubness
def knn_and_hubness(X: np.ndarray, repeats: int, goal: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from repspace.engines.geometry import hubness, knn_graph

    n, d = X.shape
    probe, probe_flops, shape = sgemm_probe(c.normalized(X))
    probe_s: list[float] = []
    knn_s: list[float] = []
    graph = None
    anchor: dict[str, Any] = {}
    anchor_parts: dict[str, float] = {}
    anchor_times: list[float] = []
    for _ in range(repeats):
        probe_s.append(c.timed(probe)[0])
        t, graph = c.timed(lambda: knn_graph(X, K, metric="cosine", exact=True))
        knn_s.append(t)
        probe_s.append(c.timed(probe)[0])
        t, (anchor, anchor_parts) = c.timed(lambda: skhubness_score(X, K))
        anchor_times.append(t)
    anchor_s = c.best(anchor_times)
    probe_s.append(c.timed(probe)[0])
    assert graph is not None
    hub_s = []
    for _ in range(3):
        t, hub = c.timed(lambda: hubness(graph, k=K))
        hub_s.append(t)
    knn_best = c.best(knn_s)
    rate = probe_flops / c.best(probe_s)
    flops = 2.0 * n * n * d
    floor_s = flops / rate
    ours_s = knn_best + c.best(hub_s)
    ours = {f: float(getattr(hub, f)) for f in HUBNESS_FIGURES}
    theirs = anchor["figures"]
    diffs = {f: rel_diff(ours[f], theirs[f]) for f in HUBNESS_FIGURES}
    worst = max(diffs, key=lambda f: diffs[f])
    slots = slot_agreement(graph.indices, anchor["indices"])
    label = f"{n:,} x {d}"
    rows = [
        c.row(f"kNN graph {label} (cosine, k={K}, exact): share of the sgemm floor", knn_best, "s",
              "sgemm floor: 2·n²·d flops at the measured rate", floor_s, floor_s / knn_best, GOAL_FLOOR,
              sgemm_gflops=rate / 1e9, knn_gflops=flops / knn_best / 1e9, probe_shape=shape),
        c.row(f"hubness {label} (k={K}, cosine): time vs scikit-hubness formulas", ours_s, "s",
              "sklearn brute cosine kNN + scikit-hubness formulas", anchor_s, anchor_s / ours_s,
              GOAL_SPEEDUP if goal else None, knn_graph_s=knn_best, hubness_from_graph_s=c.best(hub_s),
              anchor_knn_s=anchor_parts["knn_s"], anchor_formulas_s=anchor_parts["formulas_s"],
              note=None if goal else "no goal at this size (the goal is at the larger one)"),
        c.row(f"hubness {label}: time vs sklearn brute cosine kNN alone", ours_s, "s",
              "sklearn NearestNeighbors(brute, cosine).kneighbors()", anchor_parts["knn_s"],
              anchor_parts["knn_s"] / ours_s,
              note="reference, no goal: the anchor without its formulas (its Gini is an O(n²) loop above "
                   "10,000 items)"),
        c.row(f"hubness {label}: largest relative difference of the 5 figures", diffs[worst], "relative",
              "scikit-hubness formulas", None, diffs[worst], GOAL_AGREE, figures_repspace=ours,
              figures_anchor=theirs, relative_differences=diffs, neighbour_slots_shared=slots,
              note=(f"worst: {worst} {ours[worst]:.6g} vs {theirs[worst]:.6g}; the two graphs share "
                    f"{100 * slots:.3f}% of neighbour slots")),
    ]
    details = {"sgemm_probe_s": probe_s, "sgemm_probe_flops": probe_flops, "knn_graph_s": knn_s,
               "hubness_from_graph_s": hub_s, "anchor_s": anchor_s, "anchor_parts_s": anchor_parts}
    return rows, details


# ------------------------------------------------------------ 3: intrinsic dimension
def skdim_twonn(X: np.ndarray) -> float:
    import skdim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(skdim.id.TwoNN(discard_fraction=DISCARD, method="linear").fit(X).dimension_)


def skdim_mle(X: np.ndarray) -> float:
    import skdim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(skdim.id.MLE().fit(X, n_neighbors=MLE_K, comb="mle").dimension_)


def intrinsic_rows(X: np.ndarray, repeats: int, goal: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from repspace.engines.geometry import mle, twonn

    n, d = X.shape
    label = f"{n:,} x {d}"
    rows: list[dict[str, Any]] = []
    details: dict[str, Any] = {}
    contests = (
        ("twonn", f"twonn(X) {label} (discard {DISCARD:g})", lambda: twonn(X, DISCARD),
         f"skdim TwoNN(discard_fraction={DISCARD:g}, method='linear')", lambda: skdim_twonn(X)),
        ("mle", f"mle(X, k={MLE_K}) {label}", lambda: mle(X, MLE_K),
         f"skdim MLE().fit(n_neighbors={MLE_K}, comb='mle')", lambda: skdim_mle(X)),
    )
    for key, ours_name, ours_fn, anchor_name, anchor_fn in contests:
        c.log(f"diagnose: {key} at {n:,} (alternating with scikit-dimension, {repeats} runs each)")
        times, anchor_times, ours, theirs = contest(ours_fn, anchor_fn, repeats)
        ours_s, anchor_s = c.best(times), c.best(anchor_times)
        diff = rel_diff(ours, theirs)
        rows += [
            c.row(f"{ours_name}: time vs scikit-dimension", ours_s, "s", anchor_name, anchor_s,
                  anchor_s / ours_s, GOAL_SPEEDUP if goal else None,
                  note=None if goal else "no goal at this size (the goal is at the larger one)"),
            c.row(f"{key} {label}: relative difference vs scikit-dimension", diff, "relative", anchor_name, None,
                  diff, GOAL_AGREE, repspace_value=float(ours), anchor_dimension=float(theirs),
                  note=f"{float(ours):.6g} vs {float(theirs):.6g}"),
        ]
        details[key] = {"repspace_s": times, "anchor_s": anchor_times, "repspace": float(ours),
                        "anchor": float(theirs)}
    return rows, details


# ------------------------------------------------------------ 2: the whole report
def breakdown(prof: list[dict[str, Any]], total: float) -> dict[str, float]:
    """Cumulative seconds of diagnose's parts, read from a full cProfile table."""

    def cum(func: str, where: str) -> float:
        return sum(r["cum_s"] for r in prof if r["function"] == func and where in r["where"])

    def own(name: str) -> float:
        return sum(r["own_s"] for r in prof if name in r["function"])

    return {
        "total_s": round(total, 2),
        "hubness_s": cum("hubness", "geometry/hubness.py"),
        "intrinsic_dimension_s": cum("intrinsic_dimension", "geometry/intrinsic.py"),
        "isotropy_s": cum("isotropy", "geometry/isotropy.py"),
        "spectrum_s": cum("spectrum", "geometry/spectrum.py"),
        "uniformity_s": cum("uniformity", "geometry/uniformity.py"),
        "norms_s": cum("norms", "geometry/norms.py"),
        "of_which_hnsw_build_s": own("IndexHNSW_add"),
        "of_which_hnsw_search_s": own("IndexHNSW_search"),
        "of_which_rescore_s": cum("_rescore", "geometry/_knn.py"),
        "of_which_recall_check_s": cum("_measure_recall", "geometry/_knn.py"),
    }


def diagnose_rows(X: np.ndarray, exact: bool | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from repspace.engines.geometry import diagnose

    n, d = X.shape
    box: dict[str, Any] = {}

    def go() -> None:
        box["s"], box["report"] = c.timed(lambda: diagnose(X, k=K, exact=exact))

    prof = c.profile_top(go, limit=100_000)
    seconds, report = box["s"], box["report"]
    label = f"{n:,} x {d}"
    call = f"diagnose(X, k={K}{'' if exact is None else f', exact={exact}'})"
    rows = [c.row(f"{call} on {label} (MiniLM): wall time", seconds, "s", "the issue's budget", BUDGET_S,
                  BUDGET_S / seconds, GOAL_BUDGET, note="ratio = 60 s / time; one run, under cProfile")]
    for what, result, k in (("hubness graph, cosine", report.hubness, K),
                            ("intrinsic-dimension graph, l2", report.intrinsic_dimension, MLE_K)):
        recall = result.knn_recall
        rows.append(c.row(f"{call} on {label}: kNN recall@{k} ({what})",
                          1.0 if recall is None else recall, "recall",
                          "exact search on 1,000 sampled items", 1.0, 1.0 if recall is None else recall,
                          GOAL_RECALL, knn_method=result.knn_method,
                          note=("the graph is exact" if recall is None else
                                "ratio = the recall diagnose measured and reported")))
    out = report.to_dict()
    summary = {key: out[key] for key in ("hubness.k_skewness", "intrinsic_dimension.twonn",
                                          "intrinsic_dimension.mle", "intrinsic_dimension.duplicates_removed",
                                          "isotropy.mean_cosine", "rank.effective_rank") if key in out}
    details: dict[str, Any] = {"seconds": seconds, "breakdown (cumulative s)": breakdown(prof, seconds),
                               "figures": summary, "readings": list(report.readings)}
    if rows[0]["status"] == "MISS":
        details["profile (the timed run)"] = prof[:12]
    return rows, details


# ------------------------------------------------------------------------- run
def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    from repspace.engines.geometry import knn_graph, mle, twonn

    p = sizes(quick)
    X, data = minilm_vectors(quick)
    c.log(f"diagnose: {len(X):,} distinct MiniLM vectors ({data['duplicates_dropped']} repeats dropped)")
    results: list[dict[str, Any]] = []
    details: dict[str, Any] = {"data": data}
    ns = [min(n, len(X)) for n in p["ns"]]
    for i, (n, repeats) in enumerate(zip(ns, p["repeats"])):
        goal = i == len(ns) - 1
        Xn = X[:n]
        c.log(f"diagnose: kNN graph and hubness at {n:,}")
        rows, det = knn_and_hubness(Xn, repeats, goal)
        results += rows
        details[f"knn_hubness_{n}"] = det
        rows, det = intrinsic_rows(Xn, repeats, goal)
        results += rows
        details[f"intrinsic_{n}"] = det
    dn = min(p["diagnose_n"], len(X))
    c.log(f"diagnose: diagnose() on {dn:,} x {X.shape[1]}")
    rows, det = diagnose_rows(X[:dn], p["diagnose_exact"])
    results += rows
    details[f"diagnose {dn:,} x {X.shape[1]}"] = det
    # Profiles of the slow paths that missed, at the smaller size (one run each).
    missed = {r["case"] for r in results if r["status"] == "MISS" and r["unit"] == "s"}
    small = X[:ns[0]]
    at = f"{ns[0]:,} x {X.shape[1]}, one run"
    if any("kNN graph" in m or m.startswith("hubness") for m in missed):
        details[f"profile knn_graph(X, {K}, metric='cosine', exact=True) on {at}"] = c.profile_top(
            lambda: knn_graph(small, K, metric="cosine", exact=True))
    if any(m.startswith("twonn") for m in missed):
        details[f"profile twonn(X) on {at}"] = c.profile_top(lambda: twonn(small, DISCARD))
    if any(m.startswith("mle") for m in missed):
        details[f"profile mle(X, k={MLE_K}) on {at}"] = c.profile_top(lambda: mle(small, MLE_K))
    params = {**p, "ns": ns, "diagnose_n": dn, "mle_k": MLE_K, "twonn_discard": DISCARD, "hub_size": HUB_SIZE,
              "data": (f"all-MiniLM-L6-v2 (384-d) of {data['texts']:,} real texts (bench_search's minilm set: "
                       f"{data['words']:,} GloVe words + {data['sentences']:,} STS-B sentences), "
                       f"{data['distinct']:,} distinct, random order (seed 0), first n rows"),
              "repeats_note": "every contender best of `repeats` per size, alternating"}
    return c.write_result(NAME, params, results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
