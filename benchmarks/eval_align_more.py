"""Anchor growth, subspace-restricted alignment and text-to-concept on real spaces (issue 34, align).

Usage: ``.venv/bin/python benchmarks/eval_align_more.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only align`` (into EVALUATION.md).

- Words: the :data:`N_WORDS` most frequent alphabetic GloVe 6B 50d words and the same words encoded by MiniLM
  (``minilm``, 384-d). :func:`~repspace.align.grow_space_anchors` from 10 random seed anchors, ``--grow 90``,
  default splits (candidates up to 2,000, fit and held-out a fifth each, at most 1,000), for the centred ``gap``
  objective (the default) and the uncentred ``agreement``; held-out agreement, gap, top1 and mean rank for the
  seed, the grown set, and the seed plus as many random candidates. Then
  :func:`~repspace.align.discover_space_anchors` (candidates given unpaired) from 100 seed anchors (1 round of
  30 pairs) and from 300 (2 rounds of 50): precision of the found pairs and the same held-out figures.
- Sentences: the first :data:`N_SENTENCES` distinct STS-B train/dev sentences plus the 200 Pang & Lee polarity
  sentences of gensim's test data (labelled ``pos``/``neg``), encoded by the static model2vec model (``static``,
  64-d) and by MiniLM. Anchors between them as above; :func:`~repspace.align.subspace_align_spaces` static →
  MiniLM at ranks 8, 16, 32, 64 (Procrustes and ridge) beside the full map; and
  :func:`~repspace.align.text_to_concept_spaces` static → MiniLM, labels written ``positive``/``negative``,
  with the templates ``{}`` and ``a {} movie review``, half of each class held out (seed 0).
"""

from __future__ import annotations

import csv
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

import common as c

DATA = c.REPO.parent / "shared" / "data" / "stsb"
N_WORDS, N_SENTENCES = 5000, 8000
QUICK_WORDS, QUICK_SENTENCES = 1500, 1500


def _words(n: int) -> tuple[list[str], np.ndarray]:
    """The alphabetic words among the ``n`` most frequent of GloVe (the demo's records, duplicates dropped)."""
    from repspace.workflows.demo import glove_records

    rec = glove_records()
    keep = [i for i, w in enumerate(rec.ids[:n]) if w.isalpha()]
    return [rec.ids[i] for i in keep], np.asarray(rec.vectors[keep], np.float32)


def _sentences(n: int) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    sys.path.insert(0, str(c.REPO / "tests"))
    from _sentiment_data import pang_lee_rows

    sents: list[str] = []
    for part in ("train", "dev"):
        with (DATA / f"stsb-en-{part}.csv").open(newline="", encoding="utf-8") as f:
            for row in csv.reader(f):
                sents += [row[0].strip(), row[1].strip()]
    sents = [s for s in dict.fromkeys(sents) if s][:n]
    rows = pang_lee_rows()
    ids = [f"s{i}" for i in range(len(sents))] + [f"pl{i}" for i in range(len(rows))]
    meta = [{} for _ in sents] + [{"label": y} for _, y in rows]
    return ids, sents + [t for t, _ in rows], meta


def _anchors(store: Any, a: str, b: str) -> dict[str, Any]:
    from repspace.align import discover_space_anchors, grow_space_anchors

    out = {}
    for objective, center in (("gap", True), ("agreement", False)):
        t0 = time.perf_counter()
        d = grow_space_anchors(store, a, b, seed_anchors=10, grow=90, objective=objective, center=center).to_dict()
        out[f"{objective}{'_centred' if center else ''}"] = {
            "seconds": round(time.perf_counter() - t0, 1), "n_added": d["n_added"], "fit": d["fit"],
            "test": d["test"], "stopped_early": d["stopped_early"],
            "retrieval": {k: {"top1": v["top1"], "mean_rank": v["mean_rank"]} for k, v in d["retrieval"].items()}}
    for n_seed, rounds, per_round in ((100, 1, 30), (300, 2, 50)):
        d = discover_space_anchors(store, a, b, seed_anchors=n_seed, rounds=rounds, per_round=per_round).to_dict()
        out[f"discover_seed{n_seed}"] = {
            "n_found": d["n_found"], "precision": d["precision"], "round_precision": d["round_precision"],
            "test": d["test"],
            "retrieval": {k: {"top1": v["top1"], "mean_rank": v["mean_rank"]} for k, v in d["retrieval"].items()}}
    return out


