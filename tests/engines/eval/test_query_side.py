"""Retrieval embeds queries with the encoder's query side, and the text cache keeps the two sides apart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _asymmetric import SynonymEncoder, beir_data, one_torch_thread  # noqa: F401 - an autouse fixture

from repspace.engines.eval import TextCache, as_query_encode
from repspace.engines.eval.retrieval import (
    BeirData,
    load_beir,
    retrieval,
    retrieval_from_vectors,
)


# ---------------------------------------------------------------------------- retrieval


def test_an_encoder_object_has_its_queries_embedded_on_the_query_side() -> None:
    enc, data = SynonymEncoder(), beir_data()
    assert retrieval(enc, data).main_score == 1.0
    assert enc.query_calls == 1
    # the same model with its queries embedded as documents: every document ties for every query
    wrong = retrieval(enc.encode, data).main_score
    assert wrong < 0.7
    # an explicit query side wins, for plain functions too
    assert retrieval(enc.encode, data, encode_queries=enc.encode_queries).main_score == 1.0
    assert retrieval(enc, data, encode_queries=enc.encode).main_score == wrong


def test_hubness_retrieval_uses_the_query_side_too() -> None:
    from repspace.workflows.evaluate._repair import hubness_retrieval

    enc, data = SynonymEncoder(), beir_data()
    assert hubness_retrieval(enc, data, "csls", kappa=1).main_score == 1.0
    assert hubness_retrieval(enc.encode, data, "csls", kappa=1).main_score < 0.7
    assert hubness_retrieval(enc.encode, data, "csls", kappa=1, encode_queries=enc.encode_queries).main_score == 1.0


def test_as_query_encode_picks_the_side() -> None:
    enc = SynonymEncoder()
    np.testing.assert_array_equal(as_query_encode(enc)(["feline"]), enc.encode(["cat"]))
    np.testing.assert_array_equal(as_query_encode(enc.encode)(["feline"]), enc.encode(["feline"]))
    np.testing.assert_array_equal(as_query_encode(enc.encode, enc)(["feline"]), enc.encode(["feline"]))


# ---------------------------------------------------------------------------- TextCache


def test_text_cache_keeps_query_and_document_vectors_of_a_text_apart() -> None:
    enc = SynonymEncoder()
    docs: list[list[str]] = []
    queries: list[list[str]] = []

    def encode_docs(texts: list[str]) -> np.ndarray:
        docs.append(list(texts))
        return enc.encode(texts)

    def encode_queries(texts: list[str]) -> np.ndarray:
        queries.append(list(texts))
        return enc.encode_queries(texts)

    cache = TextCache(encode_docs, encode_queries=encode_queries)
    assert cache.asymmetric
    as_doc = cache(["feline", "a dog"])
    as_query = cache.encode_queries(["feline", "feline", "a dog"])
    np.testing.assert_array_equal(as_doc, enc.encode(["feline", "a dog"]))
    np.testing.assert_array_equal(as_query, enc.encode_queries(["feline", "feline", "a dog"]))
    assert not np.array_equal(as_doc[0], as_query[0])
    # repeats on either side come from memory, each side from its own entries
    np.testing.assert_array_equal(cache(["feline"]), as_doc[:1])
    np.testing.assert_array_equal(cache.encode_queries(["feline"]), as_query[:1])
    assert docs == [["feline", "a dog"]] and queries == [["feline", "a dog"]]
    assert cache.n_encoded == 4 and cache.n_requested == 7


def test_text_cache_of_an_asymmetric_encoder_finds_its_query_side() -> None:
    enc = SynonymEncoder()
    cache = TextCache(enc)
    assert cache.asymmetric
    np.testing.assert_array_equal(cache.encode_queries(["feline"]), enc.encode_queries(["feline"]))
    np.testing.assert_array_equal(cache(["feline"]), enc.encode(["feline"]))


def test_text_cache_of_a_symmetric_encoder_shares_the_entries() -> None:
    calls: list[list[str]] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts])

    cache = TextCache(encode)
    assert not cache.asymmetric
    cache(["a cat"])
    np.testing.assert_array_equal(cache.encode_queries(["a cat"]), cache(["a cat"]))
    assert calls == [["a cat"]] and cache.n_encoded == 1


def test_known_vectors_are_documents_never_queries() -> None:
    """A space holding the text of a query: the stored (document) vector must not answer the query."""
    enc = SynonymEncoder()
    stored = np.array([[9.0, 9.0, 9.0, 9.0, 9.0]])
    cache = TextCache.from_vectors(["feline"], stored, fallback=enc.encode, fallback_queries=enc.encode_queries)
    np.testing.assert_array_equal(cache(["feline"]), stored)
    np.testing.assert_array_equal(cache.encode_queries(["feline"]), enc.encode_queries(["feline"]))
    symmetric = TextCache.from_vectors(["feline"], stored, fallback=enc.encode)
    np.testing.assert_array_equal(symmetric.encode_queries(["feline"]), stored)


# ---------------------------------------------------------------------------- e5 on real data


@pytest.fixture(scope="module")
def cranfield_sample(shared_data: Path) -> BeirData:
    """Eight Cranfield queries, their judged documents and 20 others, each document cut to its first 40 words."""
    full = load_beir(shared_data / "cranfield-beir")
    qids = full.query_ids[:8]
    judged = {d for q in qids for d in full.qrels[q]}
    keep = [i for i, d in enumerate(full.corpus_ids) if d in judged or i < 20]
    rows = {q: i for i, q in enumerate(full.query_ids)}
    texts = tuple(" ".join(full.corpus_texts[i].split()[:40]) for i in keep)
    return BeirData(tuple(full.corpus_ids[i] for i in keep), texts, qids,
                    tuple(full.query_texts[rows[q]] for q in qids), {q: full.qrels[q] for q in qids}, "test",
                    "cranfield-sample")


@pytest.mark.slow
def test_e5_retrieval_embeds_queries_as_queries(cranfield_sample: BeirData) -> None:
    from repspace.engines.encoders import get_encoder

    enc = get_encoder("e5")
    result = retrieval(enc, cranfield_sample)
    docs = enc.encode(list(cranfield_sample.corpus_texts))
    as_queries = retrieval_from_vectors(enc.encode_queries(list(cranfield_sample.query_texts)), docs,
                                        cranfield_sample)
    as_passages = retrieval_from_vectors(enc.encode(list(cranfield_sample.query_texts)), docs, cranfield_sample)
    assert result.scores == as_queries
    assert as_queries != as_passages
    assert result.main_score > 0.3
