"""Model-update compatibility on Cranfield: Shen et al.'s criteria, maps and d-simplex heads, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_compat.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only compat`` (into EVALUATION.md).

The old model is layer 3 of all-MiniLM-L6-v2 (``hf-layers:minilm``, mean-pooled), the new one its last layer
(6): one forward pass gives both. Measured: the raw new queries against the old index, the maps of
``repspace upgrade-check`` (Procrustes and ridge on all 1,400 documents) and the compatibility heads of
``repspace.analyze.compat_head_retrieval`` (a third of the queries held out, the rest as classes), each with the
empirical criterion (nDCG@10) and the strict per-pair shares; then the document similarity profiles of the
Cranfield abstracts (sentences) at the last layer. ``--quick``: the first 300 documents' sentences only for the
profiles (the criteria are the same).
"""

from __future__ import annotations

import re
import sys
import textwrap
from typing import Any

import common as c
import numpy as np

DATA = c.REPO.parent / "shared" / "data"
WIDTH = 112
OLD_LAYER, NEW_LAYER = 3, 6


def measure(quick: bool) -> dict[str, Any]:
    """``{"compat": {"raw", "maps", "heads", "profiles", ...}}``."""
    from repspace.engines.analyze import compatibility, doc_profiles, pair_criterion
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import load_beir, retrieval_from_vectors
    from repspace.workflows.analyze import compat_head_retrieval
    from repspace.workflows.upgrade import qrels_matrix, upgrade_retrieval

    data = load_beir(DATA / "cranfield-beir")
    enc = get_encoder("hf-layers:minilm")
    c.log("evaluation: compat, MiniLM layers 3 and 6 on Cranfield")
    q = enc.encode_layers(list(data.query_texts), layers=[OLD_LAYER, NEW_LAYER])
    d = enc.encode_layers(list(data.corpus_texts), layers=[OLD_LAYER, NEW_LAYER])
    qo, qn, do, dn = q[0], q[1], d[0], d[1]
    m = {name: retrieval_from_vectors(a, b, data)["ndcg_at_10"] for name, a, b in
         (("old", qo, do), ("new", qn, dn), ("cross", qn, do))}
    raw = compatibility(m["old"], m["cross"], pair_criterion(qo, qn, do, qrels_matrix(data)), new=m["new"])
    maps = upgrade_retrieval(qo, do, qn, dn, data, pairs=["all"], methods=["procrustes", "ridge"])
    heads = compat_head_retrieval(qo, do, qn, dn, data, test_fraction=1 / 3)
    c.log("evaluation: compat, document profiles")
    texts, docs, pos = [], [], []
    for did, text in zip(data.corpus_ids[:300] if quick else data.corpus_ids, data.corpus_texts, strict=False):
        for p, s in enumerate(t for t in re.split(r"(?<=\.)\s+", text) if t.strip()):
            texts.append(s)
            docs.append(did)
            pos.append(p)
    prof = doc_profiles(enc.encode_layers(texts, layers=[NEW_LAYER])[0], docs, pos).to_dict(matrix=False)
    prof.pop("documents")
    return {"compat": {"encoder": enc.provenance(), "layers": [OLD_LAYER, NEW_LAYER], "raw": raw.to_dict(),
                       "maps": [r.to_dict() for r in maps.rows if r.setting == "mapped"],
                       "heads": heads.to_dict(), "profiles": prof}}


def _row(label: str, x: dict[str, Any]) -> str:
    gain = "—" if x["update_gain"] is None else f"{x['update_gain']:.3f}"
    return (f"| {label} | {x['old']:.4f} | {x['cross']:.4f} | {x['new']:.4f} | {'yes' if x['compatible'] else 'no'} "
            f"| {gain} | {x['relevant_closer']:.3f} | {x['irrelevant_farther']:.3f} |")


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section."""
    r = res["compat"]
    lines = ["", "## Model-update compatibility: Shen et al.'s criteria, maps and d-simplex heads (Cranfield)", ""]
    lines += textwrap.fill(
        "Old model: layer 3 of all-MiniLM-L6-v2 (mean-pooled), new model: its last layer (6), one forward pass. "
        "Shen et al. (2020) call the new model compatible when its queries on the old index beat the old model's "
        "own (empirical criterion, here nDCG@10: old = old queries on the old index, cross = new queries on it, new "
        "= the new model re-indexed; update gain (cross − old)/(new − old)), strictly so when every relevant pair "
        "is at least as close and every other pair at least as far as with the old query (the shares below; "
        "strict = both 1). `repspace upgrade-check` reports them for each map, `repspace analyze compat-head` for "
        "d-simplex heads (CoReS: both models' heads trained against the same fixed simplex prototypes; here the "
        f"classes are {r['heads']['n_classes']} of the 225 queries, each with its relevant documents, and the "
        f"criteria are measured on the {r['heads']['n_test']} held-out queries, unseen by the heads).",
        width=WIDTH).splitlines()
    lines += ["", "| new queries on the old index | old | cross | new | compatible | update gain | relevant closer "
                  "| irrelevant farther |", "|---|---|---|---|---|---|---|---|"]
    lines.append(_row("raw (no map), all 225 queries", r["raw"]))
    for x in r["maps"]:
        lines.append(_row(f"{x['method']} map (1,400 documents), all 225 queries",
                          {**x, "old": r["raw"]["old"], "cross": x["ndcg_at_10"], "new": r["raw"]["new"]}))
    h = r["heads"]
    lines.append(_row(f"raw, the {h['n_test']} held-out queries", h["before"]))
    lines.append(_row(f"d-simplex heads, the {h['n_test']} held-out queries", h["after"]))
    p = r["profiles"]
    lines += ["", *textwrap.fill(
        f"Document similarity profiles (`repspace analyze doc-profile`), the last layer over {p['n_documents']:,} "
        f"Cranfield abstracts cut into {p['n_sentences']:,} sentences: mean cosine of successive sentences "
        f"{p['mean_successive']:.3f}, of any two sentences of one abstract {p['mean_within']:.3f}, of sentences "
        f"of two different abstracts {p['mean_between']:.3f} ({p['n_between_pairs']:,} sampled pairs).",
        width=WIDTH).splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the first 300 documents' sentences for the profiles")


if __name__ == "__main__":
    sys.exit(main())
