"""Reading items from files: JSONL, CSV, Parquet and ``.npy`` (+ ids).

Each reader returns :class:`Records`: ids, texts, vectors and metadata columns,
validated for shape and encoding, with errors that name the file and the line
or row. JSONL is parsed line by line with :mod:`json` (so errors carry a line
number and metadata may be nested); CSV and Parquet are read by pyarrow.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError, NotFoundError
from repspace.core.files import parse_jsonl_lines, read_jsonl, text_lines
from repspace.core.printable import excerpt, one_line

FORMATS = ("jsonl", "csv", "parquet", "npy")


@dataclass
class Records:
    """Items read from a file, column by column (all lists aligned).

    ``vectors`` is None unless a vector column (or a ``.npy``) was read;
    ``texts`` is None unless a text column was read.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "items.jsonl")
    >>> _ = open(p, "w").write('{"id": "a", "text": "a cat", "lang": "en"}\\n'
    ...                        '{"id": "b", "text": "un chat", "lang": "fr"}\\n')
    >>> r = read_records(p)
    >>> len(r), r.ids, r.texts, r.vectors, r.metadata
    (2, ['a', 'b'], ['a cat', 'un chat'], None, [{'lang': 'en'}, {'lang': 'fr'}])
    """

    source: str
    ids: list[str]
    texts: list[str | None] | None
    vectors: np.ndarray | None
    metadata: list[dict[str, Any]]
    columns: list[str] = field(default_factory=list)
    extra: dict[str, list[Any]] = field(default_factory=dict)
    """Columns read for the caller as they are (``extra_cols``: a sparse ingest's indices and weights)."""

    def __len__(self) -> int:
        return len(self.ids)


def detect_format(path: Path) -> str:
    """The format of a file from its suffix (``.jsonl``/``.ndjson``, ``.csv``, ``.parquet``, ``.npy``).

    Examples
    --------
    >>> [detect_format(Path(name)) for name in ("items.ndjson", "items.TSV", "items.pq", "vectors.npy")]
    ['jsonl', 'csv', 'parquet', 'npy']
    >>> detect_format(Path("items.xlsx"))
    Traceback (most recent call last):
    repspace.core.errors.InputError: items.xlsx: unknown file type '.xlsx'; use .jsonl, .csv, .parquet or .npy
    """
    suffix = path.suffix.lower()
    fmt = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "csv",
           ".parquet": "parquet", ".pq": "parquet", ".npy": "npy"}.get(suffix)
    if fmt is None:
        raise InputError(f"{path}: unknown file type {excerpt(suffix)}; use .jsonl, .csv, .parquet or .npy")
    return fmt


def read_records(
    path: str | Path,
    *,
    text_col: str | None = "text",
    id_col: str | None = "id",
    vector_col: str | None = None,
    meta_cols: list[str] | None = None,
    auto_id: bool = False,
    ids_path: str | Path | None = None,
    fmt: str | None = None,
    extra_cols: list[str] | None = None,
) -> Records:
    """Read a file into :class:`Records`.

    Parameters
    ----------
    path : file to read.
    text_col : column with the texts (``None``: no texts). If the default
        ``"text"`` is absent and vectors are given, the items have no text.
    id_col : column with the ids. If absent, pass ``auto_id=True`` to use the
        text's content hash (or the row number for vectors only).
    vector_col : column with precomputed vectors (lists of numbers).
    meta_cols : columns kept as metadata (default: every other column).
    ids_path : for ``.npy``: a text file with one id per line.
    extra_cols : columns returned as they were read in ``Records.extra`` (not metadata); with
        them, as with vectors, the default text column is optional.

    Examples
    --------
    A space exported to Parquet reads back whole (JSON lines, CSV and ``.npy`` read the same way):

    >>> import tempfile, os
    >>> from repspace.store import example_space, export_parquet
    >>> p = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> _ = export_parquet(example_space(2, 3, texts=["a cat", None], metadata=[{"year": 2021}, {"year": 2022}]), p)
    >>> r = read_records(p, vector_col="vector", meta_cols=["year"])
    >>> r.ids, r.texts, r.metadata, r.vectors.shape
    (['i0', 'i1'], ['a cat', None], [{'year': 2021}, {'year': 2022}], (2, 3))
    """
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a file")
    fmt = fmt or detect_format(path)
    if fmt == "npy":
        return _read_npy(path, ids_path, auto_id)
    string_cols = [c for c in (text_col, id_col, vector_col, *(extra_cols or [])) if c]
    rows = _read_jsonl(path) if fmt == "jsonl" else _read_table(path, fmt, string_cols)
    columns, data = rows
    return _to_records(str(path), columns, data, text_col, id_col, vector_col, meta_cols, auto_id, extra_cols or [])


