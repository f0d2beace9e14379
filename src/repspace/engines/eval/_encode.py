"""What the tasks call to turn texts into vectors, and the per-run cache in front of it.

Every task takes ``encode``: any callable from a list of texts to a
``(len(texts), d)`` array, or an object with such an ``encode`` method (a
repspace :class:`~repspace.engines.encoders.Encoder`, a sentence-transformers model).
:class:`TextCache` wraps one so that each distinct text is embedded once per
run however many tasks, splits or compression settings ask for it.

Search queries have a side of their own: an object with an ``encode_queries``
method (a repspace encoder, a :class:`TextCache`) embeds them with it, which
matters for asymmetric models such as ``e5`` (``query: `` vs ``passage: ``);
:func:`as_query_encode` picks that side. A :class:`TextCache` given a query
side keeps query vectors apart from document vectors of the same text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from repspace.core.errors import InputError

#: A function from texts to one vector per text.
EncodeFn = Callable[[list[str]], np.ndarray]


def as_encode(encode: Any) -> EncodeFn:
    """Accept a callable or an object with an ``encode`` method.

    Parameters
    ----------
    encode : callable or object with ``encode``
        What turns a list of texts into an array.

    Returns
    -------
    callable
        ``texts -> (len(texts), d) float32 array``, checked.

    Examples
    --------
    >>> fn = as_encode(lambda texts: np.ones((len(texts), 3)))
    >>> fn(["a", "b"]).shape
    (2, 3)
    """
    fn = encode.encode if hasattr(encode, "encode") else encode
    if not callable(fn):
        raise InputError(f"encode must be a callable or have an encode method, got {type(encode).__name__}")

    def call(texts: list[str]) -> np.ndarray:
        texts = list(texts)
        out = np.asarray(fn(texts), dtype=np.float32)
        if out.ndim != 2 or out.shape[0] != len(texts):
            raise InputError(f"encode returned shape {out.shape} for {len(texts)} texts; expected ({len(texts)}, d)")
        if not np.isfinite(out).all():
            raise InputError("encode returned NaN or infinite values")
        return np.ascontiguousarray(out)

    return call


def as_query_encode(encode: Any, encode_queries: Any = None) -> EncodeFn:
    """The query side of ``encode``: what embeds search queries.

    Parameters
    ----------
    encode : callable or object with ``encode``
        The document side (see :func:`as_encode`).
    encode_queries : callable or object with ``encode``, optional
        The query side, when given explicitly.

    Returns
    -------
    callable
        ``encode_queries`` if given; else ``encode.encode_queries`` when
        ``encode`` has one (a repspace :class:`~repspace.engines.encoders.Encoder`, a
        :class:`TextCache`); else ``encode`` itself (queries embedded like
        documents). Checked as by :func:`as_encode`.

    Examples
    --------
    >>> class Prefixed:
    ...     def encode(self, texts):
    ...         return np.array([[len("passage: " + t), 1.0] for t in texts])
    ...     def encode_queries(self, texts):
    ...         return np.array([[len("query: " + t), 1.0] for t in texts])
    >>> as_query_encode(Prefixed())(["abc"]).tolist(), as_encode(Prefixed())(["abc"]).tolist()
    ([[10.0, 1.0]], [[12.0, 1.0]])
    >>> as_query_encode(lambda texts: np.zeros((len(texts), 2)))(["abc"]).shape
    (1, 2)
    """
    if encode_queries is not None:
        return as_encode(encode_queries)
    side = getattr(encode, "encode_queries", None)
    return as_encode(side if callable(side) else encode)


def text_key(text: str) -> bytes:
    """The cache key of a text (SHA-256 of its UTF-8 bytes)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def query_key(text: str) -> bytes:
    """The cache key of a text embedded as a query (33 bytes: never equal to a :func:`text_key`)."""
    return b"q" + text_key(text)


