"""Derived sparse spaces and sparse + dense fusion on Cranfield, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_sparse_fusion.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only sparse-fusion`` (into EVALUATION.md).

Cranfield (BEIR layout, 1,400 documents, 225 judged queries) embedded with all-MiniLM-L6-v2 into a store. The sparse
autoencoders (``repspace interpret sae``, :func:`~repspace.workflows.dictionary.fit_dictionary`) are fitted on a
second space of the same encoder holding many more vectors than the 1,400 documents: Cranfield's documents, their
sentences and 3-sentence passages, and STS-B's distinct sentences (never a query); a grid of widths and k scores each
dictionary's codes by exact inner product (and cosine, and the uncoded query against the codes' decoding) on the test
queries. The chosen dictionary's codes become a sparse space (:func:`~repspace.workflows.ingest.derived.
derive_sae_codes` with ``dictionary_space``; queries: MiniLM then the same dictionary) beside the BM25 impact space
(:func:`~repspace.workflows.ingest.derived.derive_bm25`), both searched exactly through the store. Fusion of each with
the dense space: RRF (c = 60) and a convex combination of min-max normalised scores, its weight tuned on a random 30%
dev split of the queries and scored on the other 70% (every figure is on those test queries), top 100 of each list
fused into 10. nDCG@10 with 95% bootstrap intervals; each run against the dense space by a paired bootstrap (1,000
resamples). Queries of the SAE-code space are coded several ways (encoder or atoms, top query_k, ip or cosine); the
one with the best nDCG@10 on the dev queries is searched through the store and fused. ``--quick``: 3,000 training
vectors, small dictionaries.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import textwrap
import time
from typing import Any

import numpy as np

import common as c

DATA = c.REPO.parent / "shared" / "data"
WIDTH = 112
DEPTH = 100
#: The grid of dictionaries (latents, k, multik) fitted on the training space; multik > 0: CSR's Multi-TopK term
#: (the top multik latents reconstruct too, weighted 1/8).
GRID = ((4096, 64, 0), (8192, 128, 0), (8192, 128, 512))
#: The dictionaries whose query codings are compared (the widest, largest k of the grid: the lowest FVU).
CODED = ((8192, 128, 0), (8192, 128, 512))
QUICK_GRID, QUICK_CODED, QUICK_TRAIN = ((512, 32, 0), (512, 32, 128)), ((512, 32, 0), (512, 32, 128)), 3000
#: Query codings compared: by the SAE's encoder or by the atoms (``derive sae-codes --query-code``), with the
#: top query_k latents as multiples of the items' k (0: every positive one), each space by ip and by cosine.
QUERY_CODES, QUERY_K_TIMES, METRICS = ("encoder", "decoder"), (1, 2, 4, 8, 0), ("ip", "cosine")
#: The dictionary of issue 33's first measurement: fitted on the 1,400 documents alone (a grid row for comparison).
DOCS_ONLY = (4096, 64)
#: Consecutive sentences per passage and the step between passages.
PASSAGE, STEP = 3, 2


def training_texts(data: Any) -> tuple[list[str], dict[str, int]]:
    """The texts the dictionaries are fitted on: the documents, their sentences and passages, STS-B's sentences."""
    from search_data import stsb_all

    sentences, passages = [], []
    for text in data.corpus_texts:
        parts = [t.strip() for t in re.split(r"(?<=[.?!])\s+", text) if len(t.split()) >= 3]
        sentences += parts
        passages += [" ".join(parts[i:i + PASSAGE]) for i in range(0, max(1, len(parts) - 1), STEP)]
    groups = {"documents": list(data.corpus_texts), "sentences": sentences, "passages": passages,
              "stsb": stsb_all()}
    texts = list(dict.fromkeys(t for g in groups.values() for t in g))
    return texts, {name: len(dict.fromkeys(g)) for name, g in groups.items()}


def _run(space: Any, queries: list[Any], ids_of: Any) -> tuple[np.ndarray, np.ndarray]:
    """Top DEPTH (scores, rows) of each query, rows as corpus positions (-1 padding)."""
    scores = np.zeros((len(queries), DEPTH))
    rows = np.full((len(queries), DEPTH), -1, dtype=np.int64)
    for i, q in enumerate(queries):
        hits = space.search(q, k=DEPTH)
        for j, h in enumerate(hits):
            scores[i, j], rows[i, j] = h.score, ids_of[h.id]
    return scores, rows


