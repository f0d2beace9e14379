"""Reranking, bitext mining and summarization through the workflow: registered MTEB tasks, transforms, and
results in MTEB's layout read back by mteb 2.26.24's ResultCache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _reranking_data import cranfield_reranking
from _summarization_data import write_hand_built

from repspace import InputError
from repspace.engines.eval import data_revision
from repspace.workflows.evaluate import TASKS, encoder_subjects, load_data, lookup_mteb_task, run, run_task

mteb = pytest.importorskip("mteb", reason="mteb is a test dependency (pyproject.toml, extra 'test')")
from mteb.cache import ResultCache  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")

EN_DE = Path(__file__).resolve().parents[2] / "data" / "stsb-multi-mt" / "stsb-en-de-test-200.tsv"


@pytest.fixture(scope="module")
def files(tmp_path_factory, shared_data) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mined")
    return {"reranking": cranfield_reranking(shared_data, root / "cranfield-rr-test.jsonl", n_queries=40),
            "bitext": EN_DE, "summarization": write_hand_built(root / "summeval-hand-test.jsonl")}


def test_the_three_tasks_are_listed_and_load():
    assert TASKS[-3:] == ("reranking", "bitext", "summarization")


def test_registered_mteb_tasks_of_each_type():
    t = lookup_mteb_task("AskUbuntuDupQuestions", "reranking")
    assert (t.main_metric, t.languages, t.splits) == ("map_at_1000", ("eng-Latn",), ("test",))
    assert lookup_mteb_task("WebLINXCandidatesReranking", "reranking").main_metric == "mrr_at_10"
    assert lookup_mteb_task("BornholmBitextMining", "bitext").main_metric == "f1"
    t = lookup_mteb_task("SummEvalSummarization.v2", "summarization")
    assert (t.main_metric, t.languages) == ("cosine_spearman", ("eng-Latn",))


@pytest.mark.parametrize("name, task, message", [
    ("SummEval", "summarization", "DeprecatedSummarizationEvaluator .* name SummEvalSummarization.v2"),
    ("NevIR", "reranking", "main score of NevIR is paired_accuracy, which repspace's reranking does not compute"),
    ("Tatoeba", "bitext", "repspace writes a single 'default' subset"),
    ("SciDocsRR", "bitext", "Reranking task, not BitextMining"),
])
def test_lookup_refuses_what_the_task_cannot_score(name, task, message):
    with pytest.raises(InputError, match=message):
        lookup_mteb_task(name, task)


def test_output_dir_of_each_task_is_loaded_by_mtebs_result_cache(files, tmp_path):
    out = tmp_path / "mteb"
    named = {"reranking": "StackOverflowDupQuestions", "bitext": None, "summarization": "SummEvalSummarization.v2"}
    reports = {}
    for task, source in files.items():
        reports[task] = run(task, source, encoder="static", output_dir=out, mteb_task=named[task], bootstrap=100,
                            language="eng-Latn,deu-Latn" if task == "bitext" else None)
    (model,) = ResultCache(out).load_results(include_remote=False)
    assert model.model_name == "repspace/static"
    loaded = {t.task_name: t for t in model.task_results}
    assert set(loaded) == {"StackOverflowDupQuestions", "bitext_stsb-en-de-test-200", "SummEvalSummarization.v2"}
    rr = reports["reranking"].results[0]
    entry = loaded["StackOverflowDupQuestions"].scores["test"][0]
    assert loaded["StackOverflowDupQuestions"].get_score() == entry["map_at_1000"] == rr.main_score
    assert entry["mrr_at_10"] == rr.scores["mrr_at_10"] and (entry["ci_low"], entry["ci_high"]) == (
        rr.interval.low, rr.interval.high)
    bt = reports["bitext"].results[0]
    entry = loaded["bitext_stsb-en-de-test-200"].scores["test"][0]
    assert entry["main_score"] == entry["f1"] == bt.main_score and entry["languages"] == ["eng-Latn", "deu-Latn"]
    assert loaded["bitext_stsb-en-de-test-200"].dataset_revision == data_revision(EN_DE)
    sm = reports["summarization"].results[0]
    assert loaded["SummEvalSummarization.v2"].get_score() == sm.scores["cosine_spearman"] == sm.main_score
    assert sm.info["n_skipped_texts"] == 1


def test_bitext_from_two_files_and_its_revision(tmp_path):
    pairs = load_data("bitext", EN_DE)
    en, de = tmp_path / "en-test.txt", tmp_path / "de-test.txt"
    en.write_text("\n".join(pairs.sentences1[:30]) + "\n", encoding="utf-8")
    de.write_text("\n".join(pairs.sentences2[:30]) + "\n", encoding="utf-8")
    report = run("bitext", (en, de), encoder="static", bootstrap=0, output_dir=tmp_path / "out")
    (r,) = report.results
    assert r.task_name == "bitext:en-test+de-test" and r.info["n_pairs"] == 30
    assert r.dataset_revision == data_revision([en, de]) != data_revision([de, en])
    de.write_text("\n".join(pairs.sentences2[:29]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="same length: 30 sentences and 29"):
        run("bitext", (en, de), encoder="static")


@pytest.mark.parametrize("task, what", [("reranking", "distinct candidates"),
                                        ("bitext", "distinct sentences of both lists"),
                                        ("summarization", "distinct summaries")])
def test_a_transform_is_fitted_on_the_tasks_own_texts(files, task, what):
    subject = encoder_subjects("static")[0]
    data = load_data(task, files[task])
    plain = run_task(task, subject, data, bootstrap=0)
    centred = run_task(task, subject, data, transform="center", bootstrap=0)
    fit = centred.info["transform_fit"]
    texts = data.summaries() if task == "summarization" else data.texts()
    assert (fit["on"], fit["n"]) == (what, len(texts))
    assert centred.main_score != plain.main_score and np.isfinite(centred.main_score)


def test_a_compression_sweep_runs_on_each_task(files, tmp_path):
    for task in files:
        report = run(task, files[task], encoder="static", dims="16,full", precision="float32", methods=["prefix"],
                     plot=tmp_path / f"{task}.png", bootstrap=0)
        assert [row["codec"] for row in report.tradeoff] == ["prefix16", "full"] and report.plot.is_file()
