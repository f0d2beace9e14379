"""The streaming pass of the layer profile: one forward pass per batch, per-input figures of every layer.

:func:`profile_pass` reads texts a chunk at a time, sorts each chunk by length
into batches (little padding), and runs each batch through the model *once*
with every hidden state: the inputs themselves, a seeded perturbation of each
(:func:`repspace.engines.eval.perturb.perturb`, for the augmentation
invariance) and a copy of each whose tokens are shuffled (the baseline of the
token-cloud geometry) go into the same forward pass. Each layer's states are
turned into per-input figures by :mod:`repspace.engines.geometry.token_clouds`
and dropped with the batch: what is kept is a few floats per input and layer
(for the bootstrap intervals), never a ``T × d`` matrix.

The shuffled copy permutes the input's non-special token ids (``[CLS]`` and
``[SEP]`` stay in place) with ``numpy.random.default_rng([seed, i])`` for the
input's index ``i`` in the stream, so the same seed gives the same copies
whatever the batch size. Tokenisation is the encoder's (``prompt`` prepended,
truncation to ``max_length``); every token the tokenizer emits counts, special
tokens included, padding never.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.progress import Progress, Tally
from repspace.engines.eval.perturb import perturb
from repspace.engines.geometry.token_clouds import (
    CloudGeometry,
    cloud_geometry,
    curvatures,
    left_aligned,
    neighbourhood_overlaps,
    paired_cosines,
    prompt_entropies,
)

__all__ = ["PassValues", "profile_pass"]

#: Batches read from the texts at a time and sorted by length together.
CHUNK_BATCHES = 16


@dataclass
class PassValues:
    """Per-input figures of each layer, gathered batch after batch (float64, ``NaN`` where undefined).

    ``values[name][j]`` is a list of per-batch arrays for the ``j``-th chosen layer.
    """

    layers: tuple[int, ...]
    names: tuple[str, ...]
    values: dict[str, list[list[np.ndarray]]] = field(default_factory=dict)
    n_inputs: int = 0
    n_unchanged: int = 0
    n_unshuffled: int = 0

    def __post_init__(self) -> None:
        self.values = {name: [[] for _ in self.layers] for name in self.names}

    def add(self, name: str, j: int, array: np.ndarray) -> None:
        """Append one batch's per-input values of figure ``name`` at the ``j``-th layer."""
        self.values[name][j].append(np.asarray(array, dtype=np.float64))

    def column(self, name: str, j: int) -> np.ndarray:
        """Every input's value of ``name`` at the ``j``-th layer, in the order read."""
        parts = self.values[name][j]
        return np.concatenate(parts) if parts else np.zeros(0)


def _chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"text {i} is {type(text).__name__}, not str")
        chunk.append(text)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _shuffled_ids(ids: np.ndarray, movable: np.ndarray, seed: int, starts: Sequence[int]) -> tuple[np.ndarray, int]:
    """Each row's movable token ids permuted by its own seeded generator; also how many rows could not change."""
    out = ids.copy()
    same = 0
    for row, index in enumerate(starts):
        where = np.flatnonzero(movable[row])
        if where.size < 2 or np.unique(ids[row, where]).size < 2:
            same += 1
            continue
        out[row, where] = ids[row, where[np.random.default_rng([seed, index]).permutation(where.size)]]
    return out, same


def _model_inputs(loaded: Any, batch: dict[str, Any], shuffled: Any | None) -> dict[str, Any]:
    import torch

    names = loaded.input_names
    inputs = {}
    for key, value in batch.items():
        if names is not None and key not in names:
            continue
        rows = [value]
        if shuffled is not None:
            n = shuffled.shape[0]
            rows.append(shuffled if key == "input_ids" else value[:n])
        inputs[key] = torch.cat(rows) if len(rows) > 1 else value
    return inputs