def _ndcg(rows: np.ndarray, data: Any, pick: np.ndarray) -> np.ndarray:
    from repspace.engines.eval.ranking import ndcg_at_k

    ids = np.asarray(data.corpus_ids, dtype=object)
    return np.array([ndcg_at_k(ids[rows[i][rows[i] >= 0][:10]].tolist(), data.qrels[data.query_ids[i]], 10)
                     for i in pick])


def _figure(per: np.ndarray, base: np.ndarray | None = None) -> dict[str, Any]:
    from repspace.engines.eval.uncertainty import bootstrap_interval, mean_statistic, paired_comparison

    ci = bootstrap_interval(mean_statistic, per, n_resamples=1000, seed=0)
    out = {"value": float(per.mean()), "ci_low": ci.low if ci else None, "ci_high": ci.high if ci else None}
    if base is not None:
        cmp = paired_comparison(mean_statistic, per, base, a="run", b="dense", n_resamples=1000, seed=0)
        out.update(difference=cmp.difference, d_low=cmp.ci_low, d_high=cmp.ci_high, p_value=cmp.p_value)
    return out


def _grid_row(d: Any, dv: np.ndarray, qv: np.ndarray, data: Any, test: np.ndarray, rep: Any) -> dict[str, Any]:
    """One dictionary's codes scored on the test queries by exact inner product, cosine and the uncoded query."""
    from repspace.core.exact import normalize_rows
    from repspace.core.sparse import SparseRows, expected_flops

    zd, zq = d.transform(dv).tocsr(), d.transform(qv).tocsr()
    ip = (zq @ zd.T).toarray()
    cos = normalize_rows(zq.toarray().astype(np.float64)) @ normalize_rows(zd.toarray().astype(np.float64)).T
    # the query left dense: q · x̂_d = (W_dec q) · z_d + q · b_pre, a dense query over the latents (every posting)
    uncoded = zd @ (d.model.components_.astype(np.float64) @ d.prepare(qv).astype(np.float64).T)
    df = np.bincount(zd.indices, minlength=zd.shape[1])
    m = rep.to_dict()
    return {"latents": rep.n_latents, "k": rep.k, "n_train": rep.n_train, "fit_s": round(rep.fit_seconds, 1),
            "fvu_heldout": m["fvu_heldout"], "fvu_documents": _fvu(dv, d), "fvu_queries": _fvu(qv, d),
            "ndcg_ip": float(_ndcg_scores(ip, data, test).mean()),
            "ndcg_cosine": float(_ndcg_scores(cos, data, test).mean()),
            "ndcg_uncoded_query": float(_ndcg_scores(uncoded.T, data, test).mean()),
            "nnz_per_doc": zd.nnz / zd.shape[0], "nnz_per_query": zq.nnz / zq.shape[0],
            "expected_flops": expected_flops(SparseRows.from_scipy(zd)),
            "postings_per_query": float(np.mean([df[zq[i].indices].sum() for i in test])), "total_nnz": int(zd.nnz)}


def _fvu(x: np.ndarray, d: Any) -> float:
    xp = d.prepare(x).astype(np.float64)
    rec = d.model.reconstruct(d.prepare(x)).astype(np.float64)
    return float(((xp - rec) ** 2).sum() / ((xp - xp.mean(axis=0)) ** 2).sum())


def _ndcg_scores(scores: np.ndarray, data: Any, pick: np.ndarray) -> np.ndarray:
    rows = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    return _ndcg(rows, data, pick)


