"""Exact sparse search, one query per call: ``SparseIndex.search`` against scipy.sparse ``X @ q`` + top-k.

Data (synthetic, said so in every row): n = 1,000,000 rows (100,000 with ``--quick``) over a
vocabulary of 30,000 features. Each row draws its features from a Zipf law (exponent 1, feature
ids shuffled so that frequency does not follow the id) until it holds about 100 distinct ones;
a weight is the feature's inverse document frequency ``log(1 + n / df)`` times a uniform factor in
[0.5, 1.5], the shape of BM25 and learned impact weights (a frequent feature weighs little). Three
kinds of query, each ``QUERIES`` of them:

* ``short``: 20 distinct features drawn from the same Zipf law, weighted the same way (the length
  of a learned-sparse query such as SPLADE's);
* ``keyword``: 8 such features (a keyword query, a BM25 or inference-free sparse query);
* ``row``: a stored row (about 100 features), what ``repspace search SPACE --id X`` does.

A ``filtered`` case runs the row queries with a filter of ``FILTER_SHARE`` of the rows (drawn at
random; the inverted index with the other rows masked out) against ``X @ q`` with the rows
outside the filter set to -inf before the top-k.

Ours is :class:`repspace.engines.search.sparse.SparseIndex` (what a sparse space's search runs,
built once per generation; the build is timed apart). The anchor is what a user with scipy
writes: ``X @ q`` on the float32 CSR matrix and ``argpartition`` + sort for the top 10. The two
alternate query by query (each run under the same noise) and the figure is the median latency;
every query's ids are checked equal between the two (ties by row on both sides). The goal is a
ratio (anchor latency / ours) of at least 10 for every kind of query.

Approximate rows (short queries): ours is :class:`repspace.engines.search.seismic.SeismicIndex`
(``sparse,seismic``), the anchor Seismic's own Rust implementation, the ``pyseismic-lsr`` package,
built with the same lambda, centroid fraction and summary energy. Each side sweeps its query
parameters (query cut, heap factor) from the cheapest up and is reported at the first point whose
recall@10 against the exact top 10 reaches RECALL (issue 33: recall >= 0.95 at >= 1x pyseismic's
query rate); the ratio is pyseismic's median latency over ours.
"""

from __future__ import annotations

import argparse
import gc
import statistics
from pathlib import Path
from typing import Any

import common as c
import numpy as np

NAME = "sparse"
K = 10
#: Anchor latency over ours, every kind of query (issue 33: at least 10x X @ q with a top-k on one query).
GOAL = (">=", 10.0)
QUERIES = 30
#: Share of the rows a filtered query may return.
FILTER_SHARE = 0.1
#: Recall@10 both approximate searches must reach before their latencies are compared.
RECALL = 0.95
#: Build parameters of both Seismic indexes (ours and pyseismic's): postings kept, centroid fraction, energy.
SEISMIC_BUILD = {"lambda": 1000, "beta": 0.1, "alpha": 0.8}
#: Query parameters swept, cheapest first: (query cut, heap factor).
SEISMIC_SWEEP = [(10, 0.9), (20, 0.9), (20, 1.0), (40, 1.0)]


def sizes(quick: bool) -> dict[str, Any]:
    return {"n": 100_000 if quick else 1_000_000, "n_features": 30_000, "nnz_per_row": 100, "query_nnz": 20,
            "keyword_nnz": 8, "zipf_exponent": 1.0, "queries": QUERIES, "k": K, "filter_share": FILTER_SHARE}


def zipf_rows(n: int, n_features: int, per_row: int, seed: int = 0, chunk: int = 50_000) -> Any:
    """``n`` CSR rows of about ``per_row`` distinct Zipf-drawn features, idf-like weights (float32)."""
    import scipy.sparse as sps

    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / np.arange(1, n_features + 1))
    cdf /= cdf[-1]
    perm = rng.permutation(n_features).astype(np.int32)
    draws = int(per_row * 1.28)  # repeats of frequent features are dropped: ~per_row distinct remain
    parts, counts = [], []
    for lo in range(0, n, chunk):
        m = min(chunk, n - lo)
        d = np.sort(np.searchsorted(cdf, rng.random((m, draws))).astype(np.int32), axis=1)
        keep = np.ones(d.shape, bool)
        keep[:, 1:] = d[:, 1:] != d[:, :-1]
        counts.append(keep.sum(axis=1))
        parts.append(perm[d[keep]])
    indices = np.concatenate(parts)
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.concatenate(counts), out=indptr[1:])
    X = sps.csr_array((np.ones(len(indices), np.float32), indices, indptr), shape=(n, n_features))
    X.sort_indices()
    df = np.bincount(X.indices, minlength=n_features)
    idf = np.log1p(n / np.maximum(df, 1)).astype(np.float32)
    X.data = idf[X.indices] * rng.uniform(0.5, 1.5, X.nnz).astype(np.float32)
    return X, idf, cdf, perm


