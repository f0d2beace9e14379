"""``repspace eval TASK FILE --output-dir DIR`` for every task that writes it: mteb 2.26.24's ResultCache reads DIR.

One small real data set per task (the static encoder), each written to its own
folder, then the whole folder read by ``mteb.cache.ResultCache`` as MTEB's
leaderboard code reads a results repository: one model, one task named after the
file, whose score is the main score the command printed. The STS/retrieval,
mined-task and ``--protocol mteb`` tests check each task's own fields; this one
checks that no task type is left out and that two data sets of one task type stay
two results.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from _cli_process import run_quiet
from _data_subsets import cranfield_head, sts_head
from _reranking_data import cranfield_reranking
from _summarization_data import write_hand_built

pytest.importorskip("mteb")
pytestmark = pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")

EN_DE = Path(__file__).resolve().parents[2] / "data" / "stsb-multi-mt" / "stsb-en-de-test-200.tsv"
ANALOGIES = """: family
boy girl brother sister
boy girl father mother
brother sister father mother
father mother king queen
: gram-plural
cat cats dog dogs
dog dogs car cars
car cars king kings
"""


def _stsb_rows(shared_data: Path, n: int) -> list[list[str]]:
    return list(csv.reader((shared_data / "stsb" / "stsb-en-test.csv").open(newline="", encoding="utf-8")))[:n]


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])
    return path


def _data(task: str, root: Path, shared_data: Path) -> Path:
    """A small real data set of ``task`` under ``root``, named ``<something>-test``."""
    if task == "sts":
        return sts_head(shared_data, root / "stsb-head-test.csv", 60)
    if task == "retrieval":
        return cranfield_head(shared_data, root / "cranfield-head", 150, judged_queries_only=True)
    if task == "wordsim":
        return shared_data / "word-sim" / "EN-MC-30.txt"
    if task == "analogy":
        (root / "analogies-test.txt").write_text(ANALOGIES, encoding="utf-8")
        return root / "analogies-test.txt"
    if task in ("clustering", "classification"):
        rows = [[a, "similar" if float(s) >= 2.5 else "apart"] for a, _, s in _stsb_rows(shared_data, 80)]
        return _write_csv(root / "stsb-labels-test.csv", ["text", "label"], rows)
    if task == "pairclass":
        rows = [[a, b, int(float(s) >= 3.0)] for a, b, s in _stsb_rows(shared_data, 80)]
        return _write_csv(root / "stsb-pairs-test.csv", ["sentence1", "sentence2", "label"], rows)
    if task == "reranking":
        return cranfield_reranking(shared_data, root / "cranfield-rr-test.jsonl", n_negatives=10, n_queries=12)
    if task == "bitext":
        return EN_DE
    assert task == "summarization"
    return write_hand_built(root / "summeval-hand-test.jsonl")


TASKS = ["sts", "retrieval", "wordsim", "analogy", "clustering", "classification", "pairclass", "reranking",
         "bitext", "summarization"]


@pytest.mark.parametrize("task", TASKS)
def test_every_task_writes_a_results_folder_mtebs_result_cache_reads(capsys, tmp_path, shared_data, task):
    from mteb.cache import ResultCache

    data = _data(task, tmp_path, shared_data)
    out_dir = tmp_path / "results"
    r = run_quiet(capsys, "eval", task, str(data), "--encoder", "static", "--bootstrap", "20", "--json",
                  "--output-dir", str(out_dir))
    assert r.code == 0, r.err
    (ours,) = json.loads(r.out)
    (model,) = ResultCache(out_dir).load_results(include_remote=False)
    (loaded,) = model.task_results
    assert model.model_name == "repspace/static"
    assert loaded.task_name == f"{task}_{data.stem}" == ours["task_name"].replace(":", "_")
    assert loaded.get_score() == ours["scores"]["test"][0]["main_score"]


@pytest.mark.parametrize("task", ["clustering", "classification"])
def test_two_labelled_files_are_two_results_not_one_overwritten(capsys, tmp_path, shared_data, task):
    first = _data(task, tmp_path, shared_data)
    second = first.with_name("stsb-labels-again-test.csv")
    second.write_text("".join(first.read_text(encoding="utf-8").splitlines(keepends=True)[:61]), encoding="utf-8")
    out_dir = tmp_path / "results"
    for path in (first, second):
        r = run_quiet(capsys, "eval", task, str(path), "--encoder", "static", "--bootstrap", "0",
                      "--output-dir", str(out_dir))
        assert r.code == 0, r.err
    from mteb.cache import ResultCache

    (model,) = ResultCache(out_dir).load_results(include_remote=False)
    assert sorted(t.task_name for t in model.task_results) == [f"{task}_stsb-labels-again-test",
                                                               f"{task}_stsb-labels-test"]
