"""``repspace eval`` end to end: real files, real encoders, JSON in MTEB's shape, recorded results, errors.

What is written for MTEB is read back with mteb 2.26.24 itself (a test dependency).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from _cli_process import run
from _data_subsets import cranfield_head, sts_head

from repspace import Store


@pytest.fixture()
def sts_file(tmp_path: Path, shared_data: Path) -> Path:
    return sts_head(shared_data, tmp_path / "stsb-small-test.csv", 120)


def test_sts_json_is_a_list_of_mteb_task_results(capsys, sts_file):
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    assert result["task_name"] == "sts:stsb-small-test"
    (entry,) = result["scores"]["test"]
    assert entry["main_score"] == entry["spearman"] and 0.2 < entry["spearman"] < 1.0
    assert result["evaluation_time"] > 0
    assert result["repspace"]["encoder"] == "static" and result["repspace"]["n_pairs"] == 120


def test_json_elements_load_with_mtebs_from_dict(capsys, sts_file):
    mteb_results = pytest.importorskip("mteb.results")
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    theirs = mteb_results.TaskResult.from_dict(result)
    assert theirs.get_score() == result["scores"]["test"][0]["spearman"] == theirs.main_score
    assert theirs.task_name == "sts:stsb-small-test" and theirs.dataset_revision == result["dataset_revision"]
    assert len(result["dataset_revision"]) == 64 and result["scores"]["test"][0]["languages"] == ["eng-Latn"]


@pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")
def test_output_dir_is_an_mteb_results_folder_that_mteb_loads(capsys, sts_file, tmp_path, shared_data):
    pytest.importorskip("mteb")
    from mteb.cache import ResultCache
    from mteb.results import TaskResult as MtebTaskResult

    out_dir = tmp_path / "mteb"
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--json", "--output-dir",
                         str(out_dir))
    assert code == 0, err
    assert "wrote 1 MTEB result file under" in err
    (ours,) = json.loads(out)
    (task_file,) = out_dir.glob("results/repspace__static/*/sts_stsb-small-test.json")
    assert (task_file.parent / "model_meta.json").is_file()
    loaded = MtebTaskResult.from_disk(task_file)
    assert math.isfinite(loaded.get_score()) and loaded.get_score() == ours["scores"]["test"][0]["spearman"]
    assert loaded.scores["test"][0]["cosine_spearman"] == loaded.get_score()
    assert loaded.scores["test"][0]["repspace"]["encoder"] == "static"  # provenance kept where mteb keeps it
    # retrieval: nDCG@10 is the main score, every MTEB cut-off is there
    code, out, err = run(capsys, "eval", "retrieval", str(shared_data / "cranfield-beir"), "--encoder", "static",
                         "--json", "--output-dir", str(out_dir))
    assert code == 0, err
    (ours,) = json.loads(out)
    (task_file,) = out_dir.glob("results/repspace__static/*/retrieval_cranfield-beir.json")
    loaded = MtebTaskResult.from_disk(task_file)
    (entry,) = loaded.scores["test"]
    assert loaded.get_score() == ours["scores"]["test"][0]["ndcg_at_10"] == entry["ndcg_at_10"] > 0.1
    for measure in ("ndcg", "map", "recall", "precision", "mrr"):
        assert all(math.isfinite(entry[f"{measure}_at_{k}"]) for k in (1, 3, 5, 10, 20, 100, 1000))
    # the whole folder, as mteb's cache reads it
    (model,) = ResultCache(out_dir).load_results(include_remote=False)
    assert model.model_name == "repspace/static"
    assert sorted(t.task_name for t in model.task_results) == ["retrieval_cranfield-beir", "sts_stsb-small-test"]


@pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")
def test_mteb_task_names_a_registered_task(capsys, sts_file, tmp_path):
    pytest.importorskip("mteb")
    from mteb.cache import ResultCache

    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--mteb-task", "STSBenchmark",
                         "--output-dir", str(tmp_path), "--json")
    assert code == 0, err
    (ours,) = json.loads(out)
    assert ours["task_name"] == "sts:stsb-small-test" and ours["repspace"]["mteb_task"] == "STSBenchmark"
    results = ResultCache(tmp_path).load_results(include_remote=False, tasks=["STSBenchmark"])
    (model,) = results
    (task,) = model.task_results
    assert task.task_name == "STSBenchmark" and task.get_score() == ours["scores"]["test"][0]["cosine_spearman"]
    assert results.get_aggregated_scores()["repspace/static"]["Mean(Task)"] == pytest.approx(task.get_score())


@pytest.mark.numerics
@pytest.mark.slow  # MiniLM on the 1379 pairs of STS-B test
@pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")
def test_minilm_on_stsb_reads_in_mteb_as_its_published_stsbenchmark_score(capsys, tmp_path, shared_data):
    pytest.importorskip("mteb")
    from mteb.results import TaskResult as MtebTaskResult

    code, _, err = run(capsys, "eval", "sts", str(shared_data / "stsb" / "stsb-en-test.csv"), "--encoder", "minilm",
                       "--mteb-task", "STSBenchmark", "--output-dir", str(tmp_path))
    assert code == 0, err
    (task_file,) = tmp_path.glob("results/repspace__minilm/*/STSBenchmark.json")
    # MTEB's results repository, sentence-transformers__all-MiniLM-L6-v2/8b3219a.../STSBenchmark.json: 0.8203247283
    assert MtebTaskResult.from_disk(task_file).get_score() == pytest.approx(0.8203247283076371, abs=1e-4)


def test_sweep_prints_the_tradeoff_and_writes_the_plot(capsys, sts_file, tmp_path):
    png = tmp_path / "sweep.png"
    code, out, err = run(capsys, "eval", "sts", str(sts_file), "--encoder", "static", "--dims", "16,full",
                         "--precision", "float32,binary", "--plot", str(png))
    assert code == 0, err
    assert "pca16,binary" in out and "full" in out and "bytes/vector" in out
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_save_then_list_results_on_a_stored_space(capsys, tmp_path, shared_data):
    db = str(tmp_path / "s.db")
    words = ["king", "queen", "man", "woman", "cat", "dog"]
    rng = np.random.default_rng(0)
    with Store(db) as store:
        store.create_space("w", dim=8).add(words, rng.standard_normal((6, 8)))
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("king\tqueen\t8\nman\twoman\t8\ncat\tdog\t7\nking\tcat\t1\nqueen\tdog\t0.5\nmoon\tsun\t5\n")
    code, out, err = run(capsys, "--store", db, "eval", "wordsim", str(pairs), "--space", "w", "--save", "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    assert result["repspace"]["oov_pairs"] == 1 and result["repspace"]["space"] == "w"
    code, out, _ = run(capsys, "--store", db, "eval", "results", "w", "--json")
    (saved,) = json.loads(out)
    assert (saved["space"], saved["generation"], saved["stale"], saved["task_name"]) == ("w", 1, False, "wordsim:pairs")
    assert saved["result"] == result


@pytest.mark.parametrize("args, message", [
    (["eval", "sts", "/no/such.csv", "--encoder", "static"], "does not exist"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--space", "x"], "no space 'x'"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--precision", "float8"], "float8"),
    (["eval", "sts", "{sts}", "--encoder", "nope:zzz"], "nope"),
    (["eval", "clustering", "--encoder", "static"], "labelled FILE"),
    (["eval", "results", "nospace"], "no store"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--language", "en"], "language 'en' is not an ISO 639-3"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--mteb-task", "NoSuchTask"], "mteb has no task"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--mteb-task", "SciFact"], "Retrieval task, not STS"),
    (["eval", "wordsim", "{sts}", "--encoder", "static", "--mteb-task", "STSBenchmark"], "applies to sts, retrieval"),
    (["eval", "sts", "{sts}", "--encoder", "static", "--output-dir", "{sts}"], "is a file, not a folder"),
])
def test_bad_input_is_one_error_line_and_a_nonzero_exit(capsys, tmp_path, sts_file, args, message):
    args = [a.replace("{sts}", str(sts_file)) for a in args]
    code, out, err = run(capsys, "--store", str(tmp_path / "s.db"), *args)
    assert code != 0 and out == ""
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_help_of_every_eval_command_has_an_example(capsys):
    for command in ("sts", "retrieval", "wordsim", "analogy", "clustering", "classification", "pairclass",
                    "results"):
        code, out, _ = run(capsys, "eval", command, "--help")
        assert code == 0 and "repspace eval " + command in out


@pytest.mark.slow  # loads MiniLM (hf-layers) and embeds Cranfield token by token
def test_multivector_retrieval_reports_recall_against_exact_chamfer(capsys, tmp_path, shared_data):
    folder = cranfield_head(shared_data, tmp_path / "cran40", 40, judged_queries_only=True)
    code, out, err = run(capsys, "eval", "retrieval", str(folder), "--encoder", "hf-layers:minilm",
                         "--multivector", "--candidates", "40", "--json")
    assert code == 0, err
    (r,) = json.loads(out)
    info = r["repspace"]
    # Every document is a candidate: MUVERA + Chamfer rerank is exact Chamfer search.
    assert info["recall_vs_exact_chamfer"] == 1.0
    assert r["scores"]["test"][0]["ndcg_at_10"] == pytest.approx(info["exact_chamfer_ndcg_at_10"])
    assert info["index"].startswith("muvera(") and r["scores"]["test"][0]["ndcg_at_10"] > 0.3
    code, _, err = run(capsys, "eval", "retrieval", str(folder), "--encoder", "static", "--multivector")
    assert code == 2 and "hf-layers" in err
