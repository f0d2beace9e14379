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

Progress goes to an optional ``progress(phase, done, total)`` callback (the
one signature of :mod:`repspace.core.progress`): :meth:`Encoder.encode` and
:meth:`LayeredEncoder.encode_layers` report phase ``"encode"``,
:meth:`Encoder.encode_queries` phase ``"encode queries"``. Subclasses implement
the ``_encode`` hooks, which receive a :data:`Tick` (call it with the number of
texts just finished); encoders never draw anything themselves.

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

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress, Tally
from repspace.engines.encoders._batches import (
    Tick,
    check_batch_size,
    check_texts,
    finish,
)

__all__ = [
    "Encoder",
    "LayeredEncoder",
    "Progress",
    "Tick",
    "PROVENANCE_KEYS",
]

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
        progress : Progress or None, optional
            ``progress(phase, done, total)`` with ``done`` texts of ``total``
            finished (phase ``"encode"``; ``"encode queries"`` for queries).

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
        >>> seen = []
        >>> get_encoder("static").encode(["a cat", "a dog"], progress=lambda *a: seen.append(a)).shape
        (2, 64)
        >>> seen[-1]
        ('encode', 2, 2)
        """
        return self._checked(self._encode, texts, batch_size, progress, "encode")

    def _checked(self, run: Callable[..., np.ndarray], texts: Sequence[str], batch_size: int,
                 progress: Progress | None, phase: str) -> np.ndarray:
        """The checks of :meth:`encode` and :meth:`encode_queries` around one of their hooks."""
        items = check_texts(texts)
        check_batch_size(batch_size)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        tick = None if progress is None else Tally(progress, phase, len(items))
        out = run(items, batch_size=batch_size, progress=tick)
        return finish(out, (len(items), self.dim), self.spec)

    @abstractmethod
    def _encode(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
        """Encode a non-empty list of strings; the ``progress`` ticks must total ``len(texts)``."""

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
        embedded here. The parameters (``texts`` are the queries), the
        returned array and the errors are those of :meth:`encode`; the
        progress phase is ``"encode queries"``.

        Examples
        --------
        >>> import numpy as np
        >>> from repspace.engines.encoders import get_encoder
        >>> enc = get_encoder("static")
        >>> q = enc.encode_queries(["a cat on a mat"])
        >>> q.shape, bool(np.array_equal(q, enc.encode(["a cat on a mat"])))
        ((1, 64), True)
        """
        return self._checked(self._encode_queries, texts, batch_size, progress, "encode queries")

    def _encode_queries(self, texts: list[str], *, batch_size: int, progress: Tick | None) -> np.ndarray:
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
        layer = check_scalar(layer, "layer", int)
        if not -n <= layer < n:
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

        ``layers`` are layer indexes (negative from the end); ``None`` means
        every layer ``0 .. n_layers - 1``. ``texts``, ``batch_size`` and
        ``progress`` are those of :meth:`Encoder.encode`.

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
        tick = None if progress is None else Tally(progress, "encode", len(items))
        out = self._encode_layers(items, layers=chosen, batch_size=batch_size, progress=tick)
        return finish(out, (len(chosen), len(items), self.dim), self.spec)

    @abstractmethod
    def _encode_layers(
        self, texts: list[str], *, layers: list[int], batch_size: int, progress: Tick | None
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
