"""The sentence-transformers encoders (``minilm``, ``st:<folder>``) against the library itself."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.encoders import PROVENANCE_KEYS, get_encoder, model_fingerprint
from repspace.engines.encoders.sentence_transformers import SentenceTransformerEncoder

# numerics: rerun by `make test-portable` (see pyproject.toml's markers)
pytestmark = [pytest.mark.numerics, pytest.mark.slow]


@pytest.fixture(scope="module")
def st_model(minilm_dir: Path):
    """MiniLM loaded directly with sentence-transformers, independently of repspace."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_dir), device="cpu", local_files_only=True)


@pytest.fixture(scope="module")
def minilm_vectors(sentences: list[str]) -> np.ndarray:
    return get_encoder("minilm").encode(sentences)


def test_minilm_shape_dtype_unit_norm(minilm_vectors: np.ndarray, sentences: list[str]) -> None:
    assert minilm_vectors.shape == (len(sentences), 384)
    assert minilm_vectors.dtype == np.float32
    assert minilm_vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(minilm_vectors, axis=1), 1.0, atol=1e-5)
    assert get_encoder("minilm").dim == 384


def test_minilm_is_deterministic(minilm_vectors: np.ndarray, sentences: list[str]) -> None:
    again = get_encoder("minilm").encode(sentences)
    np.testing.assert_array_equal(again, minilm_vectors)


def test_minilm_equals_sentence_transformers(minilm_vectors: np.ndarray, sentences: list[str], st_model) -> None:
    direct = st_model.encode(sentences, convert_to_numpy=True)
    np.testing.assert_allclose(minilm_vectors, direct, rtol=1e-5, atol=1e-6)


def test_minilm_vectors_carry_meaning(stsb_rows, minilm_vectors: np.ndarray) -> None:
    """Cosine of the pairs correlates with the human STS-B scores (a model that encodes garbage fails)."""
    second = get_encoder("minilm").encode([row[1] for row in stsb_rows])
    cosines = (minilm_vectors * second).sum(axis=1)
    scores = np.array([row[2] for row in stsb_rows])
    assert np.corrcoef(cosines, scores)[0, 1] > 0.7


def test_batch_size_does_not_change_vectors(minilm_vectors: np.ndarray, sentences: list[str]) -> None:
    small = get_encoder("minilm").encode(sentences, batch_size=7)
    np.testing.assert_allclose(small, minilm_vectors, atol=1e-5)


def test_st_folder_spec_gives_same_vectors(minilm_dir: Path, sentences: list[str], minilm_vectors) -> None:
    enc = get_encoder(f"st:{minilm_dir}")
    assert enc.spec == f"st:{minilm_dir.resolve()}"
    np.testing.assert_allclose(enc.encode(sentences[:10]), minilm_vectors[:10], atol=1e-6)


def test_prompt_is_prepended(sentences: list[str], st_model) -> None:
    enc = get_encoder("minilm", prompt="query: ")
    got = enc.encode(sentences[:5])
    np.testing.assert_allclose(got, st_model.encode(["query: " + s for s in sentences[:5]]), atol=1e-6)
    assert not np.allclose(got, get_encoder("minilm").encode(sentences[:5]), atol=1e-3)
    assert enc.provenance()["prompt"] == "query: "


def test_progress_totals_n_across_chunks(minilm_dir: Path, sentences: list[str], minilm_vectors) -> None:
    enc = SentenceTransformerEncoder(minilm_dir, spec="minilm", chunk_size=16)
    calls: list[tuple[str, int, int]] = []
    out = enc.encode(sentences, progress=lambda *a: calls.append(a))
    n = len(sentences)
    assert calls == [("encode", done, n) for done in (0, 16, 32, 48, 50)] and n == 50
    np.testing.assert_allclose(out, minilm_vectors, atol=1e-6)
    calls.clear()
    get_encoder("minilm").encode_queries(sentences, progress=lambda *a: calls.append(a))
    assert calls[0] == ("encode queries", 0, n) and calls[-1] == ("encode queries", n, n)


def test_empty_input_and_bad_input() -> None:
    enc = get_encoder("minilm")
    empty = enc.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    with pytest.raises(InputError):
        enc.encode("a single string")
    with pytest.raises(InputError):
        enc.encode(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(InputError):
        enc.encode(["ok"], batch_size=0)


def test_minilm_provenance(minilm_dir: Path) -> None:
    prov = get_encoder("minilm").provenance()
    assert tuple(prov) == PROVENANCE_KEYS
    assert prov["encoder"] == "minilm"
    assert prov["encoder_version"] == f"sentence-transformers=={metadata.version('sentence-transformers')}"
    assert prov["model"] == str(minilm_dir)
    assert re.fullmatch(r"[0-9a-f]{64}", prov["model_fingerprint"])
    assert prov["model_fingerprint"] == model_fingerprint(minilm_dir)
    assert prov["layer"] is None
    assert prov["pooling"] == "mean"
    assert prov["normalize"] is True  # MiniLM ends in a Normalize module
    assert prov["prompt"] is None
    assert prov["max_length"] == 256


def test_max_length_option_truncates(sentences: list[str], st_model) -> None:
    enc = get_encoder("minilm", max_length=8)
    assert enc.provenance()["max_length"] == 8
    long_text = [" ".join(sentences[:5])]
    assert not np.allclose(enc.encode(long_text), get_encoder("minilm").encode(long_text), atol=1e-3)
    assert st_model.max_seq_length == 256  # the option did not leak into other models
    assert get_encoder("minilm").provenance()["max_length"] == 256
