"""The encoding loop shared by the encoders: checked texts, batches, float32 results, one-line errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import EncoderError, InputError, RepspaceError

T = TypeVar("T")

#: The hook-side progress: called with the number of texts just finished. The
#: public ``encode`` methods turn a ``progress(phase, done, total)`` callback
#: (:mod:`repspace.core.progress`) into one of these with a ``Tally``.
Tick = Callable[[int], None]


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
    check_scalar(batch_size, "batch_size", int, low=1)


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
    texts: list[str], size: int, spec: str, encode: Callable[[Sequence[str]], Any], progress: Tick | None
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
