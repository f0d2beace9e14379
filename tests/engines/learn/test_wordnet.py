"""The WordNet 3.0 reader on Debian's wordnet-base: names, pointers, the mammal closure, the synonym lexicon."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from repspace.core.errors import InputError
from repspace.engines.learn.wordnet import (
    DEFAULT_ROOT,
    MAMMAL_EXCLUDED,
    hypernym_closure,
    read_synsets,
    synonym_lexicon,
    wordnet_available,
)

needs_wordnet = pytest.mark.skipif(not wordnet_available(),
                                   reason=f"WordNet 3.0 is not in {DEFAULT_ROOT} (Debian package wordnet-base)")


@needs_wordnet
def test_synonym_lexicon_lists_the_other_lemmas_of_every_synset_sorted_without_self():
    lex = synonym_lexicon()
    assert len(lex) == 110_390
    assert list(lex) == sorted(lex)
    assert lex["automobile"] == ("auto", "car", "machine", "motorcar")
    assert lex["car"] == ("auto", "automobile", "cable_car", "elevator_car", "gondola", "machine", "motorcar",
                          "railcar", "railroad_car", "railway_car")
    for word, others in lex.items():
        assert others and word not in others and list(others) == sorted(set(others))
        assert all(o == o.lower() for o in others)
    # Symmetric: b is a synonym of a exactly when a is one of b.
    assert all(word in lex[o] for word, others in list(lex.items())[:5000] for o in others)
    # Collocations keep WordNet's underscores; proper names are lowercased.
    assert "domestic_dog" in lex["dog"] and "albert_einstein" in lex["einstein"]
    # Adjective markers are stripped (data.adj writes e.g. "galore(ip)").
    assert not any("(" in w for w in lex)


@needs_wordnet
def test_synonym_lexicon_by_part_of_speech():
    verbs = synonym_lexicon(pos=("v",))
    adverbs = synonym_lexicon(pos="r")
    assert "run" in verbs and "automobile" not in verbs
    assert adverbs["quickly"] == ("apace", "chop-chop", "cursorily", "promptly", "quick", "rapidly", "speedily")
    everything = synonym_lexicon()
    assert set(verbs["run"]) <= set(everything["run"])
    # The result is a fresh dict: changing it does not change the next call's.
    verbs["run"] = ()
    assert synonym_lexicon(pos=("v",))["run"]
    with pytest.raises(InputError, match="pos must be one of"):
        synonym_lexicon(pos=("x",))
    with pytest.raises(InputError, match="names no part of speech"):
        synonym_lexicon(pos=())


def test_missing_files_say_to_install_wordnet_base(tmp_path: Path):
    assert not wordnet_available(tmp_path)
    for call in (lambda: synonym_lexicon(root=tmp_path), lambda: read_synsets("n", root=tmp_path),
                 lambda: hypernym_closure("mammal.n.01", root=tmp_path)):
        with pytest.raises(InputError, match="install Debian's wordnet-base"):
            call()


@needs_wordnet
def test_synsets_have_nltk_names_lemmas_and_hypernym_pointers():
    nouns = read_synsets("n")
    assert len(nouns) == 82_115
    dog = nouns["dog.n.01"]
    assert dog.lemmas == ("dog", "domestic_dog", "Canis_familiaris") and dog.pos == "n"
    assert dog.hypernyms == ("canine.n.02", "domestic_animal.n.01") and dog.instance_hypernyms == ()
    # Sense numbers come from index.noun: "frump" is dog's second sense, "dog" its first lemma.
    assert nouns["frump.n.01"].lemmas == ("frump", "dog")
    assert nouns["einstein.n.01"].instance_hypernyms == ("physicist.n.01",)
    assert nouns["entity.n.01"].hypernyms == ()
    adjectives = read_synsets("a")
    assert adjectives["good.a.01"].pos == "a" and any(s.pos == "s" for s in adjectives.values())
    assert len(read_synsets("v")) == 13_767 and len(read_synsets("r")) == 3_621


@needs_wordnet
def test_mammal_closure_is_nickel_and_kiela_data_set():
    pairs = hypernym_closure()
    nodes = {c for c, _ in pairs} | {a for _, a in pairs}
    assert (len(pairs), len(nodes)) == (6540, 1180)
    assert pairs == sorted(set(pairs)) and all(c != a for c, a in pairs)
    assert ("dog.n.01", "mammal.n.01") in pairs and ("dog.n.01", "carnivore.n.01") in pairs
    assert not any(a == "animal.n.01" or a == "domestic_animal.n.01" for _, a in pairs)
    raw = hypernym_closure(exclude=())
    assert len(raw) == 6542 and set(raw) - set(pairs) == {(x, "mammal.n.01") for x in MAMMAL_EXCLUDED}
    # Transitive: every ancestor of an ancestor (inside the subtree) is an ancestor.
    up: dict[str, set[str]] = {}
    for c, a in pairs:
        up.setdefault(c, set()).add(a)
    for c, ancestors in up.items():
        for a in ancestors:
            assert up.get(a, set()) <= ancestors


@needs_wordnet
def test_closure_of_a_small_subtree_and_errors():
    pairs = hypernym_closure("feline.n.01")
    assert len(pairs) == 169 and ("domestic_cat.n.01", "feline.n.01") in pairs
    assert hypernym_closure("feline.n.01", exclude=["cat.n.01"]) == [p for p in pairs if "cat.n.01" not in p]
    with pytest.raises(InputError, match="is not a synset"):
        hypernym_closure("felines.n.01")
    with pytest.raises(InputError, match="synset name"):
        hypernym_closure("feline")


@needs_wordnet
def test_a_copied_database_reads_the_same(tmp_path: Path):
    for name in ("data.adv", "index.adv"):
        shutil.copy(DEFAULT_ROOT / name, tmp_path / name)
    assert synonym_lexicon(root=tmp_path, pos="r") == synonym_lexicon(pos="r")
