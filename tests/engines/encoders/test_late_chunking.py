"""Late chunking: chunk vectors against a direct transformers run of the window, windows, offsets, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.encoders.late_chunking import late_chunks, token_chunks, token_windows, window_owners

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.slow]

#: float32 states of the same window, run once batched with padding (here) and once alone (the reference):
#: the attention sums differ only in rounding, far below 1e-5 on unit-scale MiniLM states.
ATOL = 1e-5


@pytest.fixture(scope="module")
def document(stsb_rows: list[tuple[str, str, float]]) -> str:
    """A long real document: 40 STS-B sentences (about 500 tokens), longer than several windows."""
    return " ".join(row[0] for row in stsb_rows[:40])


def _window_states(raw, ids: list[int]) -> np.ndarray:
    """The last layer's states of ``[CLS] ids [SEP]`` run alone through transformers, without the specials."""
    tokenizer, model = raw
    full = torch.tensor([[tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]])
    with torch.inference_mode():
        out = model(input_ids=full, attention_mask=torch.ones_like(full), output_hidden_states=True)
    return out.hidden_states[-1][0, 1:-1].numpy()


def test_chunks_equal_the_mean_of_their_window_states(raw, document: str) -> None:
    tokenizer, _ = raw
    ids = tokenizer(document, add_special_tokens=False)["input_ids"]
    window, overlap, n = 64, 16, 8
    doc = late_chunks(get_encoder("hf-layers:minilm"), [document], chunk_tokens=n, window=window, overlap=overlap,
                      batch_size=3)[0]
    assert len(ids) > 4 * window and doc.vectors.shape == (-(-len(ids) // n), 384)
    step, checked = window - 2 - overlap, 0
    for s in range(0, len(ids), step):  # window (s, s + 62); it owns the tokens half an overlap away from its cuts
        e = min(s + window - 2, len(ids))
        inner_lo, inner_hi = (s + overlap // 2 + 1 if s > 0 else 0), (e - overlap // 2 - 1 if e < len(ids) else e)
        states = _window_states(raw, ids[s:e])
        for k, (a, b) in enumerate(doc.token_spans):
            if inner_lo <= a and b <= inner_hi:
                np.testing.assert_allclose(doc.vectors[k], states[a - s:b - s].mean(axis=0), atol=ATOL)
                checked += 1
        if e == len(ids):
            break
    assert checked >= len(doc.token_spans) // 2  # most chunks lie wholly inside one window's own part


def test_a_document_within_one_window_is_one_run(raw, stsb_rows) -> None:
    text = " ".join(row[0] for row in stsb_rows[:3])
    tokenizer, _ = raw
    states = _window_states(raw, tokenizer(text, add_special_tokens=False)["input_ids"])
    doc = late_chunks(get_encoder("hf-layers:minilm"), [text], chunk_tokens=5)[0]
    expected = np.stack([states[a:b].mean(axis=0) for a, b in doc.token_spans])
    np.testing.assert_allclose(doc.vectors, expected, atol=ATOL)


@pytest.mark.parametrize("n, size, overlap", [(1, 5, 0), (62, 62, 16), (63, 62, 16), (500, 62, 16), (37, 4, 3)])
def test_windows_cover_every_token_and_owners_sit_inside(n: int, size: int, overlap: int) -> None:
    windows = token_windows(n, size, overlap)
    covered = np.zeros(n, dtype=int)
    for s, e in windows:
        covered[s:e] += 1
        assert 0 < e - s <= size
    assert covered.min() >= 1 and windows[0][0] == 0 and windows[-1][1] == n
    assert all(a[1] - b[0] == overlap for a, b in zip(windows, windows[1:]))
    owners = window_owners(n, windows)
    assert all(windows[w][0] <= t < windows[w][1] for t, w in enumerate(owners))
    assert np.all(np.diff(owners) >= 0)  # each window owns one contiguous run of tokens


def test_offsets_map_back_to_the_exact_text(raw, document: str) -> None:
    tokenizer, _ = raw
    text = "Überblick: 東京 is a city.  " + document  # non-ASCII and double spaces in the offsets
    tokens = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = tokens["input_ids"], tokens["offset_mapping"]
    doc = late_chunks(get_encoder("hf-layers:minilm"), [text], chunk_tokens=7, window=48, overlap=8)[0]
    assert doc.token_spans == tuple(token_chunks(len(ids), 7))
    pieces = doc.texts(text)
    whole_words = 0
    for (a, b), piece in zip(doc.token_spans, pieces):
        assert piece == text[offsets[a][0]:offsets[b - 1][1]]
        if not tokenizer.convert_ids_to_tokens(ids[a]).startswith("##"):  # a chunk that starts a word
            assert tokenizer(piece, add_special_tokens=False)["input_ids"] == ids[a:b]
            whole_words += 1
    assert whole_words > len(pieces) // 2
    ends = [0] + [e for _, e in doc.char_spans]
    gaps = [text[ends[k]:s] for k, (s, _) in enumerate(doc.char_spans)]
    assert all(g.strip() == "" for g in gaps) and text[ends[-1]:].strip() == ""


@pytest.mark.parametrize("options, message", [
    ({"chunk_tokens": 0}, "chunk size"),
    ({"chunk_tokens": 255}, "chunk size 255 is above the window"),
    ({"chunk_tokens": 8, "window": 1000}, "window 1000 is above"),
    ({"chunk_tokens": 8, "window": 32, "overlap": 30}, "overlap"),
])
def test_bad_options_are_one_input_error(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        late_chunks(get_encoder("hf-layers:minilm"), ["a short text"], **options)


def test_an_encoder_without_token_states_is_refused() -> None:
    with pytest.raises(InputError, match="hf-layers"):
        late_chunks(get_encoder("static"), ["a short text"], chunk_tokens=4)