def measure(quick: bool) -> dict[str, Any]:
    """nDCG@10 on the test queries of dense, the dictionary grid, each sparse space and each fusion."""
    from repspace.store import Store
    from repspace.engines.encoders.registry import get_encoder
    from repspace.engines.eval.retrieval import load_beir
    from repspace.engines.search.fusion import rrf
    from repspace.engines.search.fusion_tuning import convex, dev_test_split, tune_convex
    from repspace.workflows.dictionary import fit_dictionary, load_dictionary
    from repspace.workflows.ingest.derived import derive_bm25, derived_text_query
    from search_data import embed_cached

    data = load_beir(DATA / "cranfield-beir")
    enc = get_encoder("minilm")
    c.log("evaluation: sparse-fusion, embedding Cranfield with MiniLM")
    dv, _ = embed_cached(list(data.corpus_texts))
    qv, _ = embed_cached(list(data.query_texts))  # MiniLM is symmetric: its query side is encode's vectors
    texts, groups = training_texts(data)
    if quick:
        texts = texts[:QUICK_TRAIN]
    tv, _ = embed_cached(texts)
    store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    dense = store.create_space("dense", dim=dv.shape[1], metric="cosine", provenance=enc.provenance())
    dense.add(list(data.corpus_ids), dv, texts=list(data.corpus_texts))
    train = store.create_space("train", dim=tv.shape[1], metric="cosine", provenance=enc.provenance())
    train.add([f"t{i}" for i in range(len(tv))], tv)
    ids_of = {d: i for i, d in enumerate(data.corpus_ids)}
    dev, test = dev_test_split(len(data.query_ids), 0.3, seed=0)
    grid = []
    docs_only = QUICK_GRID[0][:2] if quick else DOCS_ONLY
    names = {}
    for owner, (latents, k, multik) in [(dense, (*docs_only, 0)), *((train, g) for g in (QUICK_GRID if quick
                                                                                         else GRID))]:
        c.log(f"evaluation: sparse-fusion, SAE {latents} latents, k {k}, multik {multik} on {owner.name} "
              f"({owner.info().count:,})")
        rep = fit_dictionary(owner, latents, k, seed=0, multik=multik)
        names[(owner.name, latents, k, multik)] = rep.name
        grid.append({"trained_on": owner.name, "multik": multik,
                     **_grid_row(load_dictionary(owner, rep.name), dv, qv, data, test, rep)})
    coding = [row for g in (QUICK_CODED if quick else CODED)
              for row in _coding_rows(load_dictionary(train, names[("train", *g)]), dv, qv, data, dev, test)]
    best = max(coding, key=lambda r: r["ndcg_dev"])  # chosen on the dev queries only
    runs = {"dense": _run(dense, list(qv), ids_of)}
    derive_bm25(store, "dense", "bm25")
    runs["bm25"] = _run(store.space("bm25"), [derived_text_query(store.space("bm25"), t) for t in data.query_texts],
                        ids_of)
    base = _ndcg(runs["dense"][1], data, test)
    out: dict[str, Any] = {"documents": len(dv), "queries": len(data.query_ids), "dev": len(dev), "test": len(test),
                           "training": {"vectors": len(tv), "groups": groups, "quick": quick}, "grid": grid,
                           "coding": coding, "runs": {"dense": _figure(base)}}
    latents, k, multik = (QUICK_CODED if quick else CODED)[0]
    plain = {"dictionary": names[("train", latents, k, multik)], "latents": latents, "k": k, "multik": multik,
             "query_code": "encoder", "query_k": k, "metric": "cosine"}  # issue 33's first setting: queries as items
    chosen = []
    for cfg in (best, plain):
        name, t_derive, t_search = _store_run(store, train, cfg, qv, ids_of, runs)
        chosen.append({**{key: cfg[key] for key in plain}, "name": name, "derive_s": round(t_derive, 2),
                       "search_ms_per_query": round(1000 * t_search, 3)})
    out["chosen"] = chosen
    for sparse in ("bm25", chosen[0]["name"], chosen[1]["name"]):
        s = runs[sparse]
        out["runs"][sparse] = _figure(_ndcg(s[1], data, test), base)
        _, fused = rrf([s[1], runs["dense"][1]], k=10, c=60)
        out["runs"][f"rrf({sparse}, dense)"] = _figure(_ndcg(fused, data, test), base)
        alpha, seen = tune_convex(lambda a: float(_ndcg(convex(s, runs["dense"], a, 10)[1], data, dev).mean()))
        fig = _figure(_ndcg(convex(s, runs["dense"], alpha, 10)[1], data, test), base)
        out["runs"][f"convex({sparse}, dense)"] = {**fig, "alpha": alpha, "dev": seen[alpha]}
    return out


def _store_run(store: Any, train: Any, cfg: dict[str, Any], qv: np.ndarray, ids_of: dict[str, int],
               runs: dict[str, Any]) -> tuple[str, float, float]:
    """Derive the SAE-code space of ``cfg`` through the store and search it with queries coded by its recipe."""
    from repspace.workflows.dictionary import load_dictionary
    from repspace.workflows.ingest.derived import derive_sae_codes, sae_query_codes

    qk = "all" if cfg["query_k"] == 0 else cfg["query_k"]
    name = (f"sae{cfg['latents']}k{cfg['k']}{'m' + str(cfg['multik']) if cfg['multik'] else ''}"
            f"-{cfg['query_code'][:3]}{qk}-{cfg['metric'][:3]}")
    t0 = time.perf_counter()
    derive_sae_codes(store, "dense", cfg["dictionary"], name, dictionary_space="train", metric=cfg["metric"],
                     query_k=cfg["query_k"], query_code=cfg["query_code"])
    t_derive = time.perf_counter() - t0
    recipe = store.space(name).provenance["derived"]
    codes = sae_query_codes(load_dictionary(train, cfg["dictionary"]), qv, recipe)
    queries = [{str(int(j)): float(w) for j, w in zip(codes[i].indices, codes[i].data)} for i in range(len(qv))]
    t0 = time.perf_counter()
    runs[name] = _run(store.space(name), queries, ids_of)
    return name, t_derive, (time.perf_counter() - t0) / len(queries)


