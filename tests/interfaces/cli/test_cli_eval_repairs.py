"""``repspace eval ... --transform`` and ``eval retrieval --hubness``: recorded, told apart, errors in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import run
from _data_subsets import cranfield_head, sts_head


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 150)


def _main(out: str) -> tuple[float, dict]:
    (r,) = json.loads(out)
    return r["scores"]["test"][0]["main_score"], r["repspace"]


def test_sts_transform_is_applied_recorded_and_told_apart_in_saved_results(capsys, sts_file, tmp_path, monkeypatch):
    from repspace.interfaces.cli._common import out as console

    monkeypatch.setattr(console, "width", 200)  # no terminal here: a wide table, nothing cut
    db = str(tmp_path / "s.db")
    code, out, err = run(capsys, "--store", db, "eval", "sts", str(sts_file), "--encoder", "static", "--save",
                         "--json")
    assert code == 0, err
    plain, info = _main(out)
    assert "transform" not in info
    code, out, err = run(capsys, "--store", db, "eval", "sts", str(sts_file), "--encoder", "static",
                         "--transform", "Center, WHITEN32", "--save", "--json")
    assert code == 0, err
    repaired, info = _main(out)
    assert info["transform"] == "center,whiten32" and info["transform_fit"]["dim_out"] == 32
    assert info["transform_fit"]["on"] == "distinct sentences" and info["transform_fit"]["labels"] is False
    assert abs(repaired - plain) > 0.005
    code, out, err = run(capsys, "--store", db, "eval", "results")
    assert code == 0, err
    assert "static [center,whiten32]" in out and out.count("static") == 2
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--transform", "abtt2")
    assert code == 0 and "transform abtt2: fitted on" in err and "(no labels)" in err


@pytest.mark.parametrize("command", ["sts", "pairclass", "wordsim", "clustering", "classification", "analogy"])
def test_an_invalid_spec_is_one_error_line_and_a_nonzero_exit(capsys, tmp_path, command):
    path = tmp_path / "data.csv"
    path.write_text("x\n")
    code, out, err = run(capsys, "eval", command, str(path), "--encoder", "static", "--transform", "center,sphere")
    assert code == 2 and out == ""
    assert err.startswith("error: unknown transform 'sphere'") and len(err.strip().splitlines()) == 1


def test_retrieval_hubness_and_transform_on_a_cranfield_subset(capsys, tmp_path, shared_data):
    folder = cranfield_head(shared_data, tmp_path / "cran300", 300, judged_queries_only=False)
    base = ["eval", "retrieval", str(folder), "--encoder", "static", "--json"]
    code, out, err = run(capsys, *base)
    assert code == 0, err
    plain, info = _main(out)
    assert "hubness_reduction" not in info
    code, out, err = run(capsys, *base, "--hubness", "csls", "--kappa", "5")
    assert code == 0, err
    csls, info = _main(out)
    assert info["hubness_reduction"]["method"] == "csls" and info["hubness_reduction"]["kappa"] == 5
    assert csls != plain
    code, out, err = run(capsys, *base, "--transform", "abtt1", "--hubness", "ls")
    assert code == 0, err
    _, info = _main(out)
    assert info["transform"] == "abtt1" and info["transform_fit"] == {
        "on": "corpus documents", "n": 300, "dim_in": 64, "dim_out": 64, "labels": False}
    assert info["hubness_reduction"]["method"] == "local-scaling"


@pytest.mark.parametrize("extra, message", [
    (["--hubness", "zscore"], "unknown hubness reduction 'zscore'"),
    (["--hubness", "csls", "--index", "hnsw16"], "does not combine"),
    (["--bm25", "--transform", "center"], "BM25 and multi-vector"),
])
def test_bad_hubness_options_are_one_error_line(capsys, shared_data, extra, message):
    code, out, err = run(capsys, "eval", "retrieval", str(shared_data / "cranfield-beir"), "--encoder", "static",
                         *extra)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1
