"""Few-shot probes (FEET) and kNN classification (MINERS) on real sentences, for EVALUATION.md.

Usage: ``.venv/bin/python benchmarks/eval_fewshot.py [--quick] [--json PATH]`` (prints markdown), or
``benchmarks/evaluation.py --only fewshot`` (into EVALUATION.md).

Data: the 200 sentences of Pang & Lee's sentence-polarity sample that gensim's wheel ships
(``gensim/test/test_data/pang_lee_polarity.cor``, 100 negative then 100 positive movie-review
sentences), split as ``tests/_sentiment_data.py`` splits them: even lines train, odd lines test
(50 of each class in each). Models: all-MiniLM-L6-v2 (``minilm``) and the static model2vec model
(``static``); ``--quick``: the static model only. For each: ``repspace.evaluate.run_fewshot`` (1, 4 and
16 shots per class, 10 seeded draws each, and the probe on all 100 training labels) and
``repspace.evaluate.run_knn`` (k = 1, 5 and 10; cosine with the majority vote, and MINERS' own
Euclidean distance). 1,000 bootstrap resamples of the test items, seed 0. Beside each full-probe and
kNN figure, scikit-learn's own ``LogisticRegression(max_iter=1000)`` and ``KNeighborsClassifier``
fitted on the same vectors.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import common as c

sys.path.insert(0, str(c.REPO / "tests"))  # the Pang & Lee split the CLI tests use (_sentiment_data)

MODELS = ("static", "minilm")
SHOTS, DRAWS, KS, RESAMPLES = "1,4,16", 10, "1,5,10", 1000
METRICS = ("cosine", "euclidean")
#: The width the section's paragraphs are wrapped at.
WIDTH = 112
#: Two accuracies on the same 100 test items "equal" when they differ by less than one item's share, 1/100, by
#: far: an accuracy is a count over 100, so equal counts give equal floats up to rounding of the division.
SAME = 1e-9


def _sklearn(model: str, train: Path, test: Path) -> dict[str, float]:
    """The full probe and the uniform kNN fitted by scikit-learn directly on the model's vectors."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier

    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval.labels import load_labelled

    enc = get_encoder(model)
    a, b = load_labelled(train), load_labelled(test)
    xa, xb = enc.encode(a.texts), enc.encode(b.texts)
    out = {"probe": float(LogisticRegression(max_iter=1000).fit(xa, a.labels).score(xb, b.labels))}
    for metric in METRICS:
        for k in (1, 5, 10):
            knn = KNeighborsClassifier(n_neighbors=k, metric=metric, algorithm="brute").fit(xa, a.labels)
            out[f"{metric}-{k}"] = float(knn.score(xb, b.labels))
    return out


def _lean(result: Any) -> dict[str, Any]:
    """``TaskResult.to_dict()`` without the per-item units (the section reads only the scores)."""
    d = result.to_dict()
    d["repspace"].pop("units", None)
    return d


def measure(quick: bool) -> dict[str, Any]:
    """``{"models": {model: {"fewshot": [result], "knn": {metric: [result]}, "sklearn": {...}}}}``, each result a
    ``TaskResult.to_dict()`` (units left out)."""
    from _sentiment_data import pang_lee_split

    from repspace.evaluate import run_fewshot, run_knn

    models: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        train, test = pang_lee_split(Path(tmp))
        for model in MODELS[:1] if quick else MODELS:
            c.log(f"evaluation: fewshot {model}")
            few = run_fewshot(test, train=train, encoder=model, shots=SHOTS, draws=DRAWS, bootstrap=RESAMPLES)
            knn = {metric: [_lean(r) for r in run_knn(test, train=train, encoder=model, ks=KS, metric=metric,
                                                       bootstrap=RESAMPLES).results] for metric in METRICS}
            models[model] = {"fewshot": [_lean(r) for r in few.results], "knn": knn,
                             "sklearn": _sklearn(model, train, test)}
    return {"models": models}


