"""``encode_tokens``: per-token hidden states, checked against the tokenizer, raw transformers and pooled encode."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.encoders.tokens import encode_tokens

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.slow]


@pytest.fixture(scope="module")
def texts(mixed_lengths: list[str]) -> list[str]:
    """Short and long texts, one batch of them padded a lot."""
    return mixed_lengths[:7]


def test_token_counts_equal_the_tokenizers_without_specials(raw, texts: list[str]) -> None:
    tokenizer, _ = raw
    enc = get_encoder("hf-layers:minilm", max_length=24)
    sets = encode_tokens(enc, texts + [""], batch_size=4)
    for text, tokens in zip(texts + [""], sets):
        ids = tokenizer(text, truncation=True, max_length=24)["input_ids"]
        assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
        assert tokens.shape == (len(ids) - 2, 384), text
        assert tokens.dtype == np.float32 and tokens.flags["C_CONTIGUOUS"]
    assert max(len(s) for s in sets) == 22  # the long texts really were truncated to max_length
    assert sets[-1].shape == (0, 384)  # an empty text has no token but its specials


def test_mean_of_last_layer_states_is_the_pooled_encoding(texts: list[str]) -> None:
    """Independent check of the token states: their masked mean is what hf-layers' mean pooling returns."""
    sets = encode_tokens(get_encoder("hf-layers:minilm"), texts, layer=-1, skip_special=False, normalize=False)
    pooled = get_encoder("hf-layers:minilm", layer=-1, pooling="mean", normalize=False).encode(texts)
    means = np.stack([s.mean(axis=0) for s in sets])
    np.testing.assert_allclose(means, pooled, rtol=0, atol=1e-5)
    # and at an inner layer
    inner = encode_tokens(get_encoder("hf-layers:minilm"), texts[:3], layer=2, skip_special=False, normalize=False)
    pooled2 = get_encoder("hf-layers:minilm", layer=2, pooling="mean", normalize=False).encode(texts[:3])
    np.testing.assert_allclose(np.stack([s.mean(axis=0) for s in inner]), pooled2, rtol=0, atol=1e-5)


def test_tokens_equal_raw_hidden_states_in_order(raw, texts: list[str]) -> None:
    """Each text alone through raw transformers: the same rows, in order, minus [CLS]/[SEP], unit length."""
    tokenizer, model = raw
    enc = get_encoder("hf-layers:minilm")
    plain = encode_tokens(enc, texts, skip_special=False, normalize=False, batch_size=len(texts))
    unit = encode_tokens(enc, texts, batch_size=3)
    for text, got, got_unit in zip(texts[:3], plain, unit):
        with torch.inference_mode():
            batch = tokenizer([text], truncation=True, max_length=enc.max_length, return_tensors="pt")
            hidden = model(**batch, output_hidden_states=True).hidden_states[-1][0].numpy()
        np.testing.assert_allclose(got, hidden, rtol=1e-4, atol=1e-4)
        inner = hidden[1:-1] / np.linalg.norm(hidden[1:-1], axis=1, keepdims=True)
        np.testing.assert_allclose(got_unit, inner, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.linalg.norm(got_unit, axis=1), 1.0, atol=1e-5)


def test_batching_does_not_change_the_tokens(texts: list[str]) -> None:
    enc = get_encoder("hf-layers:minilm")
    one_batch = encode_tokens(enc, texts, batch_size=len(texts))
    small = encode_tokens(enc, texts, batch_size=2)
    for a, b in zip(one_batch, small):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_progress_spec_string_and_errors(texts: list[str]) -> None:
    calls: list[tuple[str, int, int]] = []
    sets = encode_tokens("hf-layers:minilm", texts[:5], batch_size=2, progress=lambda *a: calls.append(a))
    assert calls == [("encode", 0, 5), ("encode", 2, 5), ("encode", 4, 5), ("encode", 5, 5)] and len(sets) == 5
    assert encode_tokens("hf-layers:minilm", []) == []
    with pytest.raises(InputError, match="hf-layers"):
        encode_tokens(get_encoder("static"), ["a cat"])
    with pytest.raises(InputError, match="out of range"):
        encode_tokens("hf-layers:minilm", ["a cat"], layer=7)
    with pytest.raises(InputError, match="single string"):
        encode_tokens("hf-layers:minilm", "a cat")
    with pytest.raises(InputError, match="batch_size"):
        encode_tokens("hf-layers:minilm", ["a cat"], batch_size=0)
