"""Ingest a file: read its records, then store them whole (:func:`ingest_records`) or as chunks
(:func:`~repspace.workflows.ingest.chunks.ingest_chunks`).

Its own module so that neither of those two imports the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repspace.core.errors import InputError
from repspace.core.store import Store
from repspace.workflows.ingest._ingest import IngestReport, ingest_records
from repspace.workflows.ingest.chunks import ingest_chunks
from repspace.workflows.ingest.readers import read_records

__all__ = ["ingest_file"]


def ingest_file(
    store: Store,
    space: str,
    path: str | Path,
    *,
    text_col: str | None = "text",
    id_col: str | None = "id",
    vector_col: str | None = None,
    meta_cols: list[str] | None = None,
    ids_path: str | Path | None = None,
    auto_id: bool = False,
    chunk: int | None = None,
    late_chunking: bool = False,
    chunk_by: str | None = None,
    **options: Any,
) -> IngestReport:
    """Read a file (JSONL, CSV, Parquet, ``.npy``) and ingest it; see :func:`ingest_records`.

    With ``chunk`` each text is stored as chunks of that many tokens, embedded alone or, with
    ``late_chunking``, pooled from the whole document's token states (``window``, ``overlap`` in ``options``);
    ``chunk_by`` (``tokens``, ``words``, ``sentences``) says where chunks end; the encoder option
    ``pooling="landmark"`` with ``chunk`` stores one landmark-pooled vector per document instead; see
    :func:`repspace.workflows.ingest.ingest_chunks`.

    Examples
    --------
    >>> import tempfile, os, numpy as np
    >>> from repspace import Store
    >>> d = tempfile.mkdtemp()
    >>> np.save(os.path.join(d, "v.npy"), np.eye(3, dtype="float32"))
    >>> r = ingest_file(Store(os.path.join(d, "s.db")), "eye", os.path.join(d, "v.npy"), auto_id=True)
    >>> r.added, r.encoded
    (3, 0)
    """
    records = read_records(
        path, text_col=text_col, id_col=id_col, vector_col=vector_col, meta_cols=meta_cols,
        auto_id=auto_id, ids_path=ids_path,
    )
    landmark = (options.get("encoder_options") or {}).get("pooling") == "landmark"
    for wanted, what in ((late_chunking, "late chunking"), (landmark, "landmark pooling"),
                         (chunk_by is not None, "--chunk-by")):
        if wanted and chunk is None:
            raise InputError(f"{what} needs a chunk size (--chunk N tokens)")
    if chunk is not None:
        options.pop("commit_every", None)
        return ingest_chunks(store, space, records, chunk=chunk, late_chunking=late_chunking,
                             chunk_by=chunk_by or "tokens", **options)
    return ingest_records(store, space, records, auto_id=auto_id, **options)
