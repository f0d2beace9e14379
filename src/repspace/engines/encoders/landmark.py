"""Landmark (LMK) pooling: one vector for a long document from landmark tokens placed after each of its chunks.

[CLS] pooling leans on the start of an input and mean pooling dilutes a few salient passages among many
tokens. Landmark pooling (Doshi et al., 2026, "LMK > CLS: Landmark Pooling for Dense Embeddings",
arXiv 2601.21525) cuts the token sequence into chunks, inserts a landmark token after every chunk, runs the
sequence through the encoder, and takes the mean of the landmark tokens' output states as the document's
vector. :func:`landmark_pool` does it with an ``hf-layers`` encoder:

1. the document is tokenised once without special tokens (character offsets kept) and cut into chunks of at
   most ``chunk_tokens`` tokens (:func:`~repspace.engines.encoders.chunk_bounds.bounded_chunks`: every N tokens,
   or ending at word or sentence boundaries);
2. the landmark is the tokenizer's separator token (``[SEP]`` for BERT; the end-of-sequence token when there
   is none): the paper trains its encoders with the landmarks in place, and a model fine-tuned without them
   has already learned to gather a segment into ``[SEP]``, the token BERT-style pretraining puts after every
   segment;
3. the chunks, each followed by its landmark, are packed in order into model inputs of at most ``window``
   tokens (``[CLS] c1 [SEP] c2 [SEP] ... ck [SEP]`` for BERT: the closing ``[SEP]`` is the last chunk's
   landmark), so a document longer than the window is read in several inputs, each holding whole chunks;
4. the vector is the mean of the chosen layer's states at every landmark of the document (normalised when
   the encoder normalises).

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> vectors = landmark_pool(get_encoder("hf-layers:minilm"), ["A first part. A second part."], chunk_tokens=4)
>>> vectors.shape
(1, 384)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress, Tally
from repspace.engines.encoders._batches import check_batch_size, check_texts
from repspace.engines.encoders.chunk_bounds import CHUNK_BY, bounded_chunks

__all__ = ["landmark_id", "landmark_inputs", "landmark_pool"]


def landmark_id(tokenizer: Any) -> int:
    """The token used as landmark: the separator token, else the end-of-sequence token.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> tok = get_encoder("hf-layers:minilm").loaded.tokenizer
    >>> tok.convert_ids_to_tokens(landmark_id(tok))
    '[SEP]'
    """
    for name in ("sep_token_id", "eos_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    raise InputError("landmark pooling needs a separator or end-of-sequence token; this tokenizer has neither")


def landmark_inputs(ids: Sequence[int], spans: Sequence[tuple[int, int]], *, before: Sequence[int],
                    after: Sequence[int], landmark: int, window: int) -> list[tuple[list[int], list[int]]]:
    """Pack chunks, each followed by the landmark, into model inputs of at most ``window`` tokens.

    Each input is ``before + c_a L + ... + c_b L + tail``, where ``tail`` is ``after`` without a leading
    landmark (for BERT ``after`` is ``[SEP]`` itself, the last chunk's landmark). Returns ``(input_ids,
    landmark positions)`` per input.

    Examples
    --------
    >>> landmark_inputs([5, 6, 7, 8, 9], [(0, 2), (2, 4), (4, 5)], before=[101], after=[102], landmark=102,
    ...                 window=7)
    [([101, 5, 6, 102, 7, 8, 102], [3, 6]), ([101, 9, 102], [2])]
    """
    tail = list(after[1:]) if after and after[0] == landmark else list(after)
    room = window - len(before) - len(tail)
    longest = max((e - s for s, e in spans), default=0)
    if longest + 1 > room:
        raise InputError(f"chunk size {longest} is above the window: an input of {window} tokens holds chunks of "
                         f"at most {room - 1} tokens with their landmark")
    inputs: list[tuple[list[int], list[int]]] = []
    body: list[int] = []
    marks: list[int] = []
    for s, e in spans:
        if body and len(body) + (e - s) + 1 > room:
            inputs.append(([*before, *body, *tail], marks))
            body, marks = [], []
        body += [*ids[s:e], landmark]
        marks.append(len(before) + len(body) - 1)
    if body:
        inputs.append(([*before, *body, *tail], marks))
    return inputs


def landmark_pool(encoder: Any, documents: Sequence[str], *, chunk_tokens: int, chunk_by: str = "tokens",
                  window: int | None = None, layer: int | None = None, batch_size: int = 16,
                  progress: Progress | None = None) -> np.ndarray:
    """One landmark-pooled vector per document (see the module notes).

    Parameters
    ----------
    encoder : HFLayersEncoder or str
        An ``hf-layers`` encoder; its ``layer`` (unless ``layer`` is given) and ``normalize`` apply.
    documents : sequence of str
    chunk_tokens : int
        Tokens per chunk (at most; see ``chunk_by``), below a window's room.
    chunk_by : {"tokens", "words", "sentences"}
        Where chunks end (:func:`~repspace.engines.encoders.chunk_bounds.bounded_chunks`).
    window : int, optional
        Tokens per model input, special tokens included (default: the model's trained length,
        :func:`~repspace.engines.encoders.late_chunking.default_window`).
    layer : int, optional
    batch_size : int
        Model inputs per forward pass.
    progress : Progress, optional
        ``progress("encode", done, total)`` over documents.

    Returns
    -------
    ndarray of shape (n_documents, dim), float32
        A document without tokens gets a zero vector.

    Raises
    ------
    InputError
        A non-``hf-layers`` encoder, a chunk size below 1 or too long for the window, a bad ``chunk_by``.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> enc = get_encoder("hf-layers:minilm")
    >>> v = landmark_pool(enc, ["one two three", "one two three", "four five"], chunk_tokens=2)
    >>> v.shape, bool(np.allclose(v[0], v[1], atol=1e-5)), bool(np.allclose(v[0], v[2], atol=1e-2))
    ((3, 384), True, False)
    """
    import torch

    from repspace.engines.encoders.late_chunking import _layout, _padded_states, default_window, token_offsets
    from repspace.engines.encoders.tokens import _as_hf_layers

    enc = _as_hf_layers(encoder)
    items = check_texts(documents)
    check_batch_size(batch_size)
    check_scalar(chunk_tokens, "chunk size", int, low=1)
    check_choice(chunk_by, "chunk-by", CHUNK_BY)
    size = default_window(enc) if window is None else check_scalar(window, "window", int, low=2)
    if size > enc.max_length:
        raise InputError(f"window {size} is above the encoder's max_length {enc.max_length}")
    index = enc.layer_index if layer is None else enc.resolve_layer(layer)
    loaded = enc.loaded
    tok, lay = loaded.tokenizer, _layout(loaded.tokenizer)
    mark = landmark_id(tok)
    # a full chunk must fit a window, whatever this call's documents hold
    landmark_inputs([mark] * chunk_tokens, [(0, chunk_tokens)], before=lay.before, after=lay.after, landmark=mark,
                    window=size)
    jobs: list[tuple[int, list[int], list[int]]] = []
    for d, text in enumerate(items):
        ids, offsets = token_offsets(tok, text)
        spans = bounded_chunks(offsets, text, chunk_tokens, chunk_by)
        for seq, marks in landmark_inputs(ids, spans, before=lay.before, after=lay.after, landmark=mark,
                                          window=size):
            jobs.append((d, seq, marks))
    sums = np.zeros((len(items), loaded.dim), np.float64)
    counts = np.zeros(len(items), np.int64)
    left = np.bincount([j[0] for j in jobs], minlength=len(items))
    tick = Tally(progress, "encode", len(items))
    tick(int(np.sum(left == 0)))
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1]))
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            batch = [jobs[i] for i in order[s:s + batch_size]]
            hidden = _padded_states(loaded, enc.spec, [j[1] for j in batch], index)
            done = 0
            for row, (d, _, marks) in enumerate(batch):
                sums[d] += hidden[row, marks].astype(np.float64).sum(axis=0)
                counts[d] += len(marks)
                left[d] -= 1
                done += int(left[d] == 0)
            tick(done)
    vectors = np.divide(sums, np.maximum(counts, 1)[:, None]).astype(np.float32)
    if enc.normalize:
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return np.ascontiguousarray(vectors, dtype=np.float32)
