"""``repspace eval fewshot|knn`` end to end on real sentences (Pang & Lee's polarity sample, gensim's test data),
checked against scikit-learn fitted directly on the same model's vectors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _cli_process import one_error_line, run
from _sentiment_data import pang_lee_split

from repspace.engines.encoders import get_encoder
from repspace.engines.eval.labels import load_labelled

pytestmark = pytest.mark.numerics  # compares floats with scikit-learn's


@pytest.fixture(autouse=True)
def _one_blas_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    return pang_lee_split(tmp_path)


def _vectors(path: Path) -> tuple[np.ndarray, np.ndarray]:
    data = load_labelled(path)
    return get_encoder("static").encode(data.texts), np.array(data.labels)


def test_fewshot_json_has_each_k_and_the_full_probe_equal_to_sklearn(capsys, files):
    from sklearn.linear_model import LogisticRegression

    train, test = files
    r = run(capsys, "-q", "eval", "fewshot", str(test), "--train", str(train), "--encoder", "static",
            "--shots", "1,4,16", "--draws", "5", "--bootstrap", "200", "--json")
    assert r.code == 0, r.err
    results = json.loads(r.out)
    assert [x["task_name"] for x in results] == [f"fewshot-{k}:pang-lee-test" for k in ("1", "4", "16", "all")]
    for x, k in zip(results[:3], (1, 4, 16), strict=True):
        info, (entry,) = x["repspace"], x["scores"]["test"]
        assert (info["shots"], info["n_shots_items"], info["draws"], len(info["accuracy_per_draw"])) == (k, 2 * k, 5, 5)
        assert entry["ci_low"] <= entry["accuracy"] <= entry["ci_high"]
        assert entry["accuracy_draw_low"] <= entry["accuracy"] <= entry["accuracy_draw_high"]
        assert (info["n_train"], info["n_items"], info["subject"], info["train_file"]) == (
            100, 100, "static", "pang-lee-train.jsonl")
    x_tr, y_tr = _vectors(train)
    x_te, y_te = _vectors(test)
    full = LogisticRegression(max_iter=1000).fit(x_tr, y_tr).score(x_te, y_te)
    assert results[3]["scores"]["test"][0]["accuracy"] == pytest.approx(full, abs=1e-12)


def test_knn_equals_sklearns_cosine_neighbours_on_real_sentences(capsys, files):
    from sklearn.neighbors import KNeighborsClassifier

    train, test = files
    r = run(capsys, "-q", "eval", "knn", str(test), "--train", str(train), "--encoder", "static", "--k", "1,5",
            "--bootstrap", "200", "--json")
    assert r.code == 0, r.err
    results = json.loads(r.out)
    x_tr, y_tr = _vectors(train)
    x_te, y_te = _vectors(test)
    for x, k in zip(results, (1, 5), strict=True):  # two classes, odd k: no tied vote
        sk = KNeighborsClassifier(n_neighbors=k, metric="cosine", algorithm="brute").fit(x_tr, y_tr)
        (entry,) = x["scores"]["test"]
        assert entry["accuracy"] == pytest.approx(sk.score(x_te, y_te), abs=1e-12)
        assert x["repspace"]["tied_votes"] == 0 and x["task_name"] == f"knn-{k}:pang-lee-test"


def test_tables_name_each_setting(capsys, files):
    train, test = files
    r = run(capsys, "-q", "eval", "fewshot", str(test), "--train", str(train), "--encoder", "static", "--shots", "2",
            "--draws", "2", "--bootstrap", "0")
    assert r.code == 0, r.err
    assert "shots" in r.out and "draws 95%" in r.out and "all" in r.out and "100 training, 100 test items" in r.out
    r = run(capsys, "-q", "eval", "knn", str(test), "--train", str(train), "--encoder", "static", "--k", "3",
            "--metric", "euclidean", "--vote", "distance", "--bootstrap", "0")
    assert r.code == 0, r.err
    assert "f1_macro" in r.out and "│ 3 " in r.out


def _one_class(tmp_path: Path) -> Path:
    path = tmp_path / "one.csv"
    path.write_text("text,label\na fine film,pos\na great film,pos\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("args", "fragments"), [
    (["fewshot", "TEST"], ["needs a training split", "--train"]),
    (["knn", "TEST"], ["needs a training split", "--train"]),
    (["fewshot", "TEST", "--train", "ONE"], ["holds 1 class", "at least 2"]),
    (["knn", "TEST", "--train", "ONE"], ["holds 1 class"]),
    (["fewshot", "TEST", "--train", "TRAIN", "--shots", "1,64"], ["fewer than the 64 shots per class", "--shots"]),
    (["fewshot", "TEST", "--train", "TRAIN", "--shots", "four"], ["shots must be positive whole numbers"]),
    (["knn", "TEST", "--train", "TRAIN", "--k", "101"], ["k=101 neighbours", "holds 100 items"]),
    (["knn", "TEST", "--train", "TRAIN", "--metric", "manhattan"], ["metric"]),
    (["knn", "TEST", "--train", "TRAIN", "--encoder", "static", "--encoder", "minilm"], ["scores one model"]),
])
def test_bad_input_is_one_error_line_exit_2(capsys, files, tmp_path, args, fragments):
    train, test = files
    names = {"TEST": str(test), "TRAIN": str(train), "ONE": str(_one_class(tmp_path))}
    r = run(capsys, "eval", *[names.get(a, a) for a in args])
    one_error_line(r, 2, *fragments)


def test_help_has_examples(capsys):
    for command in ("fewshot", "knn"):
        r = run(capsys, "eval", command, "--help")
        assert r.code == 0 and "Examples" in r.out and "--train" in r.out