def measure(quick: bool) -> dict[str, Any]:
    from repspace import Store
    from repspace.align import subspace_align_spaces, text_to_concept_spaces
    from repspace.engines.encoders import get_encoder

    n_words, n_sents = (QUICK_WORDS, QUICK_SENTENCES) if quick else (N_WORDS, N_SENTENCES)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "align.db")
        words, glove = _words(n_words)
        c.log(f"{len(words)} words: MiniLM")
        store.create_space("glove", dim=50).add(words, glove)
        store.create_space("minilm-words", dim=384).add(words, get_encoder("minilm").encode(words, batch_size=256))
        result: dict[str, Any] = {"words": {"n": len(words), "anchors": _anchors(store, "glove", "minilm-words")}}
        ids, texts, meta = _sentences(n_sents)
        for name in ("static", "minilm"):
            c.log(f"{len(texts)} sentences: {name}")
            store.create_space(name, dim=get_encoder(name).dim).add(ids, get_encoder(name).encode(texts),
                                                                    metadata=meta)
        sub = {m: subspace_align_spaces(store, "static", "minilm", ranks=[8, 16, 32, 64], method=m).to_dict()
               for m in ("procrustes", "ridge")}
        t2c = {tpl: text_to_concept_spaces(store, "static", "minilm", label_field="label", template=tpl,
                                           names={"pos": "positive", "neg": "negative"},
                                           encoder="minilm").to_dict()
               for tpl in ("{}", "a {} movie review")}
        result["sentences"] = {"n": len(texts), "anchors": _anchors(store, "static", "minilm"),
                               "subspace": sub, "text_to_concept": t2c}
        store.close()
    return {"align": result}


def _anchor_rows(what: str, a: dict[str, Any]) -> list[str]:
    rows = []
    for key, label in (("gap_centred", "grown, centred gap (default)"), ("agreement", "grown, plain agreement")):
        g = a[key]
        r = g["retrieval"]
        rows.append(f"| {what} | {label}: {g['n_added']} added | {r['before']['top1']:.3f} / "
                    f"{r['before']['mean_rank']:.0f} | {r['random']['top1']:.3f} / {r['random']['mean_rank']:.0f} | "
                    f"{r['after']['top1']:.3f} / {r['after']['mean_rank']:.0f} |")
    for key in ("discover_seed100", "discover_seed300"):
        g = a[key]
        r = g["retrieval"]
        rows.append(f"| {what} | discovered from {key.removeprefix('discover_seed')} seed anchors: {g['n_found']} "
                    f"pairs, {g['precision']:.0%} right | {r['before']['top1']:.3f} / {r['before']['mean_rank']:.0f} | "
                    f"{r['oracle']['top1']:.3f} / {r['oracle']['mean_rank']:.0f} (true partners) | "
                    f"{r['after']['top1']:.3f} / {r['after']['mean_rank']:.0f} |")
    return rows


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section."""
    r = res["align"]
    w, s = r["words"], r["sentences"]
    lines = ["", "## Anchors, subspaces and text-to-concept (`repspace align-anchors`, `align-discover`, "
             "`align-subspace`, `text-to-concept`)", ""]
    lines += textwrap.fill(
        f"Relative representations (S095) between GloVe 6B 50d and MiniLM over {w['n']:,} words, and between the "
        f"static model (64-d) and MiniLM over {s['n']:,} sentences (STS-B and Pang & Lee): held-out items matched "
        "across the two spaces by their relative vectors (top-1 and mean rank of the true partner), with the 10 seed "
        "anchors alone, the seed plus as many random pairs, and the grown set (growth stops when no candidate raises "
        "the objective on the fit split). Discovery finds pairs among unpaired items (greedy mutual nearest "
        "neighbours).", width=112).splitlines()
    lines += ["", "| spaces | anchors | seed alone: top-1 / mean rank | seed + random (or true partners) | grown or "
                  "discovered |", "|---|---|---|---|---|"]
    lines += _anchor_rows("GloVe ↔ MiniLM words", w["anchors"]) + _anchor_rows("static ↔ MiniLM sentences",
                                                                              s["anchors"])
    sub = s["subspace"]["procrustes"]
    ranks = ", ".join(f"rank {x['rank_x']}: {x['plain']['top1']:.3f}" for x in sub["subspaces"])
    lines += ["", *textwrap.fill(
        f"Subspace-restricted alignment, static → MiniLM, Procrustes on the top-r principal directions of each side, "
        f"{sub['n_train']:,} training pairs, {sub['n_test']:,} held out (top-1 of the true partner): {ranks}; the "
        f"full-space map {sub['full']['top1']:.3f} ({sub['full_csls']['top1']:.3f} with CSLS).",
        width=112).splitlines()]
    t2c = s["text_to_concept"]
    parts = "; ".join(f"template {tpl!r}: zero-shot {v['zero_shot_accuracy']:.2f}" for tpl, v in t2c.items())
    v = next(iter(t2c.values()))
    lines += ["", *textwrap.fill(
        f"Text-to-concept (Moayeri et al. 2023): the static model mapped into MiniLM by ridge on {v['n_pairs']:,} "
        f"paired sentences, Pang & Lee polarity scored zero-shot there against the encoded labels, "
        f"{v['n_test']} held out: {parts}; a logistic probe on the static vectors ({v['n_train']} training "
        f"sentences) {v['probe_accuracy']:.2f}, MiniLM's own zero-shot {v['target_accuracy']:.2f}, majority "
        f"{v['majority']:.2f}.", width=112).splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "fewer words and sentences")


if __name__ == "__main__":
    sys.exit(main())
