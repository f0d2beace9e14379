"""Pooling recipes of all-MiniLM-L6-v2 on STS, retrieval and classification (``repspace layers pooling``).

Usage: ``.venv/bin/python benchmarks/eval_layer_pooling.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only layer-pooling`` (into EVALUATION.md).

:func:`repspace.workflows.layer_pooling.compare_poolings` (what ``repspace layers pooling --encoder
hf-layers:minilm --task TASK DATA`` runs), default recipes, 1,000 resamples, seed 0, on STS-B test and Cranfield
(each recipe raw and BERT-whitened) and on the 200 Pang & Lee polarity sentences gensim's wheel ships (raw only:
200 texts cannot fit a 384-d whitening). Cranfield is read at 256 tokens, the sentence-transformers pipeline of the
model. ``--quick``: the first 200 STS-B test pairs and Pang & Lee; no Cranfield.
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import common as c

DATA = c.REPO.parent / "shared" / "data"
STSB_TEST = DATA / "stsb" / "stsb-en-test.csv"
CRANFIELD = DATA / "cranfield-beir"
ENCODER = "hf-layers:minilm"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
#: all-MiniLM-L6-v2 through ``repspace eval`` (the sentence-transformers pipeline: mean pooling, 256 tokens),
#: EVALUATION.md's first sections: what the ``mean`` recipe must reproduce. STS-B is also sentence-transformers'
#: published figure (../shared/data/README.md).
REFERENCE = {"sts": 0.8203, "retrieval": 0.3817}


def pang_lee(folder: Path) -> Path:
    """gensim's ``pang_lee_polarity.cor`` (200 sentences, cp1252, ``__label__neg``/``pos`` first) as JSON lines."""
    from gensim.test.utils import datapath

    rows = []
    for line in Path(datapath("pang_lee_polarity.cor")).read_bytes().decode("cp1252").splitlines():
        label, text = line.split(" ", 1)
        rows.append(json.dumps({"text": text.strip(), "label": label.removeprefix("__label__")}))
    path = folder / "pang-lee.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def measure(quick: bool) -> dict[str, Any]:
    """``PoolingComparison.to_dict()`` per task: ``sts``, ``retrieval`` (not quick), ``classification``."""
    from repspace.workflows.layer_pooling import compare_poolings

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        sts = STSB_TEST
        if quick:
            sts = Path(tmp) / "stsb-head.csv"
            sts.write_text("".join(STSB_TEST.read_text(encoding="utf-8").splitlines(True)[:200]), encoding="utf-8")
        runs = [("sts", sts, True, None), ("retrieval", CRANFIELD, True, {"max_length": 256}),
                ("classification", pang_lee(Path(tmp)), False, None)]
        for task, source, whiten, options in runs:
            if quick and task == "retrieval":
                continue
            c.log(f"evaluation: layer pooling {task}")
            out[task] = compare_poolings(ENCODER, task, source, whiten=whiten, encoder_options=options).to_dict()
    return out


INTRO = """\
## Pooling recipes on STS-B test, Cranfield and Pang & Lee (`repspace layers pooling`, S224)

Produced by `benchmarks/eval_layer_pooling.py` (`benchmarks/evaluation.py --only layer-pooling`) with
`repspace.workflows.layer_pooling.compare_poolings`, what `repspace layers pooling --encoder hf-layers:minilm
--task TASK DATA [--whiten]` runs: default recipes, every recipe from one forward pass per batch, each scored by
the evaluator of `repspace eval TASK` with its 95% bootstrap interval (1,000 resamples of the units, seed 0).
STS-B test: Spearman over {sts_n:,} pairs; Cranfield: nDCG@10 over {ret_n} judged queries and 1,400 documents,
read at 256 tokens (the model's sentence-transformers pipeline); Pang & Lee: the 200 movie-review sentences of
gensim's `pang_lee_polarity.cor` (100 negative, 100 positive), 5-fold logistic-regression accuracy, raw only
(200 texts cannot fit a 384-d whitening). Whitened: BERT-whitening fitted on the task's own texts."""


def _ci(row: dict[str, Any] | None) -> str:
    if row is None:
        return "–"
    return f"{row['score']:.4f}" + ("" if row["ci"] is None else f" [{row['ci'][0]:.4f}, {row['ci'][1]:.4f}]")


def _rows(res: dict[str, Any], task: str) -> dict[tuple[str, bool], dict[str, Any]]:
    return {(r["recipe"], r["whitened"]): r for r in res.get(task, {}).get("rows", [])}


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the table of every recipe on the three tasks and what it says."""
    if "sts" not in res:
        return []
    sts, ret, cls = _rows(res, "sts"), _rows(res, "retrieval"), _rows(res, "classification")
    heading, intro = INTRO.split("\n\n", 1)
    intro = intro.format(sts_n=res["sts"]["n_units"], ret_n=res.get("retrieval", {}).get("n_units", "–"))
    lines = [heading, "", *textwrap.fill(intro, width=WIDTH).splitlines(), "",
             "| recipe | layers | STS-B Spearman | whitened | Cranfield nDCG@10 | whitened | Pang & Lee accuracy |",
             "|---|---|---|---|---|---|---|"]
    for (name, whitened), r in sts.items():
        if whitened:
            continue
        lines.append(f"| {name} | {'+'.join(map(str, r['layers']))} | {_ci(r)} | {_ci(sts.get((name, True)))} | "
                     f"{_ci(ret.get((name, False)))} | {_ci(ret.get((name, True)))} | {_ci(cls.get((name, False)))} |")
    lines += ["", *textwrap.fill(reading(res, sts, ret, cls), width=WIDTH).splitlines()]
    return lines


def reading(res: dict[str, Any], sts: dict, ret: dict, cls: dict) -> str:
    """What the figures say, every number read from them."""
    def best(rows: dict, whitened: bool = False) -> str:
        kept = [r for (_, w), r in rows.items() if w == whitened]
        top = max(r["score"] for r in kept)
        return f"{' = '.join(r['recipe'] for r in kept if r['score'] == top)} ({top:.4f})"

    text = (f"Reference: all-MiniLM-L6-v2 through `repspace eval` (mean pooling, sentence-transformers' pipeline) "
            f"scores {REFERENCE['sts']:.4f} on STS-B test (also sentence-transformers' published figure) and "
            f"{REFERENCE['retrieval']:.4f} on Cranfield (this file's first section); the `mean` recipe gives "
            f"{sts[('mean', False)]['score']:.4f}")
    if ret:
        text += f" and {ret[('mean', False)]['score']:.4f}"
    text += f". Best raw recipe: STS-B {best(sts)}"
    if ret:
        text += f", Cranfield {best(ret)}"
    half = max((r["ci"][1] - r["ci"][0]) / 2 for r in cls.values() if r["ci"] is not None)
    text += (f", Pang & Lee {best(cls)}, where 200 sentences give accuracy intervals up to ±{half:.3f} wide, too "
             "wide to rank the recipes. ")
    drops = [f"STS-B {sts[('mean', True)]['score'] - sts[('mean', False)]['score']:+.4f}"]
    if ret:
        drops.append(f"Cranfield {ret[('mean', True)]['score'] - ret[('mean', False)]['score']:+.4f}")
    text += f"Whitening changes the mean recipe by {' and '.join(drops)}; the best whitened recipe is {best(sts, True)}"
    if ret:
        text += f" on STS-B and {best(ret, True)} on Cranfield"
    return text + "."


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "200 STS-B pairs and Pang & Lee, no Cranfield")


if __name__ == "__main__":
    sys.exit(main())
