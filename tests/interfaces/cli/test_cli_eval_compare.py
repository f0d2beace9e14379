"""``repspace eval TASK FILE --encoder A --space B``: a row per model and a table of tested comparisons;
``--json`` as ``{"results", "comparisons"}``; ``eval results --compare`` gives the same from saved results;
what cannot be compared is one error line and exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run
from _data_subsets import sts_head

from repspace.engines.encoders import get_encoder
from repspace.engines.eval.sts import load_sts
from repspace.store import Store

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

#: How a comparison's interval is printed.
CI_TEXT = "[{ci_low:.4f}, {ci_high:.4f}]"


@pytest.fixture()
def setup(tmp_path: Path, shared_data: Path) -> tuple[str, str]:
    """STS-B test's first 150 pairs, and a store whose space 'noisy' is the static model's vectors plus noise."""
    path = sts_head(shared_data, tmp_path / "stsb-head-test.csv", 150)
    texts = list(dict.fromkeys(load_sts(path).texts()))
    v = get_encoder("static").encode(texts)
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.create_space("noisy", dim=v.shape[1]).add(
            [f"t{i}" for i in range(len(texts))], v + np.random.default_rng(0).normal(0, 0.12, v.shape), texts=texts)
    return str(path), str(db)


def _comparison_rows(out: str) -> list[str]:
    return [line for line in out.splitlines() if "static" in line and "space noisy" in line]


def test_two_models_give_a_row_each_and_a_tested_comparison(capsys, setup):
    path, db = setup
    args = ["-q", "--store", db, "eval", "sts", path, "--encoder", "static", "--space", "noisy", "--bootstrap",
            "300", "--seed", "1"]
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert list(data) == ["results", "comparisons"]
    assert [r["repspace"]["subject"] for r in data["results"]] == ["static", "space noisy"]
    (c,) = data["comparisons"]
    assert (c["a"], c["b"]) == ("static", "space noisy") and c["p_value"] == c["p_raw"]
    main = [r["scores"]["test"][0]["main_score"] for r in data["results"]]
    assert c["difference"] == pytest.approx(main[0] - main[1], abs=1e-12)
    assert data["results"][0]["repspace"]["units"]["names"] == ["gold", "cosine"]
    # each per-unit array is printed on one line, not one line per pair
    assert len(out.splitlines()) < 400 and re.search(r'"arrays": \[\n\s+\[[^\n]+\],\n', out)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "p (Holm)" in out and "a - b" in out
    (row,) = _comparison_rows(out)
    assert CI_TEXT.format(**c) in row and f"{c['difference']:+.4f}" in row and f"{c['p_value']:.4f}" in row
    assert row.rstrip("│ ").endswith("*") == (c["p_value"] <= 0.05)
    rows = [line for line in out.splitlines() if line.startswith(("│ static ", "│ space noisy "))]
    assert len(rows) == 3  # a row per model, one per pair


def test_saved_results_compare_as_the_live_run_did(capsys, setup):
    path, db = setup
    code, out, err = run(capsys, "-q", "--store", db, "eval", "sts", path, "--encoder", "static", "--space", "noisy",
                         "--bootstrap", "300", "--seed", "3", "--save", "--json")
    assert code == 0, err
    live = json.loads(out)
    code, out, err = run(capsys, "-q", "--store", db, "eval", "results", "--compare", "--bootstrap", "300",
                         "--seed", "3", "--json")
    assert code == 0, err
    saved = json.loads(out)
    assert saved["comparisons"] == live["comparisons"] and saved["results"] == live["results"]
    code, out, err = run(capsys, "-q", "--store", db, "eval", "results", "--compare", "1", "2", "--bootstrap", "300",
                         "--seed", "3")
    assert code == 0, err
    (row,) = _comparison_rows(out)
    assert CI_TEXT.format(**live["comparisons"][0]) in row
    code, out, err = run(capsys, "-q", "--store", db, "eval", "results", "--json")  # the listing carries the units
    assert code == 0, err
    assert json.loads(out)[0]["result"]["repspace"]["units"] == live["results"][0]["repspace"]["units"]


def test_what_cannot_be_compared_is_one_error_line_and_exit_2(capsys, setup, tmp_path, shared_data):
    path, db = setup
    base = ["-q", "--store", db]
    assert run(capsys, *base, "eval", "sts", path, "--encoder", "static", "--save", "--bootstrap", "0").code == 0
    one_error_line(run(capsys, *base, "eval", "results", "--compare"), 2, "comparing needs at least 2 models, got 1")
    # the same task name over other pairs: a file of the same name with other lines
    other = tmp_path / "other" / "stsb-head-test.csv"
    other.parent.mkdir()
    lines = (shared_data / "stsb" / "stsb-en-test.csv").read_text(encoding="utf-8").splitlines()
    other.write_text("\n".join(lines[200:350]) + "\n", encoding="utf-8")
    assert run(capsys, *base, "eval", "sts", str(other), "--encoder", "static", "--save", "--bootstrap", "0").code == 0
    one_error_line(run(capsys, *base, "eval", "results", "--compare", "1", "2"), 2,
                   "results 'static (#1)' and 'static (#2)' were not scored on the same units", "gold arrays differ")
    words = shared_data / "word-sim" / "EN-RG-65.txt"
    assert run(capsys, *base, "eval", "wordsim", str(words), "--encoder", "static", "--save").code == 0
    one_error_line(run(capsys, *base, "eval", "results", "--compare", "1", "3"), 2,
                   "results of different tasks cannot be compared")
    one_error_line(run(capsys, *base, "eval", "results", "--compare"), 2, "saved results of 2 tasks", "--task")
    one_error_line(run(capsys, *base, "eval", "results", "--compare", "noisy"), 2, "takes the ids")
    one_error_line(run(capsys, *base, "eval", "sts", path, "--encoder", "static", "--encoder", "static"), 2,
                   "static is given twice")
    one_error_line(run(capsys, *base, "eval", "clustering", path, "--encoder", "static", "--space", "noisy"), 2,
                   "clustering has none")


@pytest.mark.parametrize("command", ["sts", "retrieval", "wordsim", "analogy", "clustering", "classification",
                                     "pairclass"])
def test_every_task_command_takes_several_models_and_a_seed(capsys, command):
    code, out, _ = run(capsys, "eval", command, "--help")
    assert code == 0 and "--seed" in out
    assert "repeat it (and --space) to compare models" in " ".join(out.replace("│", " ").split())
