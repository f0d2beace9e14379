"""What an evaluation measures: an encoder, each layer of one, or a stored space.

A :class:`Subject` hands the tasks an ``encode`` callable backed by a
:class:`~repspace.engines.eval.TextCache`, so each distinct text is embedded once per
run whatever the number of tasks, splits and compression settings. For
``--layer all`` every layer comes from the same forward pass: one cache holds
the layers side by side and each layer's subject reads its slice.

Search queries (retrieval) are embedded with ``subject.encode.encode_queries``:
for an asymmetric encoder (``e5``) that is the encoder's query side, with cache
entries of its own, so a query and a document of the same text keep their
different vectors; for a symmetric one, queries and documents share entries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.errors import InputError, RepspaceError
from repspace.core.progress import Progress, relabel
from repspace.core.store import Space, Store
from repspace.engines.encoders import get_encoder
from repspace.engines.encoders.base import LayeredEncoder
from repspace.engines.eval import TextCache


@dataclass
class Subject:
    """One thing to evaluate.

    Attributes
    ----------
    label : str
        How tables name it (``minilm``, ``hf-layers:minilm@3``, ``space glove``).
    info : dict
        Recorded with every result: ``encoder`` and ``layer``, or ``space``
        and ``generation``.
    encode : TextCache
        Texts to vectors, each distinct text embedded once; documents by
        calling it, search queries with its ``encode_queries``.
    space : Space or None
        The stored space, for a space subject.
    dim : int
        The dimension of its vectors.
    ids, vectors, metadata : for a space subject, its items as read (one snapshot).

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> _ = store.create_space("toy", dim=2).add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]], texts=["cat", "dog"])
    >>> sub = space_subject(store, "toy")
    >>> sub.label, sub.save_as, sub.dim, sub.ids, sub.info["generation"]
    ('space toy', 'toy', 2, ['a', 'b'], 1)
    >>> sub.encode(["dog", "cat"]).tolist()  # texts the space holds: its stored vectors
    [[0.0, 1.0], [1.0, 0.0]]
    """

    label: str
    info: dict[str, Any]
    encode: TextCache
    dim: int
    space: Space | None = None
    ids: list[str] = field(default_factory=list)
    vectors: np.ndarray | None = None
    metadata: list[dict[str, Any]] = field(default_factory=list)

    @property
    def save_as(self) -> str:
        """The subject name results are recorded under."""
        return self.space.name if self.space is not None else self.label


def _encode_fn(encode: Callable[..., np.ndarray], batch_size: int, progress: Progress | None,
               phase: str) -> Callable[[list[str]], np.ndarray]:
    def run(texts: list[str]) -> np.ndarray:
        return encode(texts, batch_size=batch_size, progress=relabel(progress, phase))

    return run


def encoder_subjects(spec: str, *, layer: int | str | Sequence[int] | None = None,
                     options: dict[str, Any] | None = None, batch_size: int = 64,
                     progress: Progress | None = None) -> list[Subject]:
    """Subjects for an encoder spec: one, or one per layer for ``layer="all"`` or a list.

    Parameters
    ----------
    spec : str
        A registry spec (``minilm``, ``static``, ``hf-layers:minilm``...).
    layer : int, ``"all"``, list of int or None
        For layered encoders (``hf-layers``): one layer, every layer, or some
        layers, all computed by one forward pass per batch.
    options : dict, optional
        Encoder options (``pooling``, ``prompt``...).
    batch_size : int
        Texts per forward pass.
    progress : callable, optional
        ``(phase, done, total)``.

    Examples
    --------
    >>> subs = encoder_subjects("hf-layers:minilm", layer=[0, 6])
    >>> [s.label for s in subs]
    ['hf-layers:minilm@0', 'hf-layers:minilm@6']
    >>> a, b = (s.encode(["a cat"]) for s in subs)
    >>> a.shape, bool((a != b).any()), subs[0].encode.n_encoded
    ((1, 384), True, 1)

    An asymmetric encoder embeds queries on their own side:

    >>> [e5] = encoder_subjects("e5")
    >>> e5.encode.asymmetric, e5.info["provenance"]["prompt"]
    (True, 'passage: ')
    """
    options = dict(options or {})
    several = layer == "all" or (isinstance(layer, Sequence) and not isinstance(layer, str))
    if layer is not None and not several:
        options["layer"] = layer
    enc = get_encoder(spec, **options)
    if not several:
        fn = _encode_fn(enc.encode, batch_size, progress, "encode")
        queries = _encode_fn(enc.encode_queries, batch_size, progress, "encode queries") if enc.asymmetric else None
        prov = enc.provenance()
        info = {"encoder": spec, "layer": prov.get("layer"), "provenance": prov}
        return [Subject(spec if layer is None else f"{spec}@{layer}", info, TextCache(fn, encode_queries=queries),
                        enc.dim)]
    if not isinstance(enc, LayeredEncoder):
        raise InputError(f"--layer {'all' if layer == 'all' else 'with several layers'} needs a layered "
                         f"encoder such as hf-layers:<folder>; {spec} gives one vector per text")
    layers = enc.resolve_layers(layer)
    dim = enc.dim

    def all_layers(texts: list[str], **kw: Any) -> np.ndarray:
        out = enc.encode_layers(texts, layers=layers, **kw)  # (L, n, d)
        return np.ascontiguousarray(out.transpose(1, 0, 2).reshape(len(texts), len(layers) * dim))

    shared = TextCache(_encode_fn(all_layers, batch_size, progress, "encode"))
    return [
        Subject(f"{spec}@{lay}", {"encoder": spec, "layer": lay, "provenance": enc.provenance(lay)},
                _LayerView(shared, j, dim), dim)
        for j, lay in enumerate(layers)
    ]


class _LayerView(TextCache):
    """One layer's slice of a cache holding every layer side by side."""

    def __init__(self, shared: TextCache, index: int, dim: int) -> None:  # noqa: D107 - no super(): shares state
        self.shared, self.index, self.dim = shared, index, dim

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self._slice(self.shared(texts))

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries: the shared cache's query side (layered encoders embed queries as documents)."""
        return self._slice(self.shared.encode_queries(texts))

    @property
    def asymmetric(self) -> bool:  # type: ignore[override]
        return self.shared.asymmetric

    def _slice(self, block: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(block[:, self.index * self.dim:(self.index + 1) * self.dim])

    @property
    def n_encoded(self) -> int:  # type: ignore[override]
        return self.shared.n_encoded

    @property
    def n_requested(self) -> int:  # type: ignore[override]
        return self.shared.n_requested


def space_subject(store: Store, name: str, *, batch_size: int = 64, progress: Progress | None = None,
                  encode_missing: bool = True) -> Subject:
    """A stored space as a subject: its vectors, reused for every text it holds.

    Texts of the task that the space does not hold are embedded with the
    space's own encoder (re-created from its provenance, fingerprint checked)
    when it has one; a space of precomputed vectors can only answer for the
    texts it holds. The stored vectors are documents: when the space's
    encoder is asymmetric (``e5``), search queries are always embedded with
    its query side, even a query whose text the space holds.

    Parameters
    ----------
    store : Store
    name : str
        The space.
    encode_missing : bool
        Embed texts the space lacks with the space's encoder.

    Examples
    --------
    >>> import tempfile, os
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> sp = store.create_space("toy", dim=2)
    >>> _ = sp.add(["a", "b"], np.array([[1.0, 0.0], [0.0, 1.0]]), texts=["cat", "dog"])
    >>> sub = space_subject(store, "toy")
    >>> sub.encode(["dog"]).tolist(), sub.info["generation"]
    ([[0.0, 1.0]], 1)
    """
    space = store.space(name)
    for _ in range(5):
        before = space.info().generation
        items, vectors = space.dump()
        info = space.info()
        if info.generation == before:
            break
    else:
        raise InputError(f"space {name} kept changing while it was read; try again")
    fallback = fallback_queries = None
    reason = ""
    if encode_missing:
        try:
            from repspace.workflows.stored_transforms import (
                encoder_for_space,  # a derived space's fitted chain included
            )

            enc = encoder_for_space(space)
            fallback = _encode_fn(enc.encode, batch_size, progress, "encode")
            if enc.asymmetric:
                fallback_queries = _encode_fn(enc.encode_queries, batch_size, progress, "encode queries")
        except RepspaceError as e:
            reason = str(e)
    if fallback is None:
        why = f": {reason}" if reason else ""

        def fallback(texts: list[str]) -> np.ndarray:
            raise InputError(f"space {name} holds no vector for {len(texts)} of the task's texts "
                             f"(first: {texts[0][:60]!r}) and cannot embed them{why}")

    with_text = [i for i, it in enumerate(items) if it.text is not None]
    cache = TextCache.from_vectors([items[i].text for i in with_text], vectors[with_text], fallback=fallback,
                                   fallback_queries=fallback_queries)
    sub_info = {"space": name, "space_uid": space.uid, "generation": info.generation, "count": len(items),
                "provenance": space.provenance}
    return Subject(f"space {name}", sub_info, cache, space.dim, space=space, ids=[it.id for it in items],
                   vectors=vectors, metadata=[it.metadata for it in items])
