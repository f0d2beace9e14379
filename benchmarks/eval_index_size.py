"""Index-size stress test: Cranfield's precision as distractors grow the index (MiniLM, BM25), for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_index_size.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only index-size`` (into EVALUATION.md).

:func:`repspace.evaluate.index_size_stress` on Cranfield (1,400 documents, 225 judged
queries) with all-MiniLM-L6-v2 (exact cosine) and BM25 (bm25s), the index grown to
x1, x2, x5 and x10 with STS-B's distinct sentences (train, dev and test; captions,
news and forum lines, never about aeronautics) shuffled with seed 0; 1,000
resamples. The dense vectors are also ranked at reduced widths (S097's claim is about
dimension): their first 64/128/256 coordinates (a Matryoshka prefix; MiniLM is not
trained for it, so a stand-in) and their PCA to 64/128/256 (fitted on the x10 index).
``--quick``: the static model (64-d; widths 16 and 32), x1 and x2.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import common as c

DATA = c.REPO.parent / "shared" / "data"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
FACTORS = (1, 2, 5, 10)
SEED = 0
#: Reduced widths of the dense vectors (full run; the quick run's static model has 64 dimensions).
WIDTHS, QUICK_WIDTHS = (64, 128, 256), (16, 32)


def distractors(seed: int = SEED) -> list[str]:
    """STS-B's distinct sentences (all three splits, first occurrence kept), in a seeded random order."""
    import numpy as np

    from repspace.evaluate import load_sts

    sentences: list[str] = []
    for split in ("train", "dev", "test"):
        pairs = load_sts(DATA / "stsb" / f"stsb-en-{split}.csv")
        sentences += [*pairs.sentences1, *pairs.sentences2]
    unique = list(dict.fromkeys(sentences))
    return [unique[i] for i in np.random.default_rng(seed).permutation(len(unique))]


def measure(quick: bool) -> dict[str, Any]:
    """``IndexSizeResult.to_dict()`` with the encoder's name and the distractors' count."""
    from repspace.engines.encoders import get_encoder
    from repspace.evaluate import index_size_stress, load_beir

    encoder = "static" if quick else "minilm"
    factors = (1, 2) if quick else FACTORS
    widths = QUICK_WIDTHS if quick else WIDTHS
    systems = ("dense", "bm25", *(f"dense-{m}{w}" for m in ("prefix", "pca") for w in widths))
    c.log(f"evaluation: index-size {encoder} x{factors[-1]}, {len(systems)} rankers")
    pool = distractors()
    if encoder == "minilm":  # MiniLM is symmetric (queries as documents): its vectors kept in benchmarks/.cache
        from search_data import embed_cached

        model: Any = lambda texts: embed_cached(list(texts))[0]  # noqa: E731
    else:
        model = get_encoder(encoder)
    res = index_size_stress(model, load_beir(DATA / "cranfield-beir"), pool, factors, systems=systems, seed=SEED)
    return {**res.to_dict(), "encoder": encoder, "distractor_pool": len(pool), "widths": list(widths)}


INTRO = """\
## Index-size stress test: precision as distractors grow the index

Reimers & Gurevych (2021, S097) show that dense retrieval loses more than BM25 when a collection's index grows
with irrelevant documents: a low-dimensional space has more room for false positives. Here Cranfield's 1,400
aeronautics abstracts are indexed alone (x1), then with STS-B's distinct sentences (image captions, news
headlines, forum lines; {pool:,} in all, shuffled with seed 0) added until the index holds {grown} times as
many documents; the indexes are nested, so each drop is the cost of the added documents alone. Dense is
{encoder} with exact cosine search, BM25 is bm25s (Lucene variant, English stemming and stop words), both as
`repspace eval retrieval` scores them. Intervals are 95% percentile bootstraps over the {n_queries} judged
queries; the drop is nDCG@10 at x1 minus at xN, paired over the queries (bootstrap interval, randomization test
p; 1,000 resamples each). Measured by `benchmarks/eval_index_size.py` (`benchmarks/evaluation.py --only
index-size`) with `repspace.evaluate.index_size_stress`, on the machine above."""
ENCODERS = {"minilm": "all-MiniLM-L6-v2 (384-d)", "static": "the static model2vec model (64-d)"}


def _ci(iv: dict[str, Any] | None) -> str:
    return "" if iv is None else f" [{iv['low']:.4f}, {iv['high']:.4f}]"


