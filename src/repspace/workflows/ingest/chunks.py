"""Ingest long documents as chunks: each chunk an item with its document id and character offsets.

``repspace ingest SPACE FILE --chunk N`` cuts every document into chunks of ``N`` tokens
(:func:`~repspace.engines.encoders.late_chunking.chunk_spans`) and stores each chunk as an item
``<document id>#<k>`` with metadata ``{"document", "chunk", "start", "end"}`` (``text[start:end]`` is the chunk's
text) beside the document's own metadata. Without ``--late-chunking`` each chunk's text is embedded alone
(through :func:`~repspace.workflows.ingest.ingest_records`, so stored texts are reused); with it the document is
run through the model once, in overlapping windows, and each chunk's vector pools its tokens' states in that
context (:func:`~repspace.engines.encoders.late_chunking.late_chunks`). ``chunk_by`` ends chunks every ``N``
tokens (``tokens``) or at the last word or sentence boundary within ``N`` tokens (``words``, ``sentences``).
With the encoder option ``pooling="landmark"`` the chunks are not stored: each document is one item, its vector
the mean of the landmark tokens placed after its chunks
(:func:`~repspace.engines.encoders.landmark.landmark_pool`), its metadata the number of ``chunks``; the space
records ``pooling: landmark`` (its documents, with ``chunking`` the settings) and ``query_pooling: last``, how
:func:`~repspace.engines.encoders.from_provenance` encodes its queries (a query of at most one chunk has one
landmark, the closing ``[SEP]``, which is its last token).

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

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import ConflictError, InputError
from repspace.core.limits import DEFAULT_ENCODER, LATE_CHUNK_OVERLAP
from repspace.core.progress import Progress
from repspace.core.store import Store
from repspace.core.store import validate as v
from repspace.engines.encoders.chunk_bounds import CHUNK_BY
from repspace.workflows.ingest._ingest import _check_directions, _write, ingest_records
from repspace.workflows.ingest._target import IngestReport, created_or_existing, existing_space, refuse_existing
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
                  window: int | None = None, overlap: int = LATE_CHUNK_OVERLAP, chunk_by: str = "tokens",
                  encoder: str | None = None,
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
        (:func:`~repspace.engines.encoders.late_chunking.late_chunks`); landmark pooling's window.
    chunk_by : {"tokens", "words", "sentences"}
        Where chunks end (:func:`~repspace.engines.encoders.chunk_bounds.bounded_chunks`).
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
    check_choice(chunk_by, "chunk-by", CHUNK_BY)
    if records.vectors is not None or records.texts is None:
        raise InputError(f"{records.source}: chunking needs texts, not vectors")
    ids = v.check_ids(records.ids)
    v.check_texts_to_embed(records.texts, ids, records.source)
    existing = existing_space(store, space)
    spec = encoder or (existing.provenance.get("encoder") if existing else None) or DEFAULT_ENCODER
    landmark = (encoder_options or {}).get("pooling") == "landmark"
    if landmark and late_chunking:
        raise InputError("landmark pooling gives one vector per document; it does not combine with --late-chunking")
    enc_options = {k: val for k, val in (encoder_options or {}).items() if not (landmark and k == "pooling")}
    enc = get_encoder(spec, **enc_options)
    settings = {"documents": len(ids), "chunk_tokens": chunk, "chunk_by": chunk_by, "late_chunking": late_chunking}
    if landmark:
        return _ingest_landmark(store, space, records, enc, chunk, chunk_by, window, metric, dtype, batch_size,
                                on_conflict, progress, {**settings, "pooling": "landmark"})
    if not late_chunking:
        from repspace.engines.encoders.late_chunking import chunk_spans

        spans = [chunk_spans(enc, str(t), chunk, chunk_by) for t in records.texts]
        report = ingest_records(store, space, chunk_records(records, spans), encoder=spec,
                                encoder_options=encoder_options, metric=metric, dtype=dtype, batch_size=batch_size,
                                on_conflict=on_conflict, progress=progress, **options)
        return IngestReport(**{**report.__dict__, "extra": {**report.extra, **settings}})
    return _ingest_late(store, space, records, enc, chunk, chunk_by, window, overlap, metric, dtype, batch_size,
                        on_conflict, progress, settings)


def _check_token_encoder(store: Store, space: str, enc: Any, what: str) -> None:
    """Refuse an encoder without token states, or one other than the existing space's."""
    from repspace.engines.encoders.hf_layers import HFLayersEncoder

    if not isinstance(enc, HFLayersEncoder):
        raise InputError(f"{what} needs the token states of an hf-layers encoder (e.g. hf-layers:minilm), "
                         f"not {enc.spec}")
    existing = existing_space(store, space)
    if existing is not None and existing.provenance.get("encoder") not in (None, enc.spec):
        raise ConflictError(f"space {space!r} was made with encoder {existing.provenance.get('encoder')!r}, "
                            f"not {enc.spec!r}; ingest into a new space")


