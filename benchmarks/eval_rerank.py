"""Learned reranker: LightGBM lambdarank over dense and lexical features on Cranfield (``repspace rerank train``).

Usage: ``.venv/bin/python benchmarks/eval_rerank.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only rerank`` (into EVALUATION.md).

Cranfield's 1,400 abstracts (title and text) ingested into a space with all-MiniLM-L6-v2,
then :func:`repspace.workflows.rerank.train_reranker` (what ``repspace rerank train cran
--qrels cranfield-beir --out ranker.json`` runs) with seeds 0 to 4: each seed draws its own
train/dev/test split of the 225 judged queries (135/45/45). ``--quick``: the static model, seed 0.
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import common as c

DATA = c.REPO.parent / "shared" / "data"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
SEEDS = (0, 1, 2, 3, 4)


def _space(folder: Path, encoder: str) -> Any:
    """Cranfield's corpus as a space ``cran`` (ids = corpus ``_id``; the one empty abstract left out)."""
    from repspace import Store
    from repspace.engines.eval.retrieval import load_beir
    from repspace.workflows.ingest.files import ingest_file

    data = load_beir(DATA / "cranfield-beir")
    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i, text in zip(data.corpus_ids, data.corpus_texts):
            if text.strip():
                f.write(json.dumps({"id": i, "text": text}) + "\n")
    store = Store(folder / "store.db")
    ingest_file(store, "cran", corpus, encoder=encoder)
    return store.space("cran")


def measure(quick: bool) -> dict[str, Any]:
    """``{"encoder", "seeds": {seed: RerankTrainResult.to_dict() without the recipe}}``."""
    from repspace.workflows.rerank import RerankTrainRequest, train_reranker

    encoder = "static" if quick else "minilm"
    out: dict[str, Any] = {"encoder": encoder, "seeds": {}}
    with tempfile.TemporaryDirectory() as tmp:
        c.log(f"evaluation: rerank, Cranfield space with {encoder}")
        space = _space(Path(tmp), encoder)
        for seed in SEEDS[:1] if quick else SEEDS:
            c.log(f"evaluation: rerank seed {seed}")
            req = RerankTrainRequest(qrels=str(DATA / "cranfield-beir"), out=str(Path(tmp) / f"m{seed}.json"),
                                     seed=seed)
            res = train_reranker(space, req).to_dict()
            res.pop("model")
            res["lexical"] = res.pop("recipe")["lexical"]
            out["seeds"][str(seed)] = res
        space.store.close()
    return out


INTRO = """\
## Learned reranker: gradient-boosted learning-to-rank over dense and lexical features (S035)

`repspace rerank train` fits LightGBM 4.7.0's lambdarank (LambdaMART; 300 rounds at most, learning rate 0.05,
15 leaves, early stopping after 30 rounds without a better dev nDCG@10, one thread, deterministic) on the top 100
candidates of an exact dense search, each (query, candidate) pair described by 7 features: the dense score, its
rank, the candidate's BM25 score (lucene, k1 1.5, b 0.75, English stemmer and stop words), query and document
lengths in BM25 terms, and the number and share of query terms the document holds. The judged queries are split
by the seed into train/dev/test (60/20/20%); the figures are nDCG@10 on the test queries of the reranker, the
dense ranking it starts from, BM25 over the whole corpus, and their reciprocal-rank fusion (RRF, c = 60, top 100
of each), with 95% bootstrap intervals and the reranker's paired difference to each (paired bootstrap interval,
randomization p; 1,000 resamples). S035 reports +11% nDCG@10 over its first stage (another collection and
first stage). Measured by `benchmarks/eval_rerank.py` (`benchmarks/evaluation.py --only rerank`) on the machine
above."""


def _ci(low: float | None, high: float | None) -> str:
    return "" if low is None else f"[{low:.4f}, {high:.4f}]"


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: seed 0's table with intervals, then every seed's figures."""
    lines = INTRO.splitlines()
    seeds = res.get("seeds") or {}
    if not seeds:
        return lines
    first = seeds[min(seeds, key=int)]
    q = first["queries"]
    name = {"minilm": "all-MiniLM-L6-v2", "static": "the static model (64-d)"}.get(res["encoder"], res["encoder"])
    lines += ["", f"Cranfield, {name}, seed {min(seeds, key=int)} ({q['train']} train, {q['dev']} dev, "
              f"{q['test']} test queries; {first['rounds']} rounds kept):", "",
              "| ranking | nDCG@10 [95% CI] | reranker minus it [95% CI] | p |", "|---|---|---|---|"]
    diffs = {d["b"]: d for d in first["comparisons"]}
    for system, s in first["scores"].items():
        d = diffs.get(system)
        diff = f"{d['difference']:+.4f} {_ci(d['ci_low'], d['ci_high'])}" if d else ""
        p = f"{d['p_value']:.3g}" if d and d["p_value"] is not None else ""
        lines.append(f"| {system} | {s['ndcg_at_10']:.4f} {_ci(s['low'], s['high'])} | {diff} | {p} |")
    if len(seeds) > 1:
        lines += ["", "Every seed (its own split; test nDCG@10):", "",
                  "| seed | reranker | dense | BM25 | RRF | rounds |", "|---|---|---|---|---|---|"]
        for seed in sorted(seeds, key=int):
            s = seeds[seed]["scores"]
            lines.append(f"| {seed} | {s['reranker']['ndcg_at_10']:.4f} | {s['dense']['ndcg_at_10']:.4f} | "
                         f"{s['bm25']['ndcg_at_10']:.4f} | {s['rrf']['ndcg_at_10']:.4f} | {seeds[seed]['rounds']} |")
        mean = {k: sum(seeds[x]["scores"][k]["ndcg_at_10"] for x in seeds) / len(seeds)
                for k in ("reranker", "dense", "bm25", "rrf")}
        text = (f"Mean over the {len(seeds)} seeds: reranker {mean['reranker']:.4f}, dense {mean['dense']:.4f}, "
                f"BM25 {mean['bm25']:.4f}, RRF {mean['rrf']:.4f}: the reranker is "
                f"{100 * (mean['reranker'] / mean['dense'] - 1):+.1f}% over its dense first stage "
                f"(S035: +11%) and {100 * (mean['reranker'] / mean['rrf'] - 1):+.1f}% against RRF.")
        lines += ["", *textwrap.fill(text, width=WIDTH).splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the static model, seed 0")


if __name__ == "__main__":
    sys.exit(main())
