"""The query side of encoders: ``encode_queries`` is ``encode`` for symmetric models.

A sentence-transformers folder that defines a ``query`` prompt is asymmetric:
its queries must equal sentence-transformers' own ``encode_query``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.encoders import Encoder, get_encoder
from repspace.engines.encoders.base import Tick
from repspace.engines.encoders.sentence_transformers import SentenceTransformerEncoder


class _Counting(Encoder):
    """A symmetric test encoder that records which side was called."""

    def __init__(self) -> None:
        super().__init__("counting")
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return 2

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        self.calls.append(texts)
        if progress is not None:
            progress(len(texts))
        return np.array([[len(t), 1] for t in texts], dtype=np.float64)

    def provenance(self) -> dict:
        return {}


def test_default_query_side_is_the_document_side() -> None:
    enc = _Counting()
    done: list[tuple[str, int, int]] = []
    got = enc.encode_queries(["ab", "c"], progress=lambda *a: done.append(a))
    assert enc.calls == [["ab", "c"]] and done == [("encode queries", 0, 2), ("encode queries", 2, 2)]
    assert got.dtype == np.float32 and got.flags["C_CONTIGUOUS"] and got.tolist() == [[2.0, 1.0], [1.0, 1.0]]
    assert enc.asymmetric is False
    with pytest.raises(InputError, match="single string"):
        enc.encode_queries("ab")
    with pytest.raises(InputError, match="batch_size"):
        enc.encode_queries(["ab"], batch_size=0)
    assert enc.encode_queries([]).shape == (0, 2) and enc.calls == [["ab", "c"]]


@pytest.mark.parametrize("spec", ["static", pytest.param("minilm", marks=pytest.mark.slow)])  # minilm: a transformer
def test_symmetric_encoders_embed_queries_as_documents(spec: str, sentences: list[str]) -> None:
    enc = get_encoder(spec)
    assert enc.asymmetric is False
    np.testing.assert_array_equal(enc.encode_queries(sentences[:10]), enc.encode(sentences[:10]))


@pytest.fixture(scope="module")
def prompted_folder(minilm_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The MiniLM folder (weights linked, not copied) with a ``query: `` prompt in its configuration."""
    folder = tmp_path_factory.mktemp("minilm-prompted")
    for path in minilm_dir.rglob("*"):
        if path.is_file():
            target = folder / path.relative_to(minilm_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    config_path = folder / "config_sentence_transformers.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    config_path.unlink(missing_ok=True)
    config["prompts"] = {"query": "query: ", "document": ""}
    config["default_prompt_name"] = None
    config_path.write_text(json.dumps(config))
    return folder


@pytest.mark.slow
def test_a_query_prompt_in_the_folder_makes_queries_differ(prompted_folder: Path, sentences: list[str]) -> None:
    from sentence_transformers import SentenceTransformer

    texts = sentences[:8]
    enc = SentenceTransformerEncoder(prompted_folder)
    assert enc.asymmetric is True
    reference = SentenceTransformer(str(prompted_folder), device="cpu", local_files_only=True)
    queries = enc.encode_queries(texts)
    np.testing.assert_allclose(queries, reference.encode_query(texts), atol=1e-6)
    np.testing.assert_allclose(queries, get_encoder("minilm").encode([f"query: {t}" for t in texts]), atol=1e-5)
    # the document side is unchanged: no prompt, as before
    np.testing.assert_allclose(enc.encode(texts), get_encoder("minilm").encode(texts), atol=1e-6)
    assert enc.provenance()["prompt"] is None


@pytest.mark.slow
def test_an_explicit_prompt_applies_to_both_sides(prompted_folder: Path, sentences: list[str]) -> None:
    enc = SentenceTransformerEncoder(prompted_folder, prompt="search: ")
    assert enc.asymmetric is False
    np.testing.assert_array_equal(enc.encode_queries(sentences[:4]), enc.encode(sentences[:4]))
