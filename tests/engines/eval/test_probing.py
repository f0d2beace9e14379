"""SentEval's probing tasks: the loader on the shipped sample and on bad files, the probe against scikit-learn
fitted directly, the majority baseline, and the static encoder above that baseline on sentence length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval import load_probing, load_probing_dir, probing
from repspace.engines.eval.probing import REGULARISATION

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "senteval-probing"
#: SentEval's sentence-length bins (data/probing/README.md): token counts per class.
BINS = {"0": range(5, 9), "1": range(9, 13), "2": range(13, 17), "3": range(17, 21), "4": range(21, 26),
        "5": range(26, 29)}


def test_the_shipped_sample_loads_with_its_counts_and_labels() -> None:
    length, tense = load_probing_dir(SAMPLE)
    assert (length.name, tense.name) == ("sentence_length", "past_present")
    assert length.counts() == {"tr": 240, "va": 120, "te": 150}
    assert length.classes == ["0", "1", "2", "3", "4", "5"]
    for split, per_class in (("tr", 40), ("va", 20), ("te", 25)):
        assert {c: length.labels[split].count(c) for c in BINS} == dict.fromkeys(BINS, per_class)
    assert tense.counts() == {"tr": 80, "va": 40, "te": 60} and tense.classes == ["PAST", "PRES"]
    assert tense.labels["te"].count("PAST") == 30


def test_every_sentence_length_label_is_the_bin_of_its_token_count() -> None:
    data = load_probing(SAMPLE / "sentence_length.txt")
    for split in ("tr", "va", "te"):
        for text, label in zip(data.texts[split], data.labels[split], strict=True):
            assert len(text.split()) in BINS[label], (split, label, text)


@pytest.mark.parametrize(("text", "fragment"), [
    ("tr\t0\n", ":1: expected split<TAB>label<TAB>sentence, got 2 fields"),
    ("tr\t0\ta b c\ntrain\t1\ta b\n", ":2: unknown split 'train'"),
    ("tr\t\ta b c\n", ":1: the label is empty"),
    ("tr\t0\t  \n", ":1: the sentence is empty"),
    ("tr\t0\ta b\ntr\t1\ta b c\nva\t0\ta\n", "has no te line"),
    ("tr\t0\ta b\ntr\t0\ta b c\nva\t0\ta\nte\t0\tb\n", "holds 1 class"),
    ("tr\t0\ta b\ntr\t1\ta b c\nva\t0\ta\nte\t2\tb\n", "the te split has label '2', absent from tr"),
    ("", "has no tr, va, te lines"),
])
def test_a_bad_file_is_one_clear_error(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_probing(path)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_a_folder_refuses_unknown_and_missing_tasks(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown probing task 'Tense'"):
        load_probing_dir(SAMPLE, ["Tense"])
    with pytest.raises(InputError, match="has no tree_depth.txt"):
        load_probing_dir(SAMPLE, ["sentence_length", "tree_depth"])
    with pytest.raises(InputError, match="holds no probing task file"):
        load_probing_dir(tmp_path)
    assert [d.name for d in load_probing_dir(SAMPLE, ["past_present"])] == ["past_present"]


@pytest.fixture(scope="module")
def static_vectors() -> dict[str, dict[str, np.ndarray]]:
    """The static encoder's vectors of each shipped task, per split."""
    from repspace.engines.encoders import get_encoder

    encoder = get_encoder("static")
    return {d.name: {s: np.asarray(encoder.encode(d.texts[s]), dtype=np.float64) for s in ("tr", "va", "te")}
            for d in load_probing_dir(SAMPLE)}


@pytest.mark.parametrize("task", ["sentence_length", "past_present"])
def test_the_probe_is_sklearns_logistic_regression_with_the_c_chosen_on_va(static_vectors, task: str) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    data = load_probing(SAMPLE / f"{task}.txt")
    x = static_vectors[task]
    result = probing(x, data, bootstrap=0)
    scaler = StandardScaler().fit(x["tr"])
    z = {s: scaler.transform(v) for s, v in x.items()}
    y = {s: np.array(data.labels[s]) for s in x}
    dev = [LogisticRegression(C=c, max_iter=1000).fit(z["tr"], y["tr"]).score(z["va"], y["va"]) for c in REGULARISATION]
    best = REGULARISATION[int(np.argmax(dev))]
    reference = LogisticRegression(C=best, max_iter=1000).fit(z["tr"], y["tr"]).score(z["te"], y["te"])
    assert result.info["c"] == best
    # accuracies are counts over n sentences: equal predictions give equal figures to the last bit
    assert abs(result.main_score - reference) <= 1e-12
    assert abs(result.scores["dev_accuracy"] - max(dev)) <= 1e-12
    assert list(result.info["dev_accuracies"].values()) == pytest.approx(dev, abs=1e-12)


def test_the_majority_baseline_is_the_most_frequent_training_class_on_test(static_vectors) -> None:
    data = load_probing(SAMPLE / "past_present.txt")
    result = probing(static_vectors["past_present"], data, bootstrap=0)
    # tr holds 48 PRES and 32 PAST; te is balanced 30/30
    assert result.info["majority_class"] == "PRES"
    assert result.scores["majority_accuracy"] == 30 / 60


def test_static_reads_sentence_length_above_the_majority_baseline() -> None:
    from repspace.engines.encoders import get_encoder

    data = load_probing(SAMPLE / "sentence_length.txt")
    result = probing(get_encoder("static"), data, bootstrap=1000, seed=0)
    majority = result.scores["majority_accuracy"]
    assert majority == 25 / 150  # six balanced classes
    assert result.interval is not None and result.interval.low > majority, result
    assert result.units is not None and len(result.units.arrays[0]) == 150
    assert result.main_score == pytest.approx(float(np.mean(result.units.arrays[0])), abs=1e-12)
