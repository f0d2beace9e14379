"""``protocol="mteb"``: classification and clustering equal mteb 2.26.24's own task classes run in-process.

mteb runs its real evaluation path here (its undersampling, its k-means draws, its scoring) through a task
subclass whose data is set in memory and an encoder object mteb accepts (``EncoderProtocol``) that returns, for
each text, the very vector repspace scores: precomputed rows of sklearn's bundled data sets (digits, wine, breast
cancer: real measurements, no download) and, for text, the static model's embeddings of STS-B sentences.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval.labels import LabelledTexts, _vectors_and_labels, classification, clustering
from repspace.engines.eval.mteb_protocol import clustering_task, document_sample, undersample

mteb = pytest.importorskip("mteb", reason="mteb is a test dependency (pyproject.toml, extra 'test')")
from datasets import Dataset, DatasetDict  # noqa: E402
from mteb.abstasks.classification import AbsTaskClassification  # noqa: E402
from mteb.abstasks.clustering import AbsTaskClustering  # noqa: E402
from mteb.abstasks.clustering_legacy import AbsTaskClusteringLegacy  # noqa: E402
from mteb.abstasks.task_metadata import TaskMetadata  # noqa: E402
from mteb.mocks.mock_tasks.classification import general_args  # noqa: E402  (mteb's own mock-task metadata)
from mteb.models import EncoderProtocol  # noqa: E402

pytestmark = [pytest.mark.numerics,
              # MTEB's logistic regression stops at 100 iterations on raw pixels; it only warns, as ours records
              pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")]

#: The goal of issue 31: our figures equal mteb's evaluator's to this.
TOL = 1e-6


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """One BLAS/OpenMP thread: mini-batch k-means on 16,384 rows is ~20x slower oversubscribed on a busy runner."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


class TableEncoder:
    """An encoder mteb accepts: each text's vector from a table, or from an encode function."""

    def __init__(self, table: dict[str, np.ndarray] | None = None, encode: Any = None) -> None:
        self.table, self.fn = table, encode

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs) -> np.ndarray:
        texts = [t for batch in inputs for t in batch["text"]]
        return self.fn(texts) if self.fn is not None else np.array([self.table[t] for t in texts])

    def similarity(self, a, b):
        return a @ b.T

    def similarity_pairwise(self, a, b):
        return (a * b).sum(axis=1)

    @property
    def mteb_model_meta(self):
        return None


def _task(base: type, kind: str, main: str, **attributes: Any) -> Any:
    """An instance of a subclass of mteb's task class ``base``, with these class attributes, its data in memory."""
    metadata = TaskMetadata(type=kind, name=f"Repspace{kind}Check", main_score=main, **general_args)
    return type(f"Repspace{kind}Check", (base,), {"metadata": metadata, "load_data": lambda self, **kw: None,
                                                  **attributes})()


def _evaluate(task: Any, dataset: dict[str, Dataset], encoder: TableEncoder) -> dict[str, Any]:
    assert isinstance(encoder, EncoderProtocol)
    task.dataset = {"default": DatasetDict(dataset)}
    task.data_loaded = True
    return task.evaluate(encoder, "test", encode_kwargs={})["default"]


def mteb_classification(train: tuple[list[str], list[int]] | None, test: tuple[list[str], list[int]],
                        encoder: TableEncoder) -> dict[str, Any]:
    """mteb's AbsTaskClassification (its defaults); without ``train`` its cross-validation path."""

    task = _task(AbsTaskClassification, "Classification", "accuracy", is_cross_validation=train is None,
                 train_split="train" if train is not None else "test")
    splits = {"test": Dataset.from_dict({"text": test[0], "label": test[1]})}
    if train is not None:
        splits["train"] = Dataset.from_dict({"text": train[0], "label": train[1]})
    return _evaluate(task, splits, encoder)


def mteb_clustering(texts: list[str], labels: list[int], encoder: TableEncoder, *, legacy: bool = False,
                    **settings: Any) -> dict[str, Any]:
    """mteb's AbsTaskClustering (the fast protocol, its defaults unless ``settings``), or the legacy one."""
    task = _task(AbsTaskClusteringLegacy if legacy else AbsTaskClustering, "Clustering", "v_measure", **settings)
    rows = {"sentences": [texts], "labels": [labels]} if legacy else {"sentences": texts, "labels": labels}
    return _evaluate(task, {"test": Dataset.from_dict(rows)}, encoder)


def _names(n: int, prefix: str = "item") -> list[str]:
    return [f"{prefix} {i}" for i in range(n)]


def _table(texts: list[str], x: np.ndarray) -> TableEncoder:
    return TableEncoder(dict(zip(texts, x, strict=True)))


