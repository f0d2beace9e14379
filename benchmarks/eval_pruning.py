"""Static index pruning (S179, ``repspace index prune``): the retrieval cost of dropping items, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_pruning.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only pruning`` (into EVALUATION.md).

Cranfield (BEIR layout, 1,400 documents, 225 judged queries) embedded with all-MiniLM-L6-v2; each quality score of
:func:`repspace.engines.search.pruning.quality_scores` drops 10%, 25% and 50% of the documents, the queries are
searched exactly (cosine) over the rest, and nDCG@10 and recall@10 are compared with the unpruned index per query
(paired bootstrap and randomization test, 1,000 resamples). ``--quick``: the 25% cut only.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import numpy as np

import common as c

DATA = c.REPO.parent / "shared" / "data"
WIDTH = 112
DROPS = (0.10, 0.25, 0.50)
BY = ("centroid", "hubness", "norm", "random")
METRICS = ("ndcg_at_10", "recall_at_10")


def _per_query(qv: np.ndarray, dv: np.ndarray, keep: np.ndarray, data: Any) -> dict[str, np.ndarray]:
    from repspace.core.exact import exact_search
    from repspace.engines.eval.ranking import query_scores

    ids = np.asarray(data.corpus_ids, dtype=object)[keep]
    _, rows = exact_search(qv, dv[keep], k=10, metric="cosine")
    run = {q: ids[r[r >= 0]].tolist() for q, r in zip(data.query_ids, rows)}
    per = query_scores(run, data.qrels, (10,))
    return {m: np.array([per[q][m] for q in data.query_ids]) for m in METRICS}


def measure(quick: bool) -> dict[str, Any]:
    """Full-index scores, then per score and drop rate: each metric, its difference to full with interval and p."""
    from repspace.engines.encoders.registry import get_encoder
    from repspace.engines.eval.retrieval import load_beir
    from repspace.engines.eval.uncertainty import bootstrap_interval, mean_statistic, paired_comparison
    from repspace.engines.search.pruning import kept_rows, quality_scores

    data = load_beir(DATA / "cranfield-beir")
    enc = get_encoder("minilm")
    c.log("evaluation: pruning, embedding Cranfield with MiniLM")
    dv = np.asarray(enc.encode(list(data.corpus_texts)), dtype=np.float32)
    qv = np.asarray(enc.encode_queries(list(data.query_texts)), dtype=np.float32)
    full = _per_query(qv, dv, np.arange(len(dv)), data)
    relevant = {d for q in data.query_ids for d, s in data.qrels[q].items() if s >= 1}
    out: dict[str, Any] = {"documents": len(dv), "queries": len(data.query_ids), "full": {}, "runs": []}
    for m in METRICS:
        ci = bootstrap_interval(mean_statistic, full[m], n_resamples=1000, seed=0)
        out["full"][m] = {"value": float(full[m].mean()), "ci_low": ci.low if ci else None,
                          "ci_high": ci.high if ci else None}
    norms = np.linalg.norm(dv, axis=1)
    out["norm_range"] = [float(norms.min()), float(norms.max())]
    for by in BY:
        scores = quality_scores(dv, by, metric="cosine", k=10, seed=0)
        for drop in (0.25,) if quick else DROPS:
            keep = kept_rows(scores, drop)
            kept_ids = set(np.asarray(data.corpus_ids, dtype=object)[keep].tolist())
            per = _per_query(qv, dv, keep, data)
            run: dict[str, Any] = {"by": by, "drop": drop, "kept": int(len(keep)),
                                   "relevant_dropped": len(relevant - kept_ids), "relevant": len(relevant)}
            for m in METRICS:
                cmp = paired_comparison(mean_statistic, per[m], full[m], a="pruned", b="full", n_resamples=1000,
                                        seed=0)
                run[m] = {"value": float(per[m].mean()), "difference": cmp.difference, "ci_low": cmp.ci_low,
                          "ci_high": cmp.ci_high, "p_value": cmp.p_value}
            out["runs"].append(run)
    return out


INTRO = """\
## Static index pruning (`repspace index prune`, S179)

Chang et al. (SIGIR 2024) score each passage once, with no query, and drop the lowest share; with their fine-tuned
QualT5 classifier, over 25% of MS MARCO passages go with statistically equivalent effectiveness (the paper's
figure). repspace has no trained quality model: its scores are classifier-free (`centroid`: cosine to the corpus's
mean direction; `hubness`: k-occurrence, how many items have the item among their 10 nearest; `norm`: the vector's
length, the paper's dense-magnitude estimator; `random`: the baseline). Cranfield (1,400 documents, 225 queries),
all-MiniLM-L6-v2, exact cosine search over the kept documents; the difference to the unpruned index is per query,
with a paired bootstrap 95% interval and a randomization p (1,000 resamples each). Measured by
`benchmarks/eval_pruning.py` (`benchmarks/evaluation.py --only pruning`)."""


def render(res: dict[str, Any]) -> list[str]:
    """The section's markdown lines."""
    f = res["full"]
    lines = [INTRO, "",
             f"Unpruned: nDCG@10 {f['ndcg_at_10']['value']:.4f} [{f['ndcg_at_10']['ci_low']:.4f}, "
             f"{f['ndcg_at_10']['ci_high']:.4f}], recall@10 {f['recall_at_10']['value']:.4f} "
             f"[{f['recall_at_10']['ci_low']:.4f}, {f['recall_at_10']['ci_high']:.4f}].", "",
             "| score | dropped | judged-relevant documents dropped | nDCG@10 | Δ [95% CI] | p | recall@10 | "
             "Δ [95% CI] | p |", "|---|---|---|---|---|---|---|---|---|"]
    for r in res["runs"]:
        cells = [r["by"], f"{r['drop']:.0%}", f"{r['relevant_dropped']} of {r['relevant']}"]
        for m in METRICS:
            x = r[m]
            cells += [f"{x['value']:.4f}", f"{x['difference']:+.4f} [{x['ci_low']:+.4f}, {x['ci_high']:+.4f}]",
                      f"{x['p_value']:.3g}"]
        lines.append("| " + " | ".join(cells) + " |")
    lo, hi = res["norm_range"]
    note = (f"MiniLM's vectors are normalised (norms {lo:.4f} to {hi:.4f}), so `norm` orders by rounding noise and is "
            "a second random baseline here; on an unnormalised model (the paper's TAS-B) it is the magnitude "
            "estimator. Cranfield's queries judge most documents relevant to some query, so every dropped document "
            "can cost recall: a harder setting than MS MARCO, where most passages are never judged.")
    lines += ["", *textwrap.wrap(note, WIDTH)]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the 25%% cut only")


if __name__ == "__main__":
    sys.exit(main())
