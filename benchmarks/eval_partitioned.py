"""STS-B test split by word overlap (``repspace eval sts FILE --by overlap``), for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_partitioned.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only by`` (into EVALUATION.md).

Each pair of STS-B test gets the Jaccard overlap of its two sentences' lower-cased, whitespace-split word sets,
bucketed ``low`` (< 0.3), ``mid`` (< 0.6) and ``high``; the pairs are written with that fourth column,
``overlap``, to a CSV in a temporary folder, and :func:`repspace.workflows.evaluate.run` (what ``repspace eval
sts stsb-en-overlap-test.csv --encoder minilm --by overlap`` runs) scores it with all-MiniLM-L6-v2, 1,000
resamples, seed 0. ``--quick``: the static model.
"""

from __future__ import annotations

import csv
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import common as c

DATA = c.REPO.parent / "shared" / "data"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
#: The overlap buckets: (name, upper bound of the Jaccard overlap, exclusive), in order; the last takes the rest.
BUCKETS = (("low", 0.3), ("mid", 0.6), ("high", None))
COLUMN = "overlap"
#: The file's name: the task is named after it (``sts:stsb-en-overlap-test``).
FILE_NAME = "stsb-en-overlap-test.csv"
RESAMPLES, SEED = 1000, 0
#: all-MiniLM-L6-v2's Spearman on STS-B test as MTEB publishes it (an external reference figure).
PUBLISHED_WHOLE = 0.8203
ENCODER_NAMES = {"minilm": "all-MiniLM-L6-v2", "static": "static (64-d)"}


def jaccard(a: str, b: str) -> float:
    """The Jaccard overlap of two sentences' lower-cased, whitespace-split word sets (0 for two empty ones)."""
    x, y = set(a.lower().split()), set(b.lower().split())
    union = x | y
    return len(x & y) / len(union) if union else 0.0


def bucket(overlap: float) -> str:
    """The bucket an overlap falls in: the first whose bound it is under."""
    return next(name for name, bound in BUCKETS if bound is None or overlap < bound)


def write_overlap_csv(path: Path) -> Path:
    """STS-B test with the ``overlap`` column, header ``sentence1,sentence2,score,overlap``."""
    from repspace.engines.eval import load_sts

    pairs = load_sts(DATA / "stsb" / "stsb-en-test.csv")
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sentence1", "sentence2", "score", COLUMN])
        for s1, s2, score in zip(pairs.sentences1, pairs.sentences2, pairs.scores, strict=True):
            w.writerow([s1, s2, repr(float(score)), bucket(jaccard(s1, s2))])
    return path


def measure(quick: bool) -> dict[str, Any]:
    """``{"encoder", "result"}``: the STS result (``TaskResult.to_dict()``, units left out) with its parts."""
    from repspace.workflows.evaluate import run

    encoder = "static" if quick else "minilm"
    c.log(f"evaluation: sts by {COLUMN}, {encoder}")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_overlap_csv(Path(tmp) / FILE_NAME)
        (result,) = run("sts", path, encoder=encoder, by=COLUMN, bootstrap=RESAMPLES, seed=SEED).results
    d = result.to_dict()
    d["repspace"].pop("units", None)
    return {"encoder": encoder, "result": d}


INTRO = (
    "Each pair of STS-B test gets the Jaccard overlap of its two sentences' lower-cased, whitespace-split word "
    "sets, bucketed low (< 0.3), mid (< 0.6) and high, written as a fourth column `overlap`; then `repspace eval "
    "sts stsb-en-overlap-test.csv --encoder {encoder} --by overlap` (1,000 resamples, seed 0, on the machine "
    "above; measured by `benchmarks/eval_partitioned.py`, `benchmarks/evaluation.py --only by`, with "
    "`repspace.workflows.evaluate.run`). Each part is scored alone; the macro average weighs the three parts the "
    "same, and its interval resamples pairs within each part. The whole-set score is unchanged by `--by`{whole}.")
#: The reading where the parts fall as overlap rises (as with MiniLM); its cause is worded as likely, not shown.
FALLING = (
    "What the figures say: {model} ranks pairs best where the two sentences share few words ({low:.4f}), and "
    "worst where they share most ({high:.4f}), likely because there the gold scores hinge on the one or two words "
    "that differ, which a mean-pooled vector of mostly shared tokens barely registers. ")
BELOW = (
    "The {parts} part{s} score{verb} below the whole set's {whole:.4f}: within a bucket, much of the easy contrast "
    "between unrelated and near-identical pairs is gone, so a part's correlation measures a harder ranking than "
    "the whole set's, and the macro average ({macro:.4f}) sits {where} the whole-set score.")


def _ci(d: dict[str, Any]) -> str:
    return "" if d.get("ci_low") is None else f" [{d['ci_low']:.4f}, {d['ci_high']:.4f}]"


def _reading(model: str, parts: dict[str, dict[str, Any]], macro: float, whole: float) -> str:
    scores = [parts[name]["main_score"] for name, _ in BUCKETS]
    text = (FALLING.format(model=model, low=scores[0], high=scores[-1])
            if all(a > b for a, b in zip(scores, scores[1:])) else
            "What the figures say: by overlap bucket, " + ", ".join(f"{n} {s:.4f}" for (n, _), s in
                                                                    zip(BUCKETS, scores, strict=True)) + ". ")
    below = [name for name, _ in BUCKETS if parts[name]["main_score"] < whole]
    if below:
        where = "well below" if whole - macro >= 0.05 else "below" if macro < whole else "at or above"
        named = below[0] if len(below) == 1 else ", ".join(below[:-1]) + " and " + below[-1]
        text += BELOW.format(parts=named, s="s" if len(below) > 1 else "",
                             verb="" if len(below) > 1 else "s", whole=whole, macro=macro, where=where)
    return text


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: how the column is made, the table of parts, macro and whole set, the reading."""
    d, encoder = res["result"], res["encoder"]
    model = ENCODER_NAMES.get(encoder, encoder)
    entry = next(iter(d["scores"].values()))[0]
    split = d["repspace"]["parts"]
    parts = {v["part"]: v for v in split["values"]}
    whole_note = f" (MTEB's published figure, {PUBLISHED_WHOLE})" if encoder == "minilm" else ""
    lines = ["## STS-B test by word overlap (`--by`)", "",
             *textwrap.wrap(INTRO.format(encoder=encoder, whole=whole_note), WIDTH, break_on_hyphens=False), "",
             f"| {COLUMN} | pairs | {model} Spearman [95% CI] |", "|---|---|---|"]
    lines += [f"| {name} | {parts[name]['n']} | {parts[name]['main_score']:.4f}{_ci(parts[name])} |"
              for name, _ in BUCKETS]
    n = d["repspace"]["n_pairs"]
    macro = split["macro"]
    lines += [f"| macro average ({macro['n_parts']} parts) | {n} | {macro['main_score']:.4f}{_ci(macro)} |",
              f"| whole set | {n} | {entry['main_score']:.4f}{_ci(entry)} |", ""]
    reading = _reading(model if encoder != "minilm" else "MiniLM", parts, macro["main_score"], entry["main_score"])
    return lines + textwrap.wrap(reading, WIDTH, break_on_hyphens=False)


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the static model")


if __name__ == "__main__":
    sys.exit(main())
