"""Landmark pooling against a direct transformers run of the landmark-marked inputs; packing; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.encoders.landmark import landmark_pool

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.slow]

#: float32 states of the same input, batched with padding (repspace) and run alone (the reference): the
#: attention sums differ only in rounding, far below 1e-5 on unit-scale MiniLM states.
ATOL = 1e-5


def _reference(raw, text: str, n: int, window: int) -> np.ndarray:
    """The definition written out: chunks of n tokens, [SEP] after each, packed greedily into inputs of at most
    ``window`` tokens ``[CLS] c1 [SEP] c2 [SEP] ...``, each run alone; the mean of the states at every [SEP]."""
    tokenizer, model = raw
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    chunks = [ids[s:s + n] for s in range(0, len(ids), n)]
    inputs, current = [], [tokenizer.cls_token_id]
    for c in chunks:
        if len(current) > 1 and len(current) + len(c) + 1 > window:
            inputs.append(current)
            current = [tokenizer.cls_token_id]
        current = current + c + [tokenizer.sep_token_id]
    inputs.append(current)
    states = []
    for seq in inputs:
        full = torch.tensor([seq])
        with torch.inference_mode():
            out = model(input_ids=full, attention_mask=torch.ones_like(full), output_hidden_states=True)
        marks = [i for i, t in enumerate(seq) if t == tokenizer.sep_token_id]
        states.append(out.hidden_states[-1][0, marks].numpy())
    return np.concatenate(states).mean(axis=0)


@pytest.mark.parametrize("n_sentences, n, window", [(3, 6, 256), (40, 16, 64), (40, 7, 128)])
def test_landmark_vector_equals_the_mean_of_the_landmark_states(raw, stsb_rows, n_sentences, n, window) -> None:
    docs = [" ".join(row[k] for row in stsb_rows[:n_sentences]) for k in (0, 1)]
    got = landmark_pool(get_encoder("hf-layers:minilm"), docs, chunk_tokens=n, window=window, batch_size=3)
    for d, text in enumerate(docs):
        np.testing.assert_allclose(got[d], _reference(raw, text, n, window), atol=ATOL)


def test_landmark_differs_from_mean_pooling_and_normalises_when_asked(stsb_rows) -> None:
    text = " ".join(row[0] for row in stsb_rows[:5])
    plain = landmark_pool(get_encoder("hf-layers:minilm"), [text], chunk_tokens=8)[0]
    unit = landmark_pool(get_encoder("hf-layers:minilm", normalize=True), [text], chunk_tokens=8)[0]
    np.testing.assert_allclose(unit, plain / np.linalg.norm(plain), atol=1e-6)
    mean = get_encoder("hf-layers:minilm").encode([text])[0]
    assert abs(float(mean @ plain) / np.linalg.norm(mean) / np.linalg.norm(plain)) < 0.999


@pytest.mark.parametrize("options, message", [
    ({"chunk_tokens": 0}, "chunk size"),
    ({"chunk_tokens": 255}, "chunk size 255 is above the window"),
    ({"chunk_tokens": 8, "window": 1000}, "window 1000 is above"),
    ({"chunk_tokens": 8, "chunk_by": "pages"}, "chunk-by"),
])
def test_bad_options_are_one_input_error(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        landmark_pool(get_encoder("hf-layers:minilm"), ["a short text"], **options)


def test_an_encoder_without_token_states_is_refused() -> None:
    with pytest.raises(InputError, match="hf-layers"):
        landmark_pool(get_encoder("static"), ["a short text"], chunk_tokens=4)


def test_a_text_of_one_chunk_is_its_last_token_pooled(stsb_rows) -> None:
    """Why a landmark space's queries use "last" pooling: one chunk has one landmark, the closing [SEP]."""
    texts = [row[1] for row in stsb_rows[:6]]
    got = landmark_pool(get_encoder("hf-layers:minilm"), texts, chunk_tokens=60)
    np.testing.assert_allclose(got, get_encoder("hf-layers:minilm", pooling="last").encode(texts), atol=ATOL)