def assert_same_scores(ours: dict[str, float], theirs: dict[str, Any], keys: list[str]) -> float:
    """Every key equal to TOL; returns the largest difference."""
    worst = 0.0
    for key in keys:
        if isinstance(theirs[key], float) and math.isnan(theirs[key]):
            assert key not in ours  # MTEB's NaN (no average precision but for two labels): not written
            continue
        assert ours[key] == pytest.approx(theirs[key], abs=TOL), key
        worst = max(worst, abs(ours[key] - theirs[key]))
    return worst


CLASSIFICATION_KEYS = ["accuracy", "f1", "f1_weighted", "precision", "precision_weighted", "recall",
                       "recall_weighted", "ap", "ap_weighted"]


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    return x.astype(np.float32), y


# --------------------------------------------------------------------------- MTEB's sampling, step by step


def test_undersample_and_document_sample_are_mtebs():
    import random

    labels = [0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 2, 2] * 3
    task = _task(AbsTaskClassification, "Classification", "accuracy", samples_per_label=2)
    order_theirs = order_ours = None
    for i in range(4):  # the shuffles compound: each experiment shuffles the previous order again
        _, order_theirs, theirs = task._undersample_data(Dataset.from_dict({"label": labels}), i, order_theirs)
        order_ours, ours = undersample(labels, 2, order=order_ours)
        assert ours == theirs and order_ours == order_theirs and len(ours) == 6
    rng = random.Random(42)
    assert document_sample(1797, rng=rng) == random.Random(42).sample(range(1797), k=71)  # int(0.04 * 1797)


# --------------------------------------------------------------------------- classification


def test_classification_with_a_training_split_equals_mteb_on_digits(digits):
    x, y = digits
    texts = _names(len(y))
    # mteb reads the test labels row by row for each of its 13 metric calls: 400 test items keep it to seconds
    theirs = mteb_classification((texts[:1000], y[:1000].tolist()), (texts[1000:1400], y[1000:1400].tolist()),
                                 _table(texts, x))
    r = classification(x[1000:1400], y[1000:1400], train=(x[:1000], y[:1000]), protocol="mteb", bootstrap=200)
    assert_same_scores(r.scores, theirs, CLASSIFICATION_KEYS)
    assert r.main_metric == "accuracy" and r.main_score == theirs["main_score"]
    assert len(r.info["scores_per_experiment"]) == 10
    for ours_e, theirs_e in zip(r.info["scores_per_experiment"], theirs["scores_per_experiment"], strict=True):
        assert ours_e["accuracy"] == pytest.approx(theirs_e["accuracy"], abs=TOL)
    assert r.info["n_train"] == 1000 and r.info["n_items"] == 400 and r.info["protocol"] == "mteb"
    # the units are the test items' fractions of right experiments: their mean is the main score itself
    assert r.interval.low < r.main_score < r.interval.high and r.interval.high - r.interval.low < 0.1
    assert 0.8 < r.main_score < 0.95  # 8 images per digit already read most digits


def test_binary_classification_writes_mtebs_average_precision(digits):
    from sklearn.datasets import load_breast_cancer

    x, y = load_breast_cancer(return_X_y=True)
    x = x.astype(np.float32)
    order = np.random.default_rng(0).permutation(len(y))
    x, y = x[order], y[order]
    texts = _names(len(y))
    theirs = mteb_classification((texts[:369], y[:369].tolist()), (texts[369:], y[369:].tolist()),
                                 _table(texts, x))
    r = classification(x[369:], y[369:], train=(x[:369], y[:369]), protocol="mteb", bootstrap=0)
    assert_same_scores(r.scores, theirs, CLASSIFICATION_KEYS)
    assert "ap" in r.scores and 0.5 < r.scores["ap"] <= 1.0 and r.interval is None


def test_cross_validation_equals_mteb_on_wine():
    """178 items: the 5 folds differ in size, and MTEB carries the shuffled order from fold to fold."""
    from sklearn.datasets import load_wine

    x, y = load_wine(return_X_y=True)
    x = x.astype(np.float32)
    texts = _names(len(y))
    theirs = mteb_classification(None, (texts, y.tolist()), _table(texts, x))
    r = classification(x, [f"cultivar {v}" for v in y], protocol="mteb")
    assert_same_scores(r.scores, theirs, CLASSIFICATION_KEYS)
    assert r.info["folds"] == 5 and len(r.info["scores_per_experiment"]) == 5
    assert r.interval is not None and r.interval.low <= r.main_score <= r.interval.high


# --------------------------------------------------------------------------- clustering