def profile_pass(enc: Any, texts: Iterable[str], *, layers: Sequence[int], names: Sequence[str],
                 alphas: Sequence[float], k: int, augment: tuple[str, ...], rate: float, shuffle: bool,
                 seed: int, batch_size: int, total: int, progress: Progress | None,
                 errors: Any, pairs: Any | None = None) -> PassValues:
    """Stream ``texts`` through ``enc`` (an ``HFLayersEncoder``) and gather each layer's per-input figures.

    ``names`` are the figures to gather (see :mod:`repspace.workflows.layer_profile`); ``errors(spec)`` is
    the context manager that turns a model failure into one :class:`~repspace.core.errors.EncoderError`.
    ``pairs`` (a :class:`~repspace.workflows.layer_invariance.PairGroups`, with ``augment``) receives each
    input's and its perturbation's representation at every chosen layer, chunk by chunk in stream order.
    """
    import torch

    from repspace.engines.encoders.hf_layers import pool_hidden_states

    loaded = enc.loaded
    prompt = enc.prompt or ""
    out = PassValues(tuple(layers), tuple(names))
    needed = sorted(set(layers) | {lay - 1 for lay in layers if lay > 0})  # the overlap's previous layers
    tick = Tally(progress, "profile", total)
    start = 0
    with torch.inference_mode():
        for chunk in _chunks(texts, batch_size * CHUNK_BATCHES):
            perturbed = perturb(chunk, augment, rate=rate, seed=seed, start=start) if augment else None
            order = sorted(range(len(chunk)), key=lambda i: -len(chunk[i]))
            views: list[Any] = [None, None] if pairs is not None else []  # (layers, chunk, d) per view
            for s in range(0, len(order), batch_size):
                index = order[s:s + batch_size]
                rows = [prompt + chunk[i] for i in index]
                if perturbed is not None:
                    rows += [prompt + perturbed[i] for i in index]
                    out.n_unchanged += sum(perturbed[i] == chunk[i] for i in index)
                with errors(enc.spec):
                    batch = dict(loaded.tokenizer(rows, padding=True, truncation=True, max_length=enc.max_length,
                                                  return_tensors="pt", return_special_tokens_mask=True))
                    special = batch.pop("special_tokens_mask").numpy() > 0
                    if "attention_mask" not in batch:
                        batch["attention_mask"] = torch.ones(batch["input_ids"].shape, dtype=torch.long)
                    mask = batch["attention_mask"]
                    b = len(index)
                    shuffled = None
                    if shuffle:
                        ids, same = _shuffled_ids(batch["input_ids"][:b].numpy(), (mask[:b].numpy() > 0) & ~special[:b],
                                                  seed, [start + i for i in index])
                        out.n_unshuffled += same
                        shuffled = torch.from_numpy(ids)
                    hidden = loaded.model(**_model_inputs(loaded, batch, shuffled), output_hidden_states=True,
                                          return_dict=True).hidden_states
                    full_mask = torch.cat([mask, mask[:b]]) if shuffle else mask
                    _measure(out, hidden, full_mask, b, needed, alphas=alphas, k=k, augment=bool(augment),
                             shuffle=shuffle, pooling=enc.pooling, pool=pool_hidden_states)
                    if views:
                        _pair_views(views, hidden, full_mask, b, out.layers, index, len(chunk), enc.pooling,
                                    pool_hidden_states)
                out.n_inputs += b
                tick(b)
            if views:
                pairs.add(*views)
            start += len(chunk)
    if pairs is not None:
        pairs.finish()
    return out


def _pair_views(views: list[Any], hidden: Sequence[Any], mask: Any, b: int, layers: Sequence[int],
                index: Sequence[int], size: int, pooling: str, pool: Any) -> None:
    """Write each chosen layer's pooled states of the batch's inputs and perturbations at their chunk rows."""
    for j, lay in enumerate(layers):
        rep = pool(hidden[lay][:2 * b], mask[:2 * b], pooling).double().numpy()
        if views[0] is None:
            views[0] = np.zeros((len(layers), size, rep.shape[1]))
            views[1] = np.zeros_like(views[0])
        views[0][j, index] = rep[:b]
        views[1][j, index] = rep[b:]


def _measure(out: PassValues, hidden: Sequence[Any], mask: Any, b: int, needed: Sequence[int], *,
             alphas: Sequence[float], k: int, augment: bool, shuffle: bool, pooling: str, pool: Any) -> None:
    """One batch's figures at every chosen layer (and the layer before each, for the neighbourhood overlap)."""
    m = mask.numpy()
    n_orig = b
    shuf_rows = slice(2 * b, 3 * b) if augment else slice(b, 2 * b)
    prev: dict[str, CloudGeometry] = {}
    for lay in needed:
        h = hidden[lay].float().numpy()
        x, n = left_aligned(h[:n_orig], m[:n_orig])
        geo = {"": cloud_geometry(x, n, k)}
        if shuffle:
            xs, ns = left_aligned(h[shuf_rows], m[shuf_rows])
            geo["_shuffled"] = cloud_geometry(xs, ns, k)
        if lay in out.layers:
            j = out.layers.index(lay)
            ent = prompt_entropies(x, n, (1.0, *alphas))
            out.add("prompt_entropy", j, ent[0])
            for a, row in zip(alphas, ent[1:]):
                out.add(f"prompt_entropy_alpha_{a:g}", j, row)
            out.add("curvature", j, curvatures(x, n))
            if augment:
                pooled = pool(hidden[lay][:2 * b], mask[:2 * b], pooling).double().numpy()
                out.add("augmentation_invariance", j, paired_cosines(pooled[:b], pooled[b:]))
            for suffix, g in geo.items():
                out.add(f"intrinsic_dimension{suffix}", j, g.intrinsic_dimension)
                out.add(f"mean_cosine{suffix}", j, g.mean_cosine)
                before = prev.get(suffix)
                overlap = neighbourhood_overlaps(before, g) if before is not None else np.full(b, np.nan)
                out.add(f"neighbourhood_overlap{suffix}", j, overlap)
        prev = geo if lay + 1 in needed else {}
