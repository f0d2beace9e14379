"""Meaning-preserving perturbations: seeded, deterministic, and each changes only what it says.

Checked on real sentences (STS Benchmark test) against references written here: Damerau's edit distance
(optimal string alignment) for typos, case-folding for casing, the text with its marks removed for
punctuation, and WordNet's first senses read straight from Debian's database files (the index line of
the word, then the synset's record at its byte offset in data.<pos>) for synonyms.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval.perturb import (
    DEFAULT_RATE,
    PERTURBATIONS,
    casing,
    parse_perturbations,
    perturb,
    punctuation,
    reorder,
    synonyms,
    typos,
)
from repspace.engines.learn.wordnet import DEFAULT_ROOT, wordnet_available

needs_wordnet = pytest.mark.skipif(not wordnet_available(),
                                   reason=f"WordNet 3.0 is not in {DEFAULT_ROOT} (Debian package wordnet-base)")

#: A word as the tests count them (STS-B's sentences kept here are ASCII): letters, apostrophes inside.
WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")
MARKS = ".,;:!?"


@pytest.fixture(scope="module")
def sentences(shared_data: Path) -> list[str]:
    """400 ASCII sentences of STS-B test (both sides of its first pairs)."""
    with (shared_data / "stsb" / "stsb-en-test.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    texts = [t for row in rows for t in row[:2] if t.isascii()]
    return texts[:400]


def osa_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance, optimal-string-alignment variant (a transposition counts 1)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_osa_distance_reference():
    assert osa_distance("guitar", "giutar") == 1 and osa_distance("guitar", "guitr") == 1
    assert osa_distance("guitar", "guitars") == 1 and osa_distance("guitar", "gitra") == 2
    assert osa_distance("ca", "abc") == 3  # OSA, not the unrestricted Damerau distance (2)


def changed_count(n_sites: int, rate: float) -> int:
    return 0 if n_sites == 0 else min(n_sites, math.ceil(round(rate * n_sites, 9)))


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("kind", [k for k in PERTURBATIONS if k != "synonyms"] + [
    pytest.param("synonyms", marks=needs_wordnet)])
def test_each_perturbation_is_seeded_and_depends_on_seed_index_and_text_only(sentences, kind):
    texts = sentences[:120]
    first = perturb(texts, kind, seed=7)
    assert perturb(texts, kind, seed=7) == first  # the same seed: the same texts
    # text i's result depends on (seed, i, text) only: other texts replaced, or asked for alone, change nothing
    others = ["Stocks fell sharply on Monday."] * len(texts)
    for i in (0, 17, 119):
        mixed = others[:i] + [texts[i]] + others[i + 1:]
        assert perturb(mixed, kind, seed=7)[i] == first[i]
    if kind != "reorder":  # reorder draws nothing: one site at most per text
        assert perturb(texts, kind, seed=8) != first


def test_the_generator_is_that_of_seed_and_index():
    texts = ["A man is playing a large guitar on the stage."] * 5
    out = perturb(texts, "typos", rate=0.5, seed=3)
    for i, text in enumerate(texts):
        assert out[i] == typos(text, np.random.default_rng([3, i]), rate=0.5)
    assert len(set(out)) > 1  # the same text at another index gets other typos


def test_kinds_apply_in_the_order_given_with_one_generator_per_text():
    text = "A man is playing a large guitar on the stage."
    rng = np.random.default_rng([0, 0])
    expected = casing(typos(text, rng, 0.3), rng, 0.3)
    assert perturb([text], ["typos", "casing"], rate=0.3) == [expected]


# ----------------------------------------------------------------------------- each perturbation


def test_typos_change_words_longer_than_three_letters_by_one_edit_each(sentences):
    rate = 0.3
    for seed in range(3):
        out = perturb(sentences, "typos", rate=rate, seed=seed)
        for a, b in zip(sentences, out):
            wa, wb = WORD.findall(a), WORD.findall(b)
            assert len(wa) == len(wb) and re.sub(r"[A-Za-z']", "", a) == re.sub(r"[A-Za-z']", "", b)
            changed = 0
            for x, y in zip(wa, wb):
                if x == y:
                    continue
                changed += 1
                lead = re.match("[A-Za-z]+", x).group()
                assert len(lead) > 3 and osa_distance(x, y) == 1, (x, y)
                assert x[0] == y[0] and x[len(lead):] == y[len(y) - len(x) + len(lead):]  # not the first letter,
                # nor what follows an apostrophe
            eligible = sum(len(re.match("[A-Za-z]+", w).group()) > 3 for w in wa)
            assert changed == changed_count(eligible, rate), (a, b)


def test_casing_changes_case_only(sentences):
    rate = 0.2
    out = perturb(sentences, "casing", rate=rate, seed=1)
    for a, b in zip(sentences, out):
        assert a.lower() == b.lower() and a != b
        diffs = [(x, y) for x, y in zip(WORD.findall(a), WORD.findall(b)) if x != y]
        assert len(diffs) == changed_count(len(WORD.findall(a)), rate)
        assert all(y in (x.lower(), x.upper(), x[0].upper() + x[1:].lower()) for x, y in diffs)


def mark_runs(text: str) -> list[str]:
    """The marks after each character that is not one (a leading run first): the places punctuation edits."""
    runs = [""]
    for ch in text:
        if ch in MARKS:
            runs[-1] += ch
        else:
            runs.append("")
    return runs


def test_punctuation_changes_punctuation_only(sentences):
    rate = 0.2
    out = perturb(sentences, "punctuation", rate=rate, seed=2)
    strip = str.maketrans("", "", MARKS)
    for a, b in zip(sentences, out):
        assert a != b and a.translate(strip) == b.translate(strip)
        # the places: a mark ending a word (dropped), a space between two letters (a comma added), the end of a
        # text without a terminal mark (a full stop added); each edit adds or removes one mark at one place
        sites = (len(re.findall(r"(?<=[A-Za-z0-9])[.,;:!?](?=\s|$)", a))
                 + len(re.findall(r"(?<=[A-Za-z]) (?=[A-Za-z])", a)) + (1 if a.rstrip()[-1:].isalnum() else 0))
        edits = sum(abs(len(x) - len(y)) for x, y in zip(mark_runs(a), mark_runs(b), strict=True))
        assert edits == changed_count(sites, rate), (a, b)
    # numbers keep their marks; a comma goes only between two words
    assert punctuation("It costs 3.5 dollars, or 1,000 cents", np.random.default_rng(0), rate=1.0) == \
        "It, costs 3.5 dollars or 1,000 cents."


def _first_sense_lemmas(word: str) -> set[str] | None:
    """The lemmas of ``word``'s first sense under the part of speech with the most tagged senses (ties: n, v, a, r),
    read from the index line and the synset's record at its byte offset; None where the word is in no index."""
    best = None
    for pos, suffix in (("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv")):
        with (DEFAULT_ROOT / f"index.{suffix}").open(encoding="latin-1") as f:
            line = next((ln for ln in f if ln.startswith(word + " ")), None)
        if line is None:
            continue
        fields = line.split()
        p_cnt = int(fields[3])
        tagged, offset = int(fields[5 + p_cnt]), int(fields[6 + p_cnt])
        if best is None or tagged > best[0]:
            best = (tagged, suffix, offset)
    if best is None:
        return None
    with (DEFAULT_ROOT / f"data.{best[1]}").open("rb") as f:
        f.seek(best[2])
        record = f.readline().decode("latin-1").split()
    assert int(record[0]) == best[2]
    n_words = int(record[3], 16)
    return {re.sub(r"\(.*\)$", "", record[4 + 2 * i]).lower() for i in range(n_words)}


