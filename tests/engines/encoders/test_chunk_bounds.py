"""Word- and sentence-aligned chunks: the cap, full cover, ends at boundaries, exact offsets in non-ASCII text."""

from __future__ import annotations

import re

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.encoders.chunk_bounds import bounded_chunks
from repspace.engines.encoders.late_chunking import chunk_spans, late_chunks

pytestmark = pytest.mark.slow  # loads MiniLM's tokenizer and model


@pytest.fixture(scope="module")
def text(stsb_rows: list[tuple[str, str, float]]) -> str:
    """Real sentences with non-ASCII words, a CJK sentence and a paragraph break among them."""
    body = " ".join(row[0] for row in stsb_rows[:12])
    head = "Überblick: Straßenbahnen fahren schnell. 東京は大きい。 "
    return head + body + "\n\nNaïve café owners réfléchissent."


def _offsets(raw, text: str) -> np.ndarray:
    enc = raw[0](text, add_special_tokens=False, return_offsets_mapping=True)
    return np.asarray(enc["offset_mapping"])


@pytest.mark.parametrize("by", ["tokens", "words", "sentences"])
@pytest.mark.parametrize("n", [3, 12, 40])
def test_chunks_cover_every_token_once_within_the_cap(raw, text, by, n) -> None:
    offsets = _offsets(raw, text)
    spans = bounded_chunks(offsets, text, n, by)
    assert spans[0][0] == 0 and spans[-1][1] == len(offsets)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert all(0 < e - s <= n for s, e in spans)


def test_word_chunks_split_a_word_only_when_it_is_longer_than_the_cap(raw, text) -> None:
    tokens = raw[0].convert_ids_to_tokens(raw[0](text, add_special_tokens=False)["input_ids"])
    offsets = _offsets(raw, text)
    n = 5
    for s, e in bounded_chunks(offsets, text, n, "words"):
        if e < len(tokens) and tokens[e].startswith("##"):  # a cut inside a word: the chunk lies inside that word
            # (東京は大き: CJK writes no spaces, so a run of it is one word)
            assert e - s == n and text[offsets[s][0]:offsets[e - 1][1]].isalnum()
    naive_inside = sum(tokens[e].startswith("##") for _, e in bounded_chunks(offsets, text, n)[:-1])
    word_inside = sum(tokens[e].startswith("##") for _, e in bounded_chunks(offsets, text, n, "words")[:-1])
    assert naive_inside > 0 and word_inside < naive_inside


def test_sentence_chunks_end_at_sentence_ends_when_a_sentence_fits(raw, text) -> None:
    offsets = _offsets(raw, text)
    pieces = [text[offsets[s][0]:offsets[e - 1][1]] for s, e in bounded_chunks(offsets, text, 40, "sentences")]
    ends = [p for p in pieces[:-1] if re.search(r"[.!?。]$", p)]
    assert len(ends) >= len(pieces) - 2  # at most one over-long sentence cut at a word
    assert pieces[0].startswith("Überblick: Straßenbahnen fahren schnell. 東京は大きい。")  # whole sentences


@pytest.mark.parametrize("by", ["words", "sentences"])
def test_naive_and_late_chunks_map_back_to_the_exact_text(raw, text, by) -> None:
    enc = get_encoder("hf-layers:minilm")
    late = late_chunks(enc, [text], chunk_tokens=16, window=64, overlap=8, chunk_by=by)[0]
    naive = chunk_spans(enc, text, 16, chunk_by=by)
    assert list(late.char_spans) == naive
    offsets = _offsets(raw, text)
    assert list(late.token_spans) == bounded_chunks(offsets, text, 16, by)
    for (a, b), (s, e) in zip(late.token_spans, late.char_spans):
        assert (s, e) == (offsets[a][0], offsets[b - 1][1])
    gaps = [text[e:s] for (_, e), (s, _) in zip(late.char_spans, late.char_spans[1:])]
    assert all(g.strip() == "" for g in gaps)  # nothing but white space is skipped between chunks


def test_whitespace_words_of_a_static_encoder_end_at_sentences() -> None:
    spans = chunk_spans(get_encoder("static"), "One two. Three four five six.", 4, chunk_by="sentences")
    assert spans == [(0, 8), (9, 29)]


def test_an_unknown_boundary_kind_is_one_input_error() -> None:
    with pytest.raises(InputError, match="chunk-by"):
        bounded_chunks([(0, 1)], "a", 2, "pages")
