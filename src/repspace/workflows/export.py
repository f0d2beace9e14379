"""Export a space to Parquet, readable by pyarrow, pandas, polars, LanceDB or Embedding Atlas.

Columns, in order:

- ``id`` (string), ``text`` (string, null when absent);
- ``vector``: ``fixed_size_list<float32>[dim]``, bit-identical to the stored
  vectors (float16 spaces are widened exactly). Its Arrow field metadata names
  the space's metric: ``metric`` (repspace's name: ``cosine``, ``ip``,
  ``l2`` or ``poincare``) and ``distance_type`` (LanceDB's name for the same
  ranking: ``cosine``, ``dot`` or ``l2``; LanceDB's default is ``l2``; none
  for ``poincare``, which LanceDB cannot rank by);
- with ``flatten`` (the default), one column per top-level metadata key (see
  below);
- ``metadata``: each item's whole metadata object as JSON text, so nothing is
  lost whatever the flattening did.

The file's schema metadata holds the space's description and provenance as
JSON under ``repspace``.

Flattening rules, per top-level metadata key (columns in the order the keys
first appear; each item's keys are stored sorted):

- The column is typed when one Arrow type holds every item's value exactly as
  stored: booleans, int64, float64, strings, and lists and objects of them
  (Arrow infers the type). Integers and floats under one key become float64
  when every integer is exact in float64.
- Otherwise it is a string column of JSON text (``json.loads`` gives each
  value back): mixed types (``1`` and ``"1"``, ``true`` and ``1``), integers
  beyond int64, objects whose keys differ between items, empty objects, keys
  only ever null or ``[]``, and values nested deeper than a Parquet reader can
  open (a store written before ingest bounded nesting at
  :data:`~repspace.core.store.validate.MAX_METADATA_DEPTH` levels).
- An item without the key (or with ``null``) has null.
- A key is the column's name as it is, unless it cannot be: a fixed column's
  name (``id``, ``text``, ``vector``, ``metadata``), empty, starting with
  ``_`` (LanceDB keeps ``_rowid``, ``_distance``, ``_score`` and such for
  itself) or holding ``.`` or a backtick (LanceDB refuses or cannot query
  them). Such a key is written as ``metadata_<key>`` with ``.`` and the
  backtick replaced by ``_``, the prefix repeated until the name is free: the
  fixed columns are never overwritten, and ``metadata`` keeps the key as it is.

The file is written to a temporary file beside the target, flushed to disk and
renamed over it, so readers see the old file or the new one, never half of
one; it gets the permissions ``open()`` would give a new file
(``0o666 & ~umask``). A missing folder is created.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import DiskFullError, InputError, is_disk_full
from repspace.core.store.validate import MAX_METADATA_DEPTH, metadata_depth

if TYPE_CHECKING:
    import pyarrow as pa

    from repspace.core.store import Space

__all__ = ["LANCEDB_DISTANCE", "PREFIX", "RESERVED", "export_parquet", "column_name_ok"]

#: The fixed columns; a metadata key with one of these names is written as ``metadata_<key>``.
RESERVED = ("id", "text", "vector", "metadata")

#: The prefix of a flattened metadata key that cannot be a column name as it is.
PREFIX = "metadata_"

#: LanceDB's ``distance_type`` that ranks like each repspace metric.
LANCEDB_DISTANCE = {"cosine": "cosine", "ip": "dot", "l2": "l2"}


def export_parquet(space: Space, path: str | Path, *, flatten: bool = True) -> dict[str, Any]:
    """Write the space to a Parquet file, atomically.

    Parameters
    ----------
    space : Space
        The space to export (its live items, in row order).
    path : str or Path
        The file to write, ``*.parquet`` or ``*.pq``; its folder is created if
        missing, an existing file is replaced.
    flatten : bool
        Also write each top-level metadata key as a column of its own (see the
        module docstring for the rules); ``False`` writes only ``id``,
        ``text``, ``vector`` and ``metadata``.

    Returns
    -------
    dict
        ``{"path", "rows", "columns", "metric"}``.

    Raises
    ------
    InputError
        A name that is not ``*.parquet``, a folder, or a place that cannot be
        written (one line naming it and why).

    Examples
    --------
    >>> import tempfile, os, numpy as np, pyarrow.parquet as pq
    >>> from repspace import Store
    >>> d = tempfile.mkdtemp()
    >>> sp = Store(os.path.join(d, "s.db")).create_space("t", dim=2, metric="ip")
    >>> _ = sp.add(["a"], [[1.0, 2.0]], texts=["x"], metadata=[{"year": 2020, "id": "dup"}])
    >>> export_parquet(sp, os.path.join(d, "out", "t.parquet"))["columns"]
    ['id', 'text', 'vector', 'metadata_id', 'year', 'metadata']
    >>> t = pq.read_table(os.path.join(d, "out", "t.parquet"))
    >>> t.column("year").to_pylist(), t.schema.field("vector").metadata[b"distance_type"]
    ([2020], b'dot')
    >>> np.stack(t.to_pandas().vector)
    array([[1., 2.]], dtype=float32)
    """
    import pyarrow as pa

    path = Path(path)
    if path.suffix.lower() not in (".parquet", ".pq"):
        raise InputError(f"export writes Parquet: name the file *.parquet, not {path.name!r}")
    if path.is_dir():
        raise InputError(f"{path} is a folder")
    items, vectors = space.dump()
    info = space.info()
    metric = info.metric.value
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
    field_meta = {"metric": metric}
    if metric in LANCEDB_DISTANCE:  # LanceDB has no hyperbolic distance: a poincare space names its metric only
        field_meta["distance_type"] = LANCEDB_DISTANCE[metric]
    vector_field = pa.field("vector", pa.list_(pa.float32(), info.dim), metadata=field_meta)
    fields = [pa.field("id", pa.string()), pa.field("text", pa.string()), vector_field]
    arrays: list[Any] = [
        pa.array([it.id for it in items], type=pa.string()),
        pa.array([it.text for it in items], type=pa.string()),
        pa.FixedSizeListArray.from_arrays(flat, info.dim),
    ]
    texts = [json.dumps(it.metadata, ensure_ascii=False) for it in items]
    if flatten:
        for name, column in _flatten(items, texts).items():
            fields.append(pa.field(name, column.type))
            arrays.append(column)
    fields.append(pa.field("metadata", pa.string()))
    arrays.append(pa.array(texts, type=pa.string()))
    schema = pa.schema(fields, metadata={"repspace": json.dumps(info.to_dict())})
    table = pa.Table.from_arrays(arrays, schema=schema)
    _write_atomically(table, path)
    return {"path": str(path), "rows": len(items), "columns": table.column_names, "metric": metric}


def _flatten(items: list[Any], texts: list[str]) -> dict[str, pa.Array]:
    """One column per top-level metadata key, named as the module docstring says."""
    keys: dict[str, None] = {}
    too_deep: set[str] = set()  # keys holding a value nested deeper than Parquet readers open
    for it, text in zip(items, texts):
        keys.update(dict.fromkeys(it.metadata))
        # a text with at most MAX_METADATA_DEPTH brackets cannot nest deeper (the usual case, counted in C)
        if text.count("{") + text.count("[") > MAX_METADATA_DEPTH:
            too_deep.update(k for k, x in it.metadata.items() if metadata_depth(x) >= MAX_METADATA_DEPTH)
    taken = set(RESERVED) | {k for k in keys if column_name_ok(k)}
    columns: dict[str, pa.Array] = {}
    for key in keys:
        name = key
        if not column_name_ok(key):
            name = PREFIX + key.replace(".", "_").replace("`", "_")
            while name in taken:
                name = PREFIX + name
            taken.add(name)
        values = [it.metadata.get(key) for it in items]
        columns[name] = _json_column(values) if key in too_deep else _column(values)
    return columns


def column_name_ok(key: str) -> bool:
    """Whether a metadata key can name its flattened column as it is.

    Examples
    --------
    >>> [column_name_ok(k) for k in ("year", "text", "", "_id", "a.b", "ünï code")]
    [True, False, False, False, False, True]
    """
    return bool(key) and key not in RESERVED and not key.startswith("_") and "." not in key and "`" not in key


def _column(values: list[Any]) -> pa.Array:
    """The values typed by Arrow when that keeps every one exactly, else as JSON text."""
    import pyarrow as pa

    try:
        arr = pa.array(values)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):  # mixed types, ints beyond int64
        return _json_column(values)
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_boolean(t) or pa.types.is_int64(t):
        return arr
    if not _writable(t):
        return _json_column(values)
    # floats may have absorbed booleans; structs add the keys an item lacks
    if all(map(_same, values, arr.to_pylist())):
        return arr
    return _json_column(values)


def _json_column(values: list[Any]) -> pa.Array:
    import pyarrow as pa

    return pa.array([None if x is None else json.dumps(x, ensure_ascii=False) for x in values], type=pa.string())


def _writable(t: pa.DataType) -> bool:
    """Whether a column of type ``t`` is worth writing: no null type, no empty struct, not too deep."""
    import pyarrow as pa

    todo = [(t, 0)]
    while todo:
        t, level = todo.pop()
        if pa.types.is_null(t) or level >= MAX_METADATA_DEPTH:
            return False
        if pa.types.is_struct(t):
            if t.num_fields == 0:
                return False
            todo.extend((t.field(i).type, level + 1) for i in range(t.num_fields))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            todo.append((t.value_type, level + 1))
        elif not (pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t)
                  or pa.types.is_string(t)):
            return False
    return True


def _same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (1 == 1.0), but a boolean is not a number and keys must match."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    return (numbers or type(a) is type(b)) and a == b


def _write_atomically(table: pa.Table, path: Path) -> None:
    """Write ``table`` with :func:`~repspace.core.atomic.write_atomic` (mode 0o666 less the umask, flushed to
    disk, renamed over ``path``); a place that cannot be written is one :class:`InputError` line."""
    import pyarrow.parquet as pq

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create the folder of {path}: {e.strerror or e}") from None
    try:
        write_atomic(path, lambda f: pq.write_table(table, f), durable=True)
    except OSError as e:
        if is_disk_full(e):
            raise DiskFullError(f"disk full: cannot write {path}; nothing was written") from None
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None