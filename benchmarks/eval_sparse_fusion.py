"""Derived sparse spaces and sparse + dense fusion on Cranfield, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_sparse_fusion.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only sparse-fusion`` (into EVALUATION.md).

Cranfield (BEIR layout, 1,400 documents, 225 judged queries) embedded with all-MiniLM-L6-v2 into a store; from that
dense space, :func:`~repspace.workflows.ingest.derived.derive_sae_codes` writes the top-k codes of a sparse
autoencoder fitted on the documents (``repspace interpret sae``) and :func:`~repspace.workflows.ingest.derived.
derive_bm25` the BM25 impact weights, each a sparse space searched exactly by inner product (queries: MiniLM then the
same SAE; BM25 term counts). Fusion of each sparse space with the dense one: RRF (c = 60) and a convex combination
of min-max normalised scores, its weight tuned on a random 30% dev split of the queries and scored on the other 70%
(every run's figures are on those test queries), top 100 of each list fused into 10. nDCG@10 with 95% bootstrap
intervals; each fusion against the dense space by a paired bootstrap (1,000 resamples). ``--quick``: one SAE size.
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
from typing import Any

import numpy as np

import common as c

DATA = c.REPO.parent / "shared" / "data"
WIDTH = 112
DEPTH = 100
SAES = ((512, 64), (1024, 64), (2048, 32))


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


def measure(quick: bool) -> dict[str, Any]:
    """nDCG@10 on the test queries of dense, each sparse space and each fusion; the tuned weights."""
    from repspace.store import Store
    from repspace.engines.encoders.registry import get_encoder
    from repspace.engines.eval.retrieval import load_beir
    from repspace.engines.search.fusion import rrf
    from repspace.engines.search.fusion_tuning import convex, dev_test_split, tune_convex
    from repspace.workflows.dictionary import fit_dictionary, load_dictionary
    from repspace.workflows.ingest.derived import derive_bm25, derive_sae_codes, derived_text_query

    data = load_beir(DATA / "cranfield-beir")
    enc = get_encoder("minilm")
    c.log("evaluation: sparse-fusion, embedding Cranfield with MiniLM")
    dv = np.asarray(enc.encode(list(data.corpus_texts)), dtype=np.float32)
    qv = np.asarray(enc.encode_queries(list(data.query_texts)), dtype=np.float32)
    store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    dense = store.create_space("dense", dim=dv.shape[1], metric="cosine", provenance=enc.provenance())
    dense.add(list(data.corpus_ids), dv, texts=list(data.corpus_texts))
    ids_of = {d: i for i, d in enumerate(data.corpus_ids)}
    dev, test = dev_test_split(len(data.query_ids), 0.3, seed=0)
    runs = {"dense": _run(dense, list(qv), ids_of)}
    derive_bm25(store, "dense", "bm25")
    runs["bm25"] = _run(store.space("bm25"), [derived_text_query(store.space("bm25"), t) for t in data.query_texts],
                        ids_of)
    sparse_names = ["bm25"]
    sae_info = {}
    for latents, k in SAES[1:2] if quick else SAES:
        c.log(f"evaluation: sparse-fusion, SAE {latents} latents, k {k}")
        rep = fit_dictionary(dense, latents, k, seed=0)
        name = f"sae{latents}k{k}"
        derive_sae_codes(store, "dense", rep.name, name)
        codes = load_dictionary(dense, rep.name).transform(qv).tocsr()
        queries = [{str(int(j)): float(w) for j, w in zip(codes[i].indices, codes[i].data)} for i in range(len(qv))]
        runs[name] = _run(store.space(name), queries, ids_of)
        sparse_names.append(name)
        sae_info[name] = {"latents": latents, "k": k, "fvu_heldout": rep.to_dict()["fvu_heldout"]}
    base = _ndcg(runs["dense"][1], data, test)
    out: dict[str, Any] = {"documents": len(dv), "queries": len(data.query_ids), "dev": len(dev), "test": len(test),
                           "sae": sae_info, "runs": {"dense": _figure(base)}}
    for name in sparse_names:
        s = runs[name]
        out["runs"][name] = _figure(_ndcg(s[1], data, test), base)
        _, fused = rrf([s[1], runs["dense"][1]], k=10, c=60)
        out["runs"][f"rrf({name}, dense)"] = _figure(_ndcg(fused, data, test), base)
        alpha, seen = tune_convex(lambda a: float(_ndcg(convex(s, runs["dense"], a, 10)[1], data, dev).mean()))
        fig = _figure(_ndcg(convex(s, runs["dense"], alpha, 10)[1], data, test), base)
        out["runs"][f"convex({name}, dense)"] = {**fig, "alpha": alpha, "dev": seen[alpha]}
    return out


INTRO = """\
## Derived sparse spaces and sparse + dense fusion (`repspace derive sae-codes|bm25`)

Cranfield (1,400 documents, 225 queries), all-MiniLM-L6-v2. From the dense space, two sparse spaces keep its ids
and texts: the top-k codes of a sparse autoencoder fitted on the documents (`repspace interpret sae`; queries go
through MiniLM then the same autoencoder) and uniCOIL-style BM25 impact weights (bm25s's term weights, Lucene BM25,
k1 1.5, b 0.75; queries as term counts, so the inner product is BM25). Each is searched exactly over its inverted
index. Fusion with the dense space: RRF (c = 60) and a convex combination of min-max normalised scores (Bruch et al.,
TOIS 2023) whose sparse weight α is tuned on a random 30% of the queries (dev) and scored on the other 70% (test);
every figure is on the test queries, nDCG@10 with a 95% bootstrap interval, and Δ to the dense space with a paired
bootstrap interval and p (1,000 resamples). Measured by `benchmarks/eval_sparse_fusion.py`."""


def render(res: dict[str, Any]) -> list[str]:
    """The section's markdown lines."""
    lines = [INTRO, "", f"{res['test']} test queries ({res['dev']} dev).", "",
             "| run | nDCG@10 [95% CI] | Δ to dense [95% CI] | p | α (dev nDCG@10) |", "|---|---|---|---|---|"]
    for name, r in res["runs"].items():
        cells = [name, f"{r['value']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}]"]
        if "difference" in r:
            cells += [f"{r['difference']:+.4f} [{r['d_low']:+.4f}, {r['d_high']:+.4f}]", f"{r['p_value']:.3g}"]
        else:
            cells += ["", ""]
        cells.append(f"{r['alpha']:.1f} ({r['dev']:.4f})" if "alpha" in r else "")
        lines.append("| " + " | ".join(cells) + " |")
    sae = "; ".join(f"{n}: {s['latents']} latents, k {s['k']}, held-out FVU {s['fvu_heldout']:.4f}"
                    for n, s in res["sae"].items())
    lines += ["", *textwrap.wrap(f"Autoencoders (fitted on the 1,400 documents, 10% held out): {sae}.", WIDTH)]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "one SAE size")


if __name__ == "__main__":
    sys.exit(main())
