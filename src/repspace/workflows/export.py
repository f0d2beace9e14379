"""Export a space to Parquet, readable by pyarrow, pandas, LanceDB or Embedding Atlas.

Columns: ``id`` (string), ``text`` (string, null when absent), ``vector``
(``fixed_size_list<float32>[dim]``), then one column per top-level metadata
key whose values Arrow can type (others are written as JSON text), and
``metadata`` (the whole object as JSON text, so nothing is lost). The space's
description and provenance are in the file's key-value metadata under
``repspace``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError

if TYPE_CHECKING:
    from repspace.core.store import Space

RESERVED = ("id", "text", "vector", "metadata")


def export_parquet(space: Space, path: str | Path) -> dict[str, Any]:
    """Write the space to ``path`` atomically; returns ``{path, rows, columns}``.

    Examples
    --------
    >>> import tempfile, os, numpy as np, pyarrow.parquet as pq
    >>> from repspace import Store
    >>> d = tempfile.mkdtemp()
    >>> sp = Store(os.path.join(d, "s.db")).create_space("t", dim=2)
    >>> _ = sp.add(["a"], [[1.0, 2.0]], texts=["x"], metadata=[{"year": 2020}])
    >>> export_parquet(sp, os.path.join(d, "t.parquet"))["rows"]
    1
    >>> pq.read_table(os.path.join(d, "t.parquet")).column("year").to_pylist()
    [2020]
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    if path.suffix.lower() not in (".parquet", ".pq"):
        raise InputError(f"export writes Parquet: name the file *.parquet, not {path.name!r}")
    if path.is_dir():
        raise InputError(f"{path} is a folder")
    items, vectors = space.dump()
    info = space.info()
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
    columns: dict[str, Any] = {
        "id": pa.array([it.id for it in items], type=pa.string()),
        "text": pa.array([it.text for it in items], type=pa.string()),
        "vector": pa.FixedSizeListArray.from_arrays(flat, info.dim),
    }
    keys: list[str] = []
    for it in items:
        for key in it.metadata:
            if key not in RESERVED and key not in columns and key not in keys:
                keys.append(key)
    for key in keys:
        values = [it.metadata.get(key) for it in items]
        try:
            columns[key] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            columns[key] = pa.array([None if x is None else json.dumps(x) for x in values], type=pa.string())
    columns["metadata"] = pa.array([json.dumps(it.metadata, ensure_ascii=False) for it in items], type=pa.string())
    table = pa.table(columns)
    table = table.replace_schema_metadata({"repspace": json.dumps(info.to_dict())})
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return {"path": str(path), "rows": len(items), "columns": table.column_names}
