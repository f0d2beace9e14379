"""Filter columns kept beside the store, so that a new process filters a large space without a scan.

Reading one metadata field of a million items out of SQLite (``json_extract``
per item) takes about a second; the column it gives (types, numbers, strings:
:class:`~repspace.core.filters.columns.Column`) loads from a NumPy ``.npz`` in a
few tens of milliseconds. :mod:`repspace.core.store._selections` writes a column
here after reading it from SQL, for spaces of at least :data:`PERSIST_MIN_ITEMS`
items, and reads it back in any process while the space is unchanged.

A file is trusted only for the state it was read at: the space's uid, its
generation, its next row and dead rows (the rule of every derived index) and the
field's path are stored inside it and compared; any other file, damaged or
stale, is ignored and replaced by the next read. Files are written to a
temporary name and renamed, so a reader never sees half of one; nothing is
pickled (``allow_pickle=False``): the distinct strings are stored as one
UTF-8 text and offsets, each item as a code into them.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from repspace.core.filters.columns import Column
>>> col = Column.from_arrays(["integer", "text", None], [3, "en", None])
>>> state = ("uid0", 7, 3, 0)
>>> f = column_file(Path(tempfile.mkdtemp()), "uid0", ("lang",))
>>> save_column(f, state, ("lang",), np.array([0, 1, 2]), col)
>>> rows, back = load_column(f, state, ("lang",))
>>> rows.tolist(), back.text.tolist(), back.number[0]
([0, 1, 2], [None, 'en', None], np.float64(3.0))
>>> load_column(f, ("uid0", 8, 3, 0), ("lang",)) is None  # another generation: not trusted
True
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from repspace.core.atomic import read_npz, write_npz
from repspace.core.filters.columns import Column

#: Spaces with fewer items read a field from SQL in tens of milliseconds: nothing is written for them.
PERSIST_MIN_ITEMS = 50_000
#: Bumped when the layout of a file changes (older files are then ignored).
FORMAT = 2

#: The state a file belongs to: (space uid, generation, next row, dead rows).
State = tuple[str, int, int, int]


def column_file(index_dir: Path, uid: str, path: tuple[str, ...]) -> Path:
    """Where the column of field ``path`` of space ``uid`` is kept (one file per field)."""
    digest = hashlib.sha256(json.dumps(list(path)).encode()).hexdigest()[:24]
    return index_dir / uid / "columns" / f"{digest}.npz"


def _meta(state: State, path: tuple[str, ...]) -> dict[str, object]:
    return {"format": FORMAT, "uid": state[0], "generation": state[1], "next_row": state[2],
            "dead_rows": state[3], "path": list(path)}


def save_column(file: Path, state: State, path: tuple[str, ...], rows: np.ndarray, col: Column) -> None:
    """Write a column (and the live rows it is aligned with) atomically."""
    strings = [] if col.strings is None else col.strings.tolist()  # a text column has at least one string
    big = sorted(col.big)
    write_npz(file, _meta(state, path), {
        "rows": np.asarray(rows, dtype=np.int64), "kind": col.kind, "number": col.number, "exact": col.exact,
        "empty": col.empty, "codes": col.codes,
        "strings": np.frombuffer("".join(strings).encode("utf-8"), dtype=np.uint8),
        "string_ends": np.cumsum([len(t) for t in strings], dtype=np.int64),
        "big_pos": np.array(big, dtype=np.int64), "big_val": np.array([str(col.big[p]) for p in big], dtype=str),
    })


def load_column(file: Path, state: State, path: tuple[str, ...]) -> tuple[np.ndarray, Column] | None:
    """The live rows and the column kept in ``file``, or None when it is absent, damaged or of another state."""
    z = read_npz(file, _meta(state, path))
    if z is None:
        return None  # absent, damaged or stale: read again from the store
    try:
        rows, kind, number, exact, empty, codes = (z[k] for k in ("rows", "kind", "number", "exact", "empty",
                                                                 "codes"))
        ends = z["string_ends"].tolist()
        strings = None
        if ends:
            whole = bytes(z["strings"]).decode("utf-8")
            strings = np.empty(len(ends), dtype=object)
            strings[:] = [whole[a:b] for a, b in zip([0, *ends[:-1]], ends)]
        big = dict(zip(z["big_pos"].tolist(), (int(v) for v in z["big_val"].tolist())))
    except (KeyError, ValueError, UnicodeDecodeError):
        return None
    n = len(rows)
    if not all(len(a) == n for a in (kind, number, exact, empty, codes)) or int(codes.max(initial=-1)) >= (
            0 if strings is None else len(strings)):
        return None
    return rows, Column(kind, number, exact, strings, codes, empty, big)
