"""``repspace eval threshold FILE``: both thresholds with their 95% intervals in a table and in --json, equal to
``model_thresholds``; bad input is one error line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import one_error_line, run_quiet
from _data_subsets import sts_head

from repspace.evaluate import model_thresholds

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 200)


def test_json_equals_the_workflow_and_the_table_shows_both_thresholds(capsys, sts_file):
    code, out, err = run_quiet(capsys, "eval", "threshold", str(sts_file), "--encoder", "static", "--bootstrap",
                               "200", "--json")
    assert code == 0, err
    got = json.loads(out)
    want = model_thresholds(sts_file, encoder="static", bootstrap=200)
    assert got["random_quantile"] == want.to_dict()["random_quantile"]
    assert got["youden"] == want.to_dict()["youden"]
    assert got["n_related"] == want.n_related and got["related"] == "gold score >= 4" and got["encoder"] == "static"
    rq, yd = got["random_quantile"], got["youden"]
    assert rq["ci_low"] <= rq["cut"] <= rq["ci_high"] and yd["ci_low"] <= yd["cut"] <= yd["ci_high"]
    assert got["bootstrap"] == {"level": 0.95, "n_resamples": 200}

    code, out, err = run_quiet(capsys, "eval", "threshold", str(sts_file), "--encoder", "static", "--bootstrap",
                               "200")
    assert code == 0, err
    (quantile_row,) = [ln for ln in out.splitlines() if "random 95% quantile" in ln]
    (youden_row,) = [ln for ln in out.splitlines() if "Youden" in ln]
    assert f"{rq['cut']:.4f}" in quantile_row and f"[{rq['ci_low']:.4f}, {rq['ci_high']:.4f}]" in quantile_row
    assert (f"[{rq['related_above_ci_low']:.4f}, {rq['related_above_ci_high']:.4f}]" in quantile_row
            and f"{rq['related_above']:.4f}" in quantile_row)
    assert f"{yd['cut']:.4f}" in youden_row and f"[{yd['ci_low']:.4f}, {yd['ci_high']:.4f}]" in youden_row
    assert f"{yd['tpr']:.4f}" in youden_row
    assert max(len(line) for line in out.splitlines()) <= 80  # fits a terminal of 80 columns


def test_min_score_and_bootstrap_zero(capsys, sts_file):
    code, out, err = run_quiet(capsys, "eval", "threshold", str(sts_file), "--encoder", "static", "--min-score",
                               "4.5", "--bootstrap", "0", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["min_score"] == 4.5 and got["random_quantile"]["ci_low"] is None and got["bootstrap"] is None
    gold = [float(line.rsplit(",", 1)[1]) for line in sts_file.read_text(encoding="utf-8").splitlines()]
    assert got["n_related"] == sum(g >= 4.5 for g in gold)


@pytest.mark.parametrize(("args", "fragments"), [
    (["--min-score", "6"], ["no pair of", "gold score >= 6"]),
    (["--quantile", "1.5"], ["quantile"]),
    (["--encoder", "static", "--space", "docs"], ["not both"]),
])
def test_bad_input_is_one_error_line(capsys, tmp_path, args, fragments):
    path = tmp_path / "toy-test.csv"
    path.write_text("a cat,a kitten,4.5\na dog,a puppy,4\na car,the sea,0\n", encoding="utf-8")
    one_error_line(run_quiet(capsys, "eval", "threshold", str(path), *args), 2, *fragments)


def test_a_pair_file_refuses_min_score(capsys, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("sentence1,sentence2,label\na cat,a kitten,1\na dog,a puppy,1\na car,the sea,0\n",
                    encoding="utf-8")
    one_error_line(run_quiet(capsys, "eval", "threshold", str(path), "--encoder", "static", "--min-score", "4"), 2,
                   "--min-score applies to an STS file")
    one_error_line(run_quiet(capsys, "eval", "threshold", str(tmp_path / "missing.csv")), 2, "does not exist")