def _read_jsonl(path: Path) -> tuple[list[str], dict[str, list[Any]]]:
    return _as_columns([obj for _, obj in read_jsonl(path, "file")])


def _as_columns(records: list[dict[str, Any]]) -> tuple[list[str], dict[str, list[Any]]]:
    """JSON objects as columns, in order of first appearance; a key an object lacks is :data:`_MISSING`."""
    columns: list[str] = []
    seen: set[str] = set()
    for r in records:
        for key in r:
            if key not in seen:
                seen.add(key)
                columns.append(key)
    data = {c: [r.get(c, _MISSING) for r in records] for c in columns}
    data["__len__"] = [None] * len(records)
    return columns, data


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _read_table(path: Path, fmt: str, string_cols: list[str]) -> tuple[list[str], dict[str, list[Any]]]:
    import pyarrow as pa

    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path)
        else:
            import pyarrow.csv as pacsv

            delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
            # ids, texts and vector cells stay strings ("007" is not the number 7).
            table = pacsv.read_csv(
                path,
                parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
                convert_options=pacsv.ConvertOptions(
                    strings_can_be_null=False, column_types={c: pa.string() for c in string_cols}
                ),
            )
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        if "UTF8" in message or "utf8" in message.lower() or "utf-8" in message.lower():
            message = f"invalid UTF-8 ({message})"
        raise InputError(f"{path}: cannot read {fmt}: {message}") from None
    columns = list(table.column_names)
    data = {c: table.column(c).to_pylist() for c in columns}
    data["__len__"] = [None] * table.num_rows
    return columns, data


def _to_records(
    source: str,
    columns: list[str],
    data: dict[str, list[Any]],
    text_col: str | None,
    id_col: str | None,
    vector_col: str | None,
    meta_cols: list[str] | None,
    auto_id: bool,
    extra_cols: list[str],
) -> Records:
    n = len(data["__len__"])
    available = _listed(columns)
    for name, col in (("--vector-col", vector_col), *(("a column", c) for c in extra_cols)):
        if col is not None and col not in columns:
            raise InputError(f"{source}: no column {excerpt(col)} for {name}; columns: {available}")
    if text_col is not None and text_col not in columns:
        if text_col != "text" or (vector_col is None and not extra_cols):
            raise InputError(f"{source}: no text column {excerpt(text_col)}; columns: {available}")
        text_col = None  # the default "text" is optional when vectors are given
    if id_col is not None and id_col not in columns and not auto_id:
        raise InputError(f"{source}: no id column {excerpt(id_col)}; columns: {available} (name one with --id-col, "
                         "or pass --auto-id to use content hashes)")
    texts: list[str | None] | None = None
    if text_col is not None:
        texts = []
        for i, t in enumerate(data[text_col]):
            if t is _MISSING or t is None:
                if vector_col is None and not extra_cols:
                    raise InputError(f"{source}: row {i + 1} has no text in column {excerpt(text_col)}")
                texts.append(None)
            elif not isinstance(t, str):
                raise InputError(f"{source}: row {i + 1}: text in {excerpt(text_col)} is {type(t).__name__}, not a string")
            else:
                texts.append(t)
    vectors = parse_vectors(source, data[vector_col], vector_col) if vector_col is not None else None
    if id_col is not None and id_col in columns:
        ids = []
        for i, v in enumerate(data[id_col]):
            if v is _MISSING or v is None or (isinstance(v, str) and not v.strip()):
                raise InputError(f"{source}: row {i + 1} has an empty id in column {excerpt(id_col)}")
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            if not isinstance(v, (str, int)) or isinstance(v, bool):
                raise InputError(f"{source}: row {i + 1}: id is {type(v).__name__}; ids must be strings or integers")
            ids.append(str(v))
    else:
        from repspace.core.store.validate import text_hash

        ids = [text_hash(t) if t is not None else f"row-{i}" for i, t in enumerate(texts)] if texts is not None \
            else [f"row-{i}" for i in range(n)]
    used = {c for c in (text_col, id_col, vector_col, *extra_cols) if c is not None}
    if meta_cols is not None:
        for c in meta_cols:
            if c not in columns:
                raise InputError(f"{source}: no metadata column {excerpt(c)}; columns: {available}")
        keep = list(meta_cols)
    else:
        keep = [c for c in columns if c not in used]
    metadata = [
        {c: data[c][i] for c in keep if data[c][i] is not _MISSING} for i in range(n)
    ]
    extra = {c: [None if x is _MISSING else x for x in data[c]] for c in extra_cols}
    return Records(source, ids, texts, vectors, metadata, columns, extra)


