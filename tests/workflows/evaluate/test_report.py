"""results_report: real ``eval sts`` results read back from --json files, MTEB folders and saved ids, grouped by
task with their comparisons (the file's, or computed anew and then equal to a live run's), per-part blocks read,
and every bad source one InputError line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _eval_results import RESAMPLES, SEED, entry, read, with_parts

from repspace.core.errors import InputError, NotFoundError
from repspace.workflows.evaluate import ResultsReport, results_report

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def folder(sts_eval_results: Path) -> Path:
    return sts_eval_results


def _report(*sources, **kw) -> ResultsReport:
    return results_report(list(sources), n_resamples=RESAMPLES, seed=SEED, **kw)


def test_a_file_with_comparisons_gives_a_row_per_model_and_its_own_comparisons(folder):
    live = read(folder / "three.json")
    report = _report(str(folder / "three.json"))
    (task,) = report.tasks
    assert (task.task, task.split, task.comparisons_from) == ("sts:sts150", "test", "given")
    assert [r.model for r in task.rows] == ["static", "space noisy", "space fine"]
    for row, result in zip(task.rows, live["results"], strict=True):
        e = entry(result)
        assert (row.main_score, row.ci_low, row.ci_high) == (e["main_score"], e["ci_low"], e["ci_high"])
        assert row.n_units == len(result["repspace"]["units"]["arrays"][0]) and row.level == 0.95
        assert row.source == str(folder / "three.json") and row.parts is None
    assert [c.to_dict() for c in task.comparisons] == live["comparisons"]
    assert json.loads(json.dumps(report.to_dict())) == report.to_dict()


def test_results_from_three_sources_are_compared_as_the_live_run_compared_them(folder):
    """static from a --json list, noisy from another, fine from the store: the comparisons computed on their
    units are the live three-model run's, to the last bit (same units, order, resamples and seed)."""
    live = read(folder / "three.json")
    report = _report(str(folder / "static.json"), str(folder / "noisy.json"), "3", store=folder / "s.db")
    (task,) = report.tasks
    assert task.comparisons_from == "computed" and [r.model for r in task.rows] == ["static", "space noisy",
                                                                                    "space fine"]
    assert [c.to_dict() for c in task.comparisons] == live["comparisons"]
    assert [r.source for r in task.rows] == [str(folder / "static.json"), str(folder / "noisy.json"), "#3"]


def test_two_models_alone_have_their_holm_p_equal_to_the_raw_one_of_the_larger_family(folder):
    live = {(c["a"], c["b"]): c for c in read(folder / "three.json")["comparisons"]}
    (task,) = _report(str(folder / "static.json"), str(folder / "noisy.json")).tasks
    (c,) = task.comparisons
    ref = live["static", "space noisy"]
    assert (c.difference, c.ci_low, c.ci_high) == (ref["difference"], ref["ci_low"], ref["ci_high"])
    assert c.p_value == ref["p_raw"] <= ref["p_value"]  # one pair: Holm leaves its p-value as it is


def test_saved_ids_read_back_as_the_json_printed_them(folder):
    live = read(folder / "three.json")
    (task,) = _report(1, "#2", "3", store=str(folder / "s.db")).tasks
    assert [r.main_score for r in task.rows] == [entry(r)["main_score"] for r in live["results"]]
    assert [r.source for r in task.rows] == ["#1", "#2", "#3"]
    assert [c.to_dict() for c in task.comparisons] == live["comparisons"]


def test_an_mteb_folder_reads_back_its_score_and_interval_but_cannot_be_tested(folder):
    static = entry(read(folder / "static.json")[0])
    (task,) = _report(str(folder / "mteb")).tasks
    (row,) = task.rows
    assert (row.model, row.main_metric) == ("static", "spearman")
    assert (row.main_score, row.ci_low, row.ci_high, row.n_units) == (static["main_score"], static["ci_low"],
                                                                      static["ci_high"], 150)
    (task,) = _report(str(folder / "mteb"), str(folder / "noisy.json")).tasks
    assert task.comparisons == () and task.comparisons_from == "none"
    assert "Not compared" in task.note and "'static' carries no per-unit scores" in task.note


def test_a_model_named_twice_gets_its_source_added(folder):
    (task,) = _report(str(folder / "static.json"), str(folder / "mteb")).tasks
    assert [r.model for r in task.rows] == [f"static ({folder / 'static.json'})", f"static ({folder / 'mteb'})"]


def test_a_file_of_mteb_itself_is_named_by_its_model_meta(folder, tmp_path):
    (path,) = (folder / "mteb").rglob("sts_sts150.json")
    data = read(path)
    for e in data["scores"]["test"]:
        del e["repspace"]
    model = tmp_path / "results" / "org__model" / "rev1"
    model.mkdir(parents=True)
    (model / "STSBenchmark.json").write_text(json.dumps({**data, "task_name": "STSBenchmark"}), encoding="utf-8")
    (task,) = _report(str(tmp_path)).tasks
    (row,) = task.rows
    assert (task.task, row.model, row.main_metric) == ("STSBenchmark", "org/model", "main_score")
    (e,) = data["scores"]["test"]
    assert (row.main_score, row.ci_low) == (e["main_score"], e["ci_low"])
    (model / "model_meta.json").write_text(json.dumps({"name": "org/model-β"}), encoding="utf-8")
    assert _report(str(tmp_path)).tasks[0].rows[0].model == "org/model-β"


def test_a_per_part_block_is_read_from_the_result(folder, tmp_path):
    result = read(folder / "noisy.json")[0]
    path = tmp_path / "parts.json"
    path.write_text(json.dumps([with_parts(result)]), encoding="utf-8")
    (row,) = _report(str(path)).tasks[0].rows
    block = with_parts(result)["repspace"]["parts"]
    assert row.parts == {"by": "genre", "macro": block["macro"], "values": block["values"]}


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("make", "fragment"), [
    (lambda f, t: [], "no results given"),
    (lambda f, t: [str(t / "missing.json")], "no such file or folder"),
    (lambda f, t: [str(f / "sts150.csv")], "is not a result: not JSON"),
    (lambda f, t: [_write(t, "x.json", '{"a": 1}')], "is not a result: expected a result of"),
    (lambda f, t: [_write(t, "x.json", "[]")], "an empty list holds no result"),
    (lambda f, t: [_write(t, "x.json", '[{"task_name": "x", "scores": {}}]')], "is not a result"),
    (lambda f, t: [str(t)], "no result files (*.json) in the folder"),
    (lambda f, t: ["9"], "no saved result with id 9"),
    (lambda f, t: [_write(t, "x.json", json.dumps({**read(f / "three.json"), "comparisons": []})),
                   _write(t, "y.json", json.dumps({**read(f / "three.json"), "comparisons": [{"a": 1}]}))],
     "a comparison must have a, b, difference"),
])
def test_a_bad_source_is_one_input_error(folder, tmp_path, make, fragment):
    sources = make(folder, tmp_path)
    with pytest.raises(InputError) as e:
        results_report(sources, store=folder / "s.db")
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_an_id_without_a_store_says_so(folder, tmp_path):
    with pytest.raises(NotFoundError, match="no store at"):
        results_report(["1"], store=tmp_path / "none.db")
    with pytest.raises(InputError, match="n_resamples"):
        results_report([str(folder / "noisy.json")], n_resamples=-1)
