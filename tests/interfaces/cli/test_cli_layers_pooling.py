"""``repspace layers pooling``: every recipe scored with its interval, whitened on request; bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests._cli_process import one_error_line, run_quiet
from tests._data_subsets import sts_head

ENC = "hf-layers:minilm"


@pytest.mark.slow  # loads MiniLM
def test_pooling_scores_every_recipe_raw_and_whitened(capsys, tmp_path, shared_data):
    pairs = sts_head(shared_data, tmp_path / "sts.csv", 80)
    r = run_quiet(capsys, "layers", "pooling", "--encoder", ENC, "--task", "sts", str(pairs), "--recipes",
                  "mean,cls,first-last,mix:0+6", "--whiten", "--bootstrap", "200", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    rows = data["rows"]
    assert [(row["recipe"], row["whitened"]) for row in rows] == [
        (name, w) for w in (False, True) for name in ("mean", "cls", "first-last", "mix:0+6")]
    assert rows[2]["layers"] == [1, 6] and rows[3]["layers"] == [0, 6]
    assert (data["n_units"], data["unit"], data["n_texts"]) == (80, "pairs", 160)
    assert all(row["ci"][0] <= row["score"] <= row["ci"][1] for row in rows)
    assert len({round(row["score"], 6) for row in rows}) == len(rows)  # whitening changes every score
    best = max(rows, key=lambda row: row["score"])
    assert data["best"] == best["recipe"] + (" +whiten" if best["whitened"] else "")
    # MiniLM was trained with mean pooling of its last layer: that recipe beats its [CLS] token on STS-B
    by = {(row["recipe"], row["whitened"]): row["score"] for row in rows}
    assert by[("mean", False)] > by[("cls", False)] and np.isfinite(list(by.values())).all()
    r = run_quiet(capsys, "layers", "pooling", "--encoder", ENC, "--task", "sts", str(pairs), "--recipes", "max",
                  "--bootstrap", "0")
    assert r.code == 0 and "best: max" in r.out, r


@pytest.mark.parametrize("args, fragment", [
    (["--encoder", "static"], "hf-layers"),
    (["--encoder", ENC, "--recipes", "mean,avg"], "unknown pooling recipe"),
    (["--encoder", ENC, "--recipes", "mix:0+7"], "out of range"),
])
def test_bad_input_is_one_error_line(capsys, tmp_path, shared_data, args, fragment):
    pairs = sts_head(shared_data, tmp_path / "sts.csv", 10)
    one_error_line(run_quiet(capsys, "layers", "pooling", *args, "--task", "sts", str(pairs)), 2, fragment)


def test_an_unknown_task_is_one_error_line(capsys, tmp_path, shared_data):
    pairs = sts_head(shared_data, tmp_path / "sts.csv", 10)
    one_error_line(run_quiet(capsys, "layers", "pooling", "--encoder", ENC, "--task", "nli", str(pairs)), 2, "task")


def test_bad_retrieval_and_classification_data_are_one_error_line(capsys, tmp_path) -> None:
    one_error_line(run_quiet(capsys, "layers", "pooling", "--encoder", ENC, "--task", "retrieval",
                             str(tmp_path / "absent")), 2, "does not exist")
    one_class = tmp_path / "one.jsonl"
    one_class.write_text('{"text": "a fine film", "label": "pos"}\n{"text": "a good film", "label": "pos"}\n')
    one_error_line(run_quiet(capsys, "layers", "pooling", "--encoder", ENC, "--task", "classification",
                             str(one_class), "--bootstrap", "0"), 2, "class")
