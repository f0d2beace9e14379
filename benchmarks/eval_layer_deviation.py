"""REMA manifold deviation per layer and the moment probe (``repspace layers deviation / moments``): EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_layer_deviation.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only layer-deviation`` (into EVALUATION.md).

Two measurements on ``hf-layers:minilm`` through :mod:`repspace.layers`:

- REMA (S011): :func:`~repspace.layers.layer_deviation` with the first :data:`N_REFERENCE` sentence1 of STS-B train
  as the reference ("inputs the model handles well"), k = 10, l2; scored, in one call, the first :data:`N_TEST`
  sentence1 of STS-B test (in-domain) and each out-of-domain set (:data:`OUT_OF_DOMAIN`: Cranfield titles, the same
  STS-B test sentences with their words shuffled). Per layer, the AUROC of the z-score separating in-domain from
  each set, with a bootstrap 95% interval (:data:`RESAMPLES` resamples of both groups, seed 0); the divergence
  layer (REMA's "divergence point": the first layer where the deviation becomes significant against the in-domain
  baseline), here the first layer whose AUROC interval lies above 0.5.
- The moment probe (S237): :func:`~repspace.layers.moment_probe_file` on the shipped SentEval sample
  (``tests/data/senteval-probing``: sentence length, tense), rank 8, logistic, 5 folds, permuted-label control,
  seed 0; the ``mean``, ``mean+var`` and ``mean+var+lowrank`` probes side by side per layer, each with its 95%
  t-interval over the folds and its selectivity (score minus control score).

``--quick``: 200 reference and 60 test sentences, layers 0, 3 and 6 of the probe, on the tense file only.
"""

from __future__ import annotations

import csv
import json
import sys
import textwrap
import time
from typing import Any

import numpy as np

import common as c

DATA = c.REPO.parent / "shared" / "data"
PROBING = c.REPO / "tests" / "data" / "senteval-probing"
ENCODER, K, METRIC, RANK, FOLDS, RESAMPLES, SEED = "hf-layers:minilm", 10, "l2", 8, 5, 1000, 0
N_REFERENCE, N_TEST = 1000, 300
QUICK_REFERENCE, QUICK_TEST, QUICK_LAYERS = 200, 60, [0, 3, 6]
#: The out-of-domain sets, in the table's order.
OUT_OF_DOMAIN = ("Cranfield titles", "STS-B test, words shuffled")
#: The sets' names in the reading's sentences.
READING_NAMES = {"Cranfield titles": "Cranfield titles", "STS-B test, words shuffled": "word-shuffled STS-B sentences"}
#: The probed SentEval sample files: file stem -> name in the table.
PROBE_TASKS = {"sentence_length": "SentLen (6 classes)", "past_present": "Tense (2 classes)"}
#: The width the section's paragraphs are wrapped at.
WIDTH = 112


def sts_sentences(name: str, n: int) -> list[str]:
    """The first ``n`` sentence1 of an STS-B file."""
    with open(DATA / "stsb" / name, encoding="utf-8", newline="") as f:
        return [row[0] for row, _ in zip(csv.reader(f), range(n))]


