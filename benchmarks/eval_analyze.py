"""The analysis questions of issue 34 (`repspace analyze`) asked of real spaces, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_analyze.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only analyze`` (into EVALUATION.md).

GloVe 6B 50d (its 50,000 most frequent words, stored in a scratch store as the CLI would read them) and
all-MiniLM-L6-v2 (the STS-B training sentences, every layer from one forward pass), asked: the
near-orthogonality tolerance and capacity (S144), linear beside nonlinear intrinsic dimension per space and
per layer (S039), the Ollivier-Ricci curvature of the kNN graph (S053), Park et al.'s hierarchical
orthogonality over WordNet (S023), topic geometry with WordNet's lexicographer files as topics (S043),
concept-crystal parallelograms of Google's capital analogies (S042), circularity of days and months (S015),
and the LIMIT critical dimension beside the paper's fitted curve (S045). ``--quick``: 10,000 words,
500 sentences, LIMIT for n = 10 only.
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import common as c
import numpy as np

WIDTH = 112
WORDNET = Path("/usr/share/wordnet")
DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
#: Ideal words (S048): a colour x object grid of MiniLM texts "red car", and GloVe grids of ids (rows: attributes).
COLOURS = ["red", "green", "blue", "yellow", "black", "white", "brown", "purple"]
OBJECTS = ["car", "cup", "hat", "shirt", "chair", "ball", "flower", "house", "bird", "book"]
GLOVE_GRIDS = {
    "gender": [["king", "prince", "man", "father", "son", "brother", "husband", "uncle", "boy", "nephew"],
               ["queen", "princess", "woman", "mother", "daughter", "sister", "wife", "aunt", "girl", "niece"]],
    "tense": [["walk", "play", "look", "work", "talk", "move", "call", "open", "jump", "help"],
              ["walked", "played", "looked", "worked", "talked", "moved", "called", "opened", "jumped", "helped"],
              ["walking", "playing", "looking", "working", "talking", "moving", "calling", "opening", "jumping",
               "helping"]],
}
#: GloVe-V style intervals (S266): a profession set against male and female words.
MALE = ["he", "him", "his", "man", "men", "father", "son", "brother"]
FEMALE = ["she", "her", "hers", "woman", "women", "mother", "daughter", "sister"]
SETS = {"doctor": ["doctor", "surgeon", "physician"], "nurse": ["nurse", "midwife", "nanny"]}
#: WordNet 3.0's noun lexicographer files by number (03-28; lexnames(5WN): Debian's wordnet-base ships no
#: lexnames file).
NOUN_LEXFILES = ("Tops", "act", "animal", "artifact", "attribute", "body", "cognition", "communication", "event",
                 "feeling", "food", "group", "location", "motive", "object", "person", "phenomenon", "plant",
                 "possession", "process", "quantity", "relation", "shape", "state", "substance", "time")
def lexfile_topics(words: list[str]) -> dict[str, str]:
    """Each word's WordNet lexicographer file (noun.animal, noun.food, ...) of its first (most frequent) noun
    sense: index.noun lists a lemma's synsets in sense order, data.noun gives a synset's file number."""
    lexname = dict(enumerate(NOUN_LEXFILES, start=3))
    first: dict[str, str] = {}
    with open(WORDNET / "index.noun", encoding="utf-8") as f:
        for line in f:
            if line.startswith(" "):
                continue
            parts = line.split()
            n_synsets, n_ptr = int(parts[2]), int(parts[3])
            first[parts[0]] = parts[4 + n_ptr + 2]  # lemma pos synset_cnt p_cnt ptr... sense_cnt tagsense_cnt offsets
            assert n_synsets >= 1
    wanted = {w: first[w] for w in words if w in first}
    offsets = set(wanted.values())
    filenum: dict[str, int] = {}
    with open(WORDNET / "data.noun", encoding="utf-8") as f:
        for line in f:
            if line.startswith(" "):
                continue
            off = line[:8]
            if off in offsets:
                filenum[off] = int(line[9:11])
    return {w: lexname[filenum[off]] for w, off in wanted.items() if off in filenum}


def _google_capitals() -> list[list[str]]:
    from gensim.test.utils import datapath

    quads, on = [], False
    for line in Path(datapath("questions-words.txt")).read_text().splitlines():
        if line.startswith(":"):
            on = line.strip() == ": capital-common-countries"
            continue
        if on:
            quads.append(line.lower().split())
    return quads


def measure(quick: bool) -> dict[str, Any]:
    """``{"analyze": {...}}``: every question's result dict."""
    from repspace import Store
    from repspace.analyze import (
        capacity_space,
        circular_space,
        circularity,
        feature_audit_space,
        ideal_words_encoder,
        ideal_words_grid,
        local_topology_space,
        similarity_ci_space,
        simplex_space,
        dimension_layers,
        dimension_space,
        hierarchy_space,
        limit_curve,
        parallelograms_space,
        ricci_space,
        topics_space,
    )
    from repspace.engines.encoders import get_encoder

    n = 10_000 if quick else 50_000
    n_sent = 500 if quick else 5_000
    words, vectors = c.glove()
    out: dict[str, Any] = {"glove_n": n}
    with tempfile.TemporaryDirectory(prefix="eval-analyze-") as tmp:
        store = Store(Path(tmp) / "s.db")
        topics = lexfile_topics(words[:n])
        sp = store.create_space("glove", dim=50, metric="cosine")
        sp.add(words[:n], vectors[:n], metadata=[
            {"log_rank": float(np.log1p(i)), "length": len(w), "first_letter": w[0], "alphabetic": w.isalpha(),
             **({"lexfile": topics[w]} if w in topics else {})} for i, w in enumerate(words[:n])])
        known = set(words[:n])
        c.log(f"evaluation: analyze, GloVe {n:,} words")
        out["capacity_glove"] = capacity_space(sp).to_dict()
        out["dimension_glove"] = dimension_space(sp).to_dict()
        small = store.create_space("glove10k", dim=50, metric="cosine")
        small.add(words[:10_000], vectors[:10_000])
        out["ricci_glove"] = _drop_items(ricci_space(small, k=10).to_dict())
        out["hierarchy_glove"] = _hierarchy(hierarchy_space(sp).to_dict())
        out["topics_glove"] = topics_space(sp, "lexfile", normalize=True).to_dict()
        out["topics_glove_centered"] = topics_space(sp, "lexfile", normalize=True,
                                                      center=True).to_dict()
        par = parallelograms_space(sp, [q for q in _google_capitals() if all(w in known for w in q)]).to_dict()
        out["parallelograms_glove"] = {**_lean(par), "n_quads": len(par["quads"])}
        out["audit_glove"] = feature_audit_space(sp, ["log_rank", "length", "first_letter", "alphabetic", "lexfile"],
                                                 categorical=["first_letter", "alphabetic", "lexfile"]).to_dict()
        if not quick:  # 10,000 words hold too few reptiles for five folds
            out["simplex_glove"] = simplex_space(sp).to_dict()
        out["ideal_glove"] = {name: _lean(ideal_words_grid(sp, grid).to_dict()) for name, grid in GLOVE_GRIDS.items()
                              if all(w in known for row in grid for w in row)}
        out["similarity_ci_glove"] = {
            name: similarity_ci_space(sp, a, MALE, FEMALE, spread_pairs=200_000 if name == "doctor" else None).to_dict()
            for name, a in SETS.items() if all(w in known for w in a)}
        out["local_topology_glove"] = local_topology_space(small, k=10).to_dict()
        out["days_glove"] = circular_space(sp, DAYS).to_dict()
        out["months_glove"] = circular_space(sp, MONTHS).to_dict()
        store.close()
    c.log(f"evaluation: analyze, MiniLM layers over {n_sent:,} STS-B sentences")
    sentences = c.stsb_sentences(n_sent)
    out["dimension_minilm_layers"] = dimension_layers("hf-layers:minilm", sentences).to_dict()
    out["ideal_minilm"] = _lean(ideal_words_encoder("minilm", COLOURS, OBJECTS).to_dict())
    enc = get_encoder("minilm")
    out["days_minilm"] = circularity(enc.encode(DAYS), DAYS).to_dict()
    out["months_minilm"] = circularity(enc.encode(MONTHS), MONTHS).to_dict()
    c.log("evaluation: analyze, LIMIT critical dimension")
    ns = [10] if quick else [10, 20, 40]
    lim = limit_curve(ns).to_dict()
    out["limit"] = lim
    return {"analyze": out}