#: How many column names an error lists (a JSON-lines file may have a different key on every line).
LISTED_COLUMNS = 20


def _listed(columns: list[str]) -> str:
    """Column names for an error line, each cut short, at most :data:`LISTED_COLUMNS` of them.

    Examples
    --------
    >>> _listed(["id", "text"]), _listed([]), _listed([f"c{i}" for i in range(25)])[-26:]
    ('id, text', 'none', 'c18, c19, ... (25 columns)')
    """
    if not columns:
        return "none"
    shown = ", ".join(one_line(c, limit=40) for c in columns[:LISTED_COLUMNS])
    return shown + (f", ... ({len(columns)} columns)" if len(columns) > LISTED_COLUMNS else "")


def parse_vectors(source: str, values: list[Any], col: str) -> np.ndarray:
    """Vectors given as lists of numbers (a JSON array, or its text in a CSV cell), as a float64 array (n, dim).

    Each row is a list of numbers (not booleans) of the first row's length. An
    integer float32 cannot hold exactly (beyond 2**24, such as 16777217) is
    refused here, where the file's own number is known: cast with the floats of
    its row it would be rounded silently. Anything else (NaN, values beyond
    float32's range) is refused with the item's id by the store's checks.

    Examples
    --------
    >>> parse_vectors("f.jsonl", [[1, 2.5], "[3, 4]"], "vec").tolist()
    [[1.0, 2.5], [3.0, 4.0]]
    >>> try:
    ...     parse_vectors("f.jsonl", [[1.5, 16777217]], "vec")
    ... except InputError as e:
    ...     print(e)
    f.jsonl: row 1: 'vec' holds the integer 16777217, which float32 cannot hold exactly (beyond 2**24): \
write it as a float (16777217.0) to accept the rounding
    """
    if not values:
        raise InputError(f"{source}: the file has no rows")
    parsed = []
    dim = None
    for i, v in enumerate(values):
        if isinstance(v, str):  # CSV: a JSON array in a cell
            try:
                v = json.loads(v)
            except (json.JSONDecodeError, RecursionError):
                raise InputError(f"{source}: row {i + 1}: {excerpt(col)} is not a JSON list of numbers") from None
        if v is _MISSING or v is None or not isinstance(v, (list, tuple)):
            raise InputError(f"{source}: row {i + 1}: {excerpt(col)} is not a list of numbers")
        if dim is None:
            dim = len(v)
        if len(v) != dim:
            raise InputError(f"{source}: row {i + 1}: vector has {len(v)} numbers, the first row has {dim}")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            raise InputError(f"{source}: row {i + 1}: {excerpt(col)} has a value that is not a number")
        lossy = next((x for x in v if type(x) is int and not -FLOAT32_EXACT <= x <= FLOAT32_EXACT
                      and not _exact_in_float32(x)), None)
        if lossy is not None:
            digits = str(lossy)
            if len(digits) > 40:
                raise InputError(f"{source}: row {i + 1}: {excerpt(col)} holds an integer of {len(digits)} digits, "
                                 "beyond float32's range")
            raise InputError(f"{source}: row {i + 1}: {excerpt(col)} holds the integer {digits}, which float32 "
                             f"cannot hold exactly (beyond 2**24): write it as a float ({digits}.0) to accept the "
                             "rounding")
        parsed.append(v)
    if not dim:
        raise InputError(f"{source}: vectors in {excerpt(col)} are empty")
    with np.errstate(over="ignore"):
        return np.asarray(parsed, dtype=np.float64)


#: Every integer of at most this magnitude is exact in float32.
FLOAT32_EXACT = 2**24


def _exact_in_float32(x: int) -> bool:
    """Whether float32 holds the integer ``x`` exactly (False beyond its range as well)."""
    try:
        f = float(x)
    except OverflowError:
        return False
    if abs(f) > float(np.finfo(np.float32).max):
        return True  # not an exactness question: refused later as beyond float32's range, with the id
    return f == x and float(np.float32(f)) == f