def _drop(d: dict[str, Any] | None) -> str:
    if d is None:
        return ""
    ci = "" if d["ci_low"] is None else f" [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]"
    p = "" if d["p_value"] is None else f", p {d['p_value']:.3g}"
    return f"{d['difference']:+.4f}{ci}{p}"


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the setting, the table, what the figures say."""
    if not res.get("points"):
        return INTRO.format(pool=0, grown="2, 5 and 10", encoder="MiniLM", n_queries=225).splitlines()
    grown = sorted({p["factor"] for p in res["points"] if p["factor"] > 1})
    grown_text = ", ".join(map(str, grown[:-1])) + (" and " if len(grown) > 1 else "") + str(grown[-1])
    intro = INTRO.format(pool=res["distractor_pool"], grown=grown_text,
                         encoder=ENCODERS.get(res["encoder"], res["encoder"]), n_queries=res["n_queries"])
    head, blank, body = intro.split("\n", 2)
    lines = [head, blank, *textwrap.fill(body.replace("\n", " "), width=WIDTH, break_on_hyphens=False).splitlines()]
    lines += ["", "| ranker | index | documents | precision@10 [95% CI] | nDCG@10 [95% CI] | distractors in top 10 "
              "| nDCG@10 drop from x1 [95% CI], p |", "|---|---|---|---|---|---|---|"]
    for p in res["points"]:
        if p["system"] not in ("dense", "bm25"):
            continue
        lines.append(f"| {p['system']} | x{p['factor']} | {p['n_documents']:,} | {p['precision_at_10']:.4f}"
                     f"{_ci(p['precision_interval'])} | {p['ndcg_at_10']:.4f}{_ci(p['ndcg_interval'])} | "
                     f"{p['distractors_in_top10']:.2f} | {_drop(p['ndcg_drop'])} |")
    last = {p["system"]: p for p in res["points"]}
    first = {p["system"]: p for p in res["points"] if p["factor"] == 1}
    if {"dense", "bm25"} <= last.keys():
        d, b = last["dense"], last["bm25"]
        text = (f"What the figures say: at x{d['factor']} dense retrieval keeps {d['ndcg_at_10']:.4f} of nDCG@10 "
                f"({d['ndcg_at_10'] / first['dense']['ndcg_at_10']:.1%} of its x1 score, "
                f"{d['distractors_in_top10']:.2f} distractors in a top 10) and BM25 {b['ndcg_at_10']:.4f} "
                f"({b['ndcg_at_10'] / first['bm25']['ndcg_at_10']:.1%}, {b['distractors_in_top10']:.2f}). "
                "The order is the reverse of the paper's (dense falling faster than BM25): its distractors come from "
                "the same web corpus as the relevant passages, these are off-topic sentences, the easy case for a "
                "dense model, while BM25 lets any sentence sharing a rare query term into the top 10.")
        lines += ["", *textwrap.fill(text, width=WIDTH, break_on_hyphens=False).splitlines()]
    return lines + _widths(res)


def _widths(res: dict[str, Any]) -> list[str]:
    """The table by width: precision@10, distractors in the top 10 and the nDCG@10 drop per index size."""
    by: dict[str, dict[int, dict[str, Any]]] = {}
    for p in res["points"]:
        if p["system"].startswith("dense"):
            by.setdefault(p["system"], {})[p["factor"]] = p
    if len(by) < 2:
        return []
    factors = sorted(next(iter(by.values())))
    text = ("By width (S097's false positives by dimension): the same dense vectors cut to their first w "
            "coordinates (prefix: a Matryoshka-style truncation; MiniLM was not trained for it, so this is only a "
            "stand-in for a Matryoshka model) or projected on the top w principal axes of the largest index's "
            "documents (PCA, one projection for every size), re-normalised, exact cosine. Cells: precision@10 / "
            "distractors in a top 10; last column: nDCG@10 at x1 minus at the largest index [95% CI].")
    lines = ["", *textwrap.fill(text, width=WIDTH, break_on_hyphens=False).splitlines(), "",
             "| ranker | " + " | ".join(f"x{f} P@10 / distractors" for f in factors)
             + f" | nDCG@10 x1 → x{factors[-1]} | drop [95% CI] |", "|---" * (len(factors) + 3) + "|"]
    for system, points in by.items():
        cells = [f"{points[f]['precision_at_10']:.4f} / {points[f]['distractors_in_top10']:.2f}" for f in factors]
        last = points[factors[-1]]
        cells += [f"{points[factors[0]]['ndcg_at_10']:.4f} → {last['ndcg_at_10']:.4f}", _drop(last["ndcg_drop"])]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the static model, x1 and x2")


if __name__ == "__main__":
    sys.exit(main())
