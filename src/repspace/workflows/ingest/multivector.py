"""Ingest token vectors into a multi-vector space: precomputed (a column of matrices) or from texts (MiniLM).

Two ways to give an item's token vectors:

* ``tokens_col``: a column holding, per row, a list of token vectors (a list of lists of
  numbers: JSON lines, a Parquet ``list<list<float>>`` column, or JSON text in a CSV cell);
* from the texts, with the token states of a shipped ``hf-layers`` encoder (``minilm``): the
  last layer's states of the non-special tokens, each L2-normalised (ColBERT's recipe without
  its projection, :mod:`repspace.workflows.token_recipe`); the recipe is recorded so that a text
  query goes through the same steps.

As for dense and sparse ingest, the whole input is read and checked before anything is written
(:func:`~repspace.core.multivector.check_token_sets`: another width than the space's, NaN or inf,
no token, too many tokens), so bad input is one error line and the store is unchanged.

Examples
--------
>>> import os, tempfile, json
>>> from repspace.store import Store
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "docs.jsonl")
>>> with open(p, "w") as f:
...     for row in ({"id": "a", "t": [[1.0, 0.0], [0.0, 1.0]]}, {"id": "b", "t": [[0.5, 0.5]]}):
...         _ = f.write(json.dumps(row) + "\\n")
>>> store = Store(os.path.join(d, "s.db"))
>>> r = ingest_multivector_file(store, "tok", p, tokens_col="t")
>>> r.added, r.extra["tokens"], store.space("tok").info().layout
(2, 3, 'multivector')
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import ConflictError, InputError
from repspace.core.multivector import TokenSets, check_token_sets
from repspace.core.printable import excerpt
from repspace.core.progress import Progress
from repspace.core.store import Space, Store
from repspace.core.store import validate as v
from repspace.workflows.ingest._target import (IngestReport, add_in_batches, created_or_existing, existing_space,
                                               refuse_existing)
from repspace.workflows.ingest.readers import Records, read_records
from repspace.workflows.token_recipe import encode_token_sets, token_encoder_spec, token_recipe

__all__ = ["ingest_multivector", "ingest_multivector_file"]


def _matrices(records: Records, col: str) -> list[Any]:
    """Each row's token matrix as read (CSV cells hold JSON text; Parquet lists may come as arrays of arrays)."""
    out = []
    for i, cell in enumerate(records.extra[col]):
        if isinstance(cell, str):
            try:
                cell = json.loads(cell)
            except (json.JSONDecodeError, RecursionError):
                raise InputError(f"{records.source}: row {i + 1}: {excerpt(col)} is not a JSON list of token vectors "
                                 f"(item {excerpt(records.ids[i])})") from None
        if cell is None:
            raise InputError(f"{records.source}: row {i + 1}: {excerpt(col)} is missing (item "
                             f"{excerpt(records.ids[i])})")
        if isinstance(cell, np.ndarray) and cell.dtype == object:
            cell = [np.asarray(t) if isinstance(t, np.ndarray) else t for t in cell]
            if cell and all(isinstance(t, np.ndarray) and t.ndim == 1 for t in cell) and len(
                    {len(t) for t in cell}) == 1:
                cell = np.stack(cell)
        out.append(cell)
    return out


def _width(matrix: Any) -> int | None:
    """The width of a well-formed token matrix (a new space's dimension), None for anything else."""
    try:
        arr = np.asarray(matrix)
    except (ValueError, TypeError):
        return None
    return int(arr.shape[1]) if arr.ndim == 2 else None


