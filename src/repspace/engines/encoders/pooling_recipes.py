"""Pooling recipes: several ways to turn one forward pass's token states into sentence vectors.

A recipe names the hidden states it averages and how it pools their tokens
(:func:`~repspace.engines.encoders.hf_layers.pool_hidden_states`, padding excluded, special tokens included as
sentence-transformers does):

==================  ===============================================================================
``mean``            masked mean of the last layer (what all-MiniLM-L6-v2 was trained with)
``cls``             the first token (``[CLS]``) of the last layer
``max``             element-wise maximum over the last layer's tokens
``last``            the last real token (``[SEP]`` for BERT) of the last layer
``first-last``      mean of layer 1 (the first block's output) and the last layer, then masked mean
                    (SimCSE's and BERT-whitening's "first-last avg"; ``mix:0+6`` takes the embedding output)
``mix:A+B+...``     mean of layers A, B, ... then masked mean
``POOL@L``          pooling ``POOL`` (mean, cls, max, last) of layer ``L``
==================  ===============================================================================

:func:`encode_recipes` computes every recipe from one forward pass per batch: a batch's token states of all
layers live only while that batch is pooled.

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("hf-layers:minilm")
>>> out = encode_recipes(enc, ["a cat", "two dogs run"], parse_recipes("mean,first-last,cls@3", enc.n_layers))
>>> {name: v.shape for name, v in out.items()}
{'mean': (2, 384), 'first-last': (2, 384), 'cls@3': (2, 384)}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.printable import excerpt
from repspace.engines.encoders.hf_layers import POOLINGS, pool_hidden_states

__all__ = ["DEFAULT_RECIPES", "PoolingRecipe", "encode_recipes", "parse_recipes"]

#: The recipes compared when none are named.
DEFAULT_RECIPES = "mean,cls,max,last,first-last"


@dataclass(frozen=True)
class PoolingRecipe:
    """One recipe: the layers whose token states are averaged, and the pooling of their tokens.

    Examples
    --------
    >>> PoolingRecipe("first-last", "mean", (1, 6)).to_dict()
    {'name': 'first-last', 'pooling': 'mean', 'layers': [1, 6]}
    """

    name: str
    pooling: str
    layers: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "pooling": self.pooling, "layers": list(self.layers)}

    def pool(self, hidden: Sequence[Any], mask: Any) -> Any:
        """Pool one batch: ``hidden`` the model's hidden states (one ``(B, T, d)`` tensor per layer)."""
        states = hidden[self.layers[0]]
        if len(self.layers) > 1:
            states = sum(hidden[i] for i in self.layers) / len(self.layers)
        return pool_hidden_states(states, mask, self.pooling)


def _layer(text: str, n_layers: int, recipe: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"recipe {excerpt(recipe)}: {excerpt(text)} is not a layer number") from None
    if not -n_layers <= value < n_layers:
        raise InputError(f"recipe {excerpt(recipe)}: layer {value} is out of range: the model has layers "
                         f"0..{n_layers - 1}")
    return value % n_layers


def parse_recipes(text: str, n_layers: int) -> tuple[PoolingRecipe, ...]:
    """Recipes from a comma-separated list (see the module table); each name once.

    Examples
    --------
    >>> [r.layers for r in parse_recipes("mean,first-last,mix:0+3+-1,max@2", 7)]
    [(6,), (1, 6), (0, 3, 6), (2,)]
    >>> try:
    ...     parse_recipes("mean,avg", 7)
    ... except InputError as e:
    ...     print(e)
    unknown pooling recipe 'avg': use mean, cls, max, last, first-last, mix:A+B or POOL@L
    """
    last = n_layers - 1
    out: list[PoolingRecipe] = []
    for name in (part.strip().lower() for part in text.split(",")):
        if not name:
            continue
        if name in POOLINGS:
            recipe = PoolingRecipe(name, name, (last,))
        elif name == "first-last":
            recipe = PoolingRecipe(name, "mean", (1, last))
        elif name.startswith("mix:"):
            layers = tuple(dict.fromkeys(_layer(p, n_layers, name) for p in name[4:].split("+")))
            recipe = PoolingRecipe(name, "mean", layers)
        elif "@" in name and name.split("@", 1)[0] in POOLINGS:
            pooling, layer = name.split("@", 1)
            recipe = PoolingRecipe(name, pooling, (_layer(layer, n_layers, name),))
        else:
            raise InputError(f"unknown pooling recipe {excerpt(name)}: use mean, cls, max, last, first-last, "
                             "mix:A+B or POOL@L")
        if any(r.name == recipe.name for r in out):
            raise InputError(f"pooling recipe {excerpt(name)} is named twice")
        out.append(recipe)
    if not out:
        raise InputError("no pooling recipe: name at least one (e.g. mean,cls,first-last)")
    return tuple(out)


def encode_recipes(encoder: Any, texts: Sequence[str], recipes: Sequence[PoolingRecipe], *,
                   batch_size: int = 32) -> dict[str, np.ndarray]:
    """Every recipe's vectors of ``texts`` (float32, input order), from one forward pass per batch.

    ``encoder`` is an ``hf-layers`` encoder (or its spec); its ``max_length`` and ``prompt`` apply, its
    ``pooling``, ``layer`` and ``normalize`` do not.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> enc = get_encoder("hf-layers:minilm")
    >>> out = encode_recipes(enc, ["a cat"], parse_recipes("mean,mean@-1", enc.n_layers))
    >>> bool(np.array_equal(out["mean"], out["mean@-1"]))
    True
    """
    import torch

    from repspace.engines.encoders._batches import check_batch_size, check_texts, encoding_errors
    from repspace.engines.encoders.tokens import _as_hf_layers

    enc = _as_hf_layers(encoder)
    items = check_texts(texts)
    check_batch_size(batch_size)
    out = {r.name: np.zeros((len(items), enc.dim), np.float32) for r in recipes}
    with torch.inference_mode():
        for index, hidden, mask, _ in enc.hidden_batches(items, batch_size):
            with encoding_errors(enc.spec):
                for r in recipes:
                    out[r.name][index] = r.pool(hidden, mask).float().numpy()
    return out