def _lean(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` without its per-item lists (quadruples, cells): the section reports summaries."""
    return {k: v for k, v in d.items() if k not in ("quads", "cells")}


def _drop_items(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if not isinstance(v, list) or len(v) <= 20}


def _hierarchy(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "pairs"}


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section."""
    r = res["analyze"]
    lines = ["", "## Structure, capacity and dimension (`repspace analyze`, issue 34)", ""]
    lines += textwrap.fill(
        f"GloVe 6B 50d (its {r['glove_n']:,} most frequent words, in a store, as `repspace analyze` reads them) "
        "and all-MiniLM-L6-v2; each question's test against an independent computation is named in "
        "docs/RESEARCH.md. Where a paper gives a figure for the same setting it stands beside ours; the others "
        "are measurements on spaces the papers did not study (their claims are about LLM unembeddings or "
        "hidden states), reported as they came out.", width=WIDTH).splitlines()
    lines += ["", "| question | space | ours | the paper / the reference |", "|---|---|---|---|"]
    for row in _rows(r):
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _rows(r: dict[str, Any]) -> list[list[str]]:
    rows: list[list[str]] = []
    cap = r["capacity_glove"]
    rows.append(["near-orthogonality capacity (S144)", "GloVe",
                 f"ε {cap['epsilon']:.3f} (cosines: mean {cap['cosine_mean']:.3f}, σ {cap['cosine_std']:.3f}); "
                 f"capacity 10^{cap['capacity_log10']:.1f} directions"
                 f"{'' if cap['in_fitted_range'] else ' (ε ≥ 0.1: beyond the range the paper fits)'}",
                 f"random directions in 50 d: mean 0, σ = 1/√50 = {1 / np.sqrt(50):.3f}"])
    rows.append(["linear vs nonlinear ID (S039)", "GloVe", _dims(r["dimension_glove"]), "—"])
    for layer in r["dimension_minilm_layers"]["layers"]:
        rows.append(["", f"MiniLM layer {layer['layer']} ({layer['n']:,} sentences)", _dims(layer), "—"])
    ri = r["ricci_glove"]
    e = ri["edge_curvature"]
    rows.append(["Ollivier-Ricci curvature, kNN k = 10, α = 0.5 (S053)", f"GloVe {ri['n']:,} words",
                 f"mean edge curvature {ri['mean_curvature']:.3f} ({ri['n_edges']:,} edges; 5-95%: {e['q05']:.3f} "
                 f"to {e['q95']:.3f})", "equal to GraphRicciCurvature on the same graph (test)"])
    h = r["hierarchy_glove"]
    b = h["baseline"]
    rows.append(["hierarchical orthogonality (S023)", f"GloVe, WordNet {h['root']} depth {h['depth']}",
                 f"{h['n_pairs']} pairs: mean cos(child − parent, parent) {h['mean_cosine']:+.3f} (shuffled rows "
                 f"{b['mean_cosine']:+.3f}); cos(child, parent) {h['mean_parent_child_cosine']:.3f}",
                 "≈ 0 in Gemma and LLaMA-3 unembeddings (no figure quoted)"])
    for key, label in (("topics_glove", "normalised"), ("topics_glove_centered", "normalised, centred")):
        t = r[key]
        rows.append(["topic geometry (S043)", f"GloVe, WordNet lexicographer files as topics ({label})",
                     f"{t['n_topics']} topics, {t['n']:,} words: within {t['within']:.3f}, across "
                     f"{t['across']:.3f}, separation {t['separation']:.3f}", "within above across"])
    p = r["parallelograms_glove"]
    rows.append(["concept-crystal parallelograms (S042)", "GloVe, Google's capital-common-countries",
                 f"{p['n_quads']} quadruples: residual {p['mean_before']:.3f} → {p['mean_after']:.3f} with "
                 f"{p['distractors']} distractor directions out, {p['mean_random']:.3f} with random ones",
                 "sharper once distractors are projected out (no figure quoted)"])
    for key, label in (("days_glove", "GloVe, days"), ("months_glove", "GloVe, months"),
                       ("days_minilm", "MiniLM, days"), ("months_minilm", "MiniLM, months")):
        cr = r[key]
        rows.append(["circular features (S015)", label, f"top-2 variance {cr['explained_variance']:.3f}, R "
                     f"{cr['resultant']:.3f}, p {cr['p_value']:.3f} (random orderings: mean R "
                     f"{cr['baseline']['mean']:.3f})", "circles in Mistral 7B and Llama 3 8B (no figure quoted)"])
    for name, iw in [("MiniLM, 8 colours x 10 objects (\"red car\")", r["ideal_minilm"]),
                     *((f"GloVe, {g} grid ({v['n_attributes']} x {v['n_objects']} words)", v)
                       for g, v in r["ideal_glove"].items())]:
        h = iw["held_out"]
        rows.append(["ideal words, each cell left out (S048)", name,
                     f"fit explains {iw['explained_variance']:.3f}; left-out cell ranked first "
                     f"{h['ideal_words']['top1']:.1%} (mean rank {h['ideal_words']['mean_rank']:.2f} of "
                     f"{iw['n_cells']}, cosine "
                     f"{h['ideal_words']['mean_cosine']:.3f}); same object's other cells {h['object']['top1']:.1%}, "
                     f"mean of all {h['mean']['top1']:.1%}", "c + a_i + o_j reconstructs compositions"])
    audit = ", ".join(f"{f['feature']} {f['r2']:.4f} (chance {f['chance_r2']:.4f})"
                      for f in r["audit_glove"]["features"])
    rows.append(["representation-strength audit (S119)", f"GloVe {r['audit_glove']['n']:,} words",
                 f"R² of the space on each feature alone: {audit}", "—"])
    sx = r.get("simplex_glove")
    names = "" if sx is None else " / ".join(c.split(".")[0] for c in sx["categories"])
    rows += [] if sx is None else [[
                 "categorical simplex (S023)", f"GloVe, {names}",
                 f"rank {sx['rank']} (affinely independent: {'yes' if sx['affinely_independent'] else 'no'}), "
                 f"regularity {sx['regularity']:.2f}; held-out nearest vertex {sx['balanced_accuracy']:.3f} balanced "
                 f"(nearest mean {sx['centroid_balanced_accuracy']:.3f}, chance {1 / sx['k']:.2f}); plain "
                 f"{sx['accuracy']:.3f} (largest category {sx['chance']:.3f})",
                 "categories form a simplex (no figure quoted)"]]
    for name, sc in r["similarity_ci_glove"].items():
        ci = sc["ci"]
        dif = ci["difference"]
        rows.append(["similarity intervals, bootstrap over items (S266)", f"GloVe, {' / '.join(SETS[name])} vs 8 male "
                     "and 8 female words", f"cos(a, male) − cos(a, female) {dif['estimate']:+.3f} "
                     f"[{dif['low']:+.3f}, {dif['high']:+.3f}] ({ci['level']:.0%}, {ci['resamples']} resamples); order "
                     f"flips in {ci['flip_share']:.1%}", "percentile intervals equal scipy.stats.bootstrap's (test)"])
    spread = r["similarity_ci_glove"].get("doctor", {}).get("spread")
    if spread:
        rows.append(["spread-out statistics of non-matching pairs", f"GloVe {r['glove_n']:,} words",
                     f"mean cos {spread['mean']:.3f}, E[cos²] {spread['second_moment']:.4f}, d·E[cos²] "
                     f"{spread['d_second_moment']:.2f}", "0, 1/d, 1 for directions spread out on the sphere"])
    lt = r["local_topology_glove"]
    feats = ", ".join(f"{f} {lt['features'][f]['q50']:.3f}" for f in ("kdist", "mean_kdist", "local_id", "entropy"))
    rows.append(["local topology per item, k = 10 (S077, S083)", f"GloVe {lt['n']:,} words",
                 f"medians over the items: {feats} (entropy of the softmax of the neighbours' cosines, τ 0.1)",
                 "sklearn NearestNeighbors and the formulas written out (test)"])
    pts = r["limit"]["points"]
    got = ", ".join(f"n {x['n']}: d {x['critical_d']}" for x in pts)
    paper = ", ".join(f"n {x['n']}: d {x['paper_d']}" for x in pts)
    rows.append(["LIMIT critical dimension, top-2 subsets (S045)", "free embeddings (InfoNCE)", got,
                 f"the paper's fitted curve (its figure 2): {paper}"])
    return rows


def _dims(d: dict[str, Any]) -> str:
    pca = d["pca"]
    return (f"PCA {pca['p90']} / {pca['p95']} / {pca['p99']} at 90/95/99%, TwoNN {d['twonn']:.2f}, "
            f"MLE {d['mle']:.2f}")


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "10,000 words, 500 sentences, LIMIT n = 10")


if __name__ == "__main__":
    sys.exit(main())
