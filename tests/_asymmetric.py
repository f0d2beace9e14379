"""A small asymmetric encoder shared by the query-side tests (a helper module, not collected).

It is a test double of the :class:`~repspace.engines.encoders.Encoder` *interface*,
not of a shipped encoder: documents are counted by the topic words they
contain; queries first go through a synonym table, so ``"feline"`` lands on
the cat document only when embedded as a query. Embedded as a document it
lands nowhere (every document scores the same), so a task that forgets the
query side scores visibly worse.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from repspace.engines.encoders import Encoder, register, unregister
from repspace.engines.encoders.base import Tick

TOPICS = ("cat", "dog", "sea", "wine")
SYNONYMS = {"feline": "cat", "canine": "dog", "ocean": "sea", "merlot": "wine"}

#: Documents (one per topic) and queries (one synonym each) with their answers.
DOCS = {"d-cat": "a cat purrs", "d-dog": "a dog barks", "d-sea": "the sea is deep", "d-wine": "red wine ages"}
QUERIES = {"q1": "feline", "q2": "canine", "q3": "ocean", "q4": "merlot"}
QRELS = {"q1": {"d-cat": 1}, "q2": {"d-dog": 1}, "q3": {"d-sea": 1}, "q4": {"d-wine": 1}}

SPEC = "synonyms-test"


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """One torch/OpenMP thread for a module that imports it: the e5 engine's threads spin badly on a busy
    2-core runner."""
    from repspace.engines.encoders import set_threads

    before = set_threads(None)
    set_threads(1)
    yield
    set_threads(before)


def _vector(text: str) -> list[float]:
    return [float(text.count(t)) for t in TOPICS] + [0.1]


class SynonymEncoder(Encoder):
    """Documents by topic words; queries through the synonym table first."""

    def __init__(self) -> None:
        super().__init__(SPEC)
        self.query_calls = 0

    @property
    def dim(self) -> int:
        return len(TOPICS) + 1

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        if progress is not None:
            progress(len(texts))
        return np.array([_vector(t) for t in texts])

    def _encode_queries(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        self.query_calls += 1
        out = []
        for text in texts:
            for word, topic in SYNONYMS.items():
                text = text.replace(word, topic)
            out.append(_vector(text))
        if progress is not None:
            progress(len(texts))
        return np.array(out)

    def provenance(self) -> dict[str, Any]:
        return {"encoder": SPEC, "encoder_version": "test==0", "model": "synonyms", "model_fingerprint": None,
                "layer": None, "pooling": "none", "normalize": False, "prompt": None, "max_length": None}


def beir_data() -> Any:
    from repspace.engines.eval.retrieval import BeirData

    return BeirData(tuple(DOCS), tuple(DOCS.values()), tuple(QUERIES), tuple(QUERIES.values()), QRELS, "test", "syn")


@contextmanager
def registered() -> Iterator[SynonymEncoder]:
    """The encoder registered under :data:`SPEC` (one instance), unregistered afterwards."""
    encoder = SynonymEncoder()
    register(SPEC, lambda target: encoder, description="asymmetric test double")
    try:
        yield encoder
    finally:
        unregister(SPEC)
