"""``repspace eval reranking | bitext | summarization`` end to end: real files, JSON in MTEB's shape, results mteb
2.26.24's ResultCache reads, and bad input as one error line with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import run
from _reranking_data import cranfield_reranking
from _summarization_data import HAND_BUILT, write_hand_built

EN_DE = Path(__file__).resolve().parents[2] / "data" / "stsb-multi-mt" / "stsb-en-de-test-200.tsv"


@pytest.fixture(scope="module")
def files(tmp_path_factory, shared_data) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cli-mined")
    return {"reranking": cranfield_reranking(shared_data, root / "cranfield-rr-test.jsonl", n_queries=30),
            "bitext": EN_DE, "summarization": write_hand_built(root / "summeval-hand-test.jsonl")}


@pytest.mark.parametrize("task, main", [("reranking", "map_at_1000"), ("bitext", "f1"),
                                        ("summarization", "spearman")])
def test_json_is_a_list_of_mteb_task_results_with_the_interval(capsys, files, task, main):
    code, out, err = run(capsys, "eval", task, str(files[task]), "--encoder", "static", "--json", "--bootstrap", "100")
    assert code == 0, err
    (result,) = json.loads(out)
    assert result["task_name"] == f"{task}:{files[task].stem}"
    (entry,) = result["scores"]["test"]
    assert entry["main_score"] == entry[main] and entry["ci_low"] <= entry[main] <= entry["ci_high"]
    assert result["repspace"]["main_metric"] == main and result["repspace"]["interval"]["n_resamples"] == 100


def test_the_tables_show_the_headline_scores(capsys, files):
    code, out, err = run(capsys, "eval", "reranking", str(files["reranking"]), "--encoder", "static")
    assert code == 0, err
    assert "map_at_1000 (main)" in out and "mrr_at_10" in out and "ndcg_at_1000" not in out
    assert "35 scores in --json" in err and "n_queries=30" in err
    code, out, err = run(capsys, "eval", "summarization", str(files["summarization"]), "--encoder", "static")
    assert code == 0, err
    assert "spearman (main)" in out and "dot_pearson" in out and "n_skipped_texts=1" in err


@pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")
def test_output_dir_is_read_by_mtebs_result_cache(capsys, files, tmp_path):
    pytest.importorskip("mteb")
    from mteb.cache import ResultCache

    out_dir = tmp_path / "mteb"
    extra = {"reranking": ["--mteb-task", "AskUbuntuDupQuestions"],
             "bitext": ["--language", "eng-Latn,deu-Latn"],
             "summarization": ["--mteb-task", "SummEvalSummarization.v2"]}
    ours = {}
    for task, path in files.items():
        code, out, err = run(capsys, "eval", task, str(path), "--encoder", "static", "--json", "--output-dir",
                             str(out_dir), *extra[task])
        assert code == 0, err
        assert "wrote 1 MTEB result file under" in err
        (ours[task],) = json.loads(out)
    (model,) = ResultCache(out_dir).load_results(include_remote=False)
    loaded = {t.task_name: t for t in model.task_results}
    assert model.model_name == "repspace/static"
    assert loaded["AskUbuntuDupQuestions"].get_score() == ours["reranking"]["scores"]["test"][0]["map_at_1000"]
    assert loaded["bitext_stsb-en-de-test-200"].get_score() == ours["bitext"]["scores"]["test"][0]["f1"]
    assert loaded["SummEvalSummarization.v2"].get_score() == ours["summarization"]["scores"]["test"][0][
        "cosine_spearman"]


def _write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return str(tmp_path / name)


@pytest.mark.parametrize("args, message", [
    (["eval", "bitext", "{en.txt:A cat.\nA dog.\n}", "{de.txt:Eine Katze.\n}"],
     "bitext needs two aligned lists of the same length: 2 sentences and 1"),
    (["eval", "reranking", '{rr.jsonl:{"query": "q", "positive": [], "negative": ["x"]}\n}'],
     "rr.jsonl:1: the query has no positive candidate"),
    (["eval", "summarization",
      '{s.jsonl:{"human_summaries": ["a"], "machine_summaries": ["b", "c"]}\n}'],
     "s.jsonl:1: no human scores ('relevance') for the machine summaries"),
    (["eval", "summarization", "{summ}", "--mteb-task", "SummEval"], "DeprecatedSummarizationEvaluator"),
    (["eval", "bitext", str(EN_DE), "--mteb-task", "SciDocsRR"], "Reranking task, not BitextMining"),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, tmp_path, files, args, message):
    def fill(arg: str) -> str:
        if arg == "{summ}":
            return str(files["summarization"])
        if arg.startswith("{") and ":" in arg and arg.endswith("}"):
            name, text = arg[1:-1].split(":", 1)
            return _write(tmp_path, name, text)
        return arg

    code, out, err = run(capsys, *[fill(a) for a in args], "--encoder", "static")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_help_of_each_command_has_an_example(capsys):
    for command in ("reranking", "bitext", "summarization"):
        code, out, _ = run(capsys, "eval", command, "--help")
        assert code == 0 and "repspace eval " + command in out


def test_the_hand_built_set_is_what_the_file_holds(files):
    rows = [json.loads(line) for line in files["summarization"].read_text().splitlines()]
    assert rows == HAND_BUILT
