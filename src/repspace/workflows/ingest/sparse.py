"""Ingest sparse vectors: feature ids and weights (or ``{token: weight}`` maps) from a file into a sparse space.

Two ways to give an item's sparse vector, one column each or two:

* ``indices_col`` + ``values_col``: a list of feature ids and a list of weights of the same
  length (JSON lines, Parquet list columns, or JSON text in a CSV cell); the vocabulary's size
  comes from ``n_features``, from a ``vocab`` file (one feature name per line, the line number
  its id, from 0) or from the existing space;
* ``weights_col``: a map from token to weight (a JSON object, a Parquet map or struct); the
  tokens are looked up in the ``vocab`` file or the existing space's feature names, or, for a
  new space without a vocabulary, the vocabulary is built from the tokens in order of first
  appearance and kept as the space's feature names.

As for dense ingest, the whole input is read and checked before anything is written
(:func:`~repspace.core.sparse.check_sparse`: negative weights unless ``allow_negative``, NaN or
inf, ids outside the vocabulary, a feature twice in one row, lists of unequal lengths, control
characters in tokens), so bad input is one error line and the store is unchanged.

Examples
--------
>>> import os, tempfile, json
>>> from repspace.store import Store
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "docs.jsonl")
>>> with open(p, "w") as f:
...     for row in ({"id": "a", "w": {"cat": 1.5, "sat": 0.5}}, {"id": "b", "w": {"dog": 2.0}}):
...         _ = f.write(json.dumps(row) + "\\n")
>>> store = Store(os.path.join(d, "s.db"))
>>> ingest_sparse_file(store, "bow", p, weights_col="w").added
2
>>> sp = store.space("bow")
>>> sp.info().layout, sp.dim, sp.feature_names(), sp.sparse_of(["b"]).row(0)
('sparse', 3, ['cat', 'sat', 'dog'], ([2], [2.0]))
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import ConflictError, InputError
from repspace.core.files import text_lines
from repspace.core.printable import CONTROL, escape_controls, excerpt
from repspace.core.progress import Progress
from repspace.core.sparse import MAX_FEATURES, SparseRows, check_sparse
from repspace.core.store import Space, Store, check_feature_names
from repspace.core.store import validate as v
from repspace.workflows.ingest._target import (IngestReport, add_in_batches, created_or_existing, existing_space,
                                               refuse_existing)
from repspace.workflows.ingest.readers import Records, read_records

__all__ = ["ingest_sparse", "ingest_sparse_file", "read_vocab"]


def read_vocab(path: str | Path) -> list[str]:
    """Feature names from a text file, one per line (line ``i + 1`` names feature ``i``).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> _ = open(p, "w").write("cat\\ndog\\n")
    >>> read_vocab(p)
    ['cat', 'dog']
    """
    names = [line for _, line in text_lines(path, "vocabulary file")]
    if not names:
        raise InputError(f"{path}: the vocabulary file is empty")
    return check_feature_names(names)


def _cell(value: Any, source: str, row: int, col: str, kind: str) -> Any:
    """A cell as read (CSV cells hold JSON text); None when missing."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            raise InputError(f"{source}: row {row + 1}: {excerpt(col)} is not a JSON {kind}") from None
    return value


def _pairs_from_lists(records: Records, indices_col: str, values_col: str) -> SparseRows:
    """Rows from an indices column and a values column (lists of equal length)."""
    pairs = []
    for i, (idx, val) in enumerate(zip(records.extra[indices_col], records.extra[values_col])):
        idx = _cell(idx, records.source, i, indices_col, "list")
        val = _cell(val, records.source, i, values_col, "list")
        for cell, col in ((idx, indices_col), (val, values_col)):
            if not isinstance(cell, (list, tuple)):
                raise InputError(f"{records.source}: row {i + 1}: {excerpt(col)} is not a list "
                                 f"(item {excerpt(records.ids[i])})")
        if len(idx) != len(val):
            raise InputError(f"{records.source}: row {i + 1}: item {excerpt(records.ids[i])} has {len(idx)} indices "
                             f"and {len(val)} values")
        if not all(type(x) is int or (type(x) is float and x.is_integer()) for x in idx):
            raise InputError(f"{records.source}: row {i + 1}: {excerpt(indices_col)} holds something that is not an "
                             f"integer feature id (item {excerpt(records.ids[i])})")
        if not all(type(x) in (int, float) for x in val):
            raise InputError(f"{records.source}: row {i + 1}: {excerpt(values_col)} holds something that is not a "
                             f"number (item {excerpt(records.ids[i])})")
        pairs.append((idx, val))
    return SparseRows.from_pairs(pairs, 1)