def cranfield_titles(n: int) -> list[str]:
    with open(DATA / "cranfield-beir" / "corpus.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["title"] for line, _ in zip(f, range(n))]


def shuffled(texts: list[str], seed: int = SEED) -> list[str]:
    """Each text's whitespace words in a seeded random order (a bag of the same words)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.permutation(t.split())) for t in texts]


def auroc(inside: np.ndarray, outside: np.ndarray) -> float:
    """P(an ``outside`` score > an ``inside`` one) + half the ties: the Mann-Whitney AUROC (scikit-learn's
    ``roc_auc_score`` with ``outside`` as the positives), by counting against the sorted ``inside``."""
    ordered = np.sort(inside)
    below = np.searchsorted(ordered, outside, side="left")
    ties = np.searchsorted(ordered, outside, side="right") - below
    return float((below.sum() + 0.5 * ties.sum()) / (len(inside) * len(outside)))


def auroc_interval(inside: np.ndarray, outside: np.ndarray) -> tuple[float, float, float]:
    """:func:`auroc` and its percentile bootstrap 95% interval (both groups resampled, :data:`RESAMPLES` times,
    seed :data:`SEED`)."""
    rng = np.random.default_rng(SEED)
    boots = [auroc(inside[rng.integers(0, len(inside), len(inside))],
                   outside[rng.integers(0, len(outside), len(outside))]) for _ in range(RESAMPLES)]
    return auroc(inside, outside), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))


def measure_deviation(quick: bool) -> dict[str, Any]:
    """Per out-of-domain set and layer, the AUROC with its interval; the divergence layer; the deviation summary."""
    from repspace.layers import layer_deviation

    n_ref, n_test = (QUICK_REFERENCE, QUICK_TEST) if quick else (N_REFERENCE, N_TEST)
    ref = sts_sentences("stsb-en-train.csv", n_ref)
    held = sts_sentences("stsb-en-test.csv", n_test)
    sets = dict(zip(OUT_OF_DOMAIN, (cranfield_titles(n_test), shuffled(held)), strict=True))
    t0 = time.perf_counter()
    res = layer_deviation(ENCODER, ref, held + [t for texts in sets.values() for t in texts], k=K, metric=METRIC)
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {"n_reference": n_ref, "n_test": n_test, "k": K, "metric": METRIC,
                           "layers": list(res.layers), "seconds": round(seconds, 1), "sets": {}}
    start = n_test
    for name, texts in sets.items():
        rows = []
        for layer, d in zip(res.layers, res.deviations, strict=True):
            auc, lo, hi = auroc_interval(d.z[:n_test], d.z[start:start + len(texts)])
            rows.append({"layer": int(layer), "auroc": auc, "ci": [lo, hi],
                         "mean_z_in": float(d.z[:n_test].mean()),
                         "mean_z_out": float(d.z[start:start + len(texts)].mean())})
        above = [r["layer"] for r in rows if r["ci"][0] > 0.5]
        out["sets"][name] = {"n": len(texts), "rows": rows, "divergence_layer": above[0] if above else None,
                             "separated_after": bool(above) and above == [r["layer"] for r in rows
                                                                          if r["layer"] >= above[0]]}
        start += len(texts)
    return out


def measure_probe(quick: bool) -> dict[str, Any]:
    """Per SentEval sample file, ``MomentProbe.to_dict()`` rows (the per-fold probes left out) and its seconds."""
    from repspace.layers import moment_probe_file

    out = {}
    tasks = ["past_present"] if quick else list(PROBE_TASKS)
    for task in tasks:
        c.log(f"evaluation: moment probe {task}")
        t0 = time.perf_counter()
        r = moment_probe_file(ENCODER, PROBING / f"{task}.txt", layers=QUICK_LAYERS if quick else "all", rank=RANK,
                              cv=FOLDS, seed=SEED)
        d = r.to_dict()
        del d["probes"]
        out[task] = {**d, "seconds": round(time.perf_counter() - t0, 1)}
    return out


def measure(quick: bool) -> dict[str, Any]:
    """``deviation`` (:func:`measure_deviation`) and ``probe`` (:func:`measure_probe`)."""
    c.log("evaluation: layer deviation")
    return {"deviation": measure_deviation(quick), "probe": measure_probe(quick)}


DEVIATION_INTRO = (
    "REMA (S011): `repspace.layers.layer_deviation(\"{encoder}\", reference, texts, k={k}, metric=\"{metric}\")` "
    "(`repspace layers deviation`). Reference, the inputs the model handles well: the first {n_reference:,} "
    "sentence1 of STS-B train; in-domain: the first {n_test} sentence1 of STS-B test; out of domain: the first "
    "{n_test} Cranfield titles, and the same STS-B test sentences with their words shuffled (seed 0). Each text's "
    "deviation at a layer is its mean l2 distance to its {k} nearest reference states as a z-score of the reference's "
    "own leave-one-out distances. AUROC of that z-score separating the in-domain texts from each other set, with a "
    "bootstrap 95% interval ({boot:,} resamples of both groups); {seconds:.0f} s for the states and distances:")
DIVERGENCE = (
    "Divergence layer (REMA's divergence point: the first layer where the deviation becomes significant against the "
    "in-domain baseline; here the first layer whose AUROC interval lies above 0.5): {layers}. REMA's paper defines "
    "the point on reasoning states of LLMs against correct generations; its figures are not comparable and not "
    "quoted.")
DEVIATION_READING = (
    "Reading: {first} are separated from layer {first_div} on, best at L{first_best} ({first_best_auc:.3f}), "
    "{first_last} at L{last}; {second} are {second_l0} at layer 0 (token embeddings mean-pooled: a bag of "
    "words, AUROC {second_l0_auc:.3f}), best separated at L{second_best} ({second_best_auc:.3f}) and {second_last} "
    "at L{last} ({second_last_auc:.3f}).")
PROBE_INTRO = (
    "Moment probe (S237): `repspace.layers.moment_probe_file(\"{encoder}\", FILE, rank={rank}, cv={folds}, seed=0)` "
    "(`repspace layers moments`) on the shipped SentEval sample (`tests/data/senteval-probing`, every split pooled, "
    "the probe's own {folds} folds): logistic probes on each text's mean-pooled state (`mean`, 384 features), mean "
    "and per-dimension variance of its token states (`+var`, 768) and those with the covariance in a fixed rank-{rank} "
    "basis (`+lowrank`, {lowrank_d}); accuracy with the 95% t-interval over the folds, and the selectivity (accuracy "
    "minus that of the same probe on permuted labels).")


def _fill(text: str) -> list[str]:
    return textwrap.fill(text, width=WIDTH, break_on_hyphens=False, break_long_words=False).splitlines()


def _deviation_lines(d: dict[str, Any]) -> list[str]:
    lines = _fill(DEVIATION_INTRO.format(encoder=ENCODER, boot=RESAMPLES, **{k: d[k] for k in (
        "k", "metric", "n_reference", "n_test", "seconds")}))
    names = list(d["sets"])
    lines += ["", "| layer | " + " | ".join(f"{n} (n={d['sets'][n]['n']})" for n in names) + " |",
              "|---|" + "---|" * len(names)]
    for j, layer in enumerate(d["layers"]):
        cells = [d["sets"][n]["rows"][j] for n in names]
        lines.append(f"| {layer} | " + " | ".join(f"{r['auroc']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
                                                for r in cells) + " |")
    div = "; ".join(f"{n}: " + (f"L{s['divergence_layer']}" + ("" if s["separated_after"] else
                                                              " (not separated at every later layer)")
                                if s["divergence_layer"] is not None else "none")
                    for n, s in d["sets"].items())
    lines += [""] + _fill(DIVERGENCE.format(layers=div))
    if len(names) == 2 and all(d["sets"][n]["divergence_layer"] is not None for n in names):
        a, b = (d["sets"][n]["rows"] for n in names)
        best_a, best_b = max(a, key=lambda r: r["auroc"]), max(b, key=lambda r: r["auroc"])
        drop = a[-1]["auroc"] < best_a["auroc"] - 0.05
        lines += [""] + _fill(DEVIATION_READING.format(
            first=READING_NAMES.get(names[0], names[0]), first_div=d["sets"][names[0]]["divergence_layer"],
            first_best=best_a["layer"],
            first_best_auc=best_a["auroc"], first_last=f"falling to {a[-1]['auroc']:.3f}" if drop else
            f"still {a[-1]['auroc']:.3f}", last=a[-1]["layer"], second=READING_NAMES.get(names[1], names[1]),
            second_l0="invisible" if b[0]["ci"][0] <= 0.5 else "already separated", second_l0_auc=b[0]["auroc"],
            second_best=best_b["layer"], second_best_auc=best_b["auroc"],
            second_last="falling" if b[-1]["auroc"] < best_b["auroc"] - 0.05 else "still separated",
            second_last_auc=b[-1]["auroc"]))
    return lines


def _probe_lines(p: dict[str, Any]) -> list[str]:
    first = next(iter(p.values()))
    lowrank_d = next(r["d"] for r in first["rows"] if r["features"] == "mean+var+lowrank")
    lines = _fill(PROBE_INTRO.format(encoder=ENCODER, rank=RANK, folds=FOLDS, lowrank_d=lowrank_d))
    for task, r in p.items():
        rows = r["rows"]
        lines += ["", f"{PROBE_TASKS.get(task, task)}, {r['n']} sentences ({r['seconds']:.0f} s):", "",
                  "| layer | mean | mean+var | mean+var+lowrank | selectivity (mean / +var / +lowrank) |",
                  "|---|---|---|---|---|"]
        for layer in sorted({x["layer"] for x in rows}):
            mine = [x for x in rows if x["layer"] == layer]
            cells = [f"{x['score']:.3f} [{x['ci_low']:.3f}, {x['ci_high']:.3f}]" for x in mine]
            lines.append(f"| {layer} | " + " | ".join(cells) + " | "
                         + " / ".join(f"{x['selectivity']:.3f}" for x in mine) + " |")
    lines += [""] + _fill(_probe_reading(p))
    return lines


def _probe_reading(p: dict[str, Any]) -> str:
    """Where the moments add to the mean: per task, the layers where the +var or +lowrank probe's accuracy is above
    the mean probe's whole interval, and the best cell."""
    parts = []
    for task, r in p.items():
        rows = r["rows"]
        by = {(x["layer"], x["features"]): x for x in rows}
        layers = sorted({x["layer"] for x in rows})
        moments = {layer: max(by[layer, "mean+var"]["score"], by[layer, "mean+var+lowrank"]["score"])
                   for layer in layers}
        better = [layer for layer in layers if moments[layer] > by[layer, "mean"]["ci_high"]]
        best = max(rows, key=lambda x: x["score"])
        gain = np.mean([moments[layer] - by[layer, "mean"]["score"] for layer in layers])
        where = (f"above the mean probe's interval at {', '.join(f'L{x}' for x in better)}" if better else
                 "never above the mean probe's interval")
        parts.append(f"{PROBE_TASKS.get(task, task).split(' (')[0]}: the better moment probe of each layer scores "
                     f"{gain:+.3f} against the mean probe on average over the layers, {where}; best cell "
                     f"L{best['layer']} {best['features']} {best['score']:.3f}")
    return ("Reading: " + "; ".join(parts) + ". The sample is small (folds of a few dozen sentences), so the "
            "intervals are wide; the figures are the sample's, not SentEval's full task.")


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the deviation table with the divergence layers, the three probes per layer."""
    lines = ["## Layers: manifold deviation (REMA) and the moment probe (`repspace layers deviation`, "
             "`repspace layers moments`)", ""]
    lines += _deviation_lines(res["deviation"])
    if res.get("probe"):
        lines += [""] + _probe_lines(res["probe"])
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "fewer sentences, three layers, the tense file only")


if __name__ == "__main__":
    sys.exit(main())