def _ingest_landmark(store: Store, space: str, records: Records, enc: Any, chunk: int, chunk_by: str,
                     window: int | None, metric: str | None, dtype: str, batch_size: int, on_conflict: str,
                     progress: Progress | None, settings: dict[str, Any]) -> IngestReport:
    from repspace.engines.encoders.chunk_bounds import bounded_chunks
    from repspace.engines.encoders.landmark import landmark_pool
    from repspace.engines.encoders.late_chunking import default_window, token_offsets

    t0 = time.perf_counter()
    _check_token_encoder(store, space, enc, "landmark pooling")
    size = default_window(enc) if window is None else window
    assert records.texts is not None
    texts = [str(t) for t in records.texts]
    vectors = landmark_pool(enc, texts, chunk_tokens=chunk, chunk_by=chunk_by, window=size, batch_size=batch_size,
                            progress=progress)
    enc_s = time.perf_counter() - t0
    tok = enc.loaded.tokenizer
    n_chunks = [len(bounded_chunks(token_offsets(tok, t)[1], t, chunk, chunk_by)) for t in texts]
    if not any(n_chunks):
        raise InputError(f"{records.source}: the documents have no tokens to chunk")
    metas = [{**(m or {}), "chunks": n} for m, n in zip(records.metadata, n_chunks, strict=True)]
    docs = Records(records.source, list(records.ids), texts, None, metas, records.columns)
    settings = {**settings, "window": size}
    # the documents were landmark-pooled; queries are encoded from the provenance with query_pooling: "last"-token
    # pooling is landmark pooling of a query of one chunk (its one landmark is the closing [SEP])
    provenance = {**enc.provenance(), "pooling": "landmark", "query_pooling": "last", "chunking": settings}
    return _store_vectors(store, space, docs, vectors, enc, metric, dtype, on_conflict, progress, provenance,
                          settings, t0, enc_s)


def _ingest_late(store: Store, space: str, records: Records, enc: Any, chunk: int, chunk_by: str,
                 window: int | None, overlap: int, metric: str | None, dtype: str, batch_size: int, on_conflict: str,
                 progress: Progress | None, settings: dict[str, Any]) -> IngestReport:
    from repspace.engines.encoders.late_chunking import default_window, late_chunks

    t0 = time.perf_counter()
    _check_token_encoder(store, space, enc, "--late-chunking")
    size = default_window(enc) if window is None else window
    assert records.texts is not None
    docs = late_chunks(enc, [str(t) for t in records.texts], chunk_tokens=chunk, window=size, overlap=overlap,
                       batch_size=batch_size, chunk_by=chunk_by, progress=progress)
    enc_s = time.perf_counter() - t0
    chunks = chunk_records(records, [list(d.char_spans) for d in docs])
    if not chunks.ids:
        raise InputError(f"{records.source}: the documents have no tokens to chunk")
    import numpy as np

    vectors = np.concatenate([d.vectors for d in docs])
    settings = {**settings, "window": size, "overlap": overlap}
    return _store_vectors(store, space, chunks, vectors, enc, metric, dtype, on_conflict, progress,
                          {**enc.provenance(), "pooling": "mean", "chunking": settings}, settings, t0, enc_s)


def _store_vectors(store: Store, space: str, chunks: Records, vectors: Any, enc: Any, metric: str | None, dtype: str,
                   on_conflict: str, progress: Progress | None, provenance: dict[str, Any], settings: dict[str, Any],
                   t0: float, enc_s: float) -> IngestReport:
    """Write the items and vectors into the space (created when missing) in one transaction."""
    with created_or_existing(store, space, enc.dim, metric, dtype, provenance) as target:
        if on_conflict == "error":
            refuse_existing(target, chunks.ids)
        v.check_metas(chunks.metadata, chunks.ids)
        _check_directions(target, chunks.ids, vectors, enc.spec)
        totals = _write(target, chunks.ids, vectors, chunks.texts, chunks.metadata, None, on_conflict, progress)
    return IngestReport([target.name], len(chunks.ids), len(chunks.ids), 0, *totals, 0, time.perf_counter() - t0,
                        enc_s, settings)