def _entry(d: dict[str, Any]) -> dict[str, Any]:
    return next(iter(d["scores"].values()))[0]


def _ci(d: dict[str, Any]) -> str:
    e = _entry(d)
    return f"[{e['ci_low']:.3f}, {e['ci_high']:.3f}]"


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, break_long_words=False, break_on_hyphens=False)


INTRO = (
    "Pang & Lee's sentence polarity (200 movie-review sentences shipped in gensim's wheel; even lines train, odd "
    "lines test: 100 / 100, 50 per class, chance 0.500). Few-shot: the classification task's probe "
    "(`LogisticRegression(max_iter=1000)`) on k training sentences per class, {draws} seeded draws each, beside "
    "the probe on all 100 labels (FEET's frozen and few-shot scenarios, the model frozen in both). 95% CI: "
    "bootstrap of the test items (1,000 resamples, seed 0) of the mean accuracy over the draws; draws: the 2.5 and "
    "97.5 percentiles of the draws' accuracies. scikit-learn: `LogisticRegression(max_iter=1000)` fitted directly "
    "on the same vectors. Measured by `benchmarks/eval_fewshot.py` (`benchmarks/evaluation.py --only fewshot`) "
    "with `repspace.evaluate.run_fewshot` and `run_knn`, what `repspace eval fewshot` and `repspace eval knn` run.")
KNN_INTRO = (
    "kNN classification (MINERS): each test sentence takes the majority label of its k nearest training sentences "
    "(a tie: the nearest tied label, MINERS' rule); cosine, and MINERS' own Euclidean distance of the raw vectors. "
    "Accuracy with its 95% CI over the test items, macro F1 beside it; scikit-learn: "
    "`KNeighborsClassifier(metric=..., weights='uniform')` on the same vectors (it breaks a tie towards the smaller "
    "class).")


def _fewshot_table(models: dict[str, Any]) -> list[str]:
    lines = ["| model | 1 shot | 4 shots | 16 shots | all 100 | scikit-learn, all |", "|---|---|---|---|---|---|"]
    for model, r in models.items():
        cells = []
        for x in r["fewshot"]:
            e = _entry(x)
            draws = (f", draws [{e['accuracy_draw_low']:.3f}, {e['accuracy_draw_high']:.3f}]"
                     if "accuracy_draw_low" in e else "")
            cells.append(f"{e['main_score']:.3f} {_ci(x)}{draws}")
        lines.append(f"| {model} | " + " | ".join(cells) + f" | {r['sklearn']['probe']:.3f} |")
    return lines


def _knn_table(models: dict[str, Any]) -> list[str]:
    lines = ["| model | distance | k | accuracy | 95% CI | macro F1 | tied votes | scikit-learn |",
             "|---|---|---|---|---|---|---|---|"]
    for model, r in models.items():
        for metric, rows in r["knn"].items():
            for x in rows:
                e, k = _entry(x), x["repspace"]["k"]
                lines.append(f"| {model} | {metric} | {k} | {e['main_score']:.3f} | {_ci(x)} | {e['f1_macro']:.3f} | "
                             f"{x['repspace']['tied_votes']} | {r['sklearn'][f'{metric}-{k}']:.3f} |")
    return lines


def _checks(models: dict[str, Any]) -> dict[str, bool]:
    """What the reading asserts about the agreement with scikit-learn, checked on the figures."""
    probe = all(abs(_entry(r["fewshot"][-1])["main_score"] - r["sklearn"]["probe"]) < SAME for r in models.values())
    knn = [(x, r["sklearn"][f"{metric}-{x['repspace']['k']}"]) for r in models.values()
           for metric, rows in r["knn"].items() for x in rows]
    untied = all(abs(_entry(x)["main_score"] - ref) < SAME for x, ref in knn if x["repspace"]["tied_votes"] == 0)
    tied = [abs(_entry(x)["main_score"] - ref) >= SAME for x, ref in knn if x["repspace"]["tied_votes"] > 0]
    same_rows = all([_entry(a)["main_score"] for a in r["knn"]["cosine"]]
                    == [_entry(b)["main_score"] for b in r["knn"]["euclidean"]] for r in models.values())
    return {"probe": probe, "untied": untied, "tied_differ": any(tied), "same_rows": same_rows}