def _weight_maps(records: Records, col: str) -> list[dict[str, float]]:
    """Each row's ``{token: weight}`` map (a JSON object, a Parquet map's pairs or a struct)."""
    maps = []
    for i, cell in enumerate(records.extra[col]):
        cell = _cell(cell, records.source, i, col, "object")
        if isinstance(cell, list) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in cell):
            cell = dict(cell)  # a Parquet map column reads as (key, value) pairs
        if not isinstance(cell, Mapping):
            raise InputError(f"{records.source}: row {i + 1}: {excerpt(col)} is not a map of token to weight "
                             f"(item {excerpt(records.ids[i])})")
        cell = {t: w for t, w in cell.items() if w is not None}  # a struct column fills absent tokens with None
        for token, weight in cell.items():
            if not isinstance(token, str) or not token:
                raise InputError(f"{records.source}: row {i + 1}: token {excerpt(token)} is not a non-empty string "
                                 f"(item {excerpt(records.ids[i])})")
            if CONTROL.search(token):
                raise InputError(f"{records.source}: row {i + 1}: token {escape_controls(excerpt(token))} has a "
                                 f"control character (item {excerpt(records.ids[i])}): tokens cannot hold control "
                                 "characters")
            if type(weight) not in (int, float):
                raise InputError(f"{records.source}: row {i + 1}: the weight of token {excerpt(token)} is not a number "
                                 f"(item {excerpt(records.ids[i])})")
        maps.append(cell)
    return maps


def _rows_from_maps(maps: list[dict[str, float]], vocab: list[str] | None, records: Records,
                    space: str) -> tuple[SparseRows, list[str]]:
    """Rows over ``vocab`` (built from the tokens, in order of first appearance, when None)."""
    index: dict[str, int] = {} if vocab is None else {t: j for j, t in enumerate(vocab)}
    pairs = []
    for i, m in enumerate(maps):
        idx = []
        for token in m:
            j = index.get(token)
            if j is None:
                if vocab is not None:
                    raise InputError(f"{records.source}: row {i + 1}: token {excerpt(token)} is not in the vocabulary "
                                     f"of space {space!r} ({len(vocab)} features; item {excerpt(records.ids[i])})")
                j = index[token] = len(index)
            idx.append(j)
        pairs.append((idx, list(m.values())))
    names = vocab if vocab is not None else list(index)
    return SparseRows.from_pairs(pairs, max(len(names), 1)), names


def _check_columns(indices_col: str | None, values_col: str | None, weights_col: str | None) -> None:
    """One way to give the sparse vectors: a token-map column, or an indices and a values column."""
    if (weights_col is None) == (indices_col is None and values_col is None):
        raise InputError("give --weights-col, or --indices-col with --values-col (not both)")
    if weights_col is None and (indices_col is None or values_col is None):
        raise InputError("--indices-col and --values-col go together")


