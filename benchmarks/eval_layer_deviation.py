"""EVALUATION figures of issue 32 parts 5-6: REMA manifold deviation (AUROC in- vs out-of-domain, per layer) and the
moment probe beside the mean-pooled probe on the shipped SentEval sample. Run:
``PYTHONPATH=src python benchmarks/eval_layer_deviation.py [N_REF] [N_TEST]`` (prints a Markdown block)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from repspace.workflows.layer_deviation import layer_deviation
from repspace.workflows.moment_probe import moment_probe_file

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")


def sts_sentences(name: str, n: int) -> list[str]:
    with open(DATA / "stsb" / name, encoding="utf-8") as f:
        return [row[0] for row, _ in zip(csv.reader(f), range(n))]


def cranfield(n: int) -> list[str]:
    with open(DATA / "cranfield-beir" / "corpus.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["title"] for line, _ in zip(f, range(n))]


def shuffled(texts: list[str], seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.permutation(t.split())) for t in texts]


def auroc_ci(inside: np.ndarray, outside: np.ndarray, n_boot: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    y = np.r_[np.zeros(len(inside)), np.ones(len(outside))]
    s = np.r_[inside, outside]
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        a = rng.integers(0, len(inside), len(inside))
        b = len(inside) + rng.integers(0, len(outside), len(outside))
        idx = np.r_[a, b]
        boots.append(roc_auc_score(y[idx], s[idx]))
    return float(roc_auc_score(y, s)), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))


def main(n_ref: int = 1000, n_test: int = 300) -> None:
    ref = sts_sentences("stsb-en-train.csv", n_ref)
    held = sts_sentences("stsb-en-test.csv", n_test)
    sets = {"Cranfield titles": cranfield(n_test), "STS-B test, words shuffled": shuffled(held)}
    print(f"### REMA manifold deviation (hf-layers:minilm, k=10, l2; reference: first {n_ref} STS-B train "
          f"sentence1; in-domain: first {n_test} STS-B test sentence1)\n")
    print("AUROC of the z-score separating the in-domain texts from each other set (bootstrap 95% interval, "
          "1000 resamples):\n")
    print("| layer | " + " | ".join(sets) + " |\n|---|" + "---|" * len(sets))
    res = {name: layer_deviation("hf-layers:minilm", ref, held + texts, k=10) for name, texts in sets.items()}
    layers = next(iter(res.values())).layers
    for j, layer in enumerate(layers):
        cells = []
        for name, r in res.items():
            z = r.deviations[j].z
            a, lo, hi = auroc_ci(z[:n_test], z[n_test:])
            cells.append(f"{a:.3f} [{lo:.3f}, {hi:.3f}]")
        print(f"| {layer} | " + " | ".join(cells) + " |")
    print()
    for task in ("sentence_length", "past_present"):
        r = moment_probe_file("hf-layers:minilm", ROOT / "tests" / "data" / "senteval-probing" / f"{task}.txt",
                              rank=8, cv=5, seed=0)
        print(f"### Moment probe on the SentEval sample {task} (hf-layers:minilm, rank 8, logistic, 5 folds, "
              f"control permute; 95% t-interval over folds)\n")
        print("| layer | mean | mean+var | mean+var+lowrank | selectivity (mean / +var / +lowrank) |")
        print("|---|---|---|---|---|")
        rows = r.to_dict()["rows"]
        for layer in r.layers:
            mine = [x for x in rows if x["layer"] == layer]
            cells = [f"{x['score']:.3f} [{x['ci_low']:.3f}, {x['ci_high']:.3f}]" for x in mine]
            sel = " / ".join(f"{x['selectivity']:.3f}" for x in mine)
            print(f"| {layer} | " + " | ".join(cells) + f" | {sel} |")
        print()


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
