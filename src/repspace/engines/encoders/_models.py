"""Loaded models, shared by every encoder of the process (one copy of each set of weights in memory)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from repspace.core.cache import LRUCache

__all__ = ["clear_models", "quiet_hf_loading", "shared_model"]

T = TypeVar("T")

#: Loaded weights by key; the least recently used go beyond this many (an encoder still holding one keeps it).
MAX_MODELS = 8
_MODELS: LRUCache[Any] = LRUCache(MAX_MODELS)
_MODELS_LOCK = threading.RLock()


def shared_model(key: Hashable, loader: Callable[[], T]) -> T:
    """Load a model once per process and key (e.g. ``("st", folder)``).

    Encoders that differ only in options (pooling, layer, prompt) share the
    same loaded weights.
    """
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = loader()
            _MODELS.put(key, model)
        return model


def loaded_model(key: Hashable) -> Any | None:
    """The model :func:`shared_model` holds for ``key``, or None when none was loaded (nothing is loaded here)."""
    with _MODELS_LOCK:
        return _MODELS.get(key)


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
