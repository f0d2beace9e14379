"""``hf-layers``: pooled hidden states, checked against sentence-transformers and raw transformers."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
import torch

from repspace.core.errors import InputError
from repspace.engines.encoders import PROVENANCE_KEYS, LayeredEncoder, get_encoder
from repspace.engines.encoders.hf_layers import pool_hidden_states

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.slow]


def _raw_hidden(raw, text: str) -> tuple[torch.Tensor, ...]:
    """Hidden states of one text, alone (no padding): a tuple of (tokens, dim)."""
    tokenizer, model = raw
    with torch.inference_mode():
        out = model(**tokenizer([text], return_tensors="pt"), output_hidden_states=True)
    return tuple(h[0] for h in out.hidden_states)


def test_last_layer_mean_matches_sentence_transformers(sentences: list[str]) -> None:
    enc = get_encoder("hf-layers:minilm", layer=-1, pooling="mean", normalize=True)
    ours = enc.encode(sentences)
    reference = get_encoder("minilm").encode(sentences)
    cosines = (ours * reference).sum(axis=1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(reference, axis=1)
    assert cosines.min() > 0.9999
    assert ours.dtype == np.float32 and ours.flags["C_CONTIGUOUS"]


def test_encode_layers_has_every_layer_and_matches_single_layers(sentences: list[str]) -> None:
    texts = sentences[:10]
    enc = get_encoder("hf-layers:minilm", layer="all")
    assert isinstance(enc, LayeredEncoder) and enc.n_layers == 7
    stacked = enc.encode_layers(texts, batch_size=4)
    assert stacked.shape == (7, len(texts), 384) and stacked.dtype == np.float32 and stacked.flags["C_CONTIGUOUS"]
    for layer in range(7):
        single = get_encoder("hf-layers:minilm", layer=layer).encode(texts, batch_size=4)
        np.testing.assert_allclose(stacked[layer], single, atol=1e-5, err_msg=f"layer {layer}")
    for layer in range(1, 7):  # layers really differ
        assert not np.allclose(stacked[layer], stacked[layer - 1], atol=1e-3)
    # negative indexes count from the end, and encode() of "all" is the last layer (same batches as `stacked`:
    # other batches pad differently, which moves unnormalised last-layer values by up to 6e-7, measured)
    np.testing.assert_allclose(enc.encode_layers(texts, layers=[-1, 0], batch_size=4), stacked[[6, 0]], atol=1e-6)
    np.testing.assert_allclose(enc.encode(texts, batch_size=4), stacked[6], atol=1e-6)


def test_layers_equal_raw_hidden_states_mean(raw, sentences: list[str]) -> None:
    texts = sentences[:4]
    stacked = get_encoder("hf-layers:minilm").encode_layers(texts)
    for i, text in enumerate(texts):
        hidden = _raw_hidden(raw, text)
        for layer in range(7):
            np.testing.assert_allclose(stacked[layer, i], hidden[layer].mean(dim=0).numpy(), rtol=1e-4, atol=1e-5)


def test_order_is_preserved_despite_length_sorting(mixed_lengths: list[str]) -> None:
    texts = mixed_lengths[:9]
    lengths = [len(t) for t in texts]
    assert lengths != sorted(lengths, reverse=True)  # the input is really reordered by the sort
    enc = get_encoder("hf-layers:minilm", layer=3)
    batched = enc.encode(texts, batch_size=4)
    one_by_one = np.stack([enc.encode([t])[0] for t in texts])
    np.testing.assert_allclose(batched, one_by_one, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def padded_texts(mixed_lengths: list[str]) -> list[str]:
    """Six texts of very different lengths: one batch with much padding."""
    return mixed_lengths[:6]


@pytest.fixture(scope="module")
def raw_hidden(raw, padded_texts: list[str]) -> list[tuple[torch.Tensor, ...]]:
    return [_raw_hidden(raw, text) for text in padded_texts]


@pytest.mark.parametrize("pooling", ["cls", "last", "max"])
def test_pooling_matches_raw_model_in_padded_batches(padded_texts: list[str], raw_hidden, pooling: str) -> None:
    enc = get_encoder("hf-layers:minilm", pooling=pooling)
    got = enc.encode_layers(padded_texts, layers=[2, -1], batch_size=len(padded_texts))
    for row, layer in enumerate([2, -1]):
        for i in range(len(padded_texts)):
            hidden = raw_hidden[i][layer]  # (tokens, dim), computed alone: no padding
            expected = {"cls": hidden[0], "last": hidden[-1], "max": hidden.max(dim=0).values}[pooling]
            np.testing.assert_allclose(got[row, i], expected.numpy(), rtol=1e-4, atol=1e-4, err_msg=f"{layer=} {i=}")


def test_left_padding_is_handled(raw, mixed_lengths: list[str]) -> None:
    """With a left-padding tokenizer, cls/last still pick the first/last real token of each row."""
    texts = mixed_lengths[:5]
    tokenizer, model = raw
    encoders = {p: get_encoder("hf-layers:minilm", pooling=p) for p in ("cls", "last", "mean", "max")}
    shared_tokenizer = encoders["cls"].loaded.tokenizer
    before = shared_tokenizer.padding_side
    shared_tokenizer.padding_side = "left"
    try:
        got = {p: enc.encode(texts, batch_size=len(texts)) for p, enc in encoders.items()}
    finally:
        shared_tokenizer.padding_side = before
    tokenizer.padding_side = "left"
    try:
        batch = tokenizer(texts, padding=True, return_tensors="pt")
    finally:
        tokenizer.padding_side = before
    assert (batch["attention_mask"][:, 0] == 0).any()  # some rows really are left-padded
    with torch.inference_mode():
        hidden = model(**batch, output_hidden_states=True).hidden_states[-1]
    for i in range(len(texts)):
        real = [t for t, m in enumerate(batch["attention_mask"][i].tolist()) if m == 1]
        rows = hidden[i, real]
        np.testing.assert_allclose(got["cls"][i], rows[0].numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got["last"][i], rows[-1].numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got["mean"][i], rows.mean(dim=0).numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got["max"][i], rows.max(dim=0).values.numpy(), rtol=1e-4, atol=1e-4)


def test_pool_hidden_states_against_loops() -> None:
    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(4, 6, 3, generator=generator)
    mask = torch.tensor(
        [
            [1, 1, 1, 1, 1, 1],  # full
            [1, 1, 1, 0, 0, 0],  # right padding
            [0, 0, 1, 1, 1, 1],  # left padding
            [0, 0, 0, 0, 0, 0],  # nothing
        ]
    )
    for pooling in ("mean", "cls", "last", "max"):
        got = pool_hidden_states(hidden, mask, pooling)
        for b in range(4):
            real = [t for t in range(6) if mask[b, t]]
            if not real:
                assert torch.all(got[b] == 0), pooling
                continue
            rows = hidden[b, real]
            expected = {"mean": rows.mean(0), "cls": rows[0], "last": rows[-1], "max": rows.max(0).values}[pooling]
            torch.testing.assert_close(got[b], expected, msg=f"{pooling} row {b}")
    with pytest.raises(InputError):
        pool_hidden_states(hidden, mask, "median")


def test_progress_and_empty_input(sentences: list[str]) -> None:
    enc = get_encoder("hf-layers:minilm")
    calls: list[tuple[str, int, int]] = []
    enc.encode(sentences, batch_size=8, progress=lambda *a: calls.append(a))
    n = len(sentences)
    assert calls == [("encode", min(i * 8, n), n) for i in range(8)] and n == 50
    calls.clear()
    enc.encode_layers(sentences[:10], layers=[1, 2], batch_size=4, progress=lambda *a: calls.append(a))
    assert calls == [("encode", 0, 10), ("encode", 4, 10), ("encode", 8, 10), ("encode", 10, 10)]
    assert enc.encode([]).shape == (0, 384)
    assert enc.encode_layers([], layers=[0, 1]).shape == (2, 0, 384)


def test_bad_layers_raise_input_error() -> None:
    for layer in (7, -8, 99):
        with pytest.raises(InputError, match="out of range") as info:
            get_encoder("hf-layers:minilm", layer=layer)
        assert "\n" not in str(info.value)
    for layer in ("top", 1.5, True):
        with pytest.raises(InputError):
            get_encoder("hf-layers:minilm", layer=layer)
    enc = get_encoder("hf-layers:minilm")
    with pytest.raises(InputError, match="out of range"):
        enc.encode_layers(["a"], layers=[7])
    with pytest.raises(InputError):
        enc.encode_layers(["a"], layers=[])
    with pytest.raises(InputError):
        get_encoder("hf-layers:minilm", pooling="median")
    with pytest.raises(InputError):
        get_encoder("hf-layers:minilm", max_length=0)


def test_provenance(minilm_dir: Path) -> None:
    enc = get_encoder("hf-layers:minilm", layer=-2, pooling="cls", normalize=True, prompt="q: ", max_length=64)
    prov = enc.provenance()
    assert tuple(prov) == PROVENANCE_KEYS
    assert prov["encoder"] == "hf-layers:minilm"
    assert prov["encoder_version"] == f"transformers=={metadata.version('transformers')}"
    assert prov["model"] == str(minilm_dir)
    assert prov["model_fingerprint"] == get_encoder("minilm").provenance()["model_fingerprint"]
    assert prov["layer"] == 5 and prov["pooling"] == "cls" and prov["normalize"] is True
    assert prov["prompt"] == "q: " and prov["max_length"] == 64
    assert enc.provenance(layer=0)["layer"] == 0
    default = get_encoder("hf-layers:minilm").provenance()
    assert default["layer"] == 6 and default["pooling"] == "mean" and default["normalize"] is False
    assert default["max_length"] == 512 and default["prompt"] is None


def test_options_share_one_loaded_model() -> None:
    a = get_encoder("hf-layers:minilm", pooling="cls")
    b = get_encoder("hf-layers:minilm", pooling="max")
    assert a is not b
    assert a.loaded is b.loaded