def _read_npy(path: Path, ids_path: str | Path | None, auto_id: bool) -> Records:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as e:
        raise InputError(f"{path}: not a readable .npy array: {str(e).splitlines()[0]}") from None
    if arr.ndim != 2:
        raise InputError(f"{path}: expected a 2-d array (n, dim), got shape {arr.shape}")
    n = arr.shape[0]
    if ids_path is not None:
        ids_path = Path(ids_path)
        if not ids_path.exists():
            raise NotFoundError(f"no such ids file: {ids_path}")
        # One id per line, lines ended by \n or \r\n only: U+2028, U+0085 or a form feed inside an id is part
        # of it (refused or kept by the id rules), never a line break that would shift every later id.
        ids = [line for _, line in text_lines(ids_path, "ids file")]
        if len(ids) != n:
            raise InputError(f"{ids_path} has {len(ids)} ids for {n} vectors in {path} (one id per line)")
    elif auto_id:
        ids = [str(i) for i in range(n)]
    else:
        raise InputError(f"{path}: a .npy file needs ids: pass --ids FILE (one id per line) or --auto-id (row numbers)")
    return Records(str(path), ids, None, np.asarray(arr), [{} for _ in range(n)], [])


def read_texts(path: str | Path, *, text_col: str = "text") -> list[str]:
    """Texts from a file: ``.txt`` (one per line, blank lines skipped) or ``.jsonl``/``.csv``/``.parquet``.

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "queries.txt"), "w").write("a cat on a mat\\n\\n  stocks fell  \\n")
    >>> read_texts(os.path.join(folder, "queries.txt"))
    ['a cat on a mat', 'stocks fell']
    >>> _ = open(os.path.join(folder, "queries.csv"), "w").write("query,lang\\nun chat,fr\\n")
    >>> read_texts(os.path.join(folder, "queries.csv"), text_col="query")
    ['un chat']
    """
    path = Path(path)
    if path.suffix.lower() in (".txt", ".text", ""):
        if not path.is_file():
            raise NotFoundError(f"no such file: {path}")
        # lines end at \n (or \r\n) only: a U+2028 inside a text does not cut it in two
        texts = [t for t in (line.strip() for _, line in text_lines(path, "text file")) if t]
    else:
        records = read_records(path, text_col=text_col, id_col=None, auto_id=True)
        if records.texts is None:
            raise InputError(f"{path} has no text column {excerpt(text_col)}")
        texts = [t for t in records.texts if t and t.strip()]
    if not texts:
        raise InputError(f"{path} holds no texts")
    return texts


#: Suffixes of the files a folder given as input contributes (``.npy`` needs its ids file, so not here).
TABLE_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv", ".parquet", ".pq")


def input_files(path: str | Path) -> list[Path]:
    """The files of an input: the file itself, or every JSONL/CSV/Parquet file under a folder, sorted.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for n in ("b.jsonl", "a.csv", "notes.txt"):
    ...     _ = open(os.path.join(d, n), "w").write("")
    >>> [p.name for p in input_files(d)]
    ['a.csv', 'b.jsonl']
    """
    path = Path(path)
    if path.is_file():
        detect_format(path)
        return [path]
    if not path.exists():
        raise NotFoundError(f"no such file or folder: {path}")
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TABLE_SUFFIXES)
    if not files:
        raise InputError(f"{path}: no JSONL, CSV or Parquet files in this folder")
    return files


@dataclass(frozen=True)
class Slice:
    """Rows ``[lo, hi)`` of one input file: the unit of work of a distributed ingest.

    For JSONL the slice also holds the byte range of its lines (``byte_lo``,
    ``byte_hi``) and the line number of its first byte, so that a worker reads only
    its own lines and errors still name the file's line.
    """

    path: str
    fmt: str
    lo: int
    hi: int
    byte_lo: int = 0
    byte_hi: int = -1
    first_line: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def plan_slices(path: str | Path, rows_per_slice: int) -> list[Slice]:
    """Cut a JSONL, CSV or Parquet file into slices of ``rows_per_slice`` records (the last may be shorter).

    The cut depends only on the file's content and ``rows_per_slice``, so planning
    the same file again gives the same slices (what makes a distributed job resumable).
    JSONL is cut at line starts in one pass over its bytes; Parquet by its row count
    (metadata only); CSV is parsed once to count its records (quoted newlines allowed).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.jsonl")
    >>> _ = open(p, "w").write("".join(f'{{"id": "{i}", "text": "t{i}"}}\\n' for i in range(5)))
    >>> [(s.lo, s.hi, s.first_line) for s in plan_slices(p, 2)]
    [(0, 2, 1), (2, 4, 3), (4, 5, 5)]
    """
    check_scalar(rows_per_slice, "rows per shard", int, low=1)
    path = Path(path)
    fmt = detect_format(path)
    if fmt == "npy":
        raise InputError(f"{path}: .npy vectors need no embedding; ingest them with the local backend")
    if fmt == "jsonl":
        return _plan_jsonl(path, rows_per_slice)
    n = _count_table_rows(path, fmt)
    return [Slice(str(path), fmt, lo, min(n, lo + rows_per_slice)) for lo in range(0, n, rows_per_slice)]


