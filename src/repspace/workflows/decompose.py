"""Position / context / residual shares of every layer of an ``hf-layers`` encoder, from one forward pass.

:func:`decompose_layers` runs the encoder once over the texts (one forward pass
per batch, every hidden state kept), cuts the padded batches into token rows —
padding always dropped, special tokens (``[CLS]``, ``[SEP]``...) optionally —
labels each token by its *position* (its index in the sequence the model saw)
and its *context* (the index of its text), and hands each layer's token states
to :func:`repspace.engines.interpret.decompose.mean_decomposition_layers`.

Where the token states come from
--------------------------------
No public encoder call returns the token states of *every* layer:
:meth:`~repspace.engines.encoders.base.LayeredEncoder.encode_layers` pools
them, and :func:`repspace.engines.encoders.tokens.encode_tokens` returns one
layer per call (``L`` forward passes for ``L`` layers). :func:`token_states`
therefore runs the tokenizer and the transformers model that the
:class:`~repspace.engines.encoders.hf_layers.HFLayersEncoder` has loaded (its
``loaded`` property, as ``encode_tokens`` does; the weights are loaded once
per process and shared), with the same tokenisation as ``encode_tokens``: the
encoder's ``prompt`` prepended, truncation to its ``max_length``, texts sorted
by length into batches. Token vectors are the raw hidden states (not
normalised).

Examples
--------
>>> r = decompose_layers("hf-layers:minilm", ["A cat sat.", "A dog ran far away.", "Birds sing."])
>>> r.layers, r.n_texts
((0, 1, 2, 3, 4, 5, 6), 3)
>>> all(abs(sum(row.shares.values()) - 1) < 1e-9 for row in r.rows)
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import EncoderError, InputError, RepspaceError
from repspace.core.progress import Progress, Tally
from repspace.engines.interpret.decompose import MeanDecomposition, mean_decomposition_layers

__all__ = ["TokenDecomposition", "TokenStates", "decompose_layers", "token_states"]


@dataclass(frozen=True, eq=False)
class TokenStates:
    """The token hidden states of several layers of an encoder, with each token's position and text.

    Attributes
    ----------
    layers : tuple of int
        The layer indexes (0 = the embedding output).
    states : tuple of ndarray
        One ``(N, dim)`` float32 array per layer; row ``i`` is the same token
        in every layer. Rows are in text order, then token order.
    positions : ndarray of shape (N,)
        Each token's index in the sequence the model saw (0 = the first
        token, ``[CLS]`` for BERT-like models; with ``skip_special`` the
        remaining tokens keep their index, so positions start at 1 there).
    contexts : ndarray of shape (N,)
        The index of each token's text in ``texts``.
    n_texts : int
    skip_special : bool

    Examples
    --------
    What :func:`token_states` returns for two texts of 3 and 2 tokens, two layers of a 4-d model
    (built here from arrays: the function itself runs an ``hf-layers`` transformer):

    >>> rng = np.random.default_rng(0)
    >>> ts = TokenStates(layers=(0, 6), states=(rng.standard_normal((5, 4)), rng.standard_normal((5, 4))),
    ...                  positions=np.array([0, 1, 2, 0, 1]), contexts=np.array([0, 0, 0, 1, 1]),
    ...                  n_texts=2, skip_special=False)
    >>> ts.n_tokens, [s.shape for s in ts.states], np.bincount(ts.contexts).tolist()
    (5, [(5, 4), (5, 4)], [3, 2])
    """

    layers: tuple[int, ...]
    states: tuple[np.ndarray, ...]
    positions: np.ndarray
    contexts: np.ndarray
    n_texts: int
    skip_special: bool

    @property
    def n_tokens(self) -> int:
        """The number of token rows."""
        return int(self.positions.size)


@dataclass(frozen=True, eq=False)
class TokenDecomposition:
    """The mean decomposition of every chosen layer of one encoder's token states on one set of texts.

    Attributes
    ----------
    encoder : str
        The encoder spec.
    layers : tuple of int
        Layer indexes (0 = embeddings).
    rows : tuple of MeanDecomposition
        One per layer, in the same order.
    method : str
        ``means`` or ``ols``.
    n_texts, n_tokens : int
        Texts, and token rows decomposed (padding, and special tokens when
        ``skip_special``, left out).
    skip_special : bool
    provenance : dict
        The encoder's provenance (without the layer).

    Examples
    --------
    As :func:`decompose_layers` builds it, here from token states made of arrays: layer 0 is a
    per-position vector alone, layer 1 a per-text one alone.

    >>> pos, ctx = np.tile(np.arange(3), 4), np.repeat(np.arange(4), 3)
    >>> rng = np.random.default_rng(0)
    >>> states = [rng.standard_normal((3, 4))[pos], rng.standard_normal((4, 4))[ctx]]
    >>> r = mean_decomposition_layers(states, pos, ctx, layers=(0, 1))
    >>> d = TokenDecomposition(encoder="hf-layers:tiny", layers=r.layers, rows=r.rows, method="means",
    ...                        n_texts=4, n_tokens=12, skip_special=False, provenance={})
    >>> [(row["layer"], round(row["positional_share"], 6) + 0.0, round(row["context_share"], 6) + 0.0) for row in d.table()]
    [(0, 1.0, 0.0), (1, 0.0, 1.0)]
    >>> d.to_dict()["n_tokens"], len(d.to_dict()["layers"])
    (12, 2)
    """

    encoder: str
    layers: tuple[int, ...]
    rows: tuple[MeanDecomposition, ...]
    method: str
    n_texts: int
    n_tokens: int
    skip_special: bool
    provenance: dict[str, Any]

    def table(self) -> list[dict[str, Any]]:
        """``[{"layer": i, ...MeanDecomposition.to_dict()...}, ...]``, one row per layer."""
        return [{"layer": int(layer), **row.to_dict()} for layer, row in zip(self.layers, self.rows)]

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "method", "n_texts", "n_tokens", "skip_special", "provenance", "layers": [...]}``."""
        return {"encoder": self.encoder, "method": self.method, "n_texts": int(self.n_texts),
                "n_tokens": int(self.n_tokens), "skip_special": bool(self.skip_special),
                "provenance": dict(self.provenance), "layers": self.table()}


