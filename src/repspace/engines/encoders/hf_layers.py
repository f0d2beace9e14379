"""Pooled hidden states of any layer of a local transformers encoder.

:class:`HFLayersEncoder` runs ``AutoModel`` with ``output_hidden_states=True``
and pools the hidden states of the requested layers into one vector per text.
Layer ``0`` is the embedding output, layer ``i`` the output of block ``i`` and
negative indexes count from the end (``-1`` is the last layer).

Why the pooling is hand-written
-------------------------------
transformers has no pooling of arbitrary hidden states: ``AutoModel`` returns
per-token states, and the only built-in "pooler" (e.g. ``BertPooler``) is a
trained dense + tanh layer on the first token of the *last* layer.
sentence-transformers' ``Pooling`` module likewise pools only the token
embeddings of its own pipeline (the last layer). Pooling the states of layer
``i`` therefore needs :func:`pool_hidden_states`, a few tensor operations that
follow sentence-transformers' masked mean exactly (so that ``layer=-1,
pooling="mean", normalize=True`` reproduces a mean-pooling sentence-transformers
model).

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("hf-layers:minilm", layer=3, pooling="cls")
>>> enc.encode(["A man is playing a flute."]).shape
(1, 384)
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from repspace.core.checks import check_choice
from repspace.core.errors import EncoderError, InputError
from repspace.engines.encoders._batches import encoding_errors
from repspace.engines.encoders._fingerprint import (
    check_folder,
    model_fingerprint,
    package_version,
)
from repspace.engines.encoders._models import quiet_hf_loading, shared_model
from repspace.engines.encoders._options import opt_bool, opt_int, opt_str
from repspace.engines.encoders.base import LayeredEncoder, Tick

if TYPE_CHECKING:
    import torch

__all__ = ["HFLayersEncoder", "POOLINGS", "pool_hidden_states"]

#: The pooling methods of :func:`pool_hidden_states`.
POOLINGS: tuple[str, ...] = ("mean", "cls", "last", "max")

#: Upper bound of the default ``max_length``.
DEFAULT_MAX_LENGTH_CAP = 512


def pool_hidden_states(hidden: torch.Tensor, mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """Pool per-token hidden states into one vector per sequence.

    Padding is recognised from ``mask`` alone, so left- and right-padded
    batches both work.

    Parameters
    ----------
    hidden : torch.Tensor
        Hidden states, shape ``(batch, tokens, dim)``.
    mask : torch.Tensor
        Attention mask, shape ``(batch, tokens)``: 1 for real tokens, 0 for
        padding.
    pooling : {"mean", "cls", "last", "max"}
        ``mean``: average of the real tokens (as sentence-transformers);
        ``cls``: the first real token; ``last``: the last real token;
        ``max``: element-wise maximum over the real tokens.

    Returns
    -------
    torch.Tensor
        Shape ``(batch, dim)``. A sequence with no real token pools to zeros.

    Raises
    ------
    InputError
        If ``pooling`` is unknown.

    Examples
    --------
    >>> import torch
    >>> hidden = torch.tensor([[[1.0, 0.0], [3.0, 4.0], [9.0, 9.0]]])
    >>> mask = torch.tensor([[1, 1, 0]])  # the third token is padding
    >>> pool_hidden_states(hidden, mask, "mean").tolist()
    [[2.0, 2.0]]
    >>> pool_hidden_states(hidden, mask, "last").tolist()
    [[3.0, 4.0]]
    >>> pool_hidden_states(hidden, torch.tensor([[0, 1, 1]]), "cls").tolist()  # left padding
    [[3.0, 4.0]]
    """
    import torch

    check_choice(pooling, "pooling", POOLINGS)
    real = mask > 0  # (B, T)
    has_tokens = real.any(dim=1, keepdim=True)  # (B, 1)
    if pooling == "mean":
        weights = real.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    if pooling == "max":
        filled = hidden.masked_fill(~real.unsqueeze(-1), torch.finfo(hidden.dtype).min)
        return torch.where(has_tokens, filled.max(dim=1).values, torch.zeros((), dtype=hidden.dtype))
    n_tokens = hidden.shape[1]
    positions = torch.arange(n_tokens, device=hidden.device).expand_as(real)
    if pooling == "cls":
        index = torch.where(real, positions, n_tokens).min(dim=1).values
    else:  # last
        index = torch.where(real, positions, -1).max(dim=1).values
    picked = hidden[torch.arange(hidden.shape[0], device=hidden.device), index.clamp(0, n_tokens - 1)]
    return torch.where(has_tokens, picked, torch.zeros((), dtype=hidden.dtype))


@dataclass(frozen=True)
class LoadedModel:
    """A loaded tokenizer and model, with what a probe pass found (:attr:`HFLayersEncoder.loaded`)."""

    tokenizer: Any
    model: Any
    input_names: frozenset[str] | None  # None: forward takes **kwargs
    n_layers: int
    dim: int


def _parse_layer(value: Any) -> int | Literal["all"]:
    if value is None:
        return -1
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "all":
            return "all"
        try:
            return int(text)
        except ValueError:
            raise InputError(f"option layer must be an integer or 'all', got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"option layer must be an integer or 'all', got {value!r}")
    return int(value)


class HFLayersEncoder(LayeredEncoder):
    """Pooled hidden states of a local transformers encoder, loaded lazily.

    Texts are sorted by length before batching (as sentence-transformers
    does, so that batches hold texts of similar length and little padding)
    and the vectors are returned in the input order. All requested layers
    come from one forward pass per batch, run in eval mode under
    ``torch.inference_mode()``.

    Parameters
    ----------
    folder : str or Path
        A local folder that ``AutoTokenizer`` and ``AutoModel`` load with
        ``local_files_only=True`` (remote code is never trusted). For an
        encoder-decoder model, its encoder is used.
    spec : str or None, optional
        The registry string; defaults to ``"hf-layers:<absolute folder>"``.
    layer : int, "all" or None, optional
        The layer :meth:`encode` returns (default ``-1``, the last). ``"all"``
        marks an encoder meant for :meth:`encode_layers` over every hidden
        state; its :meth:`encode` returns the last layer.
    pooling : {"mean", "cls", "last", "max"} or None, optional
        See :func:`pool_hidden_states` (default ``"mean"``).
    max_length : int or None, optional
        Maximum tokens per text (longer ones are truncated); default
        ``min(tokenizer.model_max_length, 512)``.
    normalize : bool or None, optional
        Scale each vector to unit length (default ``False``).
    prompt : str or None, optional
        A prefix prepended to every text.

    Raises
    ------
    NotFoundError
        If the folder does not exist.
    InputError
        If an option is invalid (a layer out of range is detected from
        ``config.json`` when possible, else on loading).

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> enc = get_encoder("hf-layers:minilm", layer="all")
    >>> enc.n_layers, enc.encode_layers(["a cat", "a very small cat"]).shape
    (7, (7, 2, 384))
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        spec: str | None = None,
        layer: int | Literal["all"] | None = None,
        pooling: str | None = None,
        max_length: int | None = None,
        normalize: bool | None = None,
        prompt: str | None = None,
    ) -> None:
        self.folder = check_folder(folder, spec or f"hf-layers:{folder}")
        super().__init__(spec or f"hf-layers:{self.folder}")
        self.layer: int | Literal["all"] = _parse_layer(layer)
        pooling = opt_str("pooling", pooling)
        self.pooling = "mean" if pooling is None else pooling.strip().lower()
        check_choice(self.pooling, "option pooling", POOLINGS)
        self._max_length = opt_int("max_length", max_length)
        self.normalize = bool(opt_bool("normalize", normalize))
        self.prompt = opt_str("prompt", prompt)
        self._fingerprint: str | None = None
        self._check_layer_from_config()

    # -- loading ---------------------------------------------------------------

    def _check_layer_from_config(self) -> None:
        """Refuse an out-of-range layer before loading, when config.json tells the depth."""
        if self.layer == "all":
            return
        try:
            config = json.loads((self.folder / "config.json").read_text())
        except (OSError, ValueError):
            return
        blocks = config.get("num_hidden_layers") if isinstance(config, dict) else None
        if isinstance(blocks, int) and not config.get("is_encoder_decoder", False):
            n = blocks + 1
            if not -n <= self.layer < n:
                raise InputError(
                    f"layer {self.layer} is out of range for {self.spec}: it has layers 0..{n - 1} (or -{n}..-1)"
                )

    @property
    def loaded(self) -> LoadedModel:
        """The tokenizer and model this encoder runs, loaded on first use and shared per process.

        For callers that need the token states themselves
        (:func:`~repspace.engines.encoders.tokens.encode_tokens`,
        :func:`~repspace.workflows.decompose.token_states`), with what a probe
        pass found: the model's input names, its number of hidden states and
        their dimension.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> m = get_encoder("hf-layers:minilm").loaded
        >>> m.n_layers, m.dim
        (7, 384)
        """
        return shared_model(("transformers", str(self.folder)), self._load)

    def _load(self) -> LoadedModel:
        with encoding_errors(self.spec, "loading the model"):
            import torch
            from transformers import AutoModel, AutoTokenizer

            with quiet_hf_loading():
                tokenizer = AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True)
                model = AutoModel.from_pretrained(str(self.folder), local_files_only=True, dtype=torch.float32)
            model.eval()
            if getattr(model.config, "is_encoder_decoder", False):
                model = model.get_encoder()
            if tokenizer.pad_token is None:
                if tokenizer.eos_token is None:
                    raise EncoderError(f"loading the model with {self.spec} failed: the tokenizer has no pad token")
                tokenizer.pad_token = tokenizer.eos_token
            params = inspect.signature(model.forward).parameters.values()
            takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
            names = None if takes_any else frozenset(p.name for p in params)
            with torch.inference_mode():
                probe = tokenizer(["probe"], return_tensors="pt")
                inputs = {k: v for k, v in probe.items() if names is None or k in names}
                hidden = model(**inputs, output_hidden_states=True, return_dict=True).hidden_states
            if not hidden:
                raise EncoderError(f"loading the model with {self.spec} failed: it returns no hidden states")
            return LoadedModel(tokenizer, model, names, len(hidden), int(hidden[-1].shape[-1]))

    @property
    def n_layers(self) -> int:
        """The number of hidden states: the embedding output plus one per block."""
        return self.loaded.n_layers

    @property
    def dim(self) -> int:
        """The dimension of the vectors (the model's hidden size)."""
        return self.loaded.dim

    @property
    def max_length(self) -> int:
        """Maximum tokens per text (``min(tokenizer.model_max_length, 512)`` unless set)."""
        if self._max_length is not None:
            return self._max_length
        model_max = getattr(self.loaded.tokenizer, "model_max_length", None)
        if isinstance(model_max, int) and model_max > 0:
            return min(model_max, DEFAULT_MAX_LENGTH_CAP)
        return DEFAULT_MAX_LENGTH_CAP

    @property
    def layer_index(self) -> int:
        """The non-negative layer :meth:`encode` returns (the last one for ``layer="all"``)."""
        return self.n_layers - 1 if self.layer == "all" else self.resolve_layer(self.layer)

    # -- encoding --------------------------------------------------------------

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        return self._encode_layers(texts, layers=[self.layer_index], batch_size=batch_size, progress=progress)[0]

    def _encode_layers(
        self, texts: list[str], *, layers: list[int], batch_size: int, progress: Tick | None
    ) -> np.ndarray:
        import torch

        out = np.empty((len(layers), len(texts), self.loaded.dim), dtype=np.float32)
        with torch.inference_mode():
            for index, hidden, mask, _ in self.hidden_batches(texts, batch_size):
                with encoding_errors(self.spec):
                    for row, layer in enumerate(layers):
                        pooled = pool_hidden_states(hidden[layer], mask, self.pooling)
                        if self.normalize:
                            pooled = torch.nn.functional.normalize(pooled, p=2.0, dim=-1)
                        out[row, index] = pooled.float().numpy()
                if progress is not None:
                    progress(len(index))
        return out

    def hidden_batches(self, texts: list[str], batch_size: int, *,
                       special_tokens: bool = False) -> Iterator[tuple[list[int], Any, Any, Any]]:
        """Run the model on ``texts``, longest first, ``batch_size`` at a time (the prompt prepended).

        Each batch gives the positions of its texts in ``texts``, the model's
        hidden states (embeddings, then one ``(B, T, dim)`` tensor per block),
        the attention mask (ones when the tokenizer gives none) and, with
        ``special_tokens``, the tokenizer's special-tokens mask (else None).
        A tokenizer or model failure is an :class:`~repspace.core.errors.EncoderError`.
        Call it under ``torch.inference_mode()``: nothing here needs gradients.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> enc = get_encoder("hf-layers:minilm")
        >>> [(index, len(hidden), mask.shape) for index, hidden, mask, _ in enc.hidden_batches(["a", "a b c"], 8)]
        [([1, 0], 7, torch.Size([2, 5]))]
        """
        import torch

        loaded = self.loaded
        prompt = self.prompt or ""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), batch_size):
            index = order[start : start + batch_size]
            with encoding_errors(self.spec):
                batch = loaded.tokenizer([prompt + texts[i] for i in index], padding=True, truncation=True,
                                         max_length=self.max_length, return_tensors="pt",
                                         return_special_tokens_mask=special_tokens)
                special = batch.pop("special_tokens_mask", None)
                inputs = {k: v for k, v in batch.items() if loaded.input_names is None or k in loaded.input_names}
                hidden = loaded.model(**inputs, output_hidden_states=True, return_dict=True).hidden_states
            mask = batch.get("attention_mask")
            if mask is None:
                mask = torch.ones(batch["input_ids"].shape, dtype=torch.long)
            yield index, hidden, mask, special

    # -- provenance ------------------------------------------------------------

    def provenance(self, layer: int | None = None) -> dict[str, Any]:
        """Say exactly what made the vectors of :meth:`encode` or of one layer.

        ``layer`` is that of :meth:`repspace.engines.encoders.base.LayeredEncoder.provenance`;
        the dict has the keys of :meth:`repspace.engines.encoders.base.Encoder.provenance`,
        its ``layer`` being the non-negative layer index.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> enc = get_encoder("hf-layers:minilm", pooling="max")
        >>> enc.provenance()["layer"], enc.provenance(layer=2)["layer"], enc.provenance()["pooling"]
        (6, 2, 'max')
        """
        index = self.layer_index if layer is None else self.resolve_layer(layer)
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.folder)
        return {
            "encoder": self.spec,
            "encoder_version": package_version("transformers"),
            "model": str(self.folder),
            "model_fingerprint": self._fingerprint,
            "layer": index,
            "pooling": self.pooling,
            "normalize": self.normalize,
            "prompt": self.prompt,
            "max_length": self.max_length,
        }
