"""SentEval's probing tasks on the shipped sample (``repspace eval probing``), for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_probing.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only probing`` (into EVALUATION.md).

:func:`repspace.workflows.evaluate.run_probing` (what ``repspace eval probing`` runs) on
``tests/data/senteval-probing`` (all ten tasks of Conneau et al. 2018, a small sample of each) with the
static model, all-MiniLM-L6-v2 and ``hf-layers:minilm --layer all`` (the token embeddings and the 6 layers,
mean-pooled, one forward pass), 1,000 resamples of the test sentences, seed 0. ``--quick``: the static model only.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import common as c

SAMPLE = c.REPO / "tests" / "data" / "senteval-probing"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
#: The subjects probed: (label in the table, encoder, layer).
SUBJECTS = [("static (model2vec, 64-d)", "static", None),
            ("minilm (sentence-transformers, normalised mean)", "minilm", None),
            ("hf-layers:minilm", "hf-layers:minilm", "all")]
RESAMPLES = 1000


def _row(result: Any) -> dict[str, Any]:
    ci = result.interval
    return {"task": result.info["dataset"], "paper_name": result.info["probing_task"],
            "accuracy": result.main_score, "ci_low": None if ci is None else ci.low,
            "ci_high": None if ci is None else ci.high, "majority": result.scores["majority_accuracy"],
            "c": result.info["c"], "n_train": result.info["n_train"], "n_test": result.info["n_test"],
            "n_classes": result.info["n_classes"], "layer": result.info.get("layer")}


def measure(quick: bool) -> dict[str, Any]:
    """Per subject (a label; each layer of ``hf-layers:minilm`` its own), the rows of :func:`_row` task by task."""
    from repspace.workflows.evaluate import run_probing

    out: dict[str, list[dict[str, Any]]] = {}
    for label, encoder, layer in SUBJECTS[:1] if quick else SUBJECTS:
        c.log(f"evaluation: probing {encoder}")
        report = run_probing(SAMPLE, encoder=encoder, layer=layer, bootstrap=RESAMPLES, seed=0)
        for r in report.results:
            name = label if layer is None else f"{label} layer {r.info['layer']}"
            out.setdefault(name, []).append(_row(r))
    return {"subjects": out, "resamples": RESAMPLES, "seed": 0}


INTRO = """\
## SentEval probing tasks (Conneau et al. 2018), shipped sample

`repspace eval probing tests/data/senteval-probing --encoder E [--layer all]`: the ten probing tasks of "What you
can cram into a single $&!#* vector" (SentEval's `data/probing`), each a small sample copied verbatim from the
full files (how each was taken, and why it is not the task: tests/data/senteval-probing/README.md). Probe:
logistic regression on z-scored vectors, C in 2^-2..2^3 chosen on va, scored on te; test accuracy with its 95%
bootstrap interval ({resamples:,} resamples of the test sentences, seed {seed}); last row: always answering the
most frequent training class. Measured by `benchmarks/eval_probing.py` (`benchmarks/evaluation.py --only
probing`) with `repspace.workflows.evaluate.run_probing`, on the machine above."""
#: The reading; every figure in it comes from the results.
FINDINGS = (
    "What the figures say. Sentence length: MiniLM's token embeddings (layer 0) {sentlen_l0}, its last layer "
    "{sentlen_l6}; the pooled sentence vectors static {sentlen_static}, minilm {sentlen_minilm}. Word content (20 "
    "of the 1,000 words, {wc_train} training and {wc_test} test sentences): best {wc_best}. Tasks where some "
    "subject's interval lies wholly above the majority baseline: {readable}; where none does (no evidence either "
    "way on so few test sentences): {unreadable}. Best layer of hf-layers:minilm per task: {best_layers}.")
CAVEATS = (
    "These are figures on the sample, not on the tasks: 38 to 240 training sentences instead of 100,000, a "
    "linear probe instead of the paper's tuned MLP, SentLen's classes taken as runs of one or two books each, "
    "TopConst, TreeDepth and SentLen taken class by class, WC reduced to 20 classes. The paper's Table 2 "
    "(majority baseline, human and bag-of-vectors figures, 100k training sentences) could not be read from this "
    "machine (the stored copies of the paper return only its opening), so no published figure is quoted beside "
    "ours. The full files (SentEval's data/probing, 120,000 lines a task) were not run here.")


def _cell(row: dict[str, Any]) -> str:
    if row["ci_low"] is None:
        return f"{row['accuracy']:.3f}"
    low, high = (f"{row[k]:.3f}".removeprefix("0") for k in ("ci_low", "ci_high"))  # .193, as the CLI prints
    return f"{row['accuracy']:.3f} [{low}, {high}]"


def _table(subjects: dict[str, list[dict[str, Any]]]) -> list[str]:
    first = next(iter(subjects.values()))
    heads = [f"{r['paper_name']} ({r['n_classes']}, n={r['n_test']})" for r in first]
    lines = ["| subject | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    for name, rows in subjects.items():
        lines.append(f"| {name} | " + " | ".join(_cell(r) for r in rows) + " |")
    lines.append("| majority class | " + " | ".join(f"{r['majority']:.3f}" for r in first) + " |")
    return lines


def _figures(subjects: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    by = {name: {r["task"]: r for r in rows} for name, rows in subjects.items()}
    layers = {name: rows for name, rows in by.items() if name.startswith("hf-layers")}
    static, minilm = by[SUBJECTS[0][0]], by[SUBJECTS[1][0]]
    l0, l6 = by[f"{SUBJECTS[2][0]} layer 0"], by[f"{SUBJECTS[2][0]} layer 6"]
    tasks = list(static)
    above = [t for t in tasks if any(rows[t]["ci_low"] > rows[t]["majority"] for rows in by.values())]
    paper = {t: static[t]["paper_name"] for t in tasks}
    best = {t: max(layers.values(), key=lambda rows, t=t: rows[t]["accuracy"])[t] for t in tasks}
    return {"sentlen_l0": f"{l0['sentence_length']['accuracy']:.3f}",
            "sentlen_l6": f"{l6['sentence_length']['accuracy']:.3f}",
            "sentlen_static": f"{static['sentence_length']['accuracy']:.3f}",
            "sentlen_minilm": f"{minilm['sentence_length']['accuracy']:.3f}",
            "wc_best": "{} {:.3f}".format(*max(((n, rows["word_content"]["accuracy"]) for n, rows in by.items()),
                                               key=lambda x: x[1])),
            "wc_train": str(static["word_content"]["n_train"]), "wc_test": str(static["word_content"]["n_test"]),
            "readable": ", ".join(paper[t] for t in above) or "none",
            "unreadable": ", ".join(paper[t] for t in tasks if t not in above) or "none",
            "best_layers": ", ".join(f"{paper[t]} L{best[t]['layer']}" for t in tasks)}


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: what was run, the table (a row per subject, tasks across), what it says."""
    head, body = INTRO.format(resamples=res["resamples"], seed=res["seed"]).split("\n\n", 1)
    lines = [head, "", *textwrap.fill(" ".join(body.split()), width=WIDTH).splitlines()]
    subjects = res["subjects"]
    lines += ["", *_table(subjects)]
    if len(subjects) > 1:
        lines += ["", *textwrap.fill(FINDINGS.format(**_figures(subjects)), width=WIDTH).splitlines()]
    lines += ["", *textwrap.fill(CAVEATS, width=WIDTH).splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the static model only")


if __name__ == "__main__":
    sys.exit(main())
