"""Clustering and classification of labelled texts: loaders, sklearn's digits against an independent computation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _eval_stubs import TruncateCodec

from repspace.core.errors import InputError
from repspace.engines.eval.labels import (
    LabelledTexts,
    classification,
    clustering,
    load_labelled,
)

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.usefixtures("one_blas_thread")]


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    return x.astype(np.float32), y


# --------------------------------------------------------------------------- loader


def test_load_labelled_csv_tsv_jsonl(tmp_path: Path):
    p = tmp_path / "news.csv"
    p.write_text('id,text,label\r\n1,"Stocks fell, again",business\r\n2,A cat sleeps,pets\r\n\r\n', newline="")
    data = load_labelled(p)
    assert isinstance(data, LabelledTexts) and data.name == "news" and len(data) == 2
    assert data.texts == ["Stocks fell, again", "A cat sleeps"] and data.labels == ["business", "pets"]

    p.write_bytes("\ufefftext,label\nA cat,pets\n".encode())  # a byte-order mark does not hide the header
    assert load_labelled(p).labels == ["pets"]

    p = tmp_path / "news.tsv"
    p.write_text("body\ttopic\nStocks fell\t3\n")
    assert load_labelled(p, text_col="body", label_col="topic").labels == ["3"]

    p = tmp_path / "news.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in [{"text": "a", "label": 1}, {"text": "b", "label": "1"},
                                                     {"text": "c", "label": 2.5, "extra": None}]) + "\n\n")
    data = load_labelled(p)
    assert data.labels == ["1", "1", "2.5"] and data.texts == ["a", "b", "c"]


@pytest.mark.parametrize("name, content, match", [
    ("d.csv", "text,label\na,x\nb\n", r"d.csv:3: expected 2 fields, got 1"),
    ("d.csv", "body,label\na,x\n", r"has no column 'text' \(columns: body, label\)"),
    ("d.csv", "text,label\na,x\n  ,y\n", r"d.csv:3: the text is empty"),
    ("d.csv", "text,label\na,\n", r"d.csv:2: the label is empty"),
    ("d.csv", "", "is empty"),
    ("d.csv", "text,label\n", "holds no rows"),
    ("d.jsonl", '{"text": "a", "label": 1}\n{"text": "b", "label": 1\n', r"d.jsonl:2: invalid JSON"),
    ("d.jsonl", '{"text": "a"}\n', r"d.jsonl:1: no key 'label'"),
    ("d.jsonl", '["a", 1]\n', r"d.jsonl:1: expected a JSON object, got list"),
    ("d.jsonl", '{"text": 5, "label": 1}\n', r"d.jsonl:1: the text must be a non-empty string"),
    ("d.jsonl", '{"text": "a", "label": null}\n', r"d.jsonl:1: the label None is not a string or a number"),
    ("d.jsonl", '{"text": "a", "label": true}\n', r"d.jsonl:1: the label True"),
    ("d.parquet", "x", "unknown kind of labelled file"),
])
def test_load_labelled_errors(tmp_path: Path, name, content, match):
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(InputError, match=match):
        load_labelled(p)


def test_load_labelled_missing_file(tmp_path: Path):
    with pytest.raises(InputError, match="does not exist"):
        load_labelled(tmp_path / "none.csv")


# --------------------------------------------------------------------------- clustering


def test_clustering_digits_equals_sklearn(digits):
    from sklearn.cluster import KMeans
    from sklearn.metrics import v_measure_score

    x, y = digits
    r = clustering(x, y, seeds=3)
    values = [v_measure_score(y, KMeans(n_clusters=10, n_init=10, random_state=s).fit_predict(x)) for s in range(3)]
    assert r.main_metric == "v_measure" and r.task_name == "clustering"
    assert r.main_score == pytest.approx(np.mean(values), abs=1e-12)
    assert r.scores["v_measure_std"] == pytest.approx(np.std(values), abs=1e-12)
    assert r.info["n_clusters"] == 10 and r.info["seeds"] == 3 and r.info["n_items"] == len(y)
    assert 0.6 < r.main_score < 0.9  # pixels do cluster by digit, far from perfectly


def test_clustering_separable_blobs_and_codec():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(0, 0.1, (15, 4)) + c for c in ([5, 0, 0, 0], [0, 5, 0, 0], [0, 0, 5, 0])])
    labels = ["a"] * 15 + ["b"] * 15 + ["c"] * 15
    assert clustering(x, labels).scores == {"v_measure": 1.0, "v_measure_std": 0.0}
    codec = TruncateCodec(2)  # keeps the first two axes: "c" collapses onto the origin, still its own cluster
    r = clustering(x, labels, codec=codec, seeds=1)
    assert codec.fitted_shape == (45, 4) and r.info["codec"] == {"name": "truncate", "k": 2}
    assert r.info["bytes_per_vector"] == 8 and r.main_score == pytest.approx(1.0)


# --------------------------------------------------------------------------- classification


def test_classification_digits_equals_sklearn(digits):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    x, y = digits
    r = classification(x, y, folds=3, knn_k=3, seed=7)
    acc, f1, knn = [], [], []
    for train, test in StratifiedKFold(n_splits=3, shuffle=True, random_state=7).split(x, y):
        pred = LogisticRegression(max_iter=1000).fit(x[train], y[train]).predict(x[test])
        acc.append(np.mean(pred == y[test]))
        # Macro F1 by hand: per class 2·tp / (2·tp + fp + fn), averaged over the classes.
        f1.append(np.mean([2 * np.sum((pred == c) & (y[test] == c))
                           / (np.sum(pred == c) + np.sum(y[test] == c)) for c in range(10)]))
        knn_pred = KNeighborsClassifier(n_neighbors=3, metric="cosine").fit(x[train], y[train]).predict(x[test])
        knn.append(np.mean(knn_pred == y[test]))
    assert r.main_metric == "accuracy" and r.task_name == "classification"
    assert r.main_score == pytest.approx(np.mean(acc), abs=1e-12)
    assert r.scores["f1_macro"] == pytest.approx(np.mean(f1), abs=1e-12)
    assert r.scores["knn_accuracy"] == pytest.approx(np.mean(knn), abs=1e-12)
    assert r.info["folds"] == 3 and r.info["knn_k"] == 3 and r.info["n_classes"] == 10
    assert r.main_score > 0.9 and r.scores["knn_accuracy"] > 0.9  # chance is 0.1


def test_classification_with_encoder_and_labelled_texts(digits):
    x, y = digits
    x, y = x[:300], y[:300]
    texts = [f"image {i}" for i in range(len(y))] + ["image 0"]  # a repeated text is embedded once
    labels = [str(v) for v in y] + [str(y[0])]
    calls: list[list[str]] = []

    def encode(batch: list[str]) -> np.ndarray:
        calls.append(list(batch))
        return x[[int(t.split()[1]) for t in batch]]

    data = LabelledTexts(texts, labels, "digits-300")
    r = classification(encode, data)
    assert len(calls) == 1 and len(calls[0]) == 300
    assert r.task_name == "classification:digits-300" and r.info["dataset"] == "digits-300"
    assert r.scores == classification(np.vstack([x, x[:1]]), labels).scores
    c = clustering(encode, labels, texts, seeds=1)
    assert c.scores == clustering(np.vstack([x, x[:1]]), labels, seeds=1).scores
    codec = TruncateCodec(16)
    rc = classification(x, y, codec=codec, folds=2)
    assert codec.fitted_shape == (300, 64) and rc.info["bytes_per_vector"] == 64
    assert rc.scores == classification(x[:, :16], y, folds=2).scores


def test_label_task_errors():
    x = np.random.default_rng(0).standard_normal((12, 3))
    with pytest.raises(InputError, match="1 class; at least 2"):
        clustering(x, ["a"] * 12)
    with pytest.raises(InputError, match="1 class; at least 2"):
        classification(x, ["a"] * 12)
    with pytest.raises(InputError, match=r"class 'b' has 2 members, fewer than the 5 folds"):
        classification(x, ["a"] * 10 + ["b"] * 2)
    with pytest.raises(InputError, match="fewer than the 3 folds"):
        classification(x, ["a"] * 10 + ["b"] * 2, folds=3)
    with pytest.raises(InputError, match="12 vectors but 11 labels"):
        classification(x, ["a", "b"] * 5 + ["a"])
    with pytest.raises(InputError, match="needs the texts"):
        clustering(lambda t: np.ones((len(t), 2)), ["a", "b"])
    with pytest.raises(InputError, match="folds must be"):
        classification(x, ["a", "b"] * 6, folds=1)
    with pytest.raises(InputError, match="knn_k must be"):
        classification(x, ["a", "b"] * 6, knn_k=0)
    with pytest.raises(InputError, match="seeds must be"):
        clustering(x, ["a", "b"] * 6, seeds=0)
    with pytest.raises(InputError, match="NaN"):
        clustering(np.full((4, 2), np.nan), ["a", "b"] * 2)
    with pytest.raises(InputError, match=r"\(n, d\) array"):
        clustering(np.ones(4), ["a", "b"] * 2)
