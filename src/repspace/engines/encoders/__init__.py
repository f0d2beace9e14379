"""Encoders: everything that turns texts into vectors.

Get one with :func:`get_encoder` from a spec string (see
:func:`list_encoders`); every encoder is an :class:`Encoder` with
``encode(texts, *, batch_size=64, progress=None)`` returning C-contiguous
``float32`` vectors of documents, ``encode_queries(...)`` the same for search
queries (different for asymmetric models such as ``e5``, identical for
symmetric ones), and ``provenance()`` saying what made them. Encoders never
draw progress bars: they call ``progress(phase, done, total)`` (the one
progress signature of :mod:`repspace.core.progress`) as texts finish. Nothing is ever downloaded: only local folders are loaded.

Importing this package is cheap; model libraries are imported when a model is
first used.

Examples
--------
>>> from repspace.engines.encoders import get_encoder
>>> enc = get_encoder("static")
>>> enc.encode(["A girl is styling her hair.", "A girl is brushing her hair."]).shape
(2, 64)
>>> sorted(enc.provenance())
['encoder', 'encoder_version', 'layer', 'max_length', 'model', 'model_fingerprint', 'normalize', 'pooling', 'prompt']
"""

from __future__ import annotations

from repspace.core.threads import set_threads
from repspace.engines.encoders._fingerprint import model_fingerprint
from repspace.engines.encoders.base import (
    PROVENANCE_KEYS,
    Encoder,
    LayeredEncoder,
    Progress,
    Tick,
)
from repspace.engines.encoders.registry import (
    DEFAULT_ENCODER,
    EncoderFactory,
    clear_cache,
    from_provenance,
    get_encoder,
    list_encoders,
    register,
    unregister,
)
from repspace.engines.encoders.tokens import encode_tokens

__all__ = [
    "DEFAULT_ENCODER",
    "PROVENANCE_KEYS",
    "Encoder",
    "EncoderFactory",
    "LayeredEncoder",
    "Progress",
    "Tick",
    "clear_cache",
    "encode_tokens",
    "from_provenance",
    "get_encoder",
    "list_encoders",
    "model_fingerprint",
    "register",
    "set_threads",
    "unregister",
]
