"""``repspace eval probing``: the engine's figures through the command, the table, the per-layer profile, and one
error line (exit 2) for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import one_error_line, run

from repspace.engines.encoders import get_encoder
from repspace.engines.eval import load_probing_dir, probing
from repspace.engines.eval.probing import PROBING_TASKS

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "senteval-probing"


def test_json_holds_the_engines_results_task_by_task(capsys) -> None:
    r = run(capsys, "-q", "eval", "probing", str(SAMPLE), "--encoder", "static", "--bootstrap", "200", "--json")
    assert r.code == 0, r.err
    got = json.loads(r.out)
    engine = [probing(get_encoder("static"), d, bootstrap=200) for d in load_probing_dir(SAMPLE)]
    # the whole shipped folder: all ten tasks, in the paper's order, each with its interval
    assert [g["task_name"] for g in got] == [f"probing:{t}" for t in PROBING_TASKS]
    for g, e in zip(got, engine, strict=True):
        entry = g["scores"]["test"][0]
        assert abs(entry["main_score"] - e.main_score) <= 1e-12
        assert entry["ci_low"] <= entry["main_score"] <= entry["ci_high"]
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((e.interval.low, e.interval.high), abs=1e-12)
        assert entry["majority_accuracy"] == e.scores["majority_accuracy"]
        assert g["repspace"]["c"] == e.info["c"] and g["repspace"]["subject"] == "static"
        assert len(g["dataset_revision"]) == 64


def test_the_table_has_a_row_per_subject_and_the_majority_row(capsys) -> None:
    r = run(capsys, "-q", "eval", "probing", str(SAMPLE / "past_present.txt"), "--encoder", "static")
    assert r.code == 0, r.err
    assert "past_present (Tense, n=60)" in r.out and "majority class" in r.out and "0.500" in r.out


@pytest.mark.parametrize(("args", "fragments"), [
    (["--task", "tense"], ["unknown probing task 'tense'"]),
    (["--bootstrap", "-1"], ["--bootstrap"]),
])
def test_bad_options_are_one_error_line(capsys, args: list[str], fragments: list[str]) -> None:
    r = run(capsys, "-q", "eval", "probing", str(SAMPLE), "--encoder", "static", *args)
    one_error_line(r, 2, *fragments)


def test_a_task_missing_from_the_folder_is_one_error_line(capsys, tmp_path: Path) -> None:
    (tmp_path / "past_present.txt").write_bytes((SAMPLE / "past_present.txt").read_bytes())
    one_error_line(run(capsys, "-q", "eval", "probing", str(tmp_path), "--task", "tree_depth", "--encoder", "static"),
                   2, "has no tree_depth.txt")


def test_a_bad_file_is_one_error_line_naming_its_line(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "sentence_length.txt"
    bad.write_text("tr\t0\tfive words in this line\nvalid\t1\tnine words\n", encoding="utf-8")
    one_error_line(run(capsys, "-q", "eval", "probing", str(bad), "--encoder", "static"), 2,
                   "sentence_length.txt:2: unknown split 'valid'")


@pytest.mark.slow
def test_minilm_layer_all_gives_the_per_layer_profile(capsys) -> None:
    r = run(capsys, "-q", "eval", "probing", str(SAMPLE), "--task", "sentence_length",
            "--encoder", "hf-layers:minilm", "--layer", "all", "--bootstrap", "200", "--json")
    assert r.code == 0, r.err
    got = json.loads(r.out)
    assert [g["repspace"]["layer"] for g in got] == list(range(7))  # the embeddings and MiniLM's 6 layers
    scores = [g["scores"]["test"][0] for g in got]
    # length is linearly readable from the token embeddings' mean: far above the 1/6 baseline at layer 0
    assert scores[0]["ci_low"] > scores[0]["majority_accuracy"] == pytest.approx(1 / 6, abs=1e-12)
