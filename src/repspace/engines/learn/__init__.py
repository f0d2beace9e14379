"""Learn spaces from the user's own texts: word2vec, fastText and doc2vec on gensim, with their full recipe.

A :class:`Corpus` is tokenised documents plus the :class:`Tokenizer` that made
them and a fingerprint; the trainers return :class:`TrainedVectors` (keys,
float32 vectors, the recipe: method, every hyper-parameter, seed, workers,
tokeniser, corpus fingerprint, gensim and numpy versions; and gensim's saved
model). The query side: :func:`word_vectors` (fastText: unseen words through
their subwords) and :func:`infer_vectors` (doc2vec: new texts, deterministic).
With ``workers=1`` and a fixed seed training is bit-for-bit repeatable.

Beyond texts: :func:`train_poincare` (Poincare embeddings of a hierarchy, with
:func:`train_euclidean` trained the same way and :func:`reconstruction` to
score both), :func:`train_node2vec` on a :class:`Graph` read by
:func:`read_edges`, :func:`retrofit` to a :class:`Lexicon` (WordNet's synonyms
from :func:`synonym_lexicon`), and linear heads on frozen vectors
(:func:`train_matryoshka_head`, :func:`train_pair_adapter`; torch, imported when
called).

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
from repspace.engines.learn.graph import Graph, graph_from_edges, read_edges
from repspace.engines.learn.heads import HeadResult, train_matryoshka_head, train_pair_adapter
from repspace.engines.learn.node2vec import random_walks, train_node2vec
from repspace.engines.learn.poincare import reconstruction, train_euclidean, train_poincare
from repspace.engines.learn.retrofit import Lexicon, RetrofitResult, lexicon_from_mapping, read_lexicon, retrofit
from repspace.engines.learn.word2vec import train_fasttext, train_word2vec, word_vectors
from repspace.engines.learn.wordnet import hypernym_closure, synonym_lexicon, wordnet_available

__all__ = [
    "DEFAULT_PATTERN",
    "Corpus",
    "Graph",
    "HeadResult",
    "Lexicon",
    "RetrofitResult",
    "Tokenizer",
    "TrainedVectors",
    "corpus_fingerprint",
    "corpus_from_texts",
    "corpus_from_tokens",
    "graph_from_edges",
    "hypernym_closure",
    "infer_vectors",
    "lexicon_from_mapping",
    "load_model",
    "random_walks",
    "read_edges",
    "read_jsonl_corpus",
    "read_lexicon",
    "read_text_corpus",
    "reconstruction",
    "retrofit",
    "synonym_lexicon",
    "train_doc2vec",
    "train_euclidean",
    "train_fasttext",
    "train_matryoshka_head",
    "train_node2vec",
    "train_pair_adapter",
    "train_poincare",
    "train_word2vec",
    "word_vectors",
    "wordnet_available",
]
