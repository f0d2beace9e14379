"""``repspace eval ... --bootstrap N``: the 95% interval of the main score in the table, in --json beside the
main score, in ``eval results``; 0 turns it off; a bad value is one error line and exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli_process import one_error_line, run
from _data_subsets import sts_head

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

#: A printed interval, ``[low, high]`` with four decimals.
CI = re.compile(r"\[(-?\d\.\d{4}), (-?\d\.\d{4})\]")
#: How an entry's interval is printed.
CI_TEXT = "[{ci_low:.4f}, {ci_high:.4f}]"


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 120)


def test_json_carries_ci_low_and_ci_high_beside_the_main_score(capsys, sts_file):
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    (entry,) = result["scores"]["test"]
    assert list(entry)[:3] == ["main_score", "ci_low", "ci_high"]
    assert entry["ci_low"] <= entry["main_score"] <= entry["ci_high"] and entry["ci_low"] < entry["ci_high"]
    assert result["repspace"]["interval"]["n_resamples"] == 1000  # the default
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--json",
                         "--bootstrap", "200")
    assert code == 0, err
    (fewer,) = json.loads(out)
    assert fewer["repspace"]["interval"]["n_resamples"] == 200
    assert fewer["scores"]["test"][0]["main_score"] == entry["main_score"]


def test_the_table_shows_the_interval_beside_the_main_score(capsys, sts_file):
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--json")
    assert code == 0, err
    entry = json.loads(out)[0]["scores"]["test"][0]
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static")
    assert code == 0, err
    assert "95% CI" in out
    (main_row,) = [line for line in out.splitlines() if "(main)" in line]
    assert CI_TEXT.format(**entry) in main_row and f"{entry['main_score']:.4f}" in main_row
    assert len(CI.findall(out)) == 1  # on the main score's row only


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_several_subjects_get_an_interval_column_after_the_main_score(capsys, tmp_path, shared_data):
    path = sts_head(shared_data, tmp_path / "stsb-small-test.csv", 40)
    code, out, err = run(capsys, "-q", "eval", "sts", str(path), "--encoder", "hf-layers:minilm", "--layer", "all",
                         "--bootstrap", "100", "--json")
    assert code == 0, err
    shown = [CI_TEXT.format(**r["scores"]["test"][0]) for r in json.loads(out)]
    assert len(shown) == 7
    code, out, err = run(capsys, "-q", "eval", "sts", str(path), "--encoder", "hf-layers:minilm", "--layer", "all",
                         "--bootstrap", "100")
    assert code == 0, err
    assert "95% CI" in out and CI.findall(out) and len(CI.findall(out)) == 7
    for text in shown:  # each layer's row holds its interval right after its main score
        (row,) = [line for line in out.splitlines() if text in line]
        assert re.search(r"-?\d\.\d{4}\s*│\s*" + re.escape(text), row), row


def test_pairclass_shows_the_interval_of_average_precision(capsys, tmp_path, shared_data):
    path = tmp_path / "stsb-pairs-test.csv"
    lines = (shared_data / "stsb" / "stsb-en-test.csv").read_text(encoding="utf-8").splitlines()[:100]
    path.write_text("sentence1,sentence2,label\n" + "\n".join(
        line.rsplit(",", 1)[0] + "," + str(int(float(line.rsplit(",", 1)[1]) >= 3.0)) for line in lines) + "\n",
        encoding="utf-8")
    code, out, err = run(capsys, "-q", "eval", "pairclass", str(path), "--encoder", "static", "--json")
    assert code == 0, err
    (entry,) = json.loads(out)[0]["scores"]["test"]
    assert entry["ci_low"] <= entry["main_score"] <= entry["ci_high"]
    code, out, err = run(capsys, "-q", "eval", "pairclass", str(path), "--encoder", "static")
    assert code == 0, err
    assert "95% CI" in out and CI.findall(out) == [(f"{entry['ci_low']:.4f}", f"{entry['ci_high']:.4f}")]


def test_bootstrap_0_turns_the_interval_off(capsys, sts_file):
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--bootstrap", "0",
                         "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    assert "ci_low" not in result["scores"]["test"][0] and "interval" not in result["repspace"]
    code, out, err = run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--bootstrap", "0")
    assert code == 0, err
    assert "95% CI" not in out and "spearman (main)" in out


@pytest.mark.parametrize("value", ["-1", "many"])
def test_a_bad_bootstrap_is_one_error_line_and_exit_2(capsys, sts_file, value):
    one_error_line(run(capsys, "-q", "eval", "sts", str(sts_file), "--encoder", "static", "--bootstrap", value),
                   2, "--bootstrap")


@pytest.mark.parametrize("command", ["sts", "retrieval", "wordsim", "analogy", "clustering", "classification",
                                     "pairclass"])
def test_every_task_command_offers_bootstrap(capsys, command):
    code, out, _ = run(capsys, "eval", command, "--help")
    assert code == 0 and "--bootstrap" in out
    assert "resamples of the 95% interval of the main score (0: none)" in " ".join(out.split()).lower()


def test_saved_results_list_their_interval(capsys, tmp_path, sts_file):
    db = str(tmp_path / "s.db")
    code, out, err = run(capsys, "-q", "--store", db, "eval", "sts", str(sts_file), "--encoder", "static", "--save",
                         "--json")
    assert code == 0, err
    entry = json.loads(out)[0]["scores"]["test"][0]
    code, out, err = run(capsys, "-q", "--store", db, "eval", "results")
    assert code == 0, err
    assert "95% CI" in out and CI_TEXT.format(**entry) in out
    code, out, _ = run(capsys, "-q", "--store", db, "eval", "results", "--json")
    (saved,) = json.loads(out)
    assert saved["result"]["scores"]["test"][0]["ci_low"] == entry["ci_low"]
