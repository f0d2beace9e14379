"""Robustness: scores under meaning-preserving perturbations (``repspace eval robustness``), for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_robustness.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only robustness`` (into EVALUATION.md).

:func:`repspace.workflows.robustness.robustness` (what ``repspace eval robustness``
runs) on STS-B test with all-MiniLM-L6-v2 and the static model, and on Cranfield
with MiniLM (queries perturbed), every perturbation at rate 0.1, seed 0, 1,000
resamples. ``--quick``: STS-B with the static model only.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import common as c

DATA = c.REPO.parent / "shared" / "data"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112


def measure(quick: bool) -> dict[str, Any]:
    """``RobustnessResult.to_dict()`` of each run: ``sts/minilm``, ``sts/static``, ``retrieval/minilm``."""
    from repspace.workflows.robustness import robustness

    runs = [("sts", "static")] if quick else [("sts", "minilm"), ("sts", "static"), ("retrieval", "minilm")]
    out = {}
    for task, encoder in runs:
        c.log(f"evaluation: robustness {task} {encoder}")
        source = DATA / ("stsb/stsb-en-test.csv" if task == "sts" else "cranfield-beir")
        out[f"{task}/{encoder}"] = robustness(task, source, encoder=encoder).to_dict()
    return out


INTRO = """\
## Robustness: scores under meaning-preserving perturbations (`repspace eval robustness`)

Each task scored again after one perturbation of its texts (`repspace.engines.eval.perturb`: seeded, local, no
model): `typos` (one character swapped, dropped or inserted in a word of more than 3 letters), `casing` (a word
lower, upper or title case), `punctuation` (a mark ending a word dropped, a comma between two words or a final
full stop added), `synonyms` (another single-word lemma of the word's first WordNet 3.0 sense, no tagger, no
lemmatiser), `reorder` (two clauses swapped around `and` or a comma where the conservative rule of
`perturb.reorder` holds). Rate 0.1 (a tenth of each text's eligible places, rounded up: at least one), seed 0.
The drop is original minus perturbed; its 95% interval is a paired bootstrap over the units and p a paired
randomization test (1,000 resamples each; 0.002 is the smallest p that 1,000 randomizations give). STS
perturbs both sentences of every pair; retrieval perturbs the queries only (the documents as they are, as
PTEB does). Measured by `benchmarks/eval_robustness.py` (`benchmarks/evaluation.py --only robustness`) with
`repspace.workflows.robustness.robustness`, what `repspace eval robustness sts stsb-en-test.csv --encoder
minilm` (and `--encoder static`, and `retrieval cranfield-beir`) runs, on the machine above."""
#: The reading of the figures; "a fifth of its score" and the examples of synonyms are the hand analysis's.
FINDINGS = (
    "What the figures say: about one typo per sentence costs MiniLM {typos:.2f} of STS-B Spearman (a fifth of its "
    "score) and {points:.0f} points of Cranfield nDCG@10. Casing costs it exactly nothing: its tokenizer lower-cases "
    "the input (the static model's vocabulary is cased, and loses {casing:.3f}). The synonym drop is an upper bound "
    "on sensitivity to synonymy, not a clean measure of it: a word's first WordNet sense, taken without a "
    "part-of-speech tagger, is sometimes not its sense in the sentence (`men` becomes `hands`, `girl` becomes "
    "`fille`), so part of that drop is meaning that changed. Reordering is safe on only {reorder} STS-B sentence "
    "(most are one-clause captions), so it says nothing here; the static model, an average of token vectors, is "
    "blind to order by construction.")
NUMBERS = {1: "one", 2: "two", 3: "three"}


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None else f"[{low:.4f}, {high:.4f}]"


def _p(p: float | None) -> str:
    return "" if p is None else f"{p:.3g}"


def _sts_table(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    rows = ["| perturbation | sentences changed | all-MiniLM-L6-v2 | drop [95% CI] | p | static (64-d) | drop [95% CI] "
            "| p |", "|---|---|---|---|---|---|---|---|",
            f"| none (original) | | {a['original']:.4f} {_interval(a['ci_low'], a['ci_high'])} | | | "
            f"{b['original']:.4f} {_interval(b['ci_low'], b['ci_high'])} | | |"]
    for pa, pb in zip(a["perturbed"], b["perturbed"], strict=True):
        rows.append(f"| {pa['perturbation']} | {pa['changed']} | {pa['score']:.4f} | {pa['drop']:+.4f} "
                    f"{_interval(pa['ci_low'], pa['ci_high'])} | {_p(pa['p_value'])} | {pb['score']:.4f} | "
                    f"{pb['drop']:+.4f} {_interval(pb['ci_low'], pb['ci_high'])} | {_p(pb['p_value'])} |")
    return rows


def _retrieval_text(r: dict[str, Any]) -> str:
    parts, first = [], True
    for p in r["perturbed"]:
        name = p["perturbation"]
        if p["changed"] == 0:
            parts.append(f"{name}: no query qualifies (0)")
        elif p["drop"] == 0:
            parts.append(f"{name} {p['score']:.4f}, {p['drop']:+.4f} ({p['changed']})")
        else:
            drop = "drop " if first else ""
            changed = f"{p['changed']} queries changed" if first else str(p["changed"])
            parts.append(f"{name} {p['score']:.4f}, {drop}{p['drop']:+.4f} {_interval(p['ci_low'], p['ci_high'])}, "
                         f"p {_p(p['p_value'])} ({changed})")
        first = False
    info = r["repspace"]
    return (f"Cranfield ({info['n_units']} judged queries, {info.get('n_documents', 1400)} documents), "
            f"all-MiniLM-L6-v2, nDCG@10: original {r['original']:.4f} {_interval(r['ci_low'], r['ci_high'])}; "
            + "; ".join(parts) + ".")


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the perturbations, the STS-B table, Cranfield's figures, what they say."""
    lines = INTRO.splitlines()
    if "sts/minilm" not in res:
        return lines
    a, b = res["sts/minilm"], res["sts/static"]
    info = a["repspace"]
    lines += ["", f"STS-B test ({info['n_units']} pairs, {a['perturbed'][0]['texts']} sentences), Spearman:", ""]
    lines += _sts_table(a, b)
    r = res["retrieval/minilm"]
    lines += ["", *textwrap.fill(_retrieval_text(r), width=WIDTH).splitlines()]
    drops = {p["perturbation"]: p for p in a["perturbed"]}
    reorder = drops["reorder"]["changed"]
    figures = {"typos": drops["typos"]["drop"],
               "points": 100 * next(p["drop"] for p in r["perturbed"] if p["perturbation"] == "typos"),
               "casing": next(p["drop"] for p in b["perturbed"] if p["perturbation"] == "casing"),
               "reorder": NUMBERS.get(reorder, str(reorder))}
    lines += ["", *textwrap.fill(FINDINGS.format(**figures), width=WIDTH).splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "STS-B with the static model only")


if __name__ == "__main__":
    sys.exit(main())
