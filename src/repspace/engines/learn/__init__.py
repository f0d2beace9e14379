"""Learn spaces from the user's own texts: word2vec, fastText and doc2vec on gensim, with their full recipe.

A :class:`Corpus` is tokenised documents plus the :class:`Tokenizer` that made
them and a fingerprint; the trainers return :class:`TrainedVectors` (keys,
float32 vectors, the recipe: method, every hyper-parameter, seed, workers,
tokeniser, corpus fingerprint, gensim and numpy versions; and gensim's saved
model). The query side: :func:`word_vectors` (fastText: unseen words through
their subwords) and :func:`infer_vectors` (doc2vec: new texts, deterministic).
With ``workers=1`` and a fixed seed training is bit-for-bit repeatable.

This engine imports only :mod:`repspace.core` and third-party libraries.

Examples
--------
>>> from repspace.engines.learn import corpus_from_texts, train_word2vec
>>> corpus = corpus_from_texts(["the quick brown fox", "the lazy dog"] * 10)
>>> a = train_word2vec(corpus, vector_size=8, min_count=1, seed=3)
>>> b = train_word2vec(corpus, vector_size=8, min_count=1, seed=3)
>>> a.keys == b.keys and bool((a.vectors == b.vectors).all())
True
"""

from repspace.engines.learn._gensim import TrainedVectors, load_model
from repspace.engines.learn.corpus import (
    DEFAULT_PATTERN,
    Corpus,
    Tokenizer,
    corpus_fingerprint,
    corpus_from_texts,
    corpus_from_tokens,
    read_jsonl_corpus,
    read_text_corpus,
)
from repspace.engines.learn.doc2vec import infer_vectors, train_doc2vec
from repspace.engines.learn.word2vec import train_fasttext, train_word2vec, word_vectors

__all__ = [
    "DEFAULT_PATTERN",
    "Corpus",
    "Tokenizer",
    "TrainedVectors",
    "corpus_fingerprint",
    "corpus_from_texts",
    "corpus_from_tokens",
    "infer_vectors",
    "load_model",
    "read_jsonl_corpus",
    "read_text_corpus",
    "train_doc2vec",
    "train_fasttext",
    "train_word2vec",
    "word_vectors",
]