def _coding_rows(d: Any, dv: np.ndarray, qv: np.ndarray, data: Any, dev: np.ndarray, test: np.ndarray
                 ) -> list[dict[str, Any]]:
    """One dictionary's documents (top-k codes) against its queries coded each way: nDCG@10 on dev and test."""
    from repspace.core.exact import normalize_rows
    from repspace.workflows.ingest.derived import sae_query_codes

    m, k, multik = int(d.model.n_latents), int(d.model.k), int(d.model.multik)
    zd = d.transform(dv).tocsr().astype(np.float64)
    zd_cos = normalize_rows(zd.toarray())
    df = np.bincount(zd.indices, minlength=m)
    rows = []
    for code in QUERY_CODES:
        for times in QUERY_K_TIMES:
            qk = min(m, times * k)
            recipe = {"k": k, "query_k": qk if qk < m else 0, "query_code": code}
            zq = sae_query_codes(d, qv, recipe).astype(np.float64)
            for metric in METRICS:
                scores = (zq @ zd.T).toarray() if metric == "ip" else normalize_rows(zq.toarray()) @ zd_cos.T
                rows.append({"dictionary": d.name, "latents": m, "k": k, "multik": multik, "query_code": code,
                             "query_k": recipe["query_k"], "metric": metric,
                             "ndcg_dev": float(_ndcg_scores(scores, data, dev).mean()),
                             "ndcg_test": float(_ndcg_scores(scores, data, test).mean()),
                             "nnz_per_query": zq.nnz / zq.shape[0],
                             "postings_per_query": float(np.mean([df[zq[i].indices].sum() for i in test]))})
    return rows


INTRO = """\
## Derived sparse spaces and sparse + dense fusion (`repspace derive sae-codes|bm25`)

Cranfield (1,400 documents, 225 queries), all-MiniLM-L6-v2. From the dense space, two sparse spaces keep its ids
and texts: the top-k codes of a sparse autoencoder (`repspace interpret sae`; queries go through MiniLM then the same
autoencoder) and uniCOIL-style BM25 impact weights (bm25s's term weights, Lucene BM25, k1 1.5, b 0.75; queries as
term counts, so the inner product is BM25). Each is searched exactly over its inverted index. The autoencoders are
fitted on a second MiniLM space of {vectors:,} vectors ({groups}; no query), 10% held out, and encode the
documents through `repspace derive sae-codes --dictionary-space`. Fusion with the dense space: RRF (c = 60) and a
convex combination of min-max normalised scores (Bruch et al., TOIS 2023) whose sparse weight α is tuned on a random
30% of the queries (dev) and scored on the other 70% (test); every figure is on the test queries, nDCG@10 with a
95% bootstrap interval, and Δ to the dense space with a paired bootstrap interval and p (1,000 resamples).
Measured by `benchmarks/eval_sparse_fusion.py`."""

GRID_NOTE = """\
The dictionaries tried (nDCG@10 on the {test} test queries by exact search of the codes; the first row is fitted on
the 1,400 documents alone, as issue 33's first measurement was). ip: query codes · document codes, the sparse
space's score; cosine: the same codes normalised; uncoded query: the query's MiniLM vector against each document's
decoding (`W_dec q · z_d`, a query dense over every latent, so every posting is read: not a sparse search, the
ceiling of the documents' codes). FVU: held out of the training vectors, and on Cranfield's documents and queries.
Expected FLOPs: Σ p_j² over the documents' codes (Paria et al. 2020); postings: document entries read per test query
(exact dense search reads 1,400 × 384 = 537,600 values)."""


def _grid(res: dict[str, Any]) -> list[str]:
    lines = [*textwrap.fill(GRID_NOTE.format(test=res["test"]).replace("\n", " "), WIDTH).splitlines(), "",
             "| trained on | latents | k | multik | nDCG@10 ip | cosine | uncoded query "
             "| FVU held-out / docs / queries | nnz per doc | expected FLOPs | postings per query | fit s |",
             "|---" * 12 + "|"]
    for g in res["grid"]:
        where = "1,400 documents" if g["trained_on"] == "dense" else f"{g['n_train']:,} training vectors"
        lines.append(f"| {where} | {g['latents']:,} | {g['k']} | {g.get('multik') or '-'} | {g['ndcg_ip']:.4f} | "
                     f"{g['ndcg_cosine']:.4f} | "
                     f"{g['ndcg_uncoded_query']:.4f} | {g['fvu_heldout']:.3f} / {g['fvu_documents']:.3f} / "
                     f"{g['fvu_queries']:.3f} | {g['nnz_per_doc']:.1f} | {g['expected_flops']:.2f} | "
                     f"{g['postings_per_query']:,.0f} | {g['fit_s']:.0f} |")
    return lines