def _plan_jsonl(path: Path, step: int) -> list[Slice]:
    slices: list[Slice] = []
    start = offset = records = 0
    start_line = line_no = 1
    with path.open("rb") as f:
        for raw in f:
            if raw.strip():
                if records and records % step == 0:
                    slices.append(Slice(str(path), "jsonl", records - step, records, start, offset, start_line))
                    start, start_line = offset, line_no
                records += 1
            offset += len(raw)
            line_no += 1
    if records:
        lo = (records - 1) // step * step
        slices.append(Slice(str(path), "jsonl", lo, records, start, offset, start_line))
    return slices


def _count_table_rows(path: Path, fmt: str) -> int:
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows
        except (pa.ArrowInvalid, OSError) as e:
            raise InputError(f"{path}: cannot read parquet: {str(e).splitlines()[0]}") from None
    return len(_read_table(path, fmt, [])[1]["__len__"])


def read_slice(
    piece: Slice,
    *,
    text_col: str | None = "text",
    id_col: str | None = "id",
    meta_cols: list[str] | None = None,
    auto_id: bool = False,
    table_cache: dict[str, Any] | None = None,
) -> Records:
    """The records of one :class:`Slice`, validated like :func:`read_records` (errors name the file and row).

    ``table_cache`` (a dict kept by the caller) holds the last CSV read whole, so a
    worker given several slices of one CSV parses it once.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a.jsonl")
    >>> _ = open(p, "w").write("".join(f'{{"id": "{i}", "text": "t{i}"}}\\n' for i in range(5)))
    >>> read_slice(plan_slices(p, 2)[1]).texts
    ['t2', 't3']
    """
    path = Path(piece.path)
    if not path.is_file():
        raise NotFoundError(f"no such file: {path}")
    source = f"{path} (records {piece.lo + 1}-{piece.hi})"
    string_cols = [c for c in (text_col, id_col) if c]
    if piece.fmt == "jsonl":
        columns, data = _read_jsonl_bytes(path, piece.byte_lo, piece.byte_hi, piece.first_line)
    elif piece.fmt == "parquet":
        columns, data = _read_parquet_rows(path, piece.lo, piece.hi)
    else:
        key = str(path)
        if table_cache is not None and key in table_cache:
            columns, whole = table_cache[key]
        else:
            columns, whole = _read_table(path, piece.fmt, string_cols)
            if table_cache is not None:
                table_cache.clear()
                table_cache[key] = (columns, whole)
        data = {c: whole[c][piece.lo:piece.hi] for c in [*columns, "__len__"]}
    if len(data["__len__"]) != piece.hi - piece.lo:
        raise InputError(f"{source}: the file changed since the job was planned "
                         f"({len(data['__len__'])} records where {piece.hi - piece.lo} were counted)")
    return _to_records(source, columns, data, text_col, id_col, None, meta_cols, auto_id, [])


def _read_jsonl_bytes(path: Path, lo: int, hi: int, first_line: int) -> tuple[list[str], dict[str, list[Any]]]:
    with path.open("rb") as f:
        f.seek(lo)
        blob = f.read(hi - lo)
    return _as_columns([obj for _, obj in parse_jsonl_lines(io.BytesIO(blob), path, first_line)])


def _read_parquet_rows(path: Path, lo: int, hi: int) -> tuple[list[str], dict[str, list[Any]]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        groups, first, start = [], None, 0
        for g in range(pf.metadata.num_row_groups):
            n = pf.metadata.row_group(g).num_rows
            if start + n > lo and start < hi:
                groups.append(g)
                first = start if first is None else first
            start += n
        table = pf.read_row_groups(groups) if groups else pf.schema_arrow.empty_table()
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"{path}: cannot read parquet: {str(e).splitlines()[0]}") from None
    table = table.slice(lo - (first or 0), hi - lo)
    columns = list(table.column_names)
    data = {c: table.column(c).to_pylist() for c in columns}
    data["__len__"] = [None] * table.num_rows
    return columns, data