@needs_wordnet
def test_synonyms_are_lemmas_of_the_first_sense_read_from_the_wordnet_files(sentences):
    out = perturb(sentences, "synonyms", rate=0.5, seed=4)
    replaced = 0
    for a, b in zip(sentences, out):
        wa, wb = WORD.findall(a), WORD.findall(b)
        assert len(wa) == len(wb)
        for x, y in zip(wa, wb):
            if x == y:
                continue
            replaced += 1
            lemmas = _first_sense_lemmas(x.lower())
            assert lemmas is not None and y.lower() in lemmas and y.lower() != x.lower(), (x, y, lemmas)
            assert y.isalpha() and not x.lower().endswith("ing")
            assert (y[0].isupper()) == (x[0].isupper())  # the case pattern kept
    assert replaced > 100


@needs_wordnet
def test_synonyms_worked_examples():
    rng = np.random.default_rng(0)
    # car.n.01 is car, auto, automobile, machine, motorcar; quick's first adjective sense has "speedy"
    assert synonyms("The Car is QUICK.", rng, rate=1.0).split()[1] in ("Auto", "Automobile", "Machine", "Motorcar")
    assert synonyms("The car is QUICK.", np.random.default_rng(1), rate=1.0).endswith("SPEEDY.")
    # forms WordNet does not list as such (no lemmatisation) and function words stay
    assert synonyms("The cars are running in it.", rng, rate=1.0) == "The cars are running in it."


