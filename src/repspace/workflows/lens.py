"""The lens of an ``hf-layers`` encoder: each token's state at each layer read as vocabulary tokens.

:func:`token_lens` runs the encoder once on a text (every hidden state from one forward pass,
:func:`~repspace.workflows.decompose.token_states`) and projects each token's state at each chosen layer onto the
model's token embedding matrix (:func:`~repspace.engines.interpret.lens.project_vocabulary`): the logit lens.
:func:`fit_tuned_lens` first learns, from a texts file, one affine translator per layer to the last layer (the
tuned lens) and reports each one's fit on held-out texts; :func:`token_lens` then also shows the translated
states' tokens. :func:`vector_lens` and :func:`space_lens` project vectors that went through no model (pooled
sentence vectors, a stored space's items): the zero-pass projection.

What "layer 0" is
-----------------
Layer 0 is the model's embedding output as transformers returns it (``hidden_states[0]``). For a BERT such as
all-MiniLM-L6-v2 that is ``LayerNorm(word + position + token-type embedding)``, not the word embedding row alone:
the lens projects it like every other layer, with nothing subtracted, so that layer 0 checks that the token
survives the position and type embeddings and the normalisation (for the 1,000 most frequent words of GloVe's
vocabulary that are single MiniLM tokens, a one-word input reads back as that word for every one of them; the
test asks for >= 95%). The matrix projected onto is the model's input token embedding matrix
(``get_input_embeddings()``): BERT's masked-LM head ties its decoder to it, and sentence-transformers folders ship
without that head, so its transform and bias are not applied.

Examples
--------
>>> r = token_lens("hf-layers:minilm", "paris", layers=[0], k=3)
>>> r.tokens, r.projections[0].tokens[0][0]
(('paris',), 'paris')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.interpret.lens import (
    LENS_SCORES,
    AffineTranslator,
    TranslatorFit,
    TranslatorMoments,
    VocabularyProjection,
    project_vocabulary,
    translator_fit,
)
from repspace.workflows.decompose import _hf_layers, token_states

__all__ = ["TokenLens", "TunedLens", "VectorLens", "fit_tuned_lens", "hidden_token_ids", "space_lens", "token_lens",
           "vector_lens", "vocabulary_matrix"]

#: Texts per forward pass and per block of states added to the translators' sums while fitting the tuned lens.
FIT_BLOCK_TEXTS = 256
#: Vocabulary entries the lens hides besides the tokenizer's special tokens: BERT's reserved ``[unused<N>]`` rows.
UNUSED_TOKEN = re.compile(r"\[unused\d+\]")


def vocabulary_matrix(encoder: str, options: dict[str, Any] | None = None) -> tuple[np.ndarray, list[str]]:
    """The token embedding matrix ``(V, d)`` (float32) of an ``hf-layers`` encoder and each row's token string.

    Examples
    --------
    >>> E, vocab = vocabulary_matrix("hf-layers:minilm")
    >>> E.shape, vocab[:2], vocab.index("paris") == vocab.index("paris")
    ((30522, 384), ['[PAD]', '[unused0]'], True)
    """
    enc = _hf_layers(encoder, options)
    loaded = enc.loaded
    weight = loaded.model.get_input_embeddings().weight.detach().float().numpy()
    vocab = [str(t) for t in loaded.tokenizer.convert_ids_to_tokens(list(range(weight.shape[0])))]
    return np.ascontiguousarray(weight), vocab


def hidden_token_ids(encoder: str, options: dict[str, Any] | None = None) -> np.ndarray:
    """The vocabulary rows the lens hides by default: the tokenizer's special tokens and ``[unused<N>]`` names.

    A model's special and never-trained rows (``[CLS]``, ``[SEP]``, ``[PAD]``, BERT's 994 ``[unused*]``) lie near
    every state and fill the top lists without saying anything about the text.

    Examples
    --------
    >>> E, vocab = vocabulary_matrix("hf-layers:minilm")
    >>> ids = hidden_token_ids("hf-layers:minilm")
    >>> len(ids), [vocab[i] for i in ids[:2]], "[CLS]" in {vocab[i] for i in ids}
    (999, ['[PAD]', '[unused0]'], True)
    """
    tok = _hf_layers(encoder, options).loaded.tokenizer
    _, vocab = vocabulary_matrix(encoder, options)
    special = {int(i) for i in tok.all_special_ids if 0 <= int(i) < len(vocab)}
    unused = {i for i, t in enumerate(vocab) if UNUSED_TOKEN.fullmatch(t)}
    return np.array(sorted(special | unused), dtype=np.int64)


def _hidden(encoder: str, options: dict[str, Any] | None, all_tokens: bool) -> np.ndarray | None:
    return None if all_tokens else hidden_token_ids(encoder, options)


@dataclass(frozen=True, eq=False)
class TunedLens:
    """One affine translator per layer to the last layer, fitted on a texts file, with its held-out fit.

    Attributes
    ----------
    encoder : str
    last_layer : int
        The target layer.
    translators : dict of int to AffineTranslator
        One per source layer (every layer but the last).
    fits : tuple of TranslatorFit
        Each translator's fit on the held-out texts' tokens, by layer.
    n_texts, n_held_out : int
        Texts read, and texts held out (their tokens score the fit).
    held_out_texts : tuple of int
        The held-out texts' indexes (the others were fitted on).
    ridge, held_out : float
    seed : int
        Seed of the split into fitted and held-out texts.
    score : str

    Examples
    --------
    >>> t = fit_tuned_lens("hf-layers:minilm", ["a cat sat on the mat", "the dog ran home", "birds sing at dawn",
    ...                                         "she reads a book"], held_out=0.25, ridge=0.1)
    >>> t.last_layer, sorted(t.translators), t.n_held_out, t.fits[0].n_test > 0
    (6, [0, 1, 2, 3, 4, 5], 1, True)
    """

    encoder: str
    last_layer: int
    translators: dict[int, AffineTranslator]
    fits: tuple[TranslatorFit, ...]
    n_texts: int
    n_held_out: int
    held_out_texts: tuple[int, ...]
    ridge: float
    held_out: float
    seed: int
    score: str

    def to_dict(self) -> dict[str, Any]:
        """The settings and the per-layer fit (the translators' weights are not included)."""
        return {"encoder": self.encoder, "last_layer": int(self.last_layer), "n_texts": int(self.n_texts),
                "n_held_out": int(self.n_held_out), "held_out_texts": list(self.held_out_texts),
                "ridge": float(self.ridge), "held_out": float(self.held_out),
                "seed": int(self.seed), "score": self.score, "fits": [f.to_dict() for f in self.fits]}


def _texts(texts: Sequence[str], what: str) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise InputError(f"{what} must be a sequence of strings, not a single string: wrap it in a list")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InputError(f"{what}: text {i} is {type(text).__name__}, not str")
    return items


def fit_tuned_lens(encoder: str, texts: Sequence[str], *, ridge: float = 1e-3, held_out: float = 0.2,
                   seed: int = 0, score: str = "dot", skip_special: bool = True, batch_size: int = 32,
                   options: dict[str, Any] | None = None, progress: Progress | None = None) -> TunedLens:
    """Fit one ridge translator per layer to the last layer on ``texts``; score each on held-out texts.

    The texts are split, seeded, into fitted and held-out ones (whole texts, so that no held-out token's context
    was seen). The fitted texts stream through the model :data:`FIT_BLOCK_TEXTS` at a time into
    :class:`~repspace.engines.interpret.lens.TranslatorMoments` (memory bounded by a block, whatever the file's
    size); the held-out texts' tokens give each layer's
    :class:`~repspace.engines.interpret.lens.TranslatorFit`: R², and the KL divergence from the last layer's
    vocabulary distribution of the translated state (tuned) beside that of the untranslated state (plain lens).

    Parameters
    ----------
    encoder : str
        ``hf-layers:<folder>``.
    texts : sequence of str
        At least 2 texts.
    ridge : float
        Relative ridge penalty (:func:`~repspace.engines.interpret.lens.fit_translator`).
    held_out : float
        Share of the texts held out, in (0, 1); at least one text on each side.
    seed : int
    score : {"dot", "cosine"}
        How the fit's vocabulary distributions are scored.
    skip_special : bool
        Leave out ``[CLS]``/``[SEP]``... tokens.
    batch_size, options, progress
        As :func:`~repspace.workflows.decompose.token_states`.

    Returns
    -------
    TunedLens

    Raises
    ------
    InputError
        Fewer than 2 texts, an encoder without hidden states, a bad ``ridge``/``held_out``/``score``.

    Examples
    --------
    >>> texts = ["a cat sat on the mat", "the dog ran home", "birds sing at dawn", "she reads a long book",
    ...          "stocks fell today", "he cooks pasta"]
    >>> t = fit_tuned_lens("hf-layers:minilm", texts, ridge=0.1, held_out=0.34)
    >>> t.n_held_out, [f.layer for f in t.fits], t.to_dict()["fits"][5]["n_test"] > 0
    (2, [0, 1, 2, 3, 4, 5], True)
    """
    items = _texts(texts, "texts")
    if len(items) < 2:
        raise InputError(f"the tuned lens needs at least 2 texts (some to fit, some held out), got {len(items)}")
    held_out = check_scalar(held_out, "held_out", float, low=0.0, high=1.0, include="neither")
    check_scalar(ridge, "ridge", float, low=0.0)
    check_scalar(seed, "seed", int, low=0)
    check_choice(score, "score", LENS_SCORES)
    enc = _hf_layers(encoder, options)
    last = enc.n_layers - 1
    order = np.random.default_rng(seed).permutation(len(items))
    n_test = min(len(items) - 1, max(1, round(held_out * len(items))))
    test, train = sorted(order[:n_test].tolist()), sorted(order[n_test:].tolist())
    total = len(items)

    def tick(offset: int) -> Progress | None:
        return None if progress is None else (lambda stage, done, _: progress(stage, offset + done, total))

    dim = enc.dim
    moments = {layer: TranslatorMoments(dim, dim) for layer in range(last)}
    for start in range(0, len(train), FIT_BLOCK_TEXTS):
        block = [items[i] for i in train[start:start + FIT_BLOCK_TEXTS]]
        states = token_states(encoder, block, skip_special=skip_special, batch_size=batch_size, options=options,
                              progress=tick(start))
        for layer, m in moments.items():
            m.add(states.states[layer], states.states[last])
    translators = {layer: m.translator(ridge) for layer, m in moments.items()}
    held = token_states(encoder, [items[i] for i in test], skip_special=skip_special, batch_size=batch_size,
                        options=options, progress=tick(len(train)))
    E, _ = vocabulary_matrix(encoder, options)
    n_train = next(iter(moments.values())).n if moments else 0
    fits = tuple(translator_fit(t, held.states[layer], held.states[last], E, layer=layer, n_train=n_train,
                                score=score) for layer, t in translators.items())
    return TunedLens(encoder, last, translators, fits, len(items), n_test, tuple(test), float(ridge), float(held_out),
                     int(seed), score)


@dataclass(frozen=True, eq=False)
class TokenLens:
    """The top vocabulary tokens of every token of a text at every chosen layer.

    Attributes
    ----------
    encoder, text : str
    layers : tuple of int
    positions : tuple of int
        Each token's index in the sequence the model saw (``[CLS]`` is 0).
    tokens : tuple of str
        The input tokens.
    projections : tuple of VocabularyProjection
        One per layer, a row per token (the plain logit lens).
    tuned_projections : tuple of VocabularyProjection or None
        With a tuned lens: the translated states' tokens, one per layer (the last layer's own for the last).
    tuned : TunedLens or None
    k : int
    score : str
    all_tokens : bool
        Whether special and ``[unused*]`` tokens could be shown (:func:`hidden_token_ids`).

    Examples
    --------
    >>> r = token_lens("hf-layers:minilm", "the cat", layers=[0, -1], k=2)
    >>> r.layers, r.tokens, r.to_dict()["layers"][0]["tokens"][1]["top"][0]["token"]
    ((0, 6), ('the', 'cat'), 'cat')
    """

    encoder: str
    text: str
    layers: tuple[int, ...]
    positions: tuple[int, ...]
    tokens: tuple[str, ...]
    projections: tuple[VocabularyProjection, ...]
    tuned_projections: tuple[VocabularyProjection, ...] | None
    tuned: TunedLens | None
    k: int
    score: str
    all_tokens: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "text", "k", "score", "all_tokens", "tokens", "layers": [{"layer", "tokens": [{"position",
        "token", "top", "tuned_top"?}]}], "tuned": TunedLens.to_dict() or None}``."""
        rows = []
        for j, layer in enumerate(self.layers):
            plain = self.projections[j].to_dict()["top"]
            tuned = None if self.tuned_projections is None else self.tuned_projections[j].to_dict()["top"]
            rows.append({"layer": int(layer), "tokens": [
                {"position": int(p), "token": t, "top": plain[i], **({} if tuned is None else {"tuned_top": tuned[i]})}
                for i, (p, t) in enumerate(zip(self.positions, self.tokens, strict=True))]})
        return {"encoder": self.encoder, "text": self.text, "k": int(self.k), "score": self.score,
                "all_tokens": bool(self.all_tokens), "tokens": list(self.tokens), "layers": rows,
                "tuned": None if self.tuned is None else self.tuned.to_dict()}


def token_lens(encoder: str, text: str, *, layers: str | Sequence[int] = "all", k: int = 10, score: str = "dot",
               skip_special: bool = True, tuned: TunedLens | Sequence[str] | None = None, ridge: float = 1e-3,
               all_tokens: bool = False, options: dict[str, Any] | None = None,
               progress: Progress | None = None) -> TokenLens:
    """Project every token's state of ``text`` at each chosen layer onto the vocabulary (logit / tuned lens).

    Parameters
    ----------
    encoder : str
        ``hf-layers:<folder>``: an encoder that returns hidden states.
    text : str
    layers : ``"all"`` or list of int
        Negative from the end.
    k : int
        Tokens shown per state.
    score : {"dot", "cosine"}
    skip_special : bool
        Leave out ``[CLS]``/``[SEP]``... rows.
    tuned : TunedLens, sequence of str or None
        A fitted tuned lens (same encoder), or texts to fit one on first (:func:`fit_tuned_lens`, with ``ridge``).
    all_tokens : bool
        Also show the special and ``[unused*]`` tokens (:func:`hidden_token_ids`), hidden by default.
    options, progress
        Encoder options; progress of the tuned lens's fit.

    Returns
    -------
    TokenLens

    Raises
    ------
    InputError
        An encoder without hidden states, a layer out of range, an empty text, a tuned lens of another encoder.

    Examples
    --------
    >>> r = token_lens("hf-layers:minilm", "The capital of France is Paris.", layers=[0, -1], k=3)
    >>> r.tokens[3], r.projections[0].tokens[3], "paris" in r.projections[1].tokens[5]
    ('france', ('france', 'french', 'paris'), True)
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise InputError("the text is empty: give a text to read through the lens")
    check_choice(score, "score", LENS_SCORES)
    enc = _hf_layers(encoder, options)
    chosen = enc.resolve_layers(layers)
    k = check_scalar(k, "k", int, low=1)
    if tuned is not None and not isinstance(tuned, TunedLens):
        tuned = fit_tuned_lens(encoder, _texts(tuned, "tuned-lens texts"), ridge=ridge, score=score,
                               options=options, progress=progress)
    if tuned is not None and tuned.encoder != encoder:
        raise InputError(f"the tuned lens was fitted for {tuned.encoder}, not {encoder}")
    states = token_states(encoder, [text], layers=chosen, skip_special=skip_special, options=options)
    loaded = enc.loaded
    ids = loaded.tokenizer([(enc.prompt or "") + text], truncation=True, max_length=enc.max_length)["input_ids"][0]
    positions = tuple(int(p) for p in states.positions)
    tokens = tuple(loaded.tokenizer.convert_ids_to_tokens([int(ids[p]) for p in positions]))
    E, vocab = vocabulary_matrix(encoder, options)
    hide = _hidden(encoder, options, all_tokens)
    projections = tuple(project_vocabulary(s, E, vocab, k=k, score=score, exclude=hide) for s in states.states)
    tuned_projections = None
    if tuned is not None:
        tuned_projections = tuple(
            project_vocabulary(s if layer == tuned.last_layer else tuned.translators[layer].apply(s), E, vocab,
                               k=k, score=score, exclude=hide)
            for layer, s in zip(chosen, states.states, strict=True))
    return TokenLens(encoder, text, tuple(chosen), positions, tokens, projections, tuned_projections, tuned, k, score,
                     bool(all_tokens))


