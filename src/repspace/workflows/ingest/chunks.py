"""Ingest long documents as chunks: each chunk an item with its document id and character offsets.

``repspace ingest SPACE FILE --chunk N`` cuts every document into chunks of ``N`` tokens
(:func:`~repspace.engines.encoders.late_chunking.chunk_spans`) and stores each chunk as an item
``<document id>#<k>`` with metadata ``{"document", "chunk", "start", "end"}`` (``text[start:end]`` is the chunk's
text) beside the document's own metadata. Without ``--late-chunking`` each chunk's text is embedded alone
(through :func:`~repspace.workflows.ingest.ingest_records`, so stored texts are reused); with it the document is
run through the model once, in overlapping windows, and each chunk's vector pools its tokens' states in that
context (:func:`~repspace.engines.encoders.late_chunking.late_chunks`).

Examples
--------
>>> import os, tempfile
>>> from repspace import Store
>>> from repspace.workflows.ingest import Records
>>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> docs = Records("inline", ["d1"], ["one two three four five"], None, [{"lang": "en"}])
>>> r = ingest_chunks(store, "chunks", docs, chunk=2, encoder="static")
>>> r.added, store.space("chunks").get(["d1#2"])[0].metadata
(3, {'chunk': 2, 'document': 'd1', 'end': 23, 'lang': 'en', 'start': 19})
"""

from __future__ import annotations

import time
from typing import Any

from repspace.core.checks import check_scalar
from repspace.core.errors import ConflictError, InputError
from repspace.core.limits import DEFAULT_ENCODER, LATE_CHUNK_OVERLAP
from repspace.core.progress import Progress
from repspace.core.store import Store
from repspace.core.store import validate as v
from repspace.workflows.ingest._ingest import (
    IngestReport,
    _check_directions,
    _created_or_existing,
    _existing_space,
    _refuse_existing,
    _write,
    ingest_records,
)
from repspace.workflows.ingest.readers import Records

__all__ = ["chunk_records", "ingest_chunks"]

#: The metadata keys each chunk item gets (a document's own keys of these names are overwritten).
CHUNK_KEYS = ("document", "chunk", "start", "end")


def chunk_records(records: Records, spans: list[list[tuple[int, int]]]) -> Records:
    """One record per chunk: id ``<document>#<k>``, the chunk's text, the document's metadata plus its place.

    Examples
    --------
    >>> r = chunk_records(Records("inline", ["é"], ["ab cd"], None, [{}]), [[(0, 2), (3, 5)]])
    >>> r.ids, r.texts, r.metadata[1]
    (['é#0', 'é#1'], ['ab', 'cd'], {'document': 'é', 'chunk': 1, 'start': 3, 'end': 5})
    """
    assert records.texts is not None
    ids, texts, metas = [], [], []
    for doc, text, meta, doc_spans in zip(records.ids, records.texts, records.metadata, spans, strict=True):
        for k, (s, e) in enumerate(doc_spans):
            ids.append(f"{doc}#{k}")
            texts.append(str(text)[s:e])
            metas.append({**(meta or {}), "document": doc, "chunk": k, "start": s, "end": e})
    return Records(records.source, ids, texts, None, metas, records.columns)


