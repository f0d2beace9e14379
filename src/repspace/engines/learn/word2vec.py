"""word2vec and fastText word vectors trained with gensim, each with its full recipe and its model.

:func:`train_word2vec` (CBOW or skip-gram with negative sampling, Mikolov et
al. 2013) and :func:`train_fasttext` (the same with character n-gram subwords,
Bojanowski et al. 2017) take a :class:`~repspace.engines.learn.corpus.Corpus`
(or token lists) and return :class:`TrainedVectors`: the vocabulary, its
float32 vectors, the recipe and gensim's saved model. Phrase detection
(gensim's ``Phrases``: frequent bigrams such as ``new_york`` become one token
before training) and subsampling of frequent words (``sample``) are exposed.
:func:`word_vectors` answers queries, for unseen words too when the model is
fastText (through their subwords).

Determinism
-----------
With ``workers=1`` and a fixed ``seed``, two runs on the same corpus give
bit-identical vectors (same machine, same gensim and numpy): the vocabulary
order, the initial vectors (drawn from ``numpy.random.default_rng(seed)``) and
the random stream of negative sampling, window shrinking and subsampling
(``RandomState(seed)``) are all fixed, and no step uses Python's salted
``hash`` (a CRC-32 is passed as ``hashfxn``), so ``PYTHONHASHSEED`` does not
matter. With ``workers > 1`` gensim hands jobs of up to 10,000 words to threads
that update the shared weights without locks (Hogwild): the vocabulary, counts
and initial vectors are still identical, but the order of updates depends on
thread scheduling, so the trained vectors differ from run to run, a little
(skip-gram on gensim's Lee corpus, 50 dimensions, 20 epochs: median cosine 0.97
between a word's vectors from one and two workers, where another seed gives
0.15, the space being rotated). The recipe says which (``deterministic``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from repspace.core.checks import positive_int
from repspace.core.errors import InputError
from repspace.engines.learn._gensim import (
    ModelLike,
    TrainedVectors,
    as_corpus,
    check_positive_float,
    check_workers,
    epoch_progress,
    epoch_snapshots,
    frozen,
    load_model,
    model_to_bytes,
    most_frequent,
    skipgram_params,
    stable_hash,
    versions,
)
from repspace.engines.learn.corpus import Corpus

__all__ = ["train_fasttext", "train_word2vec", "word_vectors"]


def _phrase(sentences: list[list[str]], min_count: int, threshold: float) -> tuple[list[list[str]], int]:
    """Sentences with gensim's detected bigrams joined by ``_``, and the number of distinct phrases found."""
    from gensim.models.phrases import Phrases

    model = Phrases(sentences, min_count=min_count, threshold=threshold, delimiter="_").freeze()
    return [model[s] for s in sentences], len(model.phrasegrams)


def _train(method: str, docs: Corpus | Iterable[Sequence[str]], params: dict[str, Any], extra: dict[str, Any],
           workers: int, phrases: bool, phrases_min_count: int, phrases_threshold: float,
           progress: Any = None, checkpoints: bool = False) -> TrainedVectors:
    """Check the common hyper-parameters, train ``method`` and package the result."""
    from gensim.models import FastText, Word2Vec

    corpus = as_corpus(docs)
    params = {
        **skipgram_params(sg=params["sg"], vector_size=params["vector_size"], window=params["window"],
                          min_count=positive_int(params["min_count"], "min_count"), negative=params["negative"],
                          sample=params["sample"], alpha=params["alpha"], min_alpha=params["min_alpha"],
                          epochs=params["epochs"], seed=params["seed"]),
        **extra,
    }
    workers = check_workers(workers)
    phrase_spec = None
    if phrases:
        phrase_spec = {
            "min_count": positive_int(phrases_min_count, "phrases_min_count"),
            "threshold": check_positive_float(phrases_threshold, "phrases_threshold"),
            "scoring": "default",
            "delimiter": "_",
        }
    start = time.perf_counter()
    shots: list[tuple[np.ndarray, float]] = []
    sentences = [list(d) for d in corpus.documents]
    n_phrases = None
    if phrase_spec is not None:
        sentences, n_phrases = _phrase(sentences, phrase_spec["min_count"], phrase_spec["threshold"])
    cls = FastText if method == "fasttext" else Word2Vec
    model = cls(workers=workers, hashfxn=stable_hash, **params)
    model.build_vocab(sentences)
    if len(model.wv) == 0:
        word, count = most_frequent(sentences)
        raise InputError(f"no token occurs at least min_count={params['min_count']} times "
                         f"(the most frequent, {word!r}, occurs {count})")
    try:
        model.train(sentences, total_examples=model.corpus_count, total_words=model.corpus_total_words,
                    epochs=model.epochs, compute_loss=checkpoints,
                    callbacks=epoch_progress(progress, params["epochs"]) + ([epoch_snapshots(shots)] if checkpoints
                                                                             else []))
    except RuntimeError as e:  # "you must first build vocabulary before training the model"
        raise InputError(f"no token occurs at least min_count={params['min_count']} times ({e})") from None
    seconds = time.perf_counter() - start
    keys = tuple(model.wv.index_to_key)
    counts = np.array([model.wv.get_vecattr(k, "count") for k in keys], dtype=np.int64)
    recipe = {
        "method": method,
        "architecture": "skip-gram" if params["sg"] else "cbow",
        "params": params,
        "workers": workers,
        "deterministic": workers == 1,
        "hashfxn": "crc32",
        "phrases": phrase_spec,
        "tokenizer": None if corpus.tokenizer is None else corpus.tokenizer.to_dict(),
        "corpus_fingerprint": corpus.fingerprint,
        "corpus": corpus.to_dict(),
        **versions(),
    }
    info = {"vocabulary": len(keys), "documents": len(corpus), "tokens": corpus.n_tokens,
            "phrases": n_phrases, "trained_words": int(sum(len(s) for s in sentences))}
    running = [0.0] + [loss for _, loss in shots]
    return TrainedVectors(method, keys, frozen(model.wv.vectors, np.float32), frozen(counts, np.int64), recipe,
                          model_to_bytes(model), seconds, info, tuple(v for v, _ in shots),
                          tuple(b - a for a, b in zip(running, running[1:])))