@dataclass(frozen=True, eq=False)
class VectorLens:
    """Vectors that went through no model, read as vocabulary tokens (the zero-pass projection).

    Attributes
    ----------
    encoder : str
        Whose embedding matrix.
    ids : tuple of str
        A name per vector (stored item ids, or ``"0"``, ``"1"``...).
    projection : VocabularyProjection
    space : str or None
        The stored space the vectors came from.
    all_tokens : bool
        Whether special and ``[unused*]`` tokens could be shown.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> v = get_encoder("hf-layers:minilm").encode(["Paris is the capital of France."])
    >>> r = vector_lens("hf-layers:minilm", v, k=20)
    >>> "paris" in r.projection.tokens[0], r.to_dict()["items"][0]["id"]
    (True, '0')
    """

    encoder: str
    ids: tuple[str, ...]
    projection: VocabularyProjection
    space: str | None = None
    all_tokens: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "space", "score", "all_tokens", "items": [{"id", "top"}]}``."""
        top = self.projection.to_dict()["top"]
        return {"encoder": self.encoder, "space": self.space, "score": self.projection.score,
                "all_tokens": bool(self.all_tokens),
                "items": [{"id": i, "top": t} for i, t in zip(self.ids, top, strict=True)]}


def vector_lens(encoder: str, vectors: Any, *, ids: Sequence[str] | None = None, k: int = 10, score: str = "dot",
                space: str | None = None, all_tokens: bool = False,
                options: dict[str, Any] | None = None) -> VectorLens:
    """Project any vectors of the encoder's width onto its token embedding matrix (no forward pass).

    Special and ``[unused*]`` tokens are not shown unless ``all_tokens`` (:func:`hidden_token_ids`).

    Raises
    ------
    InputError
        An encoder without hidden states, vectors of another width, ``ids`` not one per vector.

    Examples
    --------
    >>> E, vocab = vocabulary_matrix("hf-layers:minilm")
    >>> top = vector_lens("hf-layers:minilm", E[vocab.index("paris")], ids=["row"], k=1, score="cosine").to_dict()
    >>> [(item["id"], item["top"][0]["token"], round(item["top"][0]["score"], 6)) for item in top["items"]]
    [('row', 'paris', 1.0)]
    """
    E, vocab = vocabulary_matrix(encoder, options)
    arr = np.asarray(vectors, dtype=np.float64)
    arr = arr[None, :] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[1] != E.shape[1]:
        raise InputError(f"the vectors have shape {arr.shape}; {encoder}'s vocabulary has width {E.shape[1]}")
    names = tuple(str(i) for i in range(arr.shape[0])) if ids is None else tuple(str(i) for i in ids)
    if len(names) != arr.shape[0]:
        raise InputError(f"{len(names)} ids for {arr.shape[0]} vectors")
    hide = _hidden(encoder, options, all_tokens)
    return VectorLens(encoder, names, project_vocabulary(arr, E, vocab, k=k, score=score, exclude=hide), space,
                      bool(all_tokens))


def space_lens(store: Any, space: str, encoder: str, *, ids: Sequence[str] | None = None, limit: int = 10,
               k: int = 10, score: str = "cosine", all_tokens: bool = False,
               options: dict[str, Any] | None = None) -> VectorLens:
    """Project a stored space's items (``ids``, or its first ``limit``) onto an encoder's vocabulary.

    ``score`` defaults to ``cosine``: stored vectors are often normalised, unlike the model's states.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> from repspace.store import example_space
    >>> texts = ["Paris is in France.", "Dogs bark."]
    >>> sp = example_space(name="s", vectors=get_encoder("hf-layers:minilm").encode(texts), texts=texts)
    >>> r = space_lens(sp.store, "s", "hf-layers:minilm", k=30)
    >>> len(r.ids), "paris" in r.projection.tokens[0]
    (2, True)
    """
    check_scalar(limit, "limit", int, low=1)
    sp = store.space(space)
    if ids:
        names = [str(i) for i in ids]
        vectors = sp.vectors_of(names)
    else:
        snap = sp.snapshot()
        names, vectors = list(snap.ids[:limit]), np.asarray(snap.vectors[:limit])
    if not names:
        raise InputError(f"space {space} has no items to project")
    return vector_lens(encoder, vectors, ids=names, k=k, score=score, space=space, all_tokens=all_tokens,
                       options=options)
