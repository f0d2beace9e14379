"""Ingest texts into a sparse space through a sparse encoder (``repspace ingest SPACE FILE --encoder sparse:<folder>``).

:func:`ingest_encoded_sparse` is what :func:`~repspace.workflows.ingest.ingest_records` runs when
its encoder's output is sparse (:class:`~repspace.engines.encoders.sparse_st.SparseSTEncoder`):
the texts' ``encode_document`` rows are stored in a sparse space whose features are the model's
vocabulary, and the space's provenance records the encoder (spec, folder fingerprint), so that
``repspace search SPACE --text "..."`` encodes the query through the same model's
``encode_query`` (:func:`~repspace.workflows.ingest.derived.derived_text_query`).

Examples
--------
>>> import tempfile, os
>>> from repspace.store import Store
>>> from repspace.engines.encoders.sparse_st import tiny_sparse_folder
>>> from repspace.workflows.ingest import Records, ingest_records
>>> d = tempfile.mkdtemp()
>>> folder = tiny_sparse_folder(os.path.join(d, "m"), ["a cat sat", "a dog barks", "cats and dogs"])
>>> store = Store(os.path.join(d, "s.db"))
>>> r = ingest_records(store, "sp", Records("inline", ["a", "b"], ["a cat sat", "a dog barks"], None, [{}, {}]),
...                    encoder=f"sparse:{folder}")
>>> r.added, store.space("sp").info().layout, [h.id for h in store.space("sp").search("dog", k=1)]
(2, 'sparse', ['b'])
"""

from __future__ import annotations

import time
from typing import Any

from repspace.core.errors import ConflictError, InputError
from repspace.core.progress import Progress
from repspace.core.store import Store
from repspace.workflows.ingest._target import (IngestReport, add_in_batches, created_or_existing, existing_space,
                                               refuse_existing)
from repspace.workflows.ingest.readers import Records

__all__ = ["ingest_encoded_sparse"]


def ingest_encoded_sparse(store: Store, space: str, enc: Any, ids: list[str], texts: list[str], records: Records,
                          *, metric: str | None = None, batch_size: int = 64, commit_every: int | None = None,
                          on_conflict: str = "upsert", progress: Progress | None = None, duplicates: int = 0,
                          t0: float | None = None) -> IngestReport:
    """Encode ``texts`` with the sparse encoder ``enc`` and store the rows in the sparse space ``space``.

    A new space gets the model's vocabulary as feature names and ``ip`` unless ``metric`` says
    ``cosine``; an existing one must be sparse and made by the same encoder.
    """
    t0 = time.perf_counter() if t0 is None else t0
    existing = existing_space(store, space)
    if existing is not None and not existing.info().sparse:
        raise ConflictError(f"space {space!r} holds dense vectors; a sparse encoder writes a new sparse space")
    if metric is not None and metric not in ("ip", "cosine"):
        raise InputError(f"a sparse space is searched by inner product or cosine (--metric ip|cosine), not {metric}")
    features = enc.feature_names() if existing is None else None
    t_enc = time.perf_counter()
    rows = enc.encode_sparse(texts, batch_size=batch_size, progress=progress)
    enc_s = time.perf_counter() - t_enc
    with created_or_existing(store, space, rows.n_features, metric or "ip", "float32", enc.provenance(),
                             layout="sparse", features=features) as target:
        if on_conflict == "error":
            refuse_existing(target, ids)
        totals = add_in_batches(target, ids, rows, texts, records.metadata, commit_every, on_conflict, progress,
                                allow_negative=False)
    return IngestReport([target.name], len(ids), len(ids), 0, *totals, duplicates, time.perf_counter() - t0, enc_s,
                        {"n_features": rows.n_features, "nnz": rows.nnz,
                         "empty_rows": int((rows.row_nnz() == 0).sum())})