CODING_NOTE = """\
Query coding (`repspace derive sae-codes --query-code --query-k`): the documents keep their top-k codes; a query is
coded by the SAE's encoder (its top query_k pre-activations after ReLU, as the documents; query_k = k is issue 33's
first setting) or by the atoms (its inner products with the decoder's atoms, W_dec q, the top query_k positive ones:
the score is then q · (x̂_d − b_pre) less what the dropped weights carry), "all" keeping every positive latent; each
space searched by ip or cosine (codes normalised). nDCG@10 on the {dev} dev queries, which choose the run of the table
above ({chosen}), and on the {test} test queries; postings: document entries read per test query. multik: the
dictionary fitted with CSR's Multi-TopK term (Wen et al. 2025: the top multik latents reconstruct each vector too,
weighted 1/8), meant to keep codes of more than k latents decodable."""


def _coding(res: dict[str, Any]) -> list[str]:
    ch = res["chosen"][0]
    chosen = (f"{ch['latents']:,} latents, k {ch['k']}{', multik ' + str(ch['multik']) if ch['multik'] else ''}, "
              f"{ch['query_code']}, query_k {ch['query_k'] or 'all'}, {ch['metric']}")
    lines = [*textwrap.fill(CODING_NOTE.format(dev=res["dev"], test=res["test"], chosen=chosen).replace("\n", " "),
                            WIDTH, break_on_hyphens=False).splitlines(), "",
             "| latents | k | multik | query coding | query_k | metric | nDCG@10 dev | nDCG@10 test | nnz per query "
             "| postings per query |", "|---" * 10 + "|"]
    for r in res["coding"]:
        lines.append(f"| {r['latents']:,} | {r['k']} | {r['multik'] or '-'} | {r['query_code']} | "
                     f"{r['query_k'] or 'all'} | {r['metric']} | {r['ndcg_dev']:.4f} | {r['ndcg_test']:.4f} | "
                     f"{r['nnz_per_query']:.0f} | {r['postings_per_query']:,.0f} |")
    return lines


def render(res: dict[str, Any]) -> list[str]:
    """The section's markdown lines."""
    tr = res["training"]
    groups = ", ".join(f"{n:,} {g}" for g, n in tr["groups"].items())
    if tr["quick"]:
        groups += f"; the first {tr['vectors']:,} of them in this quick run"
    intro = INTRO.format(vectors=tr["vectors"], groups=groups)
    head, blank, body = intro.split("\n", 2)
    lines = [head, blank, *textwrap.fill(body.replace("\n", " "), WIDTH, break_on_hyphens=False).splitlines(), "",
             f"{res['test']} test queries ({res['dev']} dev).", "",
             "| run | nDCG@10 [95% CI] | Δ to dense [95% CI] | p | α (dev nDCG@10) |", "|---|---|---|---|---|"]
    for name, r in res["runs"].items():
        cells = [name, f"{r['value']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}]"]
        if "difference" in r:
            cells += [f"{r['difference']:+.4f} [{r['d_low']:+.4f}, {r['d_high']:+.4f}]", f"{r['p_value']:.3g}"]
        else:
            cells += ["", ""]
        cells.append(f"{r['alpha']:.1f} ({r['dev']:.4f})" if "alpha" in r else "")
        lines.append("| " + " | ".join(cells) + " |")
    best, plain = res["chosen"]
    text = (f"{best['name']}: the query coding with the best dev nDCG@10 (table below): {best['latents']:,} latents, "
            f"k {best['k']}{', multik ' + str(best['multik']) if best['multik'] else ''}, queries coded by the "
            f"{best['query_code']}, query_k {best['query_k'] or 'all'}, {best['metric']}; {plain['name']}: queries "
            f"coded as the documents (top {plain['k']} of the encoder), issue 33's first setting. Both searched "
            f"exactly through the store ({best['search_ms_per_query']:.2f} and {plain['search_ms_per_query']:.2f} ms "
            "per query).")
    lines += ["", *textwrap.wrap(text, WIDTH), "", *_grid(res), "", *_coding(res)]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "one SAE size")


if __name__ == "__main__":
    sys.exit(main())
