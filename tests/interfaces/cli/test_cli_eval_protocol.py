"""``repspace eval classification|clustering --protocol mteb``: MTEB's protocol end to end, from labelled files
cut from STS-B (each sentence labelled by its pair's gold score) to results that mteb itself loads."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from _cli_process import one_error_line, run

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval.labels import classification, clustering, load_labelled
from repspace.workflows.evaluate import run as run_eval

pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore:is_cross_encoder is deprecated:DeprecationWarning")]

MTEB_CLASSIFICATION = ["accuracy", "f1", "f1_weighted", "precision", "precision_weighted", "recall",
                       "recall_weighted", "ap", "ap_weighted"]


@pytest.fixture(autouse=True)
def _one_blas_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def _labelled_csv(shared_data: Path, split: str, n: int, path: Path, *, one_class: bool = False) -> Path:
    rows = list(csv.reader((shared_data / "stsb" / f"stsb-en-{split}.csv").open(newline="", encoding="utf-8")))[:n]
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("text", "label"), *((a, "similar" if float(s) >= 2.5 or one_class else "apart")
                                                      for a, _, s in rows)])
    return path


@pytest.fixture()
def files(tmp_path: Path, shared_data: Path) -> tuple[Path, Path]:
    return (_labelled_csv(shared_data, "train", 400, tmp_path / "stsb-labels-train.csv"),
            _labelled_csv(shared_data, "test", 500, tmp_path / "stsb-labels-test.csv"))


def test_classification_under_mtebs_protocol_writes_what_mteb_loads(capsys, files, tmp_path):
    pytest.importorskip("mteb")
    from mteb.cache import ResultCache

    train, test = files
    out_dir = tmp_path / "results"
    code, out, err = run(capsys, "eval", "classification", str(test), "--train", str(train), "--protocol", "mteb",
                         "--encoder", "static", "--bootstrap", "200", "--json", "--output-dir", str(out_dir))
    assert code == 0, err
    (result,) = json.loads(out)
    (entry,) = result["scores"]["test"]
    assert entry["main_score"] == entry["accuracy"] and entry["ci_low"] <= entry["accuracy"] <= entry["ci_high"]
    assert set(MTEB_CLASSIFICATION) <= set(entry) and "knn_accuracy" not in entry
    info = result["repspace"]
    assert info["protocol"] == "mteb" and info["n_train"] == 400 and info["n_items"] == 500
    assert len(info["scores_per_experiment"]) == 10
    # the engine called directly on the same files gives the same scores
    direct = classification(get_encoder("static"), load_labelled(test), train=load_labelled(train), protocol="mteb",
                            bootstrap=200)
    assert {k: entry[k] for k in direct.scores} == direct.scores
    (model,) = ResultCache(out_dir).load_results(include_remote=False)
    (task,) = model.task_results
    assert task.task_name == result["task_name"].replace(":", "_") == "classification_stsb-labels-test"
    assert task.get_score() == entry["accuracy"]

    code, out, err = run(capsys, "eval", "classification", str(test), "--protocol", "mteb", "--encoder", "static",
                         "--bootstrap", "0", "--json")  # no --train: MTEB's 5-fold cross-validation
    assert code == 0, err
    (result,) = json.loads(out)
    assert result["repspace"]["folds"] == 5 and "ci_low" not in result["scores"]["test"][0]


def test_clustering_under_mtebs_protocols(capsys, files):
    _, test = files
    code, out, err = run(capsys, "eval", "clustering", str(test), "--protocol", "mteb", "--encoder", "static",
                         "--json")
    assert code == 0, err
    (result,) = json.loads(out)
    (entry,) = result["scores"]["test"]
    assert entry["main_score"] == entry["v_measure"] and {"ami", "ami_std", "v_measure_std"} <= set(entry)
    assert result["repspace"]["n_items"] == 20 and result["repspace"]["n_documents"] == 500  # int(0.04 * 500)
    direct = clustering(get_encoder("static"), load_labelled(test), protocol="mteb")
    assert {k: entry[k] for k in direct.scores} == direct.scores
    code, out, err = run(capsys, "eval", "clustering", str(test), "--protocol", "mteb-legacy", "--encoder",
                         "static")
    assert code == 0, err
    assert "v_measure (main)" in out


@pytest.mark.parametrize("args, message", [
    (["classification", "{one}", "--protocol", "mteb"], "the labels hold 1 class; at least 2 are needed"),
    (["classification", "{test}", "--train", "{one}", "--protocol", "mteb"],
     "training split's labels hold 1 class"),
    (["clustering", "{one}", "--protocol", "mteb"], "the labels hold 1 class; at least 2 are needed"),
    (["classification", "{test}", "--protocol", "sklearn"], "protocol must be one of repspace, mteb, not"),
    (["classification", "{test}", "--train", "{test}"], "--train is the training split of classification under"),
    (["clustering", "{test}", "--train", "{test}", "--protocol", "mteb"], "--train is the training split"),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, files, tmp_path, shared_data, args, message):
    one = _labelled_csv(shared_data, "test", 50, tmp_path / "one-class.csv", one_class=True)
    args = [a.replace("{one}", str(one)).replace("{test}", str(files[1])) for a in args]
    one_error_line(run(capsys, "eval", *args, "--encoder", "static"), 2, message)


def test_the_workflow_refuses_a_protocol_a_task_lacks_before_loading_a_model(files):
    with pytest.raises(InputError, match="--protocol and --train apply to clustering and classification, not sts"):
        run_eval("sts", files[1], encoder="no-such-encoder", protocol="mteb")
    with pytest.raises(InputError, match="does not combine with --label-field"):
        run_eval("classification", None, encoder="no-such-encoder", protocol="mteb", train=files[0],
                 label_field="topic")
