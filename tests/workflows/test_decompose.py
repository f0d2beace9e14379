"""The decompose workflow: token states of every hf-layers layer from one pass, and their per-layer shares."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.workflows.decompose import TokenDecomposition, decompose_layers, token_states

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

ENCODER = "hf-layers:minilm"


@pytest.fixture(scope="module")
def stsb_sentences(stsb_dev_sentence1: list[str]) -> list[str]:
    """The first 50 ``sentence1`` of STS-B dev."""
    return stsb_dev_sentence1[:50]


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_minilm_on_stsb_shares_add_to_one_on_every_layer(stsb_sentences):
    r = decompose_layers(ENCODER, stsb_sentences)
    assert isinstance(r, TokenDecomposition)
    assert r.layers == tuple(range(7)) and len(r.rows) == 7  # embeddings + 6 blocks of MiniLM-L6
    assert r.n_texts == 50 and r.skip_special and r.method == "means"
    for row in r.rows:
        assert sum(row.shares.values()) == pytest.approx(1.0, abs=1e-9)
        assert row.n_tokens == r.n_tokens and row.n_contexts == 50 and row.d == 384 and not row.proportional
    table = r.table()
    # What MiniLM shows on these sentences (measured, see the report of issue 17): the positional share is above
    # its noise baseline at the embedding layer, and the context share is far larger at the last layer than at
    # the embeddings (≈0.44 against ≈0.10).
    assert table[0]["positional_share"] > 2 * table[0]["chance_positional_share"]
    assert table[6]["context_share"] > 2 * table[0]["context_share"]
    data = r.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert [row["layer"] for row in data["layers"]] == list(range(7)) and "layer" not in data["provenance"]
    ols = decompose_layers(ENCODER, stsb_sentences, layers=[0, -1], method="ols")
    assert ols.layers == (0, 6) and all(sum(row.shares.values()) == pytest.approx(1.0, abs=1e-9) for row in ols.rows)
    assert ols.rows[1].residual_share <= r.rows[6].residual_share + 1e-12  # least squares leaves the least


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_token_states_from_one_pass_equal_encode_tokens_layer_by_layer():
    from repspace.engines.encoders import encode_tokens

    texts = ["A man is playing a flute.", "", "A very small cat sat on the mat.", "Dogs."]
    t = token_states(ENCODER, texts, layers=[0, 3, -1], batch_size=2)
    assert t.layers == (0, 3, 6) and t.n_texts == 4
    for layer, states in zip(t.layers, t.states):
        alone = encode_tokens(ENCODER, texts, layer=layer, normalize=False)
        np.testing.assert_allclose(states, np.concatenate(alone), atol=1e-5)
        lengths = [a.shape[0] for a in alone]
    assert np.bincount(t.contexts, minlength=4).tolist() == lengths and lengths[1] == 0  # the empty text has none
    for i, k in enumerate(lengths):
        assert t.positions[t.contexts == i].tolist() == list(range(1, k + 1))  # [CLS] was position 0

    kept = token_states(ENCODER, texts, layers=[0], skip_special=False)
    assert kept.n_tokens == t.n_tokens + 2 * 4  # [CLS] and [SEP] of each text
    assert kept.positions[kept.contexts == 1].tolist() == [0, 1]

    short = token_states(ENCODER, texts, layers=[-1], max_length=5, skip_special=False)
    assert short.positions.max() == 4 and np.bincount(short.contexts).max() == 5


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_out_of_range_layers_and_special_only_texts_are_refused():
    with pytest.raises(InputError, match="layer 7 is out of range"):
        decompose_layers(ENCODER, ["a cat"], layers=[7])
    with pytest.raises(InputError, match="no tokens besides special tokens"):
        token_states(ENCODER, ["", ""])
    with pytest.raises(InputError, match="no variance"):  # one token: nothing varies
        decompose_layers(ENCODER, ["cat"], layers=[0])


@pytest.mark.parametrize(("call", "message"), [
    (lambda: decompose_layers("minilm", ["a b"]), "gives one vector per text"),
    (lambda: decompose_layers(ENCODER, ["a b"], method="anova"), "method must be one of means, ols"),
    (lambda: token_states(ENCODER, "a cat"), "not a single string"),
    (lambda: token_states(ENCODER, []), "no texts"),
    (lambda: token_states(ENCODER, ["a", 3]), "text 1 is int, not str"),
    (lambda: token_states(ENCODER, ["a"], batch_size=0), "batch_size must be a positive integer, not 0"),
    (lambda: token_states(ENCODER, ["a"], max_length=0), "max_length must be a positive integer, not 0"),
    (lambda: token_states(3, ["a"]), "encoder must be a spec string"),
])
def test_bad_arguments_are_refused_before_any_model_is_loaded(call, message):
    with pytest.raises(InputError) as e:
        call()
    assert message in str(e.value) and "\n" not in str(e.value)
