"""Issue 31's bad-input matrix through the real ``repspace eval`` commands: one ``error: ...`` line, exit 2.

The cases: one class only, a pair file with one side missing, a task file with no
positives, mismatched bitext lengths, fewer than 2 models for ``--compare``, each
against every eval command it applies to. Cases already tested elsewhere are not
repeated here: one class under ``--protocol mteb`` (test_cli_eval_protocol.py), a
reranking query without a positive, bitext files of 2 and 1 lines
(test_cli_eval_tasks.py), EvalRank without a positive pair (test_cli_eval_intrinsic.py),
``--compare`` over all of one model's saved results (test_cli_eval_compare.py).
Every file is written by hand: the point is its one defect.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_process import one_error_line, run_quiet, store_dump

PAIR_HEADER = "sentence1,sentence2,label\n"
STS_ROWS = "a dog,a puppy,4\na car,the sea,0\n"

#: name -> the file's text (a name ending in "/" is a BEIR folder: its files follow as "folder/file" names).
FILES = {
    "one-class.csv": "text,label\na cat,pets\na dog,pets\na car,pets\nthe sea,pets\n",
    "pairs-all-1.csv": PAIR_HEADER + "a cat,a kitten,1\na dog,a puppy,1\n",
    "pairs-all-0.csv": PAIR_HEADER + "a cat,the sea,0\na dog,a car,0\n",
    "pairs-empty-side.csv": PAIR_HEADER + "a cat,,1\na dog,a car,0\n",
    "pairs-short-row.csv": PAIR_HEADER + "a cat,1\na dog,a car,0\n",
    "sts-empty-second.csv": "a cat,,4.5\n" + STS_ROWS,
    "sts-blank-first.csv": "  ,a kitten,4.5\n" + STS_ROWS,
    "sts-short-row.csv": "a cat,4.5\n" + STS_ROWS,
    "sts-equal-scores.csv": "a cat,a kitten,3\na dog,a puppy,3\na car,the sea,3\n",
    "bitext-empty-side.csv": "a cat,eine Katze\na dog,\n",
    "bitext-short-row.csv": "a cat,eine Katze\na dog\n",
    "en.txt": "A cat.\nA dog.\nA car.\n",
    "de-blank-line.txt": "Eine Katze.\n\nEin Auto.\n",
    "beir/corpus.jsonl": '{"_id": "d1", "text": "a cat"}\n{"_id": "d2", "text": "a dog"}\n',
    "beir/queries.jsonl": '{"_id": "q1", "text": "cat"}\n{"_id": "q2", "text": "dog"}\n',
    "beir/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t0\nq2\td2\t0\n",
    "rerank-no-negative.jsonl": '{"query": "q", "positive": ["a"], "negative": []}\n',
    "summ-equal-scores.jsonl": ('{"text": "t", "human_summaries": ["a"], "machine_summaries": ["b", "c"], '
                                '"relevance": [1, 1]}\n'),
    "summ-scores-short.jsonl": ('{"text": "t", "human_summaries": ["a"], "machine_summaries": ["b", "c"], '
                                '"relevance": [1]}\n'),
}

#: (command and its files, fragments of the error line). Files are named by their key in FILES.
CASES = {
    # one class only
    "classification, one class": (["classification", "one-class.csv"], ["labels hold 1 class", "at least 2"]),
    "clustering, one class": (["clustering", "one-class.csv"], ["labels hold 1 class", "at least 2"]),
    "pairclass, every label 1": (["pairclass", "pairs-all-1.csv"], ["needs both labels 0 and 1", "all 2 pairs are 1"]),
    # a pair file with one side missing
    "sts, empty sentence2": (["sts", "sts-empty-second.csv"], ["sts-empty-second.csv:1: sentence2 is empty"]),
    "sts, blank sentence1": (["sts", "sts-blank-first.csv"], ["sts-blank-first.csv:1: sentence1 is empty"]),
    "sts, row of 2 fields": (["sts", "sts-short-row.csv"], ["sts-short-row.csv:1: expected 3 fields", "got 2"]),
    "pairclass, empty sentence2": (["pairclass", "pairs-empty-side.csv"],
                                   ["pairs-empty-side.csv:2: sentence2 is empty"]),
    "pairclass, row of 2 fields": (["pairclass", "pairs-short-row.csv"],
                                   ["pairs-short-row.csv:2: expected 3 fields (sentence1,sentence2,label)"]),
    "threshold, STS file, empty sentence2": (["threshold", "sts-empty-second.csv"], ["sentence2 is empty"]),
    "threshold, pair file, row of 2 fields": (["threshold", "pairs-short-row.csv"], ["expected 3 fields"]),
    "evalrank, empty sentence2": (["evalrank", "sts-empty-second.csv"], ["sentence2 is empty"]),
    "evalrank, row of 2 fields": (["evalrank", "sts-short-row.csv"], ["expected 3 fields"]),
    "bitext, empty sentence2": (["bitext", "bitext-empty-side.csv"], ["bitext-empty-side.csv:2: sentence2 is empty"]),
    "bitext, row of 1 field": (["bitext", "bitext-short-row.csv"], ["bitext-short-row.csv:2: expected 2 fields"]),
    # a task file with no positives (or nothing to score)
    "pairclass, every label 0": (["pairclass", "pairs-all-0.csv"], ["needs both labels 0 and 1", "all 2 pairs are 0"]),
    "threshold, no pair labelled 1": (["threshold", "pairs-all-0.csv"], ["is labelled 1", "no related pairs"]),
    "retrieval, no relevant document": (["retrieval", "beir"], ["gives no query", "a relevant document"]),
    "reranking, no negative": (["reranking", "rerank-no-negative.jsonl"], ["has a negative", "nothing to rerank"]),
    "sts, equal gold scores": (["sts", "sts-equal-scores.csv"], ["all gold scores are equal"]),
    "summarization, equal human scores": (["summarization", "summ-equal-scores.jsonl"],
                                          ["every correlation is undefined"]),
    # mismatched lengths
    "bitext, blank line in the second file": (["bitext", "en.txt", "de-blank-line.txt"],
                                              ["de-blank-line.txt:2: empty line"]),
    "summarization, fewer human scores than summaries": (["summarization", "summ-scores-short.jsonl"],
                                                         ["2 machine summaries but 1 human scores"]),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad-input")
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("args, fragments", list(CASES.values()), ids=list(CASES))
def test_bad_task_file_is_one_error_line_exit_2_and_nothing_is_saved(capsys, folder, one_saved, args, fragments):
    command, *files = args
    save = [] if command == "threshold" else ["--save"]  # threshold records nothing
    before = store_dump(one_saved)
    r = run_quiet(capsys, "--store", str(one_saved), "eval", command, *[str(folder / f) for f in files],
                  "--encoder", "static", "--bootstrap", "10", *save)
    one_error_line(r, 2, *fragments)
    assert store_dump(one_saved) == before


@pytest.fixture(scope="module")
def one_saved(tmp_path_factory, shared_data) -> Path:
    """A store holding one saved result (id 1): static on the first 40 pairs of STS-B test."""
    root = tmp_path_factory.mktemp("one-saved")
    sts = root / "stsb-head-test.csv"
    lines = (shared_data / "stsb" / "stsb-en-test.csv").read_text(encoding="utf-8").splitlines()[:40]
    sts.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = root / "store.db"
    from repspace.interfaces.cli import main

    assert main(["-q", "--store", str(db), "eval", "sts", str(sts), "--encoder", "static", "--bootstrap", "10",
                 "--save"]) == 0
    return db


@pytest.mark.parametrize("ids, fragments", [
    (["1"], ["comparing needs at least 2 models, got 1"]),
    (["1", "1"], ["result ids are repeated: 1, 1"]),
    (["--task", "sts"], ["comparing needs at least 2 models, got 1"]),
    (["--task", "retrieval"], ["no saved results to compare of task retrieval"]),
], ids=["one id", "one id twice", "the task's one result", "a task with none"])
def test_compare_with_fewer_than_2_models_is_one_error_line_exit_2(capsys, one_saved, ids, fragments):
    before = store_dump(one_saved)
    one_error_line(run_quiet(capsys, "--store", str(one_saved), "eval", "results", "--compare", *ids), 2, *fragments)
    assert store_dump(one_saved) == before
