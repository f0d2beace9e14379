"""Pair classification: hand-computed AP and thresholds, sentence-transformers' thresholds, STS-B pairs."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from _eval_stubs import TruncateCodec

from repspace.core.errors import InputError
from repspace.engines.eval.pairclass import (
    PairLabels,
    best_thresholds,
    load_pairs,
    pairclass,
    pairclass_scores,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def on_circle(cosines) -> np.ndarray:
    """Unit 2-d vectors whose cosine with (1, 0) is each given value."""
    c = np.asarray(cosines, dtype=np.float64)
    return np.stack([c, np.sqrt(1 - c**2)], axis=1)


def test_pairclass_scores_hand_computed():
    cos = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    labels = np.array([1, 0, 1, 1, 0, 0])
    a = np.tile([[2.0, 0.0]], (6, 1))  # length does not matter to the cosine
    s = pairclass_scores(a, on_circle(cos) * 3, labels)
    # AP: positives at ranks 1, 3, 4 -> precision 1, 2/3, 3/4 there -> (1 + 2/3 + 3/4) / 3 = 29/36.
    assert s["cosine_ap"] == pytest.approx(29 / 36, abs=1e-12)
    # Accuracy, calling the top k positive: k=0: 3/6, 1: 4/6, 2: 3/6, 3: 4/6, 4: 5/6, 5: 4/6, 6: 3/6.
    assert s["cosine_accuracy"] == pytest.approx(5 / 6)
    assert s["cosine_accuracy_threshold"] == pytest.approx(0.55)
    # F1 at k=4: precision 3/4, recall 1 -> 6/7 (k=1: 0.5, k=3: 2/3, k=5: 0.75, k=6: 2/3).
    assert s["cosine_f1"] == pytest.approx(6 / 7)
    assert s["cosine_f1_threshold"] == pytest.approx(0.55)
    assert s["cosine_precision"] == pytest.approx(0.75) and s["cosine_recall"] == 1.0


def test_best_thresholds_do_not_split_ties():
    # Two pairs share the top score, one of each label: no threshold separates them.
    r = best_thresholds(np.array([0.5, 0.5, 0.1]), np.array([1, 0, 0]))
    # Options: nothing positive (2/3 right), the tied two (2/3), everything (1/3): the first best is kept.
    assert r["accuracy"] == pytest.approx(2 / 3) and r["accuracy_threshold"] > 0.5
    assert r["f1"] == pytest.approx(2 * 0.5 * 1 / 1.5) and r["f1_threshold"] == pytest.approx(0.3)


def test_best_thresholds_equal_sentence_transformers():
    # imported here, not at the top: it loads torch (seconds), which the rest of the file does not need
    from sentence_transformers.sentence_transformer.evaluation import (
        binary_classification as st_eval,
    )

    finder = st_eval.BinaryClassificationEvaluator
    rng = np.random.default_rng(0)
    for trial in range(20):
        n = int(rng.integers(2, 60))
        labels = rng.integers(0, 2, n)
        scores = rng.normal(labels * 0.5, 1.0)
        if trial % 2:
            scores = np.round(scores, 1)  # many ties
        mine = best_thresholds(scores, labels)
        acc, acc_t = finder.find_best_acc_and_threshold(scores, labels, True)
        assert mine["accuracy"] == pytest.approx(acc) and mine["accuracy_threshold"] == pytest.approx(acc_t)
        if labels.sum():
            f1, precision, recall, f1_t = finder.find_best_f1_and_threshold(scores, labels, True)
            assert mine["f1"] == pytest.approx(f1) and mine["f1_threshold"] == pytest.approx(f1_t)
            assert mine["precision"] == pytest.approx(precision) and mine["recall"] == pytest.approx(recall)


def test_pairclass_scores_errors():
    a = np.eye(3)
    with pytest.raises(InputError, match="both labels 0 and 1"):
        pairclass_scores(a, a, np.array([1, 1, 1]))
    with pytest.raises(InputError, match="0 or 1"):
        pairclass_scores(a, a, np.array([1, 2, 0]))
    with pytest.raises(InputError, match="two \\(n, d\\) arrays"):
        pairclass_scores(a, a[:2], np.array([1, 0, 1]))


def test_load_pairs(tmp_path: Path):
    p = tmp_path / "quora-dev.csv"
    p.write_text('sentence1,sentence2,label\r\n"Hi, there",Hello,1\r\nA,B,0.0\r\n\r\n', newline="")
    pairs = load_pairs(p)
    assert pairs.sentences1 == ["Hi, there", "A"] and pairs.labels.tolist() == [1, 0]
    assert pairs.name == "quora-dev" and pairs.split == "dev" and len(pairs) == 2


@pytest.mark.parametrize("content, match", [
    ("a,b,1\n", "first line must be the header"),
    ("", "first line must be the header"),
    ("sentence1,sentence2,label\nx,y,2\n", r"p.csv:2: the label '2' is not 0 or 1"),
    ("sentence1,sentence2,label\nx,y,1\nx,y\n", r"p.csv:3: expected 3 fields"),
    ("sentence1,sentence2,label\nx,y,yes\n", r"p.csv:2: the label 'yes'"),
    ("sentence1,sentence2,label\n", "holds no pairs"),
])
def test_load_pairs_errors(tmp_path: Path, content, match):
    p = tmp_path / "p.csv"
    p.write_text(content)
    with pytest.raises(InputError, match=match):
        load_pairs(p)
    with pytest.raises(InputError, match="does not exist"):
        load_pairs(tmp_path / "missing.csv")




def test_pairclass_task_encodes_distinct_texts_once():
    table = {"a": [1.0, 0.0, 5.0], "b": [0.9, 0.1, -5.0], "c": [0.0, 1.0, 0.0], "d": [0.1, 1.0, 2.0]}
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return np.array([table[t] for t in texts])

    pairs = PairLabels(["a", "c", "a", "b"], ["b", "d", "c", "d"], np.array([1, 1, 0, 0]), "toy")
    codec = TruncateCodec(2)
    r = pairclass(encode, pairs, codec=codec)
    assert len(calls) == 1 and sorted(calls[0]) == ["a", "b", "c", "d"]
    assert codec.fitted_shape == (4, 3) and r.info["bytes_per_vector"] == 8 and r.info["codec"]["k"] == 2
    assert r.task_name == "pairclass:toy" and r.main_metric == "cosine_ap" and r.split == "test"
    assert r.main_score == 1.0 and r.info == {**r.info, "n_pairs": 4, "positive_rate": 0.5}
    # Without the codec the third dimension makes the positive pair a-b dissimilar.
    assert pairclass(encode, pairs).main_score < 1.0


def test_pairclass_stsb_static(shared_data, tmp_path: Path):
    from repspace.engines.encoders import get_encoder

    rows = list(csv.reader((shared_data / "stsb" / "stsb-en-test.csv").open(newline="", encoding="utf-8")))
    out = tmp_path / "stsb-pairs-test.csv"
    with out.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sentence1", "sentence2", "label"])
        for s1, s2, score in rows:
            if float(score) >= 4:
                w.writerow([s1, s2, 1])
            elif float(score) <= 1:
                w.writerow([s1, s2, 0])
    pairs = load_pairs(out)
    r = pairclass(get_encoder("static"), pairs)
    rate = r.info["positive_rate"]
    assert r.info["n_pairs"] == len(pairs) > 500 and 0.3 < rate < 0.7
    assert r.main_score > rate + 0.2  # AP of a random ranking is about the positive rate
    assert r.scores["cosine_accuracy"] > max(rate, 1 - rate) + 0.1
    assert r.scores["cosine_f1"] > 2 * rate / (1 + rate)  # F1 of calling every pair positive
