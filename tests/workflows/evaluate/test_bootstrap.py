"""The workflow passes ``bootstrap`` and ``seed`` to every task that takes them: the intervals are the tasks' own,
0 turns them off, the same seed gives the same interval, and recorded results keep them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from _data_subsets import cranfield_head, sts_head

from repspace import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval.sts import load_sts, sts
from repspace.workflows.evaluate import encoder_subjects, evaluate, run, run_task

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

ANALOGIES = """: family
man woman king queen
boy girl brother sister
father mother son daughter
he she his her
: capitals
athens greece paris france
berlin germany rome italy
madrid spain tokyo japan
"""


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 120)


def _task_source(task: str, tmp_path: Path, shared_data: Path) -> Path:
    """A small real data set of each task: STS-B's first pairs (as pairs, labelled pairs, labelled texts),
    RG-65, a handful of analogies, Cranfield's first 200 documents."""
    rows = list(csv.reader((shared_data / "stsb" / "stsb-en-test.csv").open(newline="", encoding="utf-8")))[:150]
    if task == "sts":
        return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 120)
    if task == "pairclass":
        path = tmp_path / "stsb-pairs-test.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([("sentence1", "sentence2", "label"),
                                     *((a, b, int(float(s) >= 3.0)) for a, b, s in rows)])
        return path
    if task == "classification":
        path = tmp_path / "stsb-texts.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([("text", "label"), *((a, "similar" if float(s) >= 2.5 else "apart")
                                                          for a, _, s in rows)])
        return path
    if task == "wordsim":
        return shared_data / "word-sim" / "EN-RG-65.txt"
    if task == "analogy":
        path = tmp_path / "analogies.txt"
        path.write_text(ANALOGIES, encoding="utf-8")
        return path
    return cranfield_head(shared_data, tmp_path / "cran200", 200, judged_queries_only=True)


@pytest.mark.parametrize("task", ["sts", "pairclass", "classification", "wordsim", "analogy", "retrieval"])
def test_every_task_gets_the_resamples_and_the_seed(task, tmp_path, shared_data):
    source = _task_source(task, tmp_path, shared_data)
    (r,) = run(task, source, encoder="static", bootstrap=200, seed=3).results
    assert r.interval is not None and 0 < r.interval.n_resamples <= 200 and r.interval.level == 0.95
    entry = r.to_dict()["scores"]["test"][0]
    assert (entry["ci_low"], entry["ci_high"]) == (r.interval.low, r.interval.high)
    (again,) = run(task, source, encoder="static", bootstrap=200, seed=3).results
    assert again.interval.to_dict() == r.interval.to_dict() and again.scores == r.scores
    if task != "analogy":  # 7 questions: a mean of 0s and 1s whose percentiles another seed may well repeat
        (other,) = run(task, source, encoder="static", bootstrap=200, seed=4).results
        assert other.interval.to_dict() != r.interval.to_dict()
    (off,) = run(task, source, encoder="static", bootstrap=0).results
    assert off.interval is None and "ci_low" not in off.to_dict()["scores"]["test"][0]
    if task != "classification":  # its seed also shuffles the folds
        assert off.scores == r.scores


def test_the_interval_is_the_tasks_own_and_defaults_to_1000_resamples(sts_file):
    (r,) = run("sts", sts_file, encoder="static", seed=5).results
    direct = sts(get_encoder("static"), load_sts(sts_file), seed=5)
    assert r.interval.to_dict() == direct.interval.to_dict() and r.interval.n_resamples == 1000
    assert r.interval.low <= r.main_score <= r.interval.high


def test_evaluate_and_run_task_pass_them_too(sts_file, tmp_path, shared_data):
    pairs = load_sts(sts_file)
    subjects = encoder_subjects("static")
    (a,) = evaluate("sts", subjects, pairs, bootstrap=100, seed=1)
    b = run_task("sts", subjects[0], pairs, bootstrap=100, seed=1)
    assert a.interval.to_dict() == b.interval.to_dict() and a.interval.n_resamples <= 100
    assert run_task("sts", subjects[0], pairs, bootstrap=0).interval is None
    folder = _task_source("retrieval", tmp_path, shared_data)
    hub = run_task("retrieval", subjects[0], folder, hubness="csls", bootstrap=100, seed=1)
    assert hub.info["hubness_reduction"]["method"] == "csls" and hub.interval.n_resamples == 100


def test_clustering_runs_without_an_interval(tmp_path, shared_data):
    source = _task_source("classification", tmp_path, shared_data)
    (r,) = run("clustering", source, encoder="static", bootstrap=100).results
    assert r.interval is None and "ci_low" not in r.to_dict()["scores"]["test"][0]


def test_saved_results_keep_the_interval(store, sts_file):
    report = run("sts", sts_file, store=store, encoder="static", save=True, bootstrap=100, seed=2)
    (saved,) = store.results()
    entry = saved.result["scores"]["test"][0]
    interval = report.results[0].interval
    assert (entry["ci_low"], entry["ci_high"]) == (interval.low, interval.high)
    assert saved.result["repspace"]["interval"] == interval.to_dict()
    run("sts", sts_file, store=store, encoder="static", save=True, bootstrap=0)
    assert "ci_low" not in store.results()[-1].result["scores"]["test"][0]


@pytest.mark.parametrize("kwargs, message", [
    ({"bootstrap": -1}, "bootstrap"),
    ({"bootstrap": 1.5}, "bootstrap"),
    ({"seed": -2}, "seed"),
])
def test_bad_resampling_is_one_clear_error_before_any_model_loads(sts_file, kwargs, message):
    with pytest.raises(InputError, match=message) as info:
        run("sts", sts_file, encoder="nope:never-loaded", **kwargs)
    assert "\n" not in str(info.value)