@contextmanager
def _encoding_errors(spec: str) -> Iterator[None]:
    """Any non-repspace exception of the model or tokenizer becomes one :class:`EncoderError` line."""
    try:
        yield
    except RepspaceError:
        raise
    except Exception as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise EncoderError(f"encoding with {spec} failed: {message}") from exc


def _hf_layers(encoder: str, options: dict[str, Any] | None) -> Any:
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.hf_layers import HFLayersEncoder

    if not isinstance(encoder, str):
        raise InputError(f"encoder must be a spec string such as 'hf-layers:minilm', got {type(encoder).__name__}")
    enc = get_encoder(encoder, **(options or {}))
    if not isinstance(enc, HFLayersEncoder):
        raise InputError(f"{encoder} gives one vector per text; token states of every layer need hf-layers:<folder> "
                         "(e.g. hf-layers:minilm)")
    return enc


def token_states(encoder: str, texts: Sequence[str], *, layers: str | Sequence[int] = "all",
                 skip_special: bool = True, max_length: int | None = None, batch_size: int = 32,
                 options: dict[str, Any] | None = None, progress: Progress | None = None) -> TokenStates:
    """Token hidden states of the chosen layers of an ``hf-layers`` encoder, from one forward pass per batch.

    Parameters
    ----------
    encoder : str
        ``hf-layers:<folder>`` (``hf-layers:minilm`` is bundled).
    texts : sequence of str
        At least one text; duplicates are separate contexts.
    layers : ``"all"`` or list of int
        Which hidden states (negative from the end).
    skip_special : bool
        Leave out the tokenizer's special tokens; padding is always left out.
    max_length : int, optional
        Tokens per text (longer texts are truncated); default the encoder's
        (``min(model_max_length, 512)``).
    batch_size : int
        Texts per forward pass.
    options : dict, optional
        Other encoder options (``prompt``...).
    progress : Progress, optional
        ``progress("encode", done, total)`` as texts finish.

    Returns
    -------
    TokenStates

    Raises
    ------
    InputError
        Not an ``hf-layers`` encoder, no texts, a layer out of range, a bad
        ``batch_size`` or ``max_length``, or no token left to return.
    EncoderError
        The model fails.

    Examples
    --------
    >>> t = token_states("hf-layers:minilm", ["A cat.", "Two dogs ran."], layers=[0, -1])
    >>> t.layers, t.n_tokens, t.states[1].shape, t.positions.tolist(), t.contexts.tolist()
    ((0, 6), 7, (7, 384), [1, 2, 3, 1, 2, 3, 4], [0, 0, 0, 1, 1, 1, 1])
    """
    import torch

    if isinstance(texts, (str, bytes)):
        raise InputError("texts must be a sequence of strings, not a single string: wrap it in a list")
    items = list(texts)
    if not items:
        raise InputError("no texts: token states need at least one")
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InputError(f"text {i} is {type(text).__name__}, not str")
    check_scalar(batch_size, "batch_size", int, low=1)
    opts = dict(options or {})
    if check_scalar(max_length, "max_length", int, low=1, none=True) is not None:
        opts["max_length"] = int(max_length)
    enc = _hf_layers(encoder, opts)
    chosen = enc.resolve_layers(layers)
    loaded = enc.loaded  # the tokenizer and model the encoder loaded (see the module docstring)
    limit, prompt = enc.max_length, enc.prompt or ""
    per_text: list[list[np.ndarray]] = [[np.zeros((0, loaded.dim), np.float32)] * len(items) for _ in chosen]
    per_pos: list[np.ndarray] = [np.zeros(0, np.int64)] * len(items)
    tick = Tally(progress, "encode", len(items))
    order = sorted(range(len(items)), key=lambda i: -len(items[i]))
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            with _encoding_errors(enc.spec):
                batch = loaded.tokenizer([prompt + items[i] for i in index], padding=True, truncation=True,
                                         max_length=limit, return_tensors="pt", return_special_tokens_mask=True)
                special = batch.pop("special_tokens_mask").numpy()
                inputs = {k: v for k, v in batch.items() if loaded.input_names is None or k in loaded.input_names}
                hidden = loaded.model(**inputs, output_hidden_states=True, return_dict=True).hidden_states
                mask = batch.get("attention_mask")
                real = np.ones(special.shape, dtype=bool) if mask is None else mask.numpy() > 0
                seq_pos = np.cumsum(real, axis=1) - 1  # index among the real tokens (left or right padding)
                keep = real & (special == 0) if skip_special else real
                arrays = [hidden[layer].float().numpy() for layer in chosen]
            for row, i in enumerate(index):
                per_pos[i] = seq_pos[row][keep[row]].astype(np.int64)
                for j, arr in enumerate(arrays):
                    per_text[j][i] = np.ascontiguousarray(arr[row][keep[row]], dtype=np.float32)
            tick(len(index))
    lengths = np.array([p.size for p in per_pos])
    if lengths.sum() == 0:
        raise InputError("the texts have no tokens" + (" besides special tokens" if skip_special else ""))
    return TokenStates(
        layers=tuple(chosen), states=tuple(np.concatenate(blocks, axis=0) for blocks in per_text),
        positions=np.concatenate(per_pos), contexts=np.repeat(np.arange(len(items)), lengths),
        n_texts=len(items), skip_special=bool(skip_special))


