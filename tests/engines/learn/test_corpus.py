"""Corpora: tokenisation as a recipe, the three readers, the fingerprint, and the one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from repspace.core.errors import InputError
from repspace.engines.learn import (
    DEFAULT_PATTERN,
    Tokenizer,
    corpus_fingerprint,
    corpus_from_texts,
    corpus_from_tokens,
    read_jsonl_corpus,
    read_text_corpus,
)


def test_default_tokenizer_matches_gensim_simple_preprocess_on_the_lee_corpus(lee_path):
    # gensim's simple_preprocess keeps "foo_bar" whole where our pattern splits at "_"; the Lee corpus has no "_".
    from gensim.utils import simple_preprocess

    lines = [line for line in lee_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert "_" not in "".join(lines)
    tok = Tokenizer()
    assert [tok.tokenize(line) for line in lines] == [simple_preprocess(line) for line in lines]
    assert tok.to_dict() == {"lowercase": True, "pattern": DEFAULT_PATTERN, "min_len": 2, "max_len": 15}


def test_tokenizer_options_and_bad_specs():
    assert Tokenizer(lowercase=False, min_len=1).tokenize("New York, a city") == ["New", "York", "a", "city"]
    assert Tokenizer(max_len=4).tokenize("tiny enormous cat") == ["tiny", "cat"]
    assert Tokenizer(pattern=r"(\w)\w*").tokenize("ab cd") == ["ab", "cd"]  # whole matches, not groups
    for kwargs, message in [({"pattern": "("}, "is not a regular expression"),
                            ({"pattern": r"\w*"}, "matches the empty string"),
                            ({"min_len": 0}, "min_len must be a positive integer"),
                            ({"min_len": 5, "max_len": 3}, "max_len (3) is below min_len (5)"),
                            ({"lowercase": "yes"}, "lowercase must be true or false")]:
        with pytest.raises(InputError, match=re.escape(message)):
            Tokenizer(**kwargs)
    with pytest.raises(InputError, match="unknown tokenizer setting"):
        Tokenizer.from_dict({"lowercase": True, "stem": True})


def test_text_file_reader_on_the_lee_corpus(lee, lee_path):
    raw = lee_path.read_text(encoding="utf-8").splitlines()
    assert len(lee) == sum(1 for line in raw if line.strip()) == 300
    assert lee.n_tokens == 58152
    assert lee.ids[0] == "1" and lee.documents[0][:4] == ("hundreds", "of", "people", "have")
    d = lee.to_dict()
    assert d["n_documents"] == 300 and d["fingerprint"] == lee.fingerprint and d["tokenizer"]["min_len"] == 2


def test_fingerprint_changes_with_one_token_not_with_whitespace_or_blank_lines(lee_path, tmp_path):
    lines = lee_path.read_text(encoding="utf-8").splitlines()
    base = read_text_corpus(lee_path).fingerprint

    spaced = tmp_path / "spaced.cor"  # doubled spaces, tabs, trailing blanks, blank lines between documents
    spaced.write_text("\n\n".join("\t " + line.replace(" ", "   ") + "  " for line in lines) + "\n\n",
                      encoding="utf-8")
    again = read_text_corpus(spaced)
    assert again.fingerprint == base
    assert again.ids[:2] == ("1", "3")  # ids still name the source lines

    assert "Government" in lines[5].split()
    changed = tmp_path / "changed.cor"
    words = lines[5].split()
    words[words.index("Government")] = "Governments"
    changed.write_text("\n".join(lines[:5] + [" ".join(words)] + lines[6:]) + "\n", encoding="utf-8")
    assert read_text_corpus(changed).fingerprint != base

    swapped = tmp_path / "swapped.cor"  # the same documents in another order
    swapped.write_text("\n".join([lines[1], lines[0]] + lines[2:]) + "\n", encoding="utf-8")
    assert read_text_corpus(swapped).fingerprint != base

    # the fingerprint is over tokens: a tokeniser that keeps case gives another one
    assert read_text_corpus(lee_path, tokenizer=Tokenizer(lowercase=False)).fingerprint != base
    assert corpus_fingerprint(read_text_corpus(lee_path).documents) == base


def test_jsonl_and_list_readers_give_the_text_file_corpus(lee, lee_path, tmp_path):
    lines = [line for line in lee_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    p = tmp_path / "lee.jsonl"
    p.write_text("\n".join(json.dumps({"doc": f"d{i}", "body": line}) for i, line in enumerate(lines)) + "\n",
                 encoding="utf-8")
    j = read_jsonl_corpus(p, text_field="body", id_field="doc")
    assert j.documents == lee.documents and j.fingerprint == lee.fingerprint
    assert j.ids[:2] == ("d0", "d1")
    assert read_jsonl_corpus(p, text_field="body").ids[:2] == ("1", "2")
    t = corpus_from_texts(lines)
    assert t.documents == lee.documents and t.ids[:2] == ("0", "1")
    assert corpus_from_tokens(lee.documents).fingerprint == lee.fingerprint
    assert corpus_from_tokens(lee.documents).tokenizer is None


def test_empty_and_tokenless_corpora_are_one_line_errors(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n   \n\n", encoding="utf-8")
    digits = tmp_path / "digits.txt"
    digits.write_text("2001 12.5\n\n- 42 -\n", encoding="utf-8")
    cases = [
        (lambda: read_text_corpus(empty), "is empty: it has no non-blank document"),
        (lambda: read_text_corpus(digits), "has no tokens under the tokenizer"),
        (lambda: read_text_corpus(tmp_path / "missing.txt"), "does not exist"),
        (lambda: corpus_from_texts([]), "is empty"),
        (lambda: corpus_from_tokens([[], []]), "has no tokens"),
        (lambda: corpus_from_texts("one string"), "got one string"),
        (lambda: corpus_from_texts(["a b", "c d"], ids=["x", "x"]), "document id 'x' occurs twice"),
    ]
    for call, message in cases:
        with pytest.raises(InputError, match=re.escape(message)) as e:
            call()
        assert "\n" not in str(e.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine words"}\n{"text": 3}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl:2: field 'text' is a int, not a string"):
        read_jsonl_corpus(bad)
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9 au lait\n")
    with pytest.raises(InputError, match=r"latin\.txt:1: invalid UTF-8 at byte 3 \(pass the file's encoding\)"):
        read_text_corpus(latin)
    assert read_text_corpus(latin, encoding="latin-1").documents == (("café", "au", "lait"),)
    with pytest.raises(InputError, match="unknown text encoding 'klingon'"):
        read_text_corpus(latin, encoding="klingon")


def test_lee_test_corpus_is_latin1_and_reads_with_its_encoding():
    # gensim's lee.cor (50 documents) is not UTF-8 at line 41: the reader says where, and reads it as Latin-1
    from gensim.test.utils import datapath

    with pytest.raises(InputError, match=r"lee\.cor:41: invalid UTF-8 at byte 422"):
        read_text_corpus(datapath("lee.cor"))
    assert len(read_text_corpus(datapath("lee.cor"), encoding="latin-1")) == 50


def test_tokenless_documents_are_skipped_and_counted():
    c = corpus_from_texts(["alpha beta", "1999", "", "gamma"])
    assert c.documents == (("alpha", "beta"), ("gamma",)) and c.ids == ("0", "3") and c.skipped == 1