def train_word2vec(docs: Corpus | Iterable[Sequence[str]], *, sg: bool = False, vector_size: int = 100,
                   window: int = 5, min_count: int = 5, negative: int = 5, sample: float = 1e-3,
                   epochs: int = 5, alpha: float = 0.025, min_alpha: float = 0.0001, seed: int = 0,
                   workers: int = 1, phrases: bool = False, phrases_min_count: int = 5,
                   phrases_threshold: float = 10.0, checkpoints: bool = False,
                   progress: Any = None) -> TrainedVectors:
    """Train word2vec (gensim's ``Word2Vec``, negative sampling) on a corpus.

    Parameters
    ----------
    docs : Corpus or iterable of token lists
        The training documents (see :mod:`repspace.engines.learn.corpus`); the
        recipe records a corpus's tokeniser and fingerprint.
    sg : bool
        Skip-gram when true, CBOW (gensim's default) when false.
    vector_size, window, min_count, negative, epochs : int
        Dimensions, context window, minimum count of a kept word, negative
        samples per positive one, passes over the corpus.
    sample : float
        Subsampling of frequent words: a word of corpus frequency ``f`` is kept
        with probability ``(sqrt(f / sample) + 1) * sample / f``; ``0`` keeps
        every word.
    alpha, min_alpha : float
        Learning rate, decaying linearly from ``alpha`` to ``min_alpha``.
    seed : int
        Seeds the initial vectors and every random draw of training.
    workers : int
        Training threads; only ``1`` is deterministic (see the module's notes).
    phrases : bool
        Join frequent bigrams into one token (``new_york``) with gensim's
        ``Phrases`` before training (one pass; ``phrases_min_count`` and
        ``phrases_threshold`` are its ``min_count`` and ``threshold``).
    checkpoints : bool
        Keep the vectors after every epoch (:attr:`TrainedVectors.checkpoints`) and each epoch's training loss
        (:attr:`TrainedVectors.epoch_loss`; gensim's ``compute_loss``, which changes nothing in the vectors).
    progress : callable, optional
        ``progress("train", done, epochs)`` after each epoch.

    Returns
    -------
    TrainedVectors
        The vocabulary, most frequent first, its vectors, the recipe and the model.

    Raises
    ------
    InputError
        An empty corpus, one without tokens, no token at least ``min_count``
        times, or a bad hyper-parameter.

    Examples
    --------
    >>> from repspace.engines.learn.corpus import corpus_from_texts
    >>> corpus = corpus_from_texts(["the cat sat on the mat", "the dog sat on the log"] * 20)
    >>> r = train_word2vec(corpus, vector_size=8, min_count=2, epochs=2, seed=1)
    >>> r.keys[:3], r.vectors.shape, r.vectors.dtype
    (('the', 'on', 'sat'), (7, 8), dtype('float32'))
    >>> r.recipe["params"]["seed"], r.recipe["deterministic"], r.recipe["corpus_fingerprint"] == corpus.fingerprint
    (1, True, True)
    >>> train_word2vec(corpus, min_count=100)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: no token occurs at least min_count=100 times (the most frequent, 'the', occurs 80)
    """
    return _train("word2vec",
                  docs, dict(sg=sg, vector_size=vector_size, window=window, min_count=min_count, negative=negative,
                             sample=sample, epochs=epochs, alpha=alpha, min_alpha=min_alpha, seed=seed), {},
                  workers, phrases, phrases_min_count, phrases_threshold, progress, checkpoints)


