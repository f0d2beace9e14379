"""Learned reranker: LightGBM lambdarank over dense and lexical features on Cranfield (``repspace rerank train``).

Usage: ``.venv/bin/python benchmarks/eval_rerank.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only rerank`` (into EVALUATION.md).

Cranfield's 1,400 abstracts (title and text) ingested into a space with all-MiniLM-L6-v2,
then :func:`repspace.workflows.rerank.train_reranker` (what ``repspace rerank train cran
--qrels cranfield-beir --out ranker.json`` runs) with seeds 0 to 4: each seed draws its own
train/dev/test split of the 225 judged queries (135/45/45), and trains two models: one on the dense
candidates, one on the hybrid ones (``--first-stage hybrid``). On each seed's test queries it then
searches as a user does (``Space.search(text, k=10)``, ``hybrid=True``, ``rerank=model``, both) and
scores the four rankings: dense, hybrid, dense+rerank, hybrid+rerank. ``--quick``: the static model,
seed 0.
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


#: The rankings of the search path, as ``Space.search`` options (the model added for ``+rerank``).
SEARCHES = {"dense": {}, "hybrid": {"hybrid": True}, "dense+rerank": {"rerank": "dense"},
            "hybrid+rerank": {"hybrid": True, "rerank": "hybrid"}}


def _search_figures(space: Any, models: dict[str, str], test_ids: list[str]) -> dict[str, float]:
    """Mean nDCG@10 over the test queries of each ranking of :data:`SEARCHES`, searched one query per call."""
    from repspace.engines.eval.ranking import ndcg_at_k
    from repspace.engines.eval.retrieval import load_beir

    data = load_beir(DATA / "cranfield-beir")
    text_of = dict(zip(data.query_ids, data.query_texts))
    out = {}
    for name, options in SEARCHES.items():
        opts = {k: (models[v] if k == "rerank" else v) for k, v in options.items()}
        values = [ndcg_at_k([h.id for h in space.search(text_of[q], k=10, **opts)], data.qrels[q], 10)
                  for q in test_ids]
        out[name] = float(sum(values) / len(values))
    return out


def measure(quick: bool) -> dict[str, Any]:
    """``{"encoder", "seeds": {seed: RerankTrainResult.to_dict() without the recipe}, "hybrid_seeds": {seed:
    the same for the model trained on hybrid candidates}, "search": {seed: {ranking: nDCG@10}}}``."""
    from repspace.engines.search.ltr import RankerModel
    from repspace.workflows.rerank import RerankTrainRequest, train_reranker

    encoder = "static" if quick else "minilm"
    out: dict[str, Any] = {"encoder": encoder, "seeds": {}, "hybrid_seeds": {}, "search": {}}
    with tempfile.TemporaryDirectory() as tmp:
        c.log(f"evaluation: rerank, Cranfield space with {encoder}")
        space = _space(Path(tmp), encoder)
        for seed in SEEDS[:1] if quick else SEEDS:
            c.log(f"evaluation: rerank seed {seed}")
            models = {}
            for source, key in (("dense", "seeds"), ("hybrid", "hybrid_seeds")):
                req = RerankTrainRequest(qrels=str(DATA / "cranfield-beir"), first_stage=source,
                                         out=str(Path(tmp) / f"{source}{seed}.json"), seed=seed)
                res = train_reranker(space, req).to_dict()
                models[source] = res.pop("model")
                res["lexical"] = res.pop("recipe")["lexical"]
                out[key][str(seed)] = res
            test_ids = RankerModel.load(models["dense"]).recipe["trained_on"]["queries"]["test"]
            out["search"][str(seed)] = _search_figures(space, models, test_ids)
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
    return lines + _render_search(res)


SEARCH_INTRO = """\
Reranking at search time (`repspace search cran TEXT --rerank MODEL`, with `--hybrid` for the hybrid candidates):
each seed trains one model on the dense candidates (`rerank train`) and one on the hybrid ones (`rerank train
--first-stage hybrid`: the top 100 of dense and BM25 fused by RRF, c = 60), and its 45 test queries are searched
one per call as a user does (`Space.search(text, k=10)` with `hybrid=True`, `rerank=model`, or both); nDCG@10 of
the four rankings:"""


def _render_search(res: dict[str, Any]) -> list[str]:
    search = res.get("search") or {}
    if not search:
        return []
    names = list(SEARCHES)
    lines = ["", *SEARCH_INTRO.splitlines(), "", "| seed | " + " | ".join(names) + " |",
             "|---" * (len(names) + 1) + "|"]
    for seed in sorted(search, key=int):
        lines.append(f"| {seed} | " + " | ".join(f"{search[seed][n]:.4f}" for n in names) + " |")
    mean = {n: sum(search[x][n] for x in search) / len(search) for n in names}
    lines.append("| mean | " + " | ".join(f"**{mean[n]:.4f}**" for n in names) + " |")
    text = (f"Over the {len(search)} seeds the reranker lifts the dense search by "
            f"{100 * (mean['dense+rerank'] / mean['dense'] - 1):+.1f}% and the hybrid search by "
            f"{100 * (mean['hybrid+rerank'] / mean['hybrid'] - 1):+.1f}% (S035: +11% over its first stage).")
    return lines + ["", *textwrap.fill(text, width=WIDTH).splitlines()]


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the static model, seed 0")


if __name__ == "__main__":
    sys.exit(main())
