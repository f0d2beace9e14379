"""The model2vec encoders (``static``, ``model2vec:<folder>``) against model2vec itself."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from repspace.engines.encoders import PROVENANCE_KEYS, get_encoder, model_fingerprint
from repspace.engines.encoders.static import StaticEncoder

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

# Not marked slow: the static model is not a transformer (it loads in seconds) and fast tests across the suite use it.


@pytest.fixture(scope="module")
def m2v_model(static_dir: Path):
    """The static model loaded directly with model2vec, independently of repspace."""
    from model2vec import StaticModel

    return StaticModel.from_pretrained(static_dir)


def test_static_folder_found_without_importing_the_package(static_dir: Path) -> None:
    assert static_dir.name == "model" and static_dir.parent.name == "static_model"
    assert (static_dir / "tokenizer.json").is_file()
    assert "static_model" not in sys.modules  # its Rust extension was not loaded


def test_static_equals_model2vec(sentences: list[str], m2v_model) -> None:
    enc = get_encoder("static")
    got = enc.encode(sentences)
    assert enc.dim == 64
    assert got.shape == (len(sentences), 64) and got.dtype == np.float32 and got.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(got, m2v_model.encode(sentences), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_model2vec_folder_spec(static_dir: Path, sentences: list[str]) -> None:
    enc = get_encoder(f"model2vec:{static_dir}")
    assert enc.spec == f"model2vec:{static_dir}"
    np.testing.assert_allclose(enc.encode(sentences[:5]), get_encoder("static").encode(sentences[:5]), atol=1e-7)


def test_static_progress_and_chunks(static_dir: Path, sentences: list[str]) -> None:
    enc = StaticEncoder(static_dir, spec="static", chunk_size=7)
    calls: list[tuple[str, int, int]] = []
    out = enc.encode(sentences, batch_size=5, progress=lambda *a: calls.append(a))
    n = len(sentences)
    assert calls == [("encode", min(i * 7, n), n) for i in range(9)] and n == 50
    np.testing.assert_allclose(out, get_encoder("static").encode(sentences), atol=1e-7)
    assert enc.encode([]).shape == (0, 64)


def test_static_provenance(static_dir: Path) -> None:
    prov = get_encoder("static").provenance()
    assert tuple(prov) == PROVENANCE_KEYS
    assert prov["encoder"] == "static"
    assert prov["encoder_version"] == f"model2vec=={metadata.version('model2vec')}"
    assert prov["model"] == str(static_dir)
    assert re.fullmatch(r"[0-9a-f]{64}", prov["model_fingerprint"])
    assert prov["model_fingerprint"] == model_fingerprint(static_dir)
    assert prov["layer"] is None and prov["pooling"] == "mean" and prov["prompt"] is None
    assert prov["normalize"] is True and prov["max_length"] == 512


def test_static_and_its_provenance_rebuild_load_once(static_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``get_encoder("static")`` (normalize None) and ``from_provenance`` (normalize True) share one load."""
    from repspace.engines.encoders import clear_cache, from_provenance

    loads: list[bool | None] = []
    load = StaticEncoder._load

    def counted(self: StaticEncoder):
        loads.append(self.normalize)
        return load(self)

    monkeypatch.setattr(StaticEncoder, "_load", counted)
    clear_cache()
    enc = get_encoder("static")
    rebuilt = from_provenance(enc.provenance())
    assert rebuilt is not enc and rebuilt.normalize is True and enc.normalize is None
    assert rebuilt.model is enc.model and loads == [None]
    np.testing.assert_array_equal(rebuilt.encode(["a cat"]), enc.encode(["a cat"]))
    assert get_encoder("static", normalize=False).model is not enc.model and loads == [None, False]
