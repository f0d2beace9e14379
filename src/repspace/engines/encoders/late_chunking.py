"""Late chunking: run a long document through the model once, in windows, then pool its token states per chunk.

Naive chunking cuts a document into chunks and embeds each one alone, so a chunk that says "it" or "the
method" loses what the rest of the document says. Late chunking (Günther et al., 2024, "Late Chunking:
Contextual Chunk Embeddings Using Long-Context Embedding Models") first computes every token's state with
the whole document (as much of it as the model sees at once) as context, and only then mean-pools the states
of each chunk's tokens. :func:`late_chunks` does it with an ``hf-layers`` encoder:

1. the document is tokenised once, without special tokens, keeping each token's character offsets;
2. the tokens are cut into windows of ``window - specials`` tokens that overlap by ``overlap`` tokens
   (:func:`token_windows`), each run as its own sequence (``[CLS] ... [SEP]`` for BERT); all windows of
   all documents go through the model in batches, one forward pass per batch;
3. every token takes its state from the window where it lies farthest from a cut
   (:func:`window_owners`): the overlap gives it context on both sides;
4. chunk ``k`` is tokens ``[k N, (k + 1) N)`` (or, with ``chunk_by="words"`` / ``"sentences"``, at most ``N``
   tokens ending at the last word / sentence boundary:
   :func:`~repspace.engines.encoders.chunk_bounds.bounded_chunks`); its vector is the mean of those tokens'
   states (special tokens excluded), its text ``document[start:end]`` from the first token's start to the last
   token's end.

The window
----------
The bundled MiniLM (all-MiniLM-L6-v2) has 512 position embeddings but was fine-tuned on sequences of at most
128 tokens and is run by sentence-transformers at ``max_seq_length`` 256; positions beyond that are ones it
never learned to use for sentence meaning. The default window is therefore the model's own
``sentence_bert_config.json`` ``max_seq_length`` when the folder has one (256 for MiniLM), else the encoder's
``max_length``. A longer window is allowed up to the encoder's ``max_length``.

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("hf-layers:minilm")
>>> doc = late_chunks(enc, ["The first part. It continues here. A third sentence ends it."], chunk_tokens=4)[0]
>>> doc.vectors.shape, doc.char_spans[0]
((4, 384), (0, 15))
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.limits import LATE_CHUNK_OVERLAP
from repspace.core.progress import Progress, Tally
from repspace.engines.encoders._batches import check_batch_size, check_texts, encoding_errors
from repspace.engines.encoders.chunk_bounds import CHUNK_BY, bounded_chunks

__all__ = ["ChunkedDocument", "chunk_spans", "default_window", "late_chunks", "token_chunks", "token_offsets",
           "token_windows", "window_owners"]


@dataclass(frozen=True, eq=False)
class ChunkedDocument:
    """One document's chunks: their vectors, token spans and character spans.

    Attributes
    ----------
    vectors : ndarray of shape (n_chunks, dim), float32
    token_spans : tuple of (int, int)
        Each chunk's tokens ``[start, end)`` among the document's tokens (special tokens not counted).
    char_spans : tuple of (int, int)
        Each chunk's text ``document[start:end]``.

    Examples
    --------
    >>> d = ChunkedDocument(np.zeros((1, 2), np.float32), ((0, 2),), ((0, 5),))
    >>> d.texts("hello world"), d.to_dict()["char_spans"]
    (['hello'], [[0, 5]])
    """

    vectors: np.ndarray
    token_spans: tuple[tuple[int, int], ...]
    char_spans: tuple[tuple[int, int], ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"vectors": [[...], ...], "token_spans": [[start, end], ...], "char_spans": [[start, end], ...]}``."""
        return {"vectors": self.vectors.tolist(), "token_spans": [list(s) for s in self.token_spans],
                "char_spans": [list(s) for s in self.char_spans]}

    def texts(self, document: str) -> list[str]:
        """The chunks' texts, cut from ``document`` at their character spans."""
        return [document[s:e] for s, e in self.char_spans]