def test_fast_clustering_equals_mteb_on_digits(digits):
    x, y = digits
    texts = _names(len(y))
    theirs = mteb_clustering(texts, y.tolist(), _table(texts, x))
    r = clustering(x, y, protocol="mteb")
    assert_same_scores(r.scores, theirs, ["v_measure", "v_measure_std", "ami", "ami_std"])
    assert r.info["v_measures"]["Level 0"] == pytest.approx(theirs["v_measures"]["Level 0"], abs=TOL)
    assert r.info["n_items"] == 71 and r.info["n_documents"] == 1797  # MTEB embeds int(0.04 * 1797)
    assert r.interval is None and r.main_metric == "v_measure"


def test_fast_clustering_of_every_document_and_the_legacy_protocol_equal_mteb(digits):
    x, y = digits
    x, y = x[:600], y[:600]
    texts = _names(len(y))
    theirs = mteb_clustering(texts, y.tolist(), _table(texts, x), max_fraction_of_documents_to_embed=None)
    r = clustering_task(x, y, prepare=_vectors_and_labels, max_fraction=None)
    assert_same_scores(r.scores, theirs, ["v_measure", "v_measure_std", "ami", "ami_std"])
    assert r.info["n_items"] == 600
    legacy = mteb_clustering(texts, y.tolist(), _table(texts, x), legacy=True)
    r = clustering(x, y, protocol="mteb-legacy")
    assert_same_scores(r.scores, legacy, ["v_measure", "v_measure_std"])
    assert 0.5 < r.main_score < 0.95


# --------------------------------------------------------------------------- real texts


def _stsb_labelled(path: Path, n: int) -> LabelledTexts:
    """STS-B's first sentences, each labelled by its pair's gold score (similar: 2.5 or more)."""
    rows = list(csv.reader(path.open(newline="", encoding="utf-8")))[:n]
    return LabelledTexts([a for a, _, _ in rows], ["similar" if float(s) >= 2.5 else "apart" for _, _, s in rows],
                         path.stem)


def test_texts_with_the_static_model_equal_mteb(shared_data):
    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval._encode import as_encode

    train = _stsb_labelled(shared_data / "stsb" / "stsb-en-train.csv", 600)
    test = _stsb_labelled(shared_data / "stsb" / "stsb-en-test.csv", 250)
    encode = as_encode(get_encoder("static"))
    ids = {"apart": 0, "similar": 1}
    theirs = mteb_classification((train.texts, [ids[v] for v in train.labels]),
                                 (test.texts, [ids[v] for v in test.labels]), TableEncoder(encode=encode))
    r = classification(encode, test, train=train, protocol="mteb")
    assert r.task_name == "classification:stsb-en-test" and r.info["n_train"] == 600
    assert_same_scores(r.scores, theirs, CLASSIFICATION_KEYS)
    clusters = mteb_clustering(test.texts, [ids[v] for v in test.labels], TableEncoder(encode=encode),
                               max_fraction_of_documents_to_embed=None, max_document_to_embed=150)
    c = clustering_task(encode, test, prepare=_vectors_and_labels, max_fraction=None, max_documents=150)
    assert_same_scores(c.scores, clusters, ["v_measure", "v_measure_std", "ami", "ami_std"])
    assert c.info["n_items"] == 150


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_one_error_line():
    x = np.random.default_rng(0).standard_normal((40, 3)).astype(np.float32)
    with pytest.raises(InputError, match="the labels hold 1 class; at least 2"):
        classification(x, ["a"] * 40, protocol="mteb")
    with pytest.raises(InputError, match="the labels hold 1 class; at least 2"):
        clustering(x, ["a"] * 40, protocol="mteb")
    with pytest.raises(InputError, match="training split's labels hold 1 class"):
        classification(x[:10], ["a", "b"] * 5, train=(x[10:], ["a"] * 30), protocol="mteb")
    with pytest.raises(InputError, match="sample of 1 of the 40 documents"):
        clustering(x, ["a", "b"] * 20, protocol="mteb")
    with pytest.raises(InputError, match="protocol must be one of repspace, mteb, not 'sklearn'"):
        classification(x, ["a", "b"] * 20, protocol="sklearn")
    with pytest.raises(InputError, match="protocol must be one of repspace, mteb, mteb-legacy, not 'x'"):
        clustering(x, ["a", "b"] * 20, protocol="x")
    with pytest.raises(InputError, match="training split is for protocol='mteb'"):
        classification(x, ["a", "b"] * 20, train=(x, ["a", "b"] * 20))
    with pytest.raises(InputError, match="same width"):
        classification(x, ["a", "b"] * 20, train=(x[:, :2], ["a", "b"] * 20), protocol="mteb")
    with pytest.raises(InputError, match="train must be a \\(vectors, labels\\) pair"):
        classification(x[:2], ["a", "b"], train=LabelledTexts(["p", "q"], ["a", "b"]), protocol="mteb")
