"""The search fixtures (tests/_search_reference.py, Cranfield as BM25 weights); ``store`` is tests/conftest.py's."""

import json

import numpy as np
import pytest
import scipy.sparse as sps

from _search_reference import brute, rng  # noqa: F401 - fixtures are found by name


@pytest.fixture(scope="session")
def cranfield_bm25(shared_data):
    """Cranfield's 1,400 documents as bm25s term weights (documents x terms) and its 225 queries as token ids."""
    bm25s = pytest.importorskip("bm25s")
    folder = shared_data / "cranfield-beir"
    if not (folder / "corpus.jsonl").is_file():
        pytest.skip(f"{folder} is absent (Cranfield is part of ../shared/data in CI)")
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [f"{d.get('title', '')} {d['text']}" for d in docs]
    model = bm25s.BM25()
    model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    sc = model.scores
    weights = sps.csc_array((sc["data"], sc["indices"], sc["indptr"]),
                            shape=(int(sc["num_docs"]), len(sc["indptr"]) - 1)).tocsr().astype(np.float32)
    weights.sort_indices()
    q_tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False, return_ids=False)
    return model, weights, q_tokens
