"""model_fingerprint: what changes it and what does not (it is a fingerprint, not a full hash)."""

from __future__ import annotations

from pathlib import Path

from repspace.engines.encoders import model_fingerprint
from repspace.engines.encoders._fingerprint import FINGERPRINT_HEAD_BYTES


def _model(folder: Path, weights: bytes) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 8}')
    (folder / "sub").mkdir()
    (folder / "sub" / "vocab.txt").write_text("[PAD]\nhello\n")
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "README.md").write_text("a model card")
    return folder


def test_fingerprint(tmp_path: Path) -> None:
    weights = bytes(range(256)) * ((FINGERPRINT_HEAD_BYTES + 4096) // 256)
    folder = _model(tmp_path / "m", weights)
    base = model_fingerprint(folder)
    assert len(base) == 64 and int(base, 16) >= 0
    assert model_fingerprint(_model(tmp_path / "copy", weights)) == base  # location does not matter

    (folder / "README.md").write_text("another card")  # cannot change vectors: ignored
    assert model_fingerprint(folder) == base

    (folder / "sub" / "vocab.txt").write_text("[PAD]\nhullo\n")  # tokenizer files count in full
    changed = model_fingerprint(folder)
    assert changed != base
    (folder / "sub" / "vocab.txt").write_text("[PAD]\nhello\n")
    assert model_fingerprint(folder) == base

    head_edit = bytearray(weights)
    head_edit[10] ^= 1
    (folder / "model.safetensors").write_bytes(bytes(head_edit))
    assert model_fingerprint(folder) != base

    tail_edit = bytearray(weights)
    tail_edit[-1] ^= 1  # beyond the first 4 MiB, same size: a fingerprint does not see it
    (folder / "model.safetensors").write_bytes(bytes(tail_edit))
    assert model_fingerprint(folder) == base

    (folder / "model.safetensors").write_bytes(weights + b"x")  # size counts
    assert model_fingerprint(folder) != base
