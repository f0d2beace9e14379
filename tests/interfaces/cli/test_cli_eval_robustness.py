"""``repspace eval robustness sts|retrieval``: the table and --json hold the workflow's figures; bad input is one
error line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import one_error_line, run
from _data_subsets import cranfield_head, sts_head

from repspace.workflows.robustness import robustness

pytestmark = pytest.mark.numerics


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 80)


def test_json_and_table_carry_each_perturbations_score_drop_interval_and_p(capsys, sts_file, monkeypatch):
    from repspace.interfaces.cli._common import out as console

    monkeypatch.setattr(console, "width", 120)
    args = ["eval", "robustness", "sts", str(sts_file), "--encoder", "static", "--perturb", "typos,casing",
            "--rate", "0.2", "--seed", "3", "--bootstrap", "200"]
    code, out, err = run(capsys, "-q", *args, "--json")
    assert code == 0, err
    shown = json.loads(out)
    expected = robustness("sts", sts_file, encoder="static", perturbations="typos,casing", rate=0.2, seed=3,
                          bootstrap=200).to_dict()
    for d in (shown, expected):
        d["evaluation_time"] = 0.0
    assert shown == expected
    assert [p["perturbation"] for p in shown["perturbed"]] == ["typos", "casing"]
    assert shown["repspace"]["rate"] == 0.2 and shown["repspace"]["units"] == "pairs"
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert f"original spearman {shown['original']:.4f} [{shown['ci_low']:.4f}, {shown['ci_high']:.4f}]" in out
    for p in shown["perturbed"]:
        (row,) = [line for line in out.splitlines() if f" {p['perturbation']} " in line]
        for cell in (f"{p['score']:.4f}", f"{p['drop']:+.4f}", f"[{p['ci_low']:.4f}, {p['ci_high']:.4f}]",
                     f"{p['p_value']:.3g}", f"{p['changed']}/{p['texts']}"):
            assert cell in row, (cell, row)
    assert "80 pairs; perturbed: both sentences of each pair; rate 0.2, seed 3" in err


def test_retrieval_perturbs_the_queries(capsys, tmp_path, shared_data):
    folder = cranfield_head(shared_data, tmp_path / "cran", 200, judged_queries_only=True)
    code, out, err = run(capsys, "-q", "eval", "robustness", "retrieval", str(folder), "--encoder", "static",
                         "--perturb", "punctuation", "--bootstrap", "0", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["main_metric"] == "ndcg_at_10" and d["repspace"]["units"] == "queries"
    assert d["repspace"]["texts_perturbed"].startswith("queries only")
    (p,) = d["perturbed"]
    assert p["ci_low"] is None and p["p_value"] is None and p["drop"] == pytest.approx(d["original"] - p["score"])


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--perturb", "typos,spelling"], "perturbation must be one of typos, casing, punctuation, synonyms, reorder"),
    (["--rate", "0"], "rate must be a number in (0, 1]"),
    (["--rate", "1.5"], "rate must be a number in (0, 1]"),
    (["--seed", "-2"], "seed must be"),
    (["--layer", "all"], "scores one layer"),
    (["--space", "x"], "give --encoder or --space, not both"),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, sts_file, extra, fragment):
    one_error_line(run(capsys, "eval", "robustness", "sts", str(sts_file), "--encoder", "static", *extra), 2,
                   fragment)


def test_a_missing_file_is_one_error_line(capsys, tmp_path):
    one_error_line(run(capsys, "eval", "robustness", "sts", str(tmp_path / "none.csv"), "--encoder", "static",
                       "--perturb", "typos"), 2, "does not exist")


def test_the_cli_default_rate_is_the_engines():
    from repspace.engines.eval.perturb import DEFAULT_RATE
    from repspace.interfaces.cli import eval_robustness

    assert eval_robustness.DEFAULT_RATE == DEFAULT_RATE