class TextCache:
    """Embed each distinct text once; answer repeats from memory.

    Calling the cache embeds documents; :meth:`encode_queries` embeds search
    queries. With a query side (``encode_queries``), a query and a document
    of the same text are two entries with their own vectors; without one,
    queries are documents (one entry per text).

    Parameters
    ----------
    encode : callable or object with ``encode``
        The encoder behind the cache (the document side).
    encode_queries : callable or object with ``encode``, optional
        The query side. ``None``: ``encode.encode_queries`` when ``encode`` is
        an asymmetric encoder (:attr:`repspace.engines.encoders.Encoder.asymmetric`),
        else none.

    Attributes
    ----------
    n_encoded : int
        Texts actually passed to ``encode`` so far (distinct ones).
    n_requested : int
        Texts asked for so far, repeats included.

    Examples
    --------
    >>> calls = []
    >>> def enc(texts):
    ...     calls.append(list(texts))
    ...     return np.array([[len(t), 1.0] for t in texts])
    >>> cache = TextCache(enc)
    >>> cache(["ab", "c", "ab"]).tolist()
    [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    >>> _ = cache(["c", "def"])
    >>> calls
    [['ab', 'c'], ['def']]

    With a query side, the same text is embedded once per side:

    >>> cache = TextCache(enc, encode_queries=lambda texts: np.array([[len(t), -1.0] for t in texts]))
    >>> cache(["ab"]).tolist(), cache.encode_queries(["ab"]).tolist(), cache.n_encoded
    ([[2.0, 1.0]], [[2.0, -1.0]], 2)
    """

    def __init__(self, encode: Any, *, encode_queries: Any = None) -> None:
        self._encode = as_encode(encode)
        if encode_queries is None and getattr(encode, "asymmetric", False) is True:
            encode_queries = encode.encode_queries
        self._encode_queries = None if encode_queries is None else as_encode(encode_queries)
        self._rows: dict[bytes, int] = {}
        self._blocks: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None
        self.n_encoded = 0
        self.n_requested = 0

    @property
    def asymmetric(self) -> bool:
        """Whether queries have a side (and cache entries) of their own."""
        return self._encode_queries is not None

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        return self._lookup(texts, [text_key(t) for t in texts], self._encode)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of search queries: the query side's own entries, or the documents' without one.

        Examples
        --------
        >>> cache = TextCache(lambda texts: np.ones((len(texts), 2)))
        >>> cache.encode_queries(["x"]).tolist(), cache(["x"]).tolist(), cache.n_encoded
        ([[1.0, 1.0]], [[1.0, 1.0]], 1)
        """
        if self._encode_queries is None:
            return self(texts)
        texts = list(texts)
        return self._lookup(texts, [query_key(t) for t in texts], self._encode_queries)

    def _lookup(self, texts: list[str], keys: list[bytes], encode: EncodeFn) -> np.ndarray:
        self.n_requested += len(texts)
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in self._rows and key not in missing:
                missing[key] = text
        if missing:
            new = encode(list(missing.values()))
            if self._blocks and new.shape[1] != self._blocks[0].shape[1]:
                raise InputError(f"encode changed dimension from {self._blocks[0].shape[1]} to {new.shape[1]}")
            start = len(self._rows)
            for offset, key in enumerate(missing):
                self._rows[key] = start + offset
            self._blocks.append(new)
            self._matrix = None
            self.n_encoded += len(missing)
        if not texts:
            dim = self._blocks[0].shape[1] if self._blocks else 0
            return np.zeros((0, dim), dtype=np.float32)
        if self._matrix is None:
            self._matrix = np.concatenate(self._blocks) if len(self._blocks) > 1 else self._blocks[0]
            self._blocks = [self._matrix]
        return self._matrix[[self._rows[k] for k in keys]]

    def remember(self, texts: Sequence[str], vectors: np.ndarray) -> int:
        """Add known document vectors for texts (those already cached keep theirs); returns how many were new.

        Examples
        --------
        >>> cache = TextCache(lambda texts: np.zeros((len(texts), 2)))
        >>> cache.remember(["x", "x"], np.array([[1.0, 2.0], [3.0, 4.0]]))
        1
        >>> cache(["x"]).tolist(), cache.n_encoded
        ([[1.0, 2.0]], 0)
        """
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise InputError(f"{len(texts)} texts but vectors of shape {vectors.shape}")
        new: dict[bytes, int] = {}
        for i, text in enumerate(texts):
            key = text_key(text)
            if key not in self._rows and key not in new:
                new[key] = i
        if new:
            if self._blocks and vectors.shape[1] != self._blocks[0].shape[1]:
                raise InputError(f"vectors of dimension {vectors.shape[1]} given to a cache of dimension "
                                 f"{self._blocks[0].shape[1]}")
            start = len(self._rows)
            for offset, key in enumerate(new):
                self._rows[key] = start + offset
            self._blocks.append(np.ascontiguousarray(vectors[list(new.values())]))
            self._matrix = None
        return len(new)

    @classmethod
    def from_vectors(cls, texts: Sequence[str], vectors: np.ndarray, fallback: Any = None, *,
                     fallback_queries: Any = None) -> TextCache:
        """A cache pre-filled with known (document) vectors; texts outside it go to ``fallback``.

        Parameters
        ----------
        texts : sequence of str
            Texts whose vectors are known.
        vectors : (len(texts), d) array
        fallback : callable or None
            Encoder for other texts; ``None`` makes an unknown text an error.
        fallback_queries : callable or None
            The query side of an asymmetric encoder: every query is embedded
            with it (the known vectors are documents). ``None``: queries are
            answered like documents.

        Examples
        --------
        >>> cache = TextCache.from_vectors(["x"], np.array([[1.0, 2.0]]))
        >>> cache(["x"]).tolist()
        [[1.0, 2.0]]
        >>> cache(["y"])
        Traceback (most recent call last):
        ...
        repspace.core.errors.InputError: 1 text has no vector here (first: 'y') and there is no encoder to embed it
        """

        def refuse(missing: list[str]) -> np.ndarray:
            n = len(missing)
            raise InputError(
                f"{n} text{'s' if n != 1 else ''} ha{'ve' if n != 1 else 's'} no vector here "
                f"(first: {missing[0][:60]!r}) and there is no encoder to embed {'them' if n != 1 else 'it'}"
            )

        cache = cls(fallback if fallback is not None else refuse, encode_queries=fallback_queries)
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise InputError(f"{len(texts)} texts but vectors of shape {vectors.shape}")
        rows: dict[bytes, int] = {}
        for i, text in enumerate(texts):
            rows.setdefault(text_key(text), i)
        keep = list(rows.values())
        cache._rows = {key: j for j, key in enumerate(rows)}
        cache._matrix = np.ascontiguousarray(vectors[keep])
        cache._blocks = [cache._matrix]
        return cache