def decompose_layers(encoder: str, texts: Sequence[str], *, layers: str | Sequence[int] = "all",
                     max_length: int | None = None, skip_special: bool = True, method: str = "means",
                     batch_size: int = 32, options: dict[str, Any] | None = None,
                     progress: Progress | None = None) -> TokenDecomposition:
    """Positional, context, residual and cross shares of the token states of every chosen layer.

    Parameters
    ----------
    encoder : str
        ``hf-layers:<folder>`` (``hf-layers:minilm`` is bundled).
    texts : sequence of str
        The texts; each is one context.
    layers : ``"all"`` or list of int
        Which hidden states (0 = the embedding output, negative from the end).
    max_length : int, optional
        Tokens per text (default the encoder's).
    skip_special : bool
        Leave out special tokens (``[CLS]``, ``[SEP]``...). They sit at fixed
        positions with their own, often very large, states; kept, they make
        the first and last positions look strongly "positional".
    method : ``means`` or ``ols``
        See :mod:`repspace.engines.interpret.decompose`. Texts of different
        lengths make an unbalanced design: the ``cross`` share is then not 0.
    batch_size, options, progress
        As in :func:`token_states`.

    Returns
    -------
    TokenDecomposition

    Raises
    ------
    InputError
        As :func:`token_states`, or when the tokens have no variance; for
        ``ols``, positions and contexts not linked.
    EncoderError
        The model fails.

    Examples
    --------
    >>> r = decompose_layers("hf-layers:minilm", ["the cat sat on the mat", "a dog barked twice at night"],
    ...                      layers=[0, -1], method="ols")
    >>> r.layers, [round(sum(row.shares.values()), 9) for row in r.rows]
    ((0, 6), [1.0, 1.0])
    """
    check_choice(method, "method", ("means", "ols"))
    tokens = token_states(encoder, texts, layers=layers, skip_special=skip_special, max_length=max_length,
                          batch_size=batch_size, options=options, progress=progress)
    result = mean_decomposition_layers(tokens.states, tokens.positions, tokens.contexts, layers=tokens.layers,
                                       method=method)
    opts = dict(options or {})
    if max_length is not None:
        opts["max_length"] = int(max_length)
    prov = {key: val for key, val in _hf_layers(encoder, opts).provenance().items() if key != "layer"}
    return TokenDecomposition(encoder=encoder, layers=result.layers, rows=result.rows, method=method,
                              n_texts=tokens.n_texts, n_tokens=tokens.n_tokens, skip_special=tokens.skip_special,
                              provenance=prov)