def _disjoint(rows: list[dict[str, Any]], names: list[str]) -> list[str]:
    """The pairs of settings whose 95% intervals do not overlap, as ``"a against b"``."""
    out = []
    for i, a in enumerate(rows):
        for j in range(i + 1, len(rows)):
            ea, eb = _entry(a), _entry(rows[j])
            if ea["ci_high"] < eb["ci_low"] or eb["ci_high"] < ea["ci_low"]:
                out.append(f"{names[i]} against {names[j]}")
    return out


def _reading(models: dict[str, Any]) -> str:
    ok = _checks(models)
    text = ("Every full-probe figure equals scikit-learn's" if ok["probe"]
            else "Not every full-probe figure equals scikit-learn's")
    text += (", and every kNN figure without a tied vote too" if ok["untied"]
             else "; some kNN figure without a tied vote differs from scikit-learn's") + "; "
    if ok["tied_differ"]:
        text += ("with k = 10 (even, two classes) the tied votes go to the nearest tied label, where scikit-learn "
                 "takes the smaller class. ")
    else:
        text += "the tie rules (nearest tied label; scikit-learn: the smaller class) happen to agree here. "
    if ok["same_rows"]:
        text += "Every model's vectors are unit length, so the Euclidean ranking is the cosine one (equal rows). "
    if "minilm" not in models:
        return text
    mini, static = models["minilm"]["fewshot"], models["static"]["fewshot"]
    s_all = _entry(static[-1])
    text += (f"MiniLM's probe climbs from {_entry(mini[0])['main_score']:.3f} on one sentence per class to "
             f"{_entry(mini[-1])['main_score']:.3f} on all 100, with kNN in between; ")
    if s_all["ci_low"] <= 0.5 <= s_all["ci_high"]:
        text += (f"the 64-d static model stays at chance on sentiment whatever the labels "
                 f"({s_all['main_score']:.3f} on all 100, interval over 0.5), as its bag of token vectors holds "
                 f"little polarity. ")
    else:
        text += f"the 64-d static model reaches {s_all['main_score']:.3f} on all 100. "
    one_fit = [mini[-1], *(x for rows in models["minilm"]["knn"].values() for x in rows)]
    apart = _disjoint(mini, ["one shot", "four shots", "16 shots", "all labels"])
    text += (f"With 100 test sentences MiniLM's intervals are about +-{_half(one_fit):.2f} wide for one fit (all "
             f"labels, kNN) and +-{_half(mini[:-1]):.2f} for a mean over draws: the curve's steps are within reach "
             "of each other's intervals" + (f", except {', '.join(apart)}." if apart else ", all of them."))
    return text


def _half(rows: list[dict[str, Any]]) -> float:
    """The mean half-width of the rows' 95% intervals."""
    return sum(_entry(x)["ci_high"] - _entry(x)["ci_low"] for x in rows) / (2 * len(rows))


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: the few-shot table, the kNN table, what they say."""
    models = res["models"]
    lines = ["## Few-shot probes and kNN classification (`repspace eval fewshot`, `repspace eval knn`)", "",
             *_wrap(INTRO.format(draws=DRAWS)), "", *_fewshot_table(models), "", *_wrap(KNN_INTRO), "",
             *_knn_table(models), "", *_wrap(_reading(models))]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the static model only")
    parser.add_argument("--json", type=Path, help="also write the figures (measure's dict) to this file")
    args = parser.parse_args(argv)
    res = measure(args.quick)
    print("\n".join(render(res)))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
