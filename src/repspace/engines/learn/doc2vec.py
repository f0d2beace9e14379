"""Paragraph Vector (doc2vec, Le & Mikolov 2014) trained with gensim, and deterministic inference for new texts.

:func:`train_doc2vec` learns one vector per document (PV-DM or PV-DBOW) and
returns :class:`TrainedVectors` whose keys are the documents' tags (a corpus's
ids). :func:`infer_vectors` gives vectors to new texts with the trained model.

Determinism
-----------
Training is deterministic with ``workers=1`` and a fixed seed, as for
word2vec (see :mod:`repspace.engines.learn.word2vec`); with ``workers > 1`` it
is not. gensim's own ``infer_vector`` is random twice over: it continues the
model's random stream (so the same text inferred twice differs) and seeds the
starting vector with Python's salted ``hash`` of the text (so it differs
between processes unless ``PYTHONHASHSEED`` is set). :func:`infer_vectors`
runs the same updates (gensim's ``train_document_dm`` / ``train_document_dbow``)
from a starting vector seeded by SHA-256 of ``seed`` and the tokens, with the
random stream reset to ``seed`` before each text: the same text, seed and model
give the same vector, in any process.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from repspace.core.checks import positive_int
from repspace.core.errors import InputError
from repspace.engines.learn._gensim import (
    ModelLike,
    TrainedVectors,
    check_fraction,
    check_positive_float,
    check_seed,
    check_workers,
    epoch_progress,
    frozen,
    load_model,
    model_to_bytes,
    most_frequent,
    stable_hash,
    versions,
)
from repspace.engines.learn.corpus import Corpus, Tokenizer, corpus_from_tokens

__all__ = ["infer_vectors", "train_doc2vec"]


def _as_tagged(docs: Corpus | Iterable[Any]) -> Corpus:
    """A corpus whose ids are the tags: a :class:`Corpus`, ``(tag, tokens)`` pairs or gensim ``TaggedDocument``s."""
    from gensim.models.doc2vec import TaggedDocument

    if isinstance(docs, Corpus):
        return docs
    if isinstance(docs, str):
        raise InputError("expected tagged documents, got one string")
    tags: list[str] = []
    tokens: list[Sequence[str]] = []
    for i, doc in enumerate(docs):
        if isinstance(doc, TaggedDocument):
            doc_tags = list(doc.tags)
            if len(doc_tags) != 1:
                raise InputError(f"document {i} has {len(doc_tags)} tags; each document needs exactly one")
            tag, words = doc_tags[0], doc.words
        elif isinstance(doc, (tuple, list)) and len(doc) == 2 and not isinstance(doc[1], str):
            tag, words = doc
        else:
            raise InputError(f"document {i} must be a (tag, tokens) pair or a TaggedDocument")
        if isinstance(tag, bool) or not isinstance(tag, (str, int, np.integer)):
            raise InputError(f"document {i}'s tag must be a string or integer, not {tag!r}")
        tags.append(str(tag))
        tokens.append(words)
    return corpus_from_tokens(tokens, ids=tags)


def train_doc2vec(docs_with_tags: Corpus | Iterable[Any], *, dm: bool = True, vector_size: int = 100,
                  window: int = 5, min_count: int = 5, negative: int = 5, sample: float = 1e-3,
                  epochs: int = 10, alpha: float = 0.025, min_alpha: float = 0.0001, seed: int = 0,
                  workers: int = 1, progress: Any = None) -> TrainedVectors:
    """Train doc2vec (gensim's ``Doc2Vec``, negative sampling): one vector per tagged document.

    Parameters
    ----------
    docs_with_tags : Corpus, or iterable of (tag, tokens) pairs or gensim TaggedDocument
        The documents; a corpus's ids are the tags. Tags must be unique (one per
        document); documents without a token are skipped.
    dm : bool
        PV-DM (the document vector joins the mean of the context words to
        predict the centre word) when true, PV-DBOW (the document vector alone
        predicts its words) when false.
    vector_size, window, min_count, negative, sample, epochs, alpha, min_alpha, seed, workers
        As in :func:`repspace.engines.learn.word2vec.train_word2vec`; ``epochs``
        defaults to gensim's 10.
    progress : callable, optional
        ``progress("train", done, epochs)`` after each epoch.

    Returns
    -------
    TrainedVectors
        ``keys`` are the tags in corpus order; ``counts`` the documents' token counts.

    Raises
    ------
    InputError
        An empty corpus, one without tokens, no word at least ``min_count``
        times, duplicate tags, or a bad hyper-parameter.

    Examples
    --------
    >>> from repspace.engines.learn.corpus import corpus_from_texts
    >>> texts = ["cats purr and sleep", "dogs bark and run", "cats and dogs play"] * 5
    >>> corpus = corpus_from_texts(texts)
    >>> r = train_doc2vec(corpus, vector_size=8, min_count=1, epochs=5)
    >>> r.keys[:3], r.vectors.shape, r.recipe["architecture"]
    (('0', '1', '2'), (15, 8), 'pv-dm')
    >>> q = infer_vectors(r, ["dogs bark"], tokenizer=corpus.tokenizer)
    >>> q.shape, bool((q == infer_vectors(r, ["dogs bark"], tokenizer=corpus.tokenizer)).all())
    ((1, 8), True)
    """
    from gensim.models.doc2vec import Doc2Vec, TaggedDocument

    corpus = _as_tagged(docs_with_tags)
    params = {
        "dm": int(bool(dm)),
        "vector_size": positive_int(vector_size, "vector_size"),
        "window": positive_int(window, "window"),
        "min_count": positive_int(min_count, "min_count"),
        "negative": positive_int(negative, "negative"),
        "hs": 0,
        "ns_exponent": 0.75,
        "sample": check_fraction(sample, "sample"),
        "alpha": check_positive_float(alpha, "alpha"),
        "min_alpha": check_fraction(min_alpha, "min_alpha", hi=alpha),
        "epochs": positive_int(epochs, "epochs"),
        "seed": check_seed(seed),
        "dm_mean": None,
        "dm_concat": 0,
        "dm_tag_count": 1,
        "dbow_words": 0,
        "max_vocab_size": None,
        "max_final_vocab": None,
        "sorted_vocab": 1,
        "shrink_windows": True,
        "batch_words": 10_000,
    }
    workers = check_workers(workers)
    start = time.perf_counter()
    tagged = [TaggedDocument(list(words), [tag]) for tag, words in zip(corpus.ids, corpus.documents)]
    model = Doc2Vec(workers=workers, hashfxn=stable_hash, **params)
    model.build_vocab(tagged)
    if len(model.wv) == 0:
        word, count = most_frequent(corpus.documents)
        raise InputError(f"no token occurs at least min_count={params['min_count']} times "
                         f"(the most frequent, {word!r}, occurs {count})")
    try:
        model.train(tagged, total_examples=model.corpus_count, total_words=model.corpus_total_words,
                    epochs=model.epochs, callbacks=epoch_progress(progress, model.epochs))
    except RuntimeError as e:  # "you must first build vocabulary before training the model"
        raise InputError(f"no token occurs at least min_count={params['min_count']} times ({e})") from None
    seconds = time.perf_counter() - start
    rows = [model.dv.get_index(tag) for tag in corpus.ids]
    counts = np.array([len(d) for d in corpus.documents], dtype=np.int64)
    recipe = {
        "method": "doc2vec",
        "architecture": "pv-dm" if params["dm"] else "pv-dbow",
        "params": params,
        "workers": workers,
        "deterministic": workers == 1,
        "hashfxn": "crc32",
        "phrases": None,
        "tokenizer": None if corpus.tokenizer is None else corpus.tokenizer.to_dict(),
        "corpus_fingerprint": corpus.fingerprint,
        "corpus": corpus.to_dict(),
        **versions(),
    }
    info = {"vocabulary": len(model.wv), "documents": len(corpus), "tokens": corpus.n_tokens}
    return TrainedVectors("doc2vec", corpus.ids, frozen(model.dv.vectors[rows], np.float32),
                          frozen(counts, np.int64), recipe, model_to_bytes(model), seconds, info)


def _start_vector(size: int, seed: int, words: Sequence[str]) -> np.ndarray:
    """gensim's weak random start ``(U[0,1) - 0.5) / size``, seeded by SHA-256 of the seed and the tokens."""
    h = hashlib.sha256(f"{seed}\x00".encode())
    for w in words:
        h.update(w.encode("utf-8"))
        h.update(b"\x00")
    rng = np.random.Generator(np.random.SFC64(int.from_bytes(h.digest()[:8], "little")))
    return ((rng.random(size).astype(np.float32) - np.float32(0.5)) / np.float32(size)).reshape(1, size)


