"""The layer profile of all-MiniLM-L6-v2 (``repspace layers profile``), for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_layer_profile.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only layer-profile`` (into EVALUATION.md).

:func:`repspace.workflows.layer_profile.profile_layers` (what ``repspace layers profile --encoder
hf-layers:minilm --texts FILE --task sts stsb-en-test.csv --invariance all`` runs) on the first sentence of the
first 1,000 STS-B test pairs, every hidden state, default settings (typos at rate 0.1, groups of 64, 1,000
resamples, seed 0), each layer's mean-pooled vectors scored on the whole STS-B test split.
``--quick``: the first 100 sentences.
"""

from __future__ import annotations

import argparse
import csv
import sys
import textwrap
from typing import Any

import common as c

DATA = c.REPO.parent / "shared" / "data"
STSB_TEST = DATA / "stsb" / "stsb-en-test.csv"
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
ENCODER = "hf-layers:minilm"


def sentences(n: int) -> list[str]:
    """The first sentence of each of the first ``n`` STS-B test pairs."""
    with STSB_TEST.open(encoding="utf-8", newline="") as f:
        return [row[0] for row, _ in zip(csv.reader(f), range(n))]


def measure(quick: bool) -> dict[str, Any]:
    """``LayerProfile.to_dict()`` of the run, under ``profile``, with the number of texts asked for."""
    from repspace.workflows.layer_profile import profile_layers

    n = 100 if quick else 1000
    c.log(f"evaluation: layer profile of {ENCODER} on {n} STS-B sentences")
    profile = profile_layers(ENCODER, sentences(n), invariance="all", task="sts", task_data=STSB_TEST)
    return {"texts": n, "profile": profile.to_dict()}


INTRO = """\
## Layer profile of all-MiniLM-L6-v2 (`repspace layers profile`, S059, S105)

Produced by `benchmarks/eval_layer_profile.py` (`benchmarks/evaluation.py --only layer-profile`) with
`repspace.workflows.layer_profile.profile_layers`, what `repspace layers profile --encoder hf-layers:minilm
--texts FILE --task sts stsb-en-test.csv --invariance all` runs: the texts are the first sentence of the first
{texts:,} STS-B test pairs, every hidden state (0 the embedding output, 6 the last block) from one forward pass
per batch. Each figure is the mean over the inputs (definitions in `repspace.workflows.layer_profile`); the
augmentation is `typos` at rate {rate:g} (seed {seed}); InfoNCE, LiDAR and DiME are computed on groups of
{group} (input, perturbation) pairs ({groups} groups); the `shuffled` columns are the same inputs with their
tokens shuffled (the geometry-of-tokens baseline); STS-B is the Spearman of each layer's mean-pooled vectors on
the whole test split ({pairs:,} pairs) with its 95% bootstrap interval ({boot:,} resamples)."""


def _f(x: dict[str, Any] | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x['mean']:.{digits}f}"


def _ci(x: dict[str, Any]) -> str:
    return f"{x['mean']:.4f} [{x['low']:.4f}, {x['high']:.4f}]" if x.get("low") is not None else f"{x['mean']:.4f}"


def _widest(rows: list[dict[str, Any]], names: tuple[str, ...]) -> float:
    """The widest half-interval among the figures ``names`` of every layer."""
    return max((r[n]["high"] - r[n]["low"]) / 2 for r in rows for n in names
               if r.get(n) is not None and r[n].get("low") is not None)


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the settings, two tables per layer, what the figures say."""
    if "profile" not in res:
        return []
    p = res["profile"]
    rows, s = p["layers"], p["settings"]
    first = next(r for r in rows if r.get("infonce") is not None)
    heading, intro = INTRO.split("\n\n", 1)
    intro = intro.format(texts=p["n_inputs"], rate=s["rate"], seed=s["seed"], group=s["invariance_group"],
                         groups=first["infonce"]["n"], pairs=rows[0]["task"]["n"], boot=s["bootstrap"])
    lines = [heading, "", *textwrap.fill(intro, width=WIDTH).splitlines()]
    lines += ["", "| layer | STS-B Spearman [95% CI] | prompt entropy | curvature (rad) | augmentation invariance | "
              "InfoNCE | LiDAR | DiME |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['layer']} | {_ci(r['task'])} | {_f(r['prompt_entropy'])} | {_f(r['curvature'])} | "
                     f"{_f(r['augmentation_invariance'])} | {_f(r['infonce'])} | {_f(r['lidar'])} | "
                     f"{_f(r['dime'])} |")
    lines += ["", "| layer | intrinsic dimension | shuffled | neighbourhood overlap | shuffled | mean cosine | "
              "shuffled |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['layer']} | {_f(r['intrinsic_dimension'], 2)} | {_f(r['intrinsic_dimension_shuffled'], 2)}"
                     f" | {_f(r['neighbourhood_overlap'])} | {_f(r['neighbourhood_overlap_shuffled'])} | "
                     f"{_f(r['mean_cosine'])} | {_f(r['mean_cosine_shuffled'])} |")
    widest = _widest(rows, ("prompt_entropy", "curvature", "augmentation_invariance", "mean_cosine"))
    skipped = p["skipped"].get("curvature", 0)
    lines += ["", *textwrap.fill(
        f"Intervals of the per-input figures (JSON `benchmarks/results/evaluation.json`, `parts.layer-profile`) are "
        f"at most ±{widest:.3f} wide for prompt entropy, curvature, invariance and mean cosine; curvature skipped "
        f"{skipped} input(s) of fewer than 3 tokens. Best layer for STS-B: {p['best_layer']}.",
        width=WIDTH).splitlines()]
    if reading(rows):
        lines += ["", *textwrap.fill(reading(rows), width=WIDTH).splitlines()]
    return lines


def reading(rows: list[dict[str, Any]]) -> str:
    """What the figures say, every number read from them."""
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the first 100 sentences")
    print("\n".join(render(measure(ap.parse_args(argv).quick))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