def ingest_sparse(
    store: Store,
    space: str,
    records: Records,
    *,
    indices_col: str | None = None,
    values_col: str | None = None,
    weights_col: str | None = None,
    vocab: list[str] | None = None,
    n_features: int | None = None,
    metric: str | None = None,
    allow_negative: bool = False,
    commit_every: int | None = None,
    on_conflict: str = "upsert",
    progress: Progress | None = None,
) -> IngestReport:
    """Store records' sparse vectors (read with their columns in ``records.extra``) in a sparse space.

    Parameters
    ----------
    records : Records
        From :func:`~repspace.workflows.ingest.read_records` with ``extra_cols`` naming the
        sparse columns.
    indices_col, values_col : the feature-id and weight list columns (both), or
    weights_col : the ``{token: weight}`` column.
    vocab : feature names (the feature id is the position); with ``indices_col`` they name the
        features, with ``weights_col`` they are the tokens looked up.
    n_features : the vocabulary's size when no ``vocab`` names it (indices and values only).
    metric : ``ip`` (default for a new sparse space) or ``cosine`` (rows normalised when searched).
    allow_negative : accept negative weights (refused by default: most sparse encoders give
        non-negative weights, and the inverted index skips work only for them).

    Returns
    -------
    IngestReport

    Examples
    --------
    >>> from repspace.store import Store, example_store
    >>> store = example_store()
    >>> records = Records("inline", ["a", "b"], None, None, [{}, {}],
    ...                   extra={"i": [[0, 3], [2]], "v": [[1.0, 0.5], [2.0]]})
    >>> r = ingest_sparse(store, "s", records, indices_col="i", values_col="v", n_features=4)
    >>> r.added, r.extra["nnz"], store.space("s").sparse_of(["a"]).row(0)
    (2, 3, ([0, 3], [1.0, 0.5]))
    """
    t0 = time.perf_counter()
    _check_columns(indices_col, values_col, weights_col)
    check_scalar(n_features, "n_features", int, low=1, high=MAX_FEATURES, none=True)
    check_scalar(commit_every, "commit_every", int, low=1, none=True)
    if on_conflict not in ("upsert", "error"):
        raise InputError(f"on_conflict must be 'upsert' or 'error', not {excerpt(on_conflict)}")
    if len(records) == 0:
        raise InputError(f"{records.source}: no items to ingest")
    ids = v.check_ids(records.ids)
    texts = v.check_texts(records.texts, ids) if records.texts is not None else None
    v.check_metas(records.metadata, ids)
    existing = existing_space(store, space)
    if existing is not None and not existing.info().sparse:
        raise ConflictError(f"space {space!r} holds dense vectors; ingest sparse vectors into a new space")
    stored_names = existing.feature_names() if existing is not None else None
    if vocab is not None and n_features is not None and len(vocab) != n_features:
        raise InputError(f"the vocabulary file names {len(vocab)} features, --n-features says {n_features}")
    size = len(vocab) if vocab is not None else n_features
    if existing is not None:
        if size is not None and size != existing.dim:
            raise InputError(f"space {space!r} has a vocabulary of {existing.dim} features, not {size}")
        if vocab is not None and stored_names is not None and vocab != stored_names:
            raise InputError(f"the vocabulary file differs from the feature names of space {space!r}")
        size = existing.dim
    if weights_col is not None:
        maps = _weight_maps(records, weights_col)
        lookup = vocab if vocab is not None else stored_names
        if existing is not None and lookup is None:
            raise InputError(f"space {space!r} has no feature names: give its tokens' ids with --indices-col and "
                             "--values-col, or a --vocab file")
        rows, names = _rows_from_maps(maps, lookup, records, space)
        size = len(names)
        features = names if existing is None else None
    else:
        assert indices_col is not None and values_col is not None
        if size is None:
            raise InputError("give the vocabulary's size: --n-features N or --vocab FILE (one feature per line)")
        rows = _pairs_from_lists(records, indices_col, values_col)
        features = vocab if existing is None else None
    rows = check_sparse(SparseRows(rows.indptr, rows.indices, rows.values, size), ids, n_features=size,
                        allow_negative=allow_negative)
    prov = {"encoder": "precomputed", "source": Path(records.source).name}
    with created_or_existing(store, space, size, metric, "float32", prov, layout="sparse",
                             features=features) as target:
        if on_conflict == "error":
            refuse_existing(target, ids)
        totals = add_in_batches(target, ids, rows, texts, records.metadata, commit_every, on_conflict, progress,
                                allow_negative=allow_negative)
    return IngestReport([target.name], len(ids), 0, 0, *totals, 0, time.perf_counter() - t0, 0.0,
                        {"n_features": size, "nnz": rows.nnz, "empty_rows": int((rows.row_nnz() == 0).sum())})



def ingest_sparse_file(
    store: Store,
    space: str,
    path: str | Path,
    *,
    id_col: str | None = "id",
    text_col: str | None = "text",
    meta_cols: list[str] | None = None,
    auto_id: bool = False,
    indices_col: str | None = None,
    values_col: str | None = None,
    weights_col: str | None = None,
    vocab: str | Path | None = None,
    **options: Any,
) -> IngestReport:
    """Read a JSON lines, CSV or Parquet file and store its sparse vectors; see :func:`ingest_sparse`.

    ``vocab`` is a file of feature names, one per line (:func:`read_vocab`); the other
    options are :func:`ingest_sparse`'s (``n_features``, ``metric``, ``allow_negative``,
    ``commit_every``, ``on_conflict``, ``progress``).

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.store import Store
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "v.txt"), "w") as f:
    ...     _ = f.write("cat\\ndog\\n")
    >>> with open(os.path.join(d, "d.jsonl"), "w") as f:
    ...     _ = f.write('{"id": "a", "i": [1], "v": [0.5]}\\n')
    >>> store = Store(os.path.join(d, "s.db"))
    >>> _ = ingest_sparse_file(store, "s", os.path.join(d, "d.jsonl"), indices_col="i", values_col="v",
    ...                        vocab=os.path.join(d, "v.txt"))
    >>> store.space("s").feature_names()
    ['cat', 'dog']
    """
    _check_columns(indices_col, values_col, weights_col)
    names = read_vocab(vocab) if vocab is not None else None
    cols = [c for c in (indices_col, values_col, weights_col) if c is not None]
    records = read_records(path, text_col=text_col, id_col=id_col, meta_cols=meta_cols, auto_id=auto_id,
                           extra_cols=cols)
    return ingest_sparse(store, space, records, indices_col=indices_col, values_col=values_col,
                         weights_col=weights_col, vocab=names, **options)