def infer_vectors(model: ModelLike, docs: Corpus | Sequence[str] | Sequence[Sequence[str]], *, seed: int = 0,
                  epochs: int | None = None, alpha: float | None = None, min_alpha: float | None = None,
                  tokenizer: Tokenizer | None = None) -> np.ndarray:
    """Vectors for new documents from a trained doc2vec model, float32, one row per document; deterministic.

    The model's output weights and word vectors stay fixed; each document's
    vector is trained from a seeded start for ``epochs`` passes (gensim's
    ``infer_vector``, made deterministic: see the module's notes).

    Parameters
    ----------
    model : TrainedVectors, bytes, path or gensim Doc2Vec
        What :func:`train_doc2vec` returned, its ``model_bytes``, a saved file,
        or a loaded model (fastest for repeated queries). A loaded model's
        random state is restored afterwards.
    docs : Corpus, sequence of str, or sequence of token lists
        Texts are tokenised with ``tokenizer``; token lists are used as they are.
    seed : int
        Seeds each document's start vector and random stream.
    epochs, alpha, min_alpha : optional
        Default the model's training values.
    tokenizer : Tokenizer, optional
        For texts; default the recipe's when ``model`` is a
        :class:`TrainedVectors` with one, else :class:`Tokenizer()`.

    Examples
    --------
    >>> from repspace.engines.learn.corpus import corpus_from_texts
    >>> r = train_doc2vec(corpus_from_texts(["red apples", "green pears", "red cherries"] * 5),
    ...                   vector_size=4, min_count=1, dm=False, epochs=3)
    >>> a = infer_vectors(r, [["red", "apples"], ["green", "pears"]], seed=7)
    >>> a.shape, bool((a == infer_vectors(r, ["Red apples!", "green pears"], seed=7)).all())
    ((2, 4), True)
    """
    from gensim.models.doc2vec import Doc2Vec, train_document_dbow, train_document_dm, train_document_dm_concat

    seed = check_seed(seed)
    if tokenizer is None and isinstance(model, TrainedVectors) and model.recipe.get("tokenizer"):
        tokenizer = Tokenizer.from_dict(model.recipe["tokenizer"])
    m = load_model(model)
    if not isinstance(m, Doc2Vec):
        raise InputError("this is a word-vector model, not doc2vec: use word_vectors for words")
    if isinstance(docs, Corpus):
        token_lists = [list(d) for d in docs.documents]
    else:
        if isinstance(docs, str):
            raise InputError("expected a list of texts, got one string")
        tok = Tokenizer() if tokenizer is None else tokenizer
        token_lists = []
        for i, d in enumerate(docs):
            if isinstance(d, str):
                token_lists.append(tok.tokenize(d))
            elif isinstance(d, (list, tuple)) and all(isinstance(t, str) for t in d):
                token_lists.append(list(d))
            else:
                raise InputError(f"document {i} must be a text or a list of str tokens")
    epochs = m.epochs if epochs is None else positive_int(epochs, "epochs")
    alpha = m.alpha if alpha is None else check_positive_float(alpha, "alpha")
    min_alpha = m.min_alpha if min_alpha is None else check_fraction(min_alpha, "min_alpha", hi=alpha)
    size = m.dv.vector_size
    out = np.zeros((len(token_lists), size), dtype=np.float32)
    saved_random = m.random
    try:
        for i, words in enumerate(token_lists):
            m.random = np.random.RandomState(seed)
            vec = _start_vector(size, seed, words)
            lockf = np.ones(1, dtype=np.float32)
            work = np.zeros(m.layer1_size, dtype=np.float32)
            neu1 = np.zeros(m.layer1_size, dtype=np.float32)
            step = (alpha - min_alpha) / max(epochs - 1, 1)
            a = alpha
            for _ in range(epochs):
                if m.sg:
                    train_document_dbow(m, words, [0], a, work, learn_words=False, learn_hidden=False,
                                        doctag_vectors=vec, doctags_lockf=lockf)
                elif m.dm_concat:
                    train_document_dm_concat(m, words, [0], a, work, neu1, learn_words=False, learn_hidden=False,
                                             doctag_vectors=vec, doctags_lockf=lockf)
                else:
                    train_document_dm(m, words, [0], a, work, neu1, learn_words=False, learn_hidden=False,
                                      doctag_vectors=vec, doctags_lockf=lockf)
                a -= step
            out[i] = vec[0]
    finally:
        m.random = saved_random
    return out