def test_synonyms_without_wordnet_say_to_install_it(tmp_path):
    with pytest.raises(InputError, match="install Debian's wordnet-base"):
        synonyms("The car is quick.", np.random.default_rng(0), root=tmp_path)


@pytest.mark.parametrize(("text", "expected"), [
    ("A man is playing a guitar and a woman is singing.", "A woman is singing and a man is playing a guitar."),
    ("A man is playing a guitar, and a woman is singing!", "A woman is singing, and a man is playing a guitar!"),
    ("The dog is barking, the cat is sleeping.", "The cat is sleeping, the dog is barking."),
    ("Bounty hunting is illegal in Mexico, and the bounty hunter was charged.",
     "The bounty hunter was charged, and Bounty hunting is illegal in Mexico."),
])
def test_reorder_swaps_two_clauses(text, expected):
    assert reorder(text) == expected


@pytest.mark.parametrize("text", [
    "A man and a woman are dancing.",  # "A man" is no clause
    "A boy with dark hair is in water and is looking up.",  # the second part shares the subject
    "A man is cutting a potato and a woman is peeling it.",  # "it" points back
    "A man opened the door and then he walked in.",  # order matters
    "The woman is holding the harness that the brown and white dog is wearing.",
    "Two people are together and one is using a tool.",  # "one" points back
    "2 girls are sitting in front of a bookcase and 1 is reading a book.",
    "A man is singing, a woman is dancing, and a dog is barking.",  # more than one joint
    "Police say the driver has fled and the truck was found.",  # one part reports the other
])
def test_reorder_leaves_unsafe_texts_alone(text):
    assert reorder(text) == text


def test_reorder_keeps_the_words_and_marks(sentences):
    for a in sentences:
        b = reorder(a)
        assert sorted(WORD.findall(a.lower())) == sorted(WORD.findall(b.lower()))
        assert sorted(c for c in a if not c.isalnum()) == sorted(c for c in b if not c.isalnum())


# ----------------------------------------------------------------------------- arguments


def test_parse_perturbations():
    assert parse_perturbations("typos, casing") == ("typos", "casing")
    assert parse_perturbations(["reorder"]) == ("reorder",)
    assert parse_perturbations("all") == PERTURBATIONS
    for bad, message in (("typo", "perturbation must be one of"), ("", "no perturbation named"),
                         ("typos,typos", "named twice")):
        with pytest.raises(InputError, match=message):
            parse_perturbations(bad)


def test_bad_arguments_are_one_error_line():
    for kwargs, message in (({"rate": 0}, r"rate must be a number in \(0, 1\]"),
                            ({"rate": 1.5}, "rate must be"), ({"seed": -1}, "seed must be"),
                            ({"seed": 2**32}, "seed must be")):
        with pytest.raises(InputError, match=message):
            perturb(["a text"], "typos", **kwargs)
    with pytest.raises(InputError, match="not one string"):
        perturb("a text", "typos")
    with pytest.raises(InputError, match="text 1 is int"):
        perturb(["a text", 3], "typos")
    assert perturb([], "typos") == [] and DEFAULT_RATE == 0.1
