"""Pooling recipes: each recipe's vectors against a direct transformers computation; recipe parsing."""

from __future__ import annotations

import numpy as np
import pytest
from _direct_pooling import DIRECT_RECIPES, direct_recipes

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.encoders.pooling_recipes import encode_recipes, parse_recipes

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.slow]

#: The same float32 forward pass, batched in another order and padding (repspace sorts by length): rounding only.
ATOL = 1e-5


def test_every_recipe_equals_a_direct_transformers_computation(raw, mixed_lengths: list[str]) -> None:
    enc = get_encoder("hf-layers:minilm")
    names = ",".join(DIRECT_RECIPES)
    got = encode_recipes(enc, mixed_lengths, parse_recipes(names, enc.n_layers), batch_size=4)
    expected = direct_recipes(raw, mixed_lengths)
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
