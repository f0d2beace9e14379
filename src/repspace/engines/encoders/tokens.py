"""Token-level vectors: one vector per token from an ``hf-layers`` encoder.

A late-interaction space (ColBERT, and MUVERA's encodings of it in
:mod:`repspace.engines.search.muvera`) holds a *set* of vectors per item, one per
token, instead of one pooled vector. :func:`encode_tokens` returns them from
the hidden states of one layer of an
:class:`~repspace.engines.encoders.hf_layers.HFLayersEncoder`, re-using the tokenizer,
model, ``max_length`` and ``prompt`` that encoder has loaded (the weights are
loaded once per process, shared with its pooled :meth:`encode`).

What is written here by hand, because no library does it: transformers
returns padded per-token hidden states of a batch, and
sentence-transformers' ``output_value="token_embeddings"`` only gives the last
layer of its own pipeline, with special tokens. Cutting a padded batch into
one array per text, at any layer, without ``[CLS]``/``[SEP]`` and padding,
and L2-normalising each token as ColBERT does, is the few lines below.

A caution: the bundled ``hf-layers:minilm`` (all-MiniLM-L6-v2) is a
mean-pooling sentence model, not a ColBERT model. It was never trained for
late interaction, so max-sim over its token states is a *baseline* for
multi-vector search (useful to test the machinery and to compare with its own
pooled vectors), not ColBERT-quality retrieval.

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> from repspace.engines.encoders.tokens import encode_tokens
>>> enc = get_encoder("hf-layers:minilm")
>>> sets = encode_tokens(enc, ["A cat.", "A very small cat sat on the mat."])
>>> [s.shape for s in sets]
[(3, 384), (9, 384)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from repspace.core.errors import InputError
from repspace.core.progress import Progress, Tally
from repspace.engines.encoders._batches import (
    check_batch_size,
    check_texts,
)
from repspace.engines.encoders.base import Encoder

if TYPE_CHECKING:
    from repspace.engines.encoders.hf_layers import HFLayersEncoder

__all__ = ["encode_tokens"]


def _as_hf_layers(encoder: Encoder | str) -> HFLayersEncoder:
    """The ``hf-layers`` encoder itself, or the one its spec names; anything else is refused."""
    from repspace.engines.encoders.hf_layers import HFLayersEncoder
    from repspace.engines.encoders.registry import get_encoder

    if isinstance(encoder, str):
        encoder = get_encoder(encoder)
    if not isinstance(encoder, HFLayersEncoder):
        spec = getattr(encoder, "spec", type(encoder).__name__)
        raise InputError(f"token vectors need an hf-layers encoder (e.g. 'hf-layers:minilm'), got {spec!r}")
    return encoder


def encode_tokens(
    encoder: Encoder | str,
    texts: Sequence[str],
    *,
    layer: int = -1,
    batch_size: int = 32,
    normalize: bool = True,
    skip_special: bool = True,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """Encode texts into one vector per token, from the hidden states of one layer.

    Texts are tokenised as the encoder's pooled :meth:`encode` does them
    (its ``prompt`` prepended, truncated to its ``max_length``), sorted by
    length into batches, and returned in input order.

    Parameters
    ----------
    encoder : HFLayersEncoder or str
        An ``hf-layers`` encoder or its spec (``"hf-layers:minilm"``); its
        ``layer``, ``pooling`` and ``normalize`` options are not used here.
    texts : Sequence[str]
        The texts (a single ``str`` is refused).
    layer : int, optional
        The hidden state to return: ``0`` the embedding output, ``-1`` (the
        default) the last layer.
    batch_size : int, optional
        Texts per forward pass.
    normalize : bool, optional
        Scale every token vector to unit length (ColBERT's convention, which
        makes max-sim a sum of cosines). Zero vectors stay zero.
    skip_special : bool, optional
        Leave out the tokenizer's special tokens (``[CLS]``, ``[SEP]``...).
        Padding is always left out.
    progress : Progress or None, optional
        ``progress("encode", done, total)`` as texts finish.

    Returns
    -------
    list of numpy.ndarray
        One C-contiguous ``float32`` array of shape ``(n_tokens_i, dim)`` per
        text; ``n_tokens_i`` may be 0 (an empty text with ``skip_special``).

    Raises
    ------
    InputError
        If the encoder is not an ``hf-layers`` one, the layer is out of
        range, or ``texts``/``batch_size`` are invalid.
    EncoderError
        If the model fails while encoding.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> enc = get_encoder("hf-layers:minilm")
    >>> with_specials = encode_tokens(enc, ["A cat."], skip_special=False, normalize=False)[0]
    >>> without = encode_tokens(enc, ["A cat."])[0]
    >>> with_specials.shape[0] - without.shape[0]  # [CLS] and [SEP]
    2
    >>> round(float(np.linalg.norm(without[0])), 4)
    1.0
    """
    import torch

    enc = _as_hf_layers(encoder)
    items = check_texts(texts)
    check_batch_size(batch_size)
    index_of_layer = enc.resolve_layer(layer)
    out: list[np.ndarray | None] = [None] * len(items)
    tick = Tally(progress, "encode", len(items))
    with torch.inference_mode():
        # The model runs of the encoder's pooled encode() (HFLayersEncoder.hidden_batches), loaded once per process.
        for index, hidden, mask, special in enc.hidden_batches(items, batch_size, special_tokens=True):
            states = hidden[index_of_layer].float().numpy()  # (B, T, dim)
            keep = mask.numpy() > 0
            if skip_special:
                keep &= special.numpy() == 0
            for row, i in enumerate(index):
                tokens = np.ascontiguousarray(states[row][keep[row]], dtype=np.float32)
                if normalize:
                    norms = np.linalg.norm(tokens, axis=1, keepdims=True)
                    tokens = np.divide(tokens, norms, out=np.zeros_like(tokens), where=norms > 0)
                out[i] = tokens
            tick(len(index))
    return [t if t is not None else np.zeros((0, enc.dim), np.float32) for t in out]
