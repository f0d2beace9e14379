"""Pooling recipes: each recipe's vectors against a direct transformers computation; recipe parsing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.encoders.pooling_recipes import encode_recipes, parse_recipes

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.slow]

#: The same float32 forward pass, batched in another order and padding (repspace sorts by length): rounding only.
ATOL = 1e-5


def _reference(raw, texts: list[str]) -> dict[str, np.ndarray]:
    """Each recipe computed with transformers alone: every text run alone (no padding), pooled by hand."""
    tokenizer, model = raw
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("mean", "cls", "max", "last", "first-last", "mix:0+6",
                                                          "max@2")}
    for text in texts:
        batch = tokenizer([text], return_tensors="pt", truncation=True, max_length=512)
        with torch.inference_mode():
            h = [s[0].double().numpy() for s in model(**batch, output_hidden_states=True).hidden_states]
        out["mean"].append(h[6].mean(axis=0))
        out["cls"].append(h[6][0])
        out["max"].append(h[6].max(axis=0))
        out["last"].append(h[6][-1])
        out["first-last"].append(((h[1] + h[6]) / 2).mean(axis=0))
        out["mix:0+6"].append(((h[0] + h[6]) / 2).mean(axis=0))
        out["max@2"].append(h[2].max(axis=0))
    return {k: np.stack(v) for k, v in out.items()}


def test_every_recipe_equals_a_direct_transformers_computation(raw, mixed_lengths: list[str]) -> None:
    enc = get_encoder("hf-layers:minilm")
    names = "mean,cls,max,last,first-last,mix:0+6,max@2"
    got = encode_recipes(enc, mixed_lengths, parse_recipes(names, enc.n_layers), batch_size=4)
    expected = _reference(raw, mixed_lengths)
    assert list(got) == names.split(",")
    for name, vectors in got.items():
        assert vectors.shape == (len(mixed_lengths), 384) and vectors.dtype == np.float32
        np.testing.assert_allclose(vectors, expected[name], atol=ATOL, err_msg=name)


@pytest.mark.parametrize("text, message", [
    ("mean,avg", "unknown pooling recipe 'avg'"),
    ("mix:0+9", "layer 9 is out of range"),
    ("mean,mean", "named twice"),
    ("cls@x", "not a layer number"),
    (" , ", "no pooling recipe"),
])
def test_bad_recipes_are_one_input_error(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_recipes(text, 7)