def ingest_chunks(store: Store, space: str, records: Records, *, chunk: int, late_chunking: bool = False,
                  window: int | None = None, overlap: int = LATE_CHUNK_OVERLAP, encoder: str | None = None,
                  encoder_options: dict[str, Any] | None = None, metric: str | None = None, dtype: str = "float32",
                  batch_size: int = 16, on_conflict: str = "upsert", progress: Progress | None = None,
                  **options: Any) -> IngestReport:
    """Ingest ``records``' texts as chunks of ``chunk`` tokens (see the module notes).

    Parameters
    ----------
    chunk : int
        Tokens per chunk (the encoder's tokenizer's; words for an encoder without one).
    late_chunking : bool
        Pool each chunk from the whole document's token states (an ``hf-layers`` encoder only).
    window, overlap : int
        Late chunking's window and overlap in tokens
        (:func:`~repspace.engines.encoders.late_chunking.late_chunks`).
    encoder, encoder_options, metric, dtype, batch_size, on_conflict, progress, **options
        As :func:`~repspace.workflows.ingest.ingest_records` (``batch_size``: windows per pass when late).

    Returns
    -------
    IngestReport
        ``read`` counts chunks; ``extra`` holds ``documents`` and the chunking settings.

    Raises
    ------
    InputError
        A chunk size below 1 or above the window, ``late_chunking`` with an encoder without token states,
        vectors instead of texts, an empty text; nothing is stored then.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace import Store
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> docs = Records("inline", ["d"], ["A long report. It has two sentences."], None, [{}])
    >>> r = ingest_chunks(store, "late", docs, chunk=4, late_chunking=True, encoder="hf-layers:minilm")
    >>> r.added, r.extra["late_chunking"], store.space("late").get(["d#1"])[0].text
    (3, True, 'It has two sentences')
    """
    from repspace.engines.encoders import get_encoder

    check_scalar(chunk, "chunk size", int, low=1)
    if records.vectors is not None or records.texts is None:
        raise InputError(f"{records.source}: chunking needs texts, not vectors")
    ids = v.check_ids(records.ids)
    v.check_texts_to_embed(records.texts, ids, records.source)
    existing = _existing_space(store, space)
    spec = encoder or (existing.provenance.get("encoder") if existing else None) or DEFAULT_ENCODER
    enc = get_encoder(spec, **(encoder_options or {}))
    settings = {"documents": len(ids), "chunk_tokens": chunk, "late_chunking": late_chunking}
    if not late_chunking:
        from repspace.engines.encoders.late_chunking import chunk_spans

        spans = [chunk_spans(enc, str(t), chunk) for t in records.texts]
        report = ingest_records(store, space, chunk_records(records, spans), encoder=spec,
                                encoder_options=encoder_options, metric=metric, dtype=dtype, batch_size=batch_size,
                                on_conflict=on_conflict, progress=progress, **options)
        return IngestReport(**{**report.__dict__, "extra": {**report.extra, **settings}})
    return _ingest_late(store, space, records, enc, chunk, window, overlap, metric, dtype, batch_size, on_conflict,
                        progress, settings)


def _ingest_late(store: Store, space: str, records: Records, enc: Any, chunk: int, window: int | None,
                 overlap: int, metric: str | None, dtype: str, batch_size: int, on_conflict: str,
                 progress: Progress | None, settings: dict[str, Any]) -> IngestReport:
    from repspace.engines.encoders.hf_layers import HFLayersEncoder
    from repspace.engines.encoders.late_chunking import default_window, late_chunks

    t0 = time.perf_counter()
    if not isinstance(enc, HFLayersEncoder):
        raise InputError(f"--late-chunking needs the token states of an hf-layers encoder (e.g. hf-layers:minilm), "
                         f"not {enc.spec}")
    existing = _existing_space(store, space)
    if existing is not None and existing.provenance.get("encoder") not in (None, enc.spec):
        raise ConflictError(f"space {space!r} was made with encoder {existing.provenance.get('encoder')!r}, "
                            f"not {enc.spec!r}; ingest into a new space")
    size = default_window(enc) if window is None else window
    assert records.texts is not None
    docs = late_chunks(enc, [str(t) for t in records.texts], chunk_tokens=chunk, window=size, overlap=overlap,
                       batch_size=batch_size, progress=progress)
    enc_s = time.perf_counter() - t0
    chunks = chunk_records(records, [list(d.char_spans) for d in docs])
    if not chunks.ids:
        raise InputError(f"{records.source}: the documents have no tokens to chunk")
    import numpy as np

    vectors = np.concatenate([d.vectors for d in docs])
    settings = {**settings, "window": size, "overlap": overlap}
    provenance = {**enc.provenance(), "pooling": "mean", "chunking": settings}
    with _created_or_existing(store, space, enc.dim, metric, dtype, provenance) as target:
        if on_conflict == "error":
            _refuse_existing(target, chunks.ids)
        v.check_metas(chunks.metadata, chunks.ids)
        _check_directions(target, chunks.ids, vectors, enc.spec)
        totals = _write(target, chunks.ids, vectors, chunks.texts, chunks.metadata, None, on_conflict, progress)
    return IngestReport([target.name], len(chunks.ids), len(chunks.ids), 0, *totals, 0, time.perf_counter() - t0,
                        enc_s, settings)
