"""SentEval's probing tasks: the loader on the shipped sample and on bad files, the probe against scikit-learn
fitted directly, the majority baseline, and the static encoder above that baseline on sentence length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval import load_probing, load_probing_dir, probing
from repspace.engines.eval.probing import PROBING_TASKS, REGULARISATION

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "senteval-probing"
#: SentEval's sentence-length bins (data/probing/README.md): token counts per class.
BINS = {"0": range(5, 9), "1": range(9, 13), "2": range(13, 17), "3": range(17, 21), "4": range(21, 26),
        "5": range(26, 29)}


#: Per shipped task, as tests/data/senteval-probing/README.md gives them: (tr, va, te) lines and the classes.
SHIPPED = {
    "sentence_length": ((240, 120, 150), 6), "word_content": ((38, 24, 20), 20), "tree_depth": ((98, 42, 63), 7),
    "top_constituents": ((100, 40, 60), 20), "bigram_shift": ((100, 40, 60), 2), "past_present": ((80, 40, 60), 2),
    "subj_number": ((100, 40, 60), 2), "obj_number": ((100, 40, 60), 2), "odd_man_out": ((100, 40, 60), 2),
    "coordination_inversion": ((100, 40, 60), 2),
}
#: Per-class lines of the tasks sampled class by class (the README's "k per class" rule): tr, va, te.
PER_CLASS = {"sentence_length": (40, 20, 25), "tree_depth": (14, 6, 9), "top_constituents": (5, 2, 3)}
#: Binary tasks' labels, as SentEval writes them.
LABELS = {"bigram_shift": ["I", "O"], "past_present": ["PAST", "PRES"], "subj_number": ["NN", "NNS"],
          "obj_number": ["NN", "NNS"], "odd_man_out": ["C", "O"], "coordination_inversion": ["I", "O"]}


def test_the_shipped_sample_holds_the_ten_tasks_in_the_papers_order() -> None:
    assert [d.name for d in load_probing_dir(SAMPLE)] == list(PROBING_TASKS) == list(SHIPPED)


@pytest.mark.parametrize("task", list(SHIPPED))
def test_every_shipped_file_has_the_readmes_splits_and_every_class_in_each(task: str) -> None:
    data = load_probing(SAMPLE / f"{task}.txt")
    counts, n_classes = SHIPPED[task]
    assert data.counts() == dict(zip(("tr", "va", "te"), counts, strict=True))
    assert len(data.classes) == n_classes
    for split in ("va", "te"):
        assert sorted(set(data.labels[split])) == data.classes, (task, split)
    if task in LABELS:
        assert data.classes == LABELS[task]
    if task in PER_CLASS:
        for split, k in zip(("tr", "va", "te"), PER_CLASS[task], strict=True):
            assert {c: data.labels[split].count(c) for c in data.classes} == dict.fromkeys(data.classes, k)


def test_the_tense_sample_keeps_the_files_balance_and_tree_depth_its_range() -> None:
    tense = load_probing(SAMPLE / "past_present.txt")
    assert tense.labels["te"].count("PAST") == 30
    assert load_probing(SAMPLE / "tree_depth.txt").classes == [str(d) for d in (10, 11, 5, 6, 7, 8, 9)]  # depths 5-11


def test_every_word_content_label_is_a_word_of_its_sentence() -> None:
    # WC's label is the one of its 1,000 target words that the sentence holds (lower-cased, as SentEval writes it)
    data = load_probing(SAMPLE / "word_content.txt")
    for split in ("tr", "va", "te"):
        for text, label in zip(data.texts[split], data.labels[split], strict=True):
            assert label in text.lower().split(), (split, label, text)


def test_every_coordination_inversion_sentence_holds_a_coordinating_conjunction() -> None:
    # CoordInv's sentences are two coordinate clauses (original or swapped), so each has a conjunction
    data = load_probing(SAMPLE / "coordination_inversion.txt")
    conjunctions = {"and", "but", "or", "yet", "so", "nor", "for"}
    for split in ("tr", "va", "te"):
        for text in data.texts[split]:
            assert conjunctions & set(text.lower().split()), (split, text)


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
    with pytest.raises(InputError, match="holds no probing task file"):
        load_probing_dir(tmp_path)
    (tmp_path / "past_present.txt").write_bytes((SAMPLE / "past_present.txt").read_bytes())
    with pytest.raises(InputError, match="has no tree_depth.txt"):
        load_probing_dir(tmp_path, ["past_present", "tree_depth"])
    assert [d.name for d in load_probing_dir(SAMPLE, ["past_present"])] == ["past_present"]


@pytest.fixture(scope="module")
def static_vectors() -> dict[str, dict[str, np.ndarray]]:
    """The static encoder's vectors of each shipped task, per split."""
    from repspace.engines.encoders import get_encoder

    encoder = get_encoder("static")
    return {d.name: {s: np.asarray(encoder.encode(d.texts[s]), dtype=np.float64) for s in ("tr", "va", "te")}
            for d in load_probing_dir(SAMPLE)}


# word_content: 20 classes over 38 training lines, which scikit-learn flags as regression-like
@pytest.mark.filterwarnings("ignore:The number of unique classes:UserWarning")
@pytest.mark.parametrize("task", list(SHIPPED))
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