def short_queries(count: int, nnz: int, idf: np.ndarray, cdf: np.ndarray, perm: np.ndarray,
                  seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        feats: set[int] = set()
        while len(feats) < nnz:
            feats.update(perm[np.searchsorted(cdf, rng.random(nnz))].tolist())
        idx = np.array(sorted(feats)[:nnz])
        out.append((idx, (idf[idx] * rng.uniform(0.5, 1.5, nnz)).astype(np.float32)))
    return out


def anchor_search(X: Any, n_features: int, outside: np.ndarray | None = None) -> Any:
    """``X @ q`` and the top K by score then row; rows where ``outside`` is True set to -inf first."""
    def go(idx: np.ndarray, val: np.ndarray) -> np.ndarray:
        q = np.zeros(n_features, np.float32)
        q[idx] = val
        s = X @ q
        if outside is not None:
            s[outside] = -np.inf
        top = np.argpartition(-s, K - 1)[:K]
        return top[np.lexsort((top, -s[top]))]

    return go


def measure(index: Any, anchor: Any, queries: list[tuple[np.ndarray, np.ndarray]],
            allowed: np.ndarray | None = None) -> dict[str, Any]:
    ms: dict[str, list[float]] = {"repspace": [], "scipy": []}
    agree = 0
    gc.collect()
    with c.no_gc():
        for idx, val in queries:
            t_ours, (_, ours) = c.timed(lambda: index.search(idx, val.astype(np.float64), k=K, allowed=allowed),
                                        collect=False)
            t_ref, ref = c.timed(lambda: anchor(idx, val), collect=False)
            ms["repspace"].append(1e3 * t_ours)
            ms["scipy"].append(1e3 * t_ref)
            agree += ours.tolist() == ref.tolist()
    return {"median_ms": {k: statistics.median(v) for k, v in ms.items()}, "runs_ms": ms,
            "same_ids": agree, "queries": len(queries)}


def run(quick: bool = False) -> Path:
    c.begin(NAME, quick)
    from repspace.core.sparse import SparseRows, expected_flops
    from repspace.engines.search.sparse import SparseIndex

    p = sizes(quick)
    c.log(f"sparse: {p['n']:,} Zipf rows over {p['n_features']:,} features")
    X, idf, cdf, perm = zipf_rows(p["n"], p["n_features"], p["nnz_per_row"])
    rows = SparseRows.from_scipy(X)
    build_s, index = c.timed(lambda: SparseIndex(rows))
    anchor = anchor_search(X, p["n_features"])
    rng = np.random.default_rng(2)
    kinds = {
        "short": short_queries(p["queries"], p["query_nnz"], idf, cdf, perm),
        "keyword": short_queries(p["queries"], p["keyword_nnz"], idf, cdf, perm, seed=3),
        "row": [(X[[int(i)]].indices, X[[int(i)]].data) for i in rng.integers(0, p["n"], p["queries"])],
    }
    nnz_of = {"short": p["query_nnz"], "keyword": p["keyword_nnz"], "row": round(X.nnz / p["n"])}
    data = (f"synthetic Zipf, {p['n']:,} rows x {X.nnz / p['n']:.1f} non-zeros over {p['n_features']:,} "
            "features")
    results, details = [], {"build_s": build_s, "mean_nnz": X.nnz / p["n"], "index_mib": index.nbytes / 2**20,
                            "expected_flops": expected_flops(rows)}
    for kind, queries in kinds.items():
        c.log(f"sparse: {kind} queries")
        m = measure(index, anchor, queries)
        ours, ref = m["median_ms"]["repspace"], m["median_ms"]["scipy"]
        results.append(c.row(f"one {kind} query (~{nnz_of[kind]} non-zeros), top {K}, {data}: latency", ours, "ms",
                             "scipy.sparse X @ q + argpartition", ref, ref / ours, GOAL,
                             same_ids=f"{m['same_ids']}/{m['queries']}"))
        details[kind] = m
    c.log("sparse: filtered row queries")
    allowed = np.flatnonzero(np.random.default_rng(4).random(p["n"]) < FILTER_SHARE)
    outside = np.ones(p["n"], bool)
    outside[allowed] = False
    m = measure(index, anchor_search(X, p["n_features"], outside), kinds["row"], allowed)
    ours, ref = m["median_ms"]["repspace"], m["median_ms"]["scipy"]
    results.append(c.row(f"one row query with a filter of {FILTER_SHARE:.0%} of the rows ({len(allowed):,}), top {K}, "
                         f"{data}: latency", ours, "ms", "scipy.sparse X @ q, rows outside -inf, argpartition", ref,
                         ref / ours, GOAL, same_ids=f"{m['same_ids']}/{m['queries']}"))
    details["filtered"] = m
    results.extend(approximate(rows, index, kinds["short"], data, details))
    results.append(c.row(f"index build ({data})", build_s, "s",
                         note="once per space generation: CSC copy and per-feature bounds"))
    if any(r["status"] == "MISS" for r in results):
        idx, val = kinds["short"][0]
        details["profile_short"] = c.profile_top(lambda: [index.search(idx, val.astype(np.float64), k=K)
                                                          for _ in range(5)])
    return c.write_result(NAME, p, results, details=details)


def _sweep(search: Any, exact: list[np.ndarray], queries: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, Any]:
    """The first (cut, heap) of SEISMIC_SWEEP whose recall@10 reaches RECALL (else the last): its latency."""
    tried = []
    for cut, heap in SEISMIC_SWEEP:
        ms, hits = [], 0
        with c.no_gc():
            for (idx, val), ref in zip(queries, exact):
                t, got = c.timed(lambda: search(idx, val, cut, heap), collect=False)
                ms.append(1e3 * t)
                hits += len(set(ref.tolist()) & set(got.tolist()))
        tried.append({"cut": cut, "heap": heap, "recall": hits / (K * len(queries)),
                      "median_ms": statistics.median(ms)})
        if tried[-1]["recall"] >= RECALL:
            break
    return {"chosen": tried[-1], "tried": tried}


def approximate(rows: Any, exact_index: Any, queries: list[tuple[np.ndarray, np.ndarray]], data: str,
                details: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows for sparse,seismic beside pyseismic-lsr, each at its first swept point with recall@10 >= RECALL."""
    from dataclasses import replace

    from repspace.engines.search.seismic import SeismicIndex, parse_seismic_spec

    b = SEISMIC_BUILD
    exact = [exact_index.search(idx, val.astype(np.float64), k=K)[1] for idx, val in queries]
    spec = f"sparse,seismic,lambda={b['lambda']},beta={b['beta']},alpha={b['alpha']}"
    c.log(f"sparse: building {spec}")
    ours_build, ours = c.timed(lambda: SeismicIndex(rows, parse_seismic_spec(spec)))

    def ours_search(idx: np.ndarray, val: np.ndarray, cut: int, heap: float) -> np.ndarray:
        ours.params = replace(ours.params, cut=cut, heap=heap)
        return ours.search(idx, val.astype(np.float64), k=K)[1]

    mine = _sweep(ours_search, exact, queries)
    details["seismic"] = {"spec": spec, "build_s": ours_build, "blocks": ours.n_blocks, **mine}
    out = []
    try:
        import seismic
    except ImportError:
        anchor, ref = None, None
        details["pyseismic"] = "not installed (pip install pyseismic-lsr==0.5.4; the bench extra)"
    else:
        st = seismic.get_seismic_string()
        ds = seismic.SeismicDataset()
        X = rows.to_scipy()
        for i in range(X.shape[0]):
            a, e = X.indptr[i], X.indptr[i + 1]
            ds.add_document(str(i), X.indices[a:e].astype(str).astype(st), X.data[a:e].astype(np.float32))
        c.log("sparse: building pyseismic-lsr")
        their_build, theirs = c.timed(lambda: seismic.SeismicIndex.build_from_dataset(
            ds, n_postings=b["lambda"], centroid_fraction=b["beta"], summary_energy=b["alpha"], num_threads=1))

        def their_search(idx: np.ndarray, val: np.ndarray, cut: int, heap: float) -> np.ndarray:
            hits = theirs.search("q", idx.astype(str).astype(st), val.astype(np.float32), k=K, query_cut=cut,
                                 heap_factor=heap)
            return np.array([int(h[2]) for h in hits], np.int64)

        ref = _sweep(their_search, exact, queries)
        anchor = f"pyseismic-lsr 0.5.4 (cut {ref['chosen']['cut']}, heap {ref['chosen']['heap']}, " \
                 f"recall {ref['chosen']['recall']:.3f})"
        details["pyseismic"] = {"build_s": their_build, **ref}
        out.append(c.row(f"pyseismic-lsr index build, one thread ({data})", their_build, "s"))
    ch = mine["chosen"]
    ref_ms = None if ref is None else ref["chosen"]["median_ms"]
    out.insert(0, c.row(f"sparse,seismic one short query, top {K}, cut {ch['cut']}, heap {ch['heap']}, recall@10 "
                        f"{ch['recall']:.3f} ({data}): latency", ch["median_ms"], "ms", anchor, ref_ms,
                        None if ref_ms is None else ref_ms / ch["median_ms"], (">=", 1.0) if ref_ms else None))
    out.append(c.row(f"sparse,seismic index build ({data})", ours_build, "s", note=spec))
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