def ingest_multivector(
    store: Store,
    space: str,
    records: Records,
    *,
    tokens_col: str | None = None,
    encoder: str | None = None,
    max_length: int | None = None,
    batch_size: int = 32,
    commit_every: int | None = None,
    on_conflict: str = "upsert",
    progress: Progress | None = None,
) -> IngestReport:
    """Store records' token vectors in a multi-vector space (created when missing, metric ``ip``).

    Parameters
    ----------
    records : Records
        From :func:`~repspace.workflows.ingest.read_records` (with ``extra_cols=[tokens_col]``
        for precomputed vectors).
    tokens_col : the column of token matrices; without it the texts are encoded by
    encoder : the ``hf-layers`` encoder whose token states are taken (``minilm``, the default:
        the bundled MiniLM), truncated at ``max_length`` tokens (the encoder's own when None).

    Returns
    -------
    IngestReport
        ``extra``: ``tokens`` (token vectors written), ``dim``.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> records = Records("inline", ["a", "b"], ["a cat sat", "stocks fell"], None, [{}, {}])
    >>> r = ingest_multivector(store, "mv", records)
    >>> r.added, r.extra["dim"], store.space("mv").provenance["encoder"]
    (2, 384, 'hf-layers:minilm')
    """
    t0 = time.perf_counter()
    check_scalar(commit_every, "commit_every", int, low=1, none=True)
    check_scalar(max_length, "max_length", int, low=1, none=True)
    if on_conflict not in ("upsert", "error"):
        raise InputError(f"on_conflict must be 'upsert' or 'error', not {excerpt(on_conflict)}")
    if tokens_col is not None and (encoder is not None or max_length is not None):
        raise InputError("precomputed token vectors (--tokens-col) need no encoder: give --tokens-col or an "
                         "encoder, not both")
    if len(records) == 0:
        raise InputError(f"{records.source}: no items to ingest")
    ids = v.check_ids(records.ids)
    texts = v.check_texts(records.texts, ids) if records.texts is not None else None
    v.check_metas(records.metadata, ids)
    existing = existing_space(store, space)
    if existing is not None and existing.info().layout != "multivector":
        raise ConflictError(f"space {space!r} holds {existing.info().layout} vectors; ingest token vectors into a "
                            "new space")
    encode_seconds = 0.0
    if tokens_col is not None:
        matrices = _matrices(records, tokens_col)
        dim = existing.dim if existing is not None else next((w for w in map(_width, matrices) if w), 1)
        sets = check_token_sets(matrices, ids, dim)
        prov: dict[str, Any] = {"encoder": "precomputed", "source": Path(records.source).name}
    else:
        if texts is None or any(t is None for t in texts):
            raise InputError(f"{records.source}: token vectors from texts need a text for every item (or give "
                             "--tokens-col)")
        prov = token_recipe(encoder, max_length=max_length)
        if existing is not None and existing.provenance.get("encoder") != prov["encoder"]:
            raise ConflictError(f"space {space!r} holds token vectors of {existing.provenance.get('encoder')!r}, "
                                f"not {prov['encoder']!r}")
        t1 = time.perf_counter()
        raw = encode_token_sets([str(t) for t in texts], prov, batch_size=batch_size, progress=progress)
        encode_seconds = time.perf_counter() - t1
        dim = raw[0].shape[1]
        sets = check_token_sets(raw, ids, dim)
    with created_or_existing(store, space, dim, "ip", "float32", prov, layout="multivector") as target:
        if target.dim != dim:
            raise InputError(f"space {space!r} holds {target.dim}-d token vectors; these are {dim}-d")
        if on_conflict == "error":
            refuse_existing(target, ids)
        totals = add_in_batches(target, ids, sets, texts, records.metadata, commit_every, on_conflict, progress)
    return IngestReport([target.name], len(ids), len(ids) if tokens_col is None else 0, 0, *totals, 0,
                        time.perf_counter() - t0, encode_seconds, {"tokens": sets.n_tokens, "dim": dim})



def ingest_multivector_file(
    store: Store,
    space: str,
    path: str | Path,
    *,
    id_col: str | None = "id",
    text_col: str | None = "text",
    meta_cols: list[str] | None = None,
    auto_id: bool = False,
    tokens_col: str | None = None,
    **options: Any,
) -> IngestReport:
    """Read a JSON lines, CSV or Parquet file and store its token vectors; see :func:`ingest_multivector`.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.store import Store
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "d.jsonl"), "w") as f:
    ...     _ = f.write('{"id": "a", "text": "A cat sat on the mat."}\\n')
    >>> store = Store(os.path.join(d, "s.db"))
    >>> ingest_multivector_file(store, "mv", os.path.join(d, "d.jsonl"), encoder="minilm").extra
    {'tokens': 7, 'dim': 384}
    """
    if tokens_col is None:
        token_encoder_spec(options.get("encoder"))  # an encoder without token states is refused before reading
    records = read_records(path, text_col=text_col, id_col=id_col, meta_cols=meta_cols, auto_id=auto_id,
                           extra_cols=[tokens_col] if tokens_col is not None else None)
    return ingest_multivector(store, space, records, tokens_col=tokens_col, **options)