def token_windows(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows ``[start, end)`` of at most ``size`` tokens, ``overlap`` shared by neighbours, covering ``n_tokens``.

    Examples
    --------
    >>> token_windows(10, 4, 1)
    [(0, 4), (3, 7), (6, 10)]
    >>> token_windows(3, 4, 1), token_windows(0, 4, 1)
    ([(0, 3)], [])
    """
    check_scalar(size, "window", int, low=1)
    check_scalar(overlap, "overlap", int, low=0, high=size - 1)
    windows: list[tuple[int, int]] = []
    start = 0
    while start < n_tokens:
        end = min(start + size, n_tokens)
        windows.append((start, end))
        if end == n_tokens:
            break
        start = end - overlap
    return windows


def window_owners(n_tokens: int, windows: Sequence[tuple[int, int]]) -> np.ndarray:
    """For each token, the window it takes its state from: the one where it lies farthest from a cut.

    A window edge at the document's start or end is no cut (the token has all the context there is on
    that side); on a tie the earlier window wins.

    Examples
    --------
    >>> window_owners(10, token_windows(10, 4, 1)).tolist()  # tokens 3 and 6 lie on a cut in both windows: a tie
    [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
    """
    owner = np.zeros(n_tokens, dtype=np.int64)
    best = np.full(n_tokens, -1, dtype=np.int64)
    big = n_tokens + 1
    for w, (start, end) in enumerate(windows):
        pos = np.arange(start, end)
        left = pos - start if start > 0 else np.full(end - start, big)
        right = end - 1 - pos if end < n_tokens else np.full(end - start, big)
        margin = np.minimum(left, right)
        better = margin > best[start:end]
        owner[start:end][better] = w
        best[start:end][better] = margin[better]
    return owner


def token_chunks(n_tokens: int, chunk_tokens: int) -> list[tuple[int, int]]:
    """Chunks ``[start, end)`` of ``chunk_tokens`` tokens each (the last one shorter).

    Examples
    --------
    >>> token_chunks(7, 3)
    [(0, 3), (3, 6), (6, 7)]
    """
    check_scalar(chunk_tokens, "chunk size", int, low=1)
    return [(s, min(s + chunk_tokens, n_tokens)) for s in range(0, n_tokens, chunk_tokens)]


def default_window(encoder: Any) -> int:
    """The window :func:`late_chunks` uses by default: the length the model was run at (see the module notes).

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> default_window(get_encoder("hf-layers:minilm"))
    256
    """
    try:
        config = json.loads((encoder.folder / "sentence_bert_config.json").read_text())
        trained = int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return int(encoder.max_length)
    return min(trained, int(encoder.max_length))


@dataclass(frozen=True)
class _Layout:
    """How one window's tokens sit in its model input: the special tokens before and after the content."""

    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def prefix(self) -> int:
        return len(self.before)

    @property
    def specials(self) -> int:
        return len(self.before) + len(self.after)

    def wrap(self, ids: Sequence[int]) -> list[int]:
        """The model input of a window's tokens (``[CLS] ids [SEP]`` for BERT)."""
        return [*self.before, *ids, *self.after]


def _layout(tokenizer: Any) -> _Layout:
    """Where the tokenizer puts its special tokens, read off one tokenised word with and without them."""
    bare = list(tokenizer("word", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("word")["input_ids"])
    for start in range(len(full) - len(bare) + 1):
        if full[start:start + len(bare)] == bare:
            return _Layout(tuple(full[:start]), tuple(full[start + len(bare):]))
    raise InputError("late chunking cannot place this tokenizer's special tokens around a window")


def _check_options(encoder: Any, chunk_tokens: int, window: int | None, overlap: int) -> tuple[int, int]:
    from repspace.engines.encoders.tokens import _as_hf_layers

    enc = _as_hf_layers(encoder)
    check_scalar(chunk_tokens, "chunk size", int, low=1)
    size = default_window(enc) if window is None else check_scalar(window, "window", int, low=2)
    if size > enc.max_length:
        raise InputError(f"window {size} is above the encoder's max_length {enc.max_length}")
    content = size - _layout(enc.loaded.tokenizer).specials
    if chunk_tokens > content:
        raise InputError(f"chunk size {chunk_tokens} is above the window: a window holds {content} tokens "
                         f"of text ({size} with the special tokens)")
    check_scalar(overlap, "overlap", int, low=0, high=content - 1)
    return content, overlap


def token_offsets(tokenizer: Any, text: str) -> tuple[list[int], np.ndarray]:
    """A text's token ids without special tokens and each token's ``(start, end)`` character offsets.

    Chunk boundaries and chunk metadata are character spans of the text, so
    every chunking path (late, separate, landmark) reads tokens through this
    one call; it needs a fast (Rust) tokenizer, the one kind that reports offsets.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise InputError("late chunking needs a fast tokenizer (character offsets); this model has none")
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    return list(enc["input_ids"]), np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)



def _padded_states(loaded: Any, spec: str, rows: list[list[int]], index: int) -> np.ndarray:
    """One forward pass over token-id rows (right-padded to the longest, masked): layer ``index``'s states,
    ``(len(rows), width, dim)`` float32. The caller holds ``torch.inference_mode``."""
    import torch

    tok = loaded.tokenizer
    width = max(len(r) for r in rows)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    ids_t = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    inputs = {"input_ids": ids_t, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids_t)}
    inputs = {k: v for k, v in inputs.items() if loaded.input_names is None or k in loaded.input_names}
    with encoding_errors(spec):
        hidden = loaded.model(**inputs, output_hidden_states=True, return_dict=True).hidden_states[index]
    return hidden.float().numpy()

def _window_batches(jobs: list[tuple[int, int, list[int]]], batch_size: int) -> Iterator[list[tuple[int, int,
                                                                                                     list[int]]]]:
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][2]))
    for s in range(0, len(order), batch_size):
        yield [jobs[i] for i in order[s:s + batch_size]]


def late_chunks(encoder: Any, documents: Sequence[str], *, chunk_tokens: int, window: int | None = None,
                overlap: int = LATE_CHUNK_OVERLAP, layer: int | None = None, batch_size: int = 16,
                chunk_by: str = "tokens", progress: Progress | None = None) -> list[ChunkedDocument]:
    """Embed each document's chunks by late chunking (see the module notes).

    Parameters
    ----------
    encoder : HFLayersEncoder or str
        An ``hf-layers`` encoder; its ``layer`` (unless ``layer`` is given) and ``normalize`` apply, its
        ``pooling`` does not (chunks are mean-pooled, as the paper does) nor its ``prompt``.
    documents : sequence of str
    chunk_tokens : int
        Tokens per chunk, at least 1 and at most a window's text tokens.
    window : int, optional
        Tokens per model input, special tokens included (default :func:`default_window`).
    overlap : int
        Tokens neighbouring windows share (below a window's text tokens).
    layer : int, optional
        The hidden state pooled (default the encoder's layer, the last).
    batch_size : int
        Windows per forward pass.
    chunk_by : {"tokens", "words", "sentences"}
        Cut every ``chunk_tokens`` tokens, or end each chunk (of at most ``chunk_tokens``) at the last word or
        sentence boundary (:func:`~repspace.engines.encoders.chunk_bounds.bounded_chunks`).
    progress : Progress, optional
        ``progress("encode", done, total)`` over documents.

    Returns
    -------
    list of ChunkedDocument
        One per document, in order; a document without tokens has no chunks.

    Raises
    ------
    InputError
        A non-``hf-layers`` encoder, a chunk size below 1 or above the window, a window above the
        encoder's ``max_length``, a bad overlap or layer.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> enc = get_encoder("hf-layers:minilm")
    >>> docs = late_chunks(enc, ["one two three four five", "six"], chunk_tokens=2, window=8, overlap=2)
    >>> [d.token_spans for d in docs]
    [((0, 2), (2, 4), (4, 5)), ((0, 1),)]
    >>> docs[0].texts("one two three four five")
    ['one two', 'three four', 'five']
    """
    import torch

    from repspace.engines.encoders.tokens import _as_hf_layers

    enc = _as_hf_layers(encoder)
    items = check_texts(documents)
    check_batch_size(batch_size)
    content, overlap = _check_options(enc, chunk_tokens, window, overlap)
    check_choice(chunk_by, "chunk-by", CHUNK_BY)
    index = enc.layer_index if layer is None else enc.resolve_layer(layer)
    loaded = enc.loaded
    tok, lay = loaded.tokenizer, _layout(loaded.tokenizer)
    tokens = [token_offsets(tok, text) for text in items]
    owners, jobs = [], []
    for d, (ids, _) in enumerate(tokens):
        windows = token_windows(len(ids), content, overlap)
        owners.append((window_owners(len(ids), windows), windows))
        jobs += [(d, w, lay.wrap(ids[s:e])) for w, (s, e) in enumerate(windows)]
    states = [np.zeros((len(ids), loaded.dim), np.float32) for ids, _ in tokens]
    left = [len(o[1]) for o in owners]
    tick = Tally(progress, "encode", len(items))
    with torch.inference_mode():
        for batch in _window_batches(jobs, batch_size):
            hidden = _padded_states(loaded, enc.spec, [j[2] for j in batch], index)
            done = 0
            for row, (d, w, _) in enumerate(batch):
                owner, windows = owners[d]
                s, e = windows[w]
                mine = np.flatnonzero(owner[s:e] == w)
                states[d][s + mine] = hidden[row, lay.prefix + mine]
                left[d] -= 1
                done += left[d] == 0
            tick(done)
    return [_pool(states[d], tokens[d][1], bounded_chunks(tokens[d][1], items[d], chunk_tokens, chunk_by),
                  enc.normalize) for d in range(len(items))]


def _pool(states: np.ndarray, offsets: np.ndarray, spans: list[tuple[int, int]], normalize: bool) -> ChunkedDocument:
    vectors = np.zeros((len(spans), states.shape[1] if states.ndim == 2 else 0), np.float32)
    for k, (s, e) in enumerate(spans):
        vectors[k] = states[s:e].astype(np.float64).mean(axis=0)
    if normalize and len(spans):
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    chars = tuple((int(offsets[s, 0]), int(offsets[e - 1, 1])) for s, e in spans)
    return ChunkedDocument(np.ascontiguousarray(vectors, dtype=np.float32), tuple(spans), chars)


def chunk_spans(encoder: Any, text: str, chunk_tokens: int, chunk_by: str = "tokens") -> list[tuple[int, int]]:
    """The character spans of ``text``'s chunks of ``chunk_tokens`` tokens: those :func:`late_chunks` gives.

    ``chunk_by`` aligns chunk ends to words or sentences as in :func:`late_chunks`.

    With an ``hf-layers`` encoder the tokens are its tokenizer's (so naive chunks, embedded one by one, are the
    very texts late chunking pools); with any other encoder they are whitespace-separated words.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> chunk_spans(get_encoder("static"), "one two  three", 2)
    [(0, 7), (9, 14)]
    >>> chunk_spans(get_encoder("hf-layers:minilm"), "unbelievably long", 2)
    [(0, 5), (5, 9), (9, 17)]
    >>> minilm, text = get_encoder("hf-layers:minilm"), "It rains. Cats run away."
    >>> chunk_spans(minilm, text, 4), chunk_spans(minilm, text, 4, chunk_by="sentences")
    ([(0, 14), (15, 24)], [(0, 9), (10, 24)])
    """
    import re

    from repspace.engines.encoders.hf_layers import HFLayersEncoder

    check_scalar(chunk_tokens, "chunk size", int, low=1)
    if isinstance(encoder, HFLayersEncoder):
        offsets = token_offsets(encoder.loaded.tokenizer, text)[1]
    else:
        offsets = np.array([m.span() for m in re.finditer(r"\S+", text)], dtype=np.int64).reshape(-1, 2)
    spans = bounded_chunks(offsets, text, chunk_tokens, chunk_by)
    return [(int(offsets[s, 0]), int(offsets[e - 1, 1])) for s, e in spans]