def train_fasttext(docs: Corpus | Iterable[Sequence[str]], *, sg: bool = False, vector_size: int = 100,
                   window: int = 5, min_count: int = 5, negative: int = 5, sample: float = 1e-3,
                   epochs: int = 5, alpha: float = 0.025, min_alpha: float = 0.0001, seed: int = 0,
                   workers: int = 1, min_n: int = 3, max_n: int = 6, bucket: int = 2_000_000,
                   phrases: bool = False, phrases_min_count: int = 5,
                   phrases_threshold: float = 10.0, progress: Any = None) -> TrainedVectors:
    """Train fastText word vectors (gensim's ``FastText``): word2vec plus character n-gram subwords.

    Each word's vector is the mean of its own vector and those of its character
    n-grams (``min_n`` to ``max_n`` characters of ``<word>``, hashed into
    ``bucket`` rows), so words never seen in training still get a vector
    (:func:`word_vectors`). The other parameters are those of
    :func:`train_word2vec`.

    Parameters
    ----------
    min_n, max_n : int
        Shortest and longest character n-gram (``1 <= min_n <= max_n``).
    bucket : int
        Rows of the n-gram hash table. gensim's default, 2,000,000, holds
        ``bucket * vector_size`` float32 values twice over (vectors and their
        training state: 1.6 GB at 100 dimensions); small corpora need far fewer.

    Returns
    -------
    TrainedVectors
        The vocabulary's (composed) vectors, the recipe and the model, whose
        bytes :func:`word_vectors` queries.

    Examples
    --------
    >>> from repspace.engines.learn.corpus import corpus_from_texts
    >>> corpus = corpus_from_texts(["the running cat sat", "the runner dog ran"] * 20)
    >>> r = train_fasttext(corpus, vector_size=8, min_count=2, epochs=2, bucket=1000)
    >>> r.recipe["params"]["bucket"], r.vectors.shape
    (1000, (7, 8))
    >>> word_vectors(r, ["runnning"]).shape
    (1, 8)
    """
    min_n = positive_int(min_n, "min_n")
    max_n = positive_int(max_n, "max_n")
    if max_n < min_n:
        raise InputError(f"max_n ({max_n}) is below min_n ({min_n})")
    extra = {"min_n": min_n, "max_n": max_n, "bucket": positive_int(bucket, "bucket"), "word_ngrams": 1}
    return _train("fasttext",
                  docs, dict(sg=sg, vector_size=vector_size, window=window, min_count=min_count, negative=negative,
                             sample=sample, epochs=epochs, alpha=alpha, min_alpha=min_alpha, seed=seed), extra,
                  workers, phrases, phrases_min_count, phrases_threshold, progress)


def word_vectors(model: ModelLike, words: Sequence[str]) -> np.ndarray:
    """Vectors of ``words`` from a trained word2vec or fastText model, float32, one row per word.

    A fastText model gives every word a vector, an unseen one through its
    character n-grams; a word2vec model knows only its vocabulary.

    Parameters
    ----------
    model : TrainedVectors, bytes, path or gensim model
        What :func:`train_word2vec` / :func:`train_fasttext` returned, its
        ``model_bytes``, a file :meth:`TrainedVectors.save_model` wrote, or a
        loaded model (fastest for repeated queries: :func:`load_model`).
    words : sequence of str
        The words, tokenised as in training (lowercased by the default tokeniser).

    Raises
    ------
    InputError
        An empty word, or (word2vec) a word outside the vocabulary.

    Examples
    --------
    >>> from repspace.engines.learn.corpus import corpus_from_texts
    >>> r = train_word2vec(corpus_from_texts(["a cat sat", "a dog sat"] * 10), vector_size=4, min_count=1)
    >>> bool((word_vectors(r, ["cat"])[0] == r.vectors[r.index("cat")]).all())
    True
    >>> word_vectors(r, ["cow"])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: 'cow' is not in the word2vec vocabulary (3 words); a fastText model would give it a vector
    """
    from gensim.models import Doc2Vec, FastText

    m = load_model(model)
    if isinstance(m, Doc2Vec):
        raise InputError("this is a doc2vec model: use infer_vectors for texts")
    if isinstance(words, str):
        raise InputError("expected a list of words, got one string")
    words = list(words)
    for w in words:
        if not isinstance(w, str) or not w:
            raise InputError(f"each word must be a non-empty string, not {w!r}")
    if not isinstance(m, FastText):
        for w in words:
            if w not in m.wv.key_to_index:
                raise InputError(f"{w!r} is not in the word2vec vocabulary ({len(m.wv)} words); "
                                 "a fastText model would give it a vector")
    out = np.zeros((len(words), m.wv.vector_size), dtype=np.float32)
    for i, w in enumerate(words):
        out[i] = m.wv.get_vector(w)
    return out
