"""Shards: the Parquet files a distributed embed job writes, their manifest, and their ingest by one writer.

A **shard** holds one slice of the input, embedded: columns ``id``, ``text``,
``meta`` (JSON), ``hash`` (the text's content hash), ``vector`` (a fixed-size
list of float32; null where the text was already in the space, whose stored
vector is reused) and ``recipe_hash`` (the SHA-256 of the recipe that made the
vectors). Workers write shards atomically (a temporary name, then a rename) and
return their SHA-256; the driver keeps them in the job's ``manifest.json``.

The store has one writer (SQLite): the driver. :func:`ingest_shard` checks the
file against its manifest checksum and its recipe against the space's, then
writes the whole shard **and** its entry in the space's shard ledger in one
transaction (:meth:`repspace.core.store.Space.add` with ``shard=``). A shard whose
checksum is in the ledger is never ingested again, so re-running a job, or
resuming it after a crash, adds each item once.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import BackendError, ConflictError, InputError, NotFoundError
from repspace.core.store import ShardEntry, Space

#: Version of the shard and manifest layout.
FORMAT = 1
#: The manifest's file name inside a job folder.
MANIFEST = "manifest.json"
#: Key of the shard's description in the Parquet file's key-value metadata.
META_KEY = b"repspace.shard"


def recipe_hash(provenance: Mapping[str, Any]) -> str:
    """SHA-256 of a recipe (a space's provenance), canonical JSON: equal recipes, equal hashes.

    Examples
    --------
    >>> recipe_hash({"encoder": "static", "dim": 256}) == recipe_hash({"dim": 256, "encoder": "static"})
    True
    """
    return hashlib.sha256(json.dumps(dict(provenance), sort_keys=True, default=str).encode()).hexdigest()


def write_shard(path: str | Path, *, job: str, name: str, recipe: str, ids: list[str], texts: list[str | None],
                metadata: list[dict[str, Any]], hashes: list[str | None], vectors: np.ndarray,
                embedded: np.ndarray, source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write one shard atomically; returns its manifest entry (``name``, ``sha256``, ``rows``, ``embedded``).

    ``vectors`` has one row per item; rows where ``embedded`` is False are written
    as null (the text's vector is already in the space).

    Examples
    --------
    >>> import tempfile, os, numpy as np
    >>> p = os.path.join(tempfile.mkdtemp(), "shard-00000.parquet")
    >>> e = write_shard(p, job="j", name="shard-00000", recipe="r" * 64, ids=["a", "b"], texts=["x", "y"],
    ...                 metadata=[{}, {"n": 1}], hashes=[None, None], vectors=np.eye(2, dtype="float32"),
    ...                 embedded=np.array([True, False]))
    >>> e["rows"], e["embedded"], len(e["sha256"])
    (2, 1, 64)
    >>> read_shard(p).vectors.tolist()
    [[1.0, 0.0], [nan, nan]]
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, dim = vectors.shape
    embedded = np.asarray(embedded, dtype=bool)
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
    vec = pa.FixedSizeListArray.from_arrays(flat, dim, mask=pa.array(~embedded))
    table = pa.table({
        "id": pa.array(ids, pa.string()),
        "text": pa.array(texts, pa.string()),
        "meta": pa.array([json.dumps(m, ensure_ascii=False, sort_keys=True) for m in metadata], pa.string()),
        "hash": pa.array(hashes, pa.string()),
        "vector": vec,
        "recipe_hash": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([recipe])),
    })
    info = {"format": FORMAT, "job": job, "name": name, "recipe_hash": recipe, "dim": dim, "rows": n,
            "source": dict(source or {})}
    table = table.replace_schema_metadata({META_KEY: json.dumps(info).encode()})
    sink = io.BytesIO()
    # Float vectors barely compress (zstd kept 93% of random float32) and decoding them would cost more than
    # reading them: the vector column is stored plain, the others zstd-compressed.
    pq.write_table(table, sink, compression={c: "none" if c == "vector" else "zstd" for c in table.column_names},
                   use_dictionary=["recipe_hash"])
    data = sink.getvalue()
    write_atomic(path, lambda f: f.write(data), durable=True)
    return {"name": name, "file": Path(path).name, "sha256": hashlib.sha256(data).hexdigest(), "rows": n,
            "embedded": int(embedded.sum()), "source": dict(source or {})}


@dataclass(frozen=True)
class ShardData:
    """A shard read back: its description (file metadata) and columns; null vectors as NaN rows.

    ``texts``, ``metadata`` and ``hashes`` are None when the shard has none (every text
    null, every metadata ``{}``, every hash null).
    """

    info: dict[str, Any]
    ids: list[str]
    texts: list[str | None] | None
    metadata: list[dict[str, Any] | None] | None
    hashes: list[str | None] | None
    vectors: np.ndarray
    embedded: np.ndarray
    recipes: set[str] = field(default_factory=set)


def read_shard(path: str | Path, data: bytes | None = None) -> ShardData:
    """Read a shard file (or its bytes, already read and checked); a file that is not a shard is an InputError.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "shard-00000.parquet")
    >>> _ = write_shard(p, job="j1", name="shard-00000", recipe="r" * 64, ids=["a", "b"], texts=["x", None],
    ...                 metadata=[{}, {"n": 1}], hashes=[None, None], vectors=np.eye(2, dtype="float32"),
    ...                 embedded=np.array([True, True]))
    >>> s = read_shard(p)
    >>> s.info["job"], s.info["rows"], s.ids, s.texts, s.metadata, s.vectors.tolist()
    ('j1', 2, ['a', 'b'], ['x', None], [None, {'n': 1}], [[1.0, 0.0], [0.0, 1.0]])
    >>> _ = open(p, "wb").write(b"not parquet")
    >>> read_shard(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    repspace.core.errors.InputError: ...shard-00000.parquet: not a readable shard: ...
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(data) if data is not None else path)
        raw = (table.schema.metadata or {}).get(META_KEY)
        if raw is None:
            raise InputError(f"{path}: not a repspace shard (no {META_KEY.decode()} metadata)")
        info = json.loads(raw)
        vec = table.column("vector").combine_chunks()
        dim = int(info["dim"])
        embedded = ~np.asarray(vec.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        # A null list still occupies its slots in the child array of a fixed-size list: read them all.
        child = vec.values.slice(vec.offset * dim, len(vec) * dim)
        vectors = np.asarray(child.to_numpy(zero_copy_only=False), dtype=np.float32).reshape(len(table), dim)
        if not embedded.all():
            vectors = vectors.copy()
            vectors[~embedded] = np.nan
        recipes = set(table.column("recipe_hash").combine_chunks().dictionary_decode().unique().to_pylist())
        # A column with nothing in it (no texts, only empty metadata, no hashes) stays None: no Python list of
        # n Nones is built here, and the store writes its defaults without a per-row pass. Building those
        # lists holds the GIL, which stalls the store's writes running in another thread (ingest_shards).
        n = len(table)
        texts = None if table.column("text").null_count == n else table.column("text").to_pylist()
        meta = table.column("meta")
        metas = None if pc.all(pc.equal(meta, "{}")).as_py() in (True, None) else \
            [None if m == "{}" else json.loads(m) for m in meta.to_pylist()]
        hashes = None if table.column("hash").null_count == n else table.column("hash").to_pylist()
        return ShardData(info, table.column("id").to_pylist(), texts, metas, hashes, vectors, embedded, recipes)
    except (pa.ArrowInvalid, OSError, KeyError, ValueError) as e:
        if isinstance(e, InputError):
            raise
        raise InputError(f"{path}: not a readable shard: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from None


# ------------------------------------------------------------------ manifest
def read_manifest(job_dir: str | Path) -> dict[str, Any] | None:
    """The job's manifest, or None when the job has none yet."""
    path = Path(job_dir) / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: not a readable manifest ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or "shards" not in manifest:
        raise InputError(f"{path}: not a repspace shard manifest of format {FORMAT}")
    return manifest


def write_manifest(job_dir: str | Path, manifest: Mapping[str, Any]) -> None:
    """Replace the job's manifest atomically (a reader sees the old one or the new one)."""
    text = json.dumps(dict(manifest), indent=1, sort_keys=True).encode()
    write_atomic(Path(job_dir) / MANIFEST, lambda f: f.write(text), durable=True)


# ------------------------------------------------------------------ ingest
@dataclass(frozen=True)
class ShardIngest:
    """What ingesting one shard did."""

    name: str
    rows: int
    added: int
    replaced: int
    updated: int
    unchanged: int
    skipped: bool = False


def ingest_shard(space: Space, job_dir: str | Path, entry: Mapping[str, Any], *, job: str) -> ShardIngest:
    """Ingest one shard into ``space`` in one transaction, recorded in the space's shard ledger.

    Refused with one error line, nothing written from the shard: a file whose
    SHA-256 differs from the manifest's (:class:`BackendError`), a recipe other
    than the space's (:class:`ConflictError`), a reused text whose vector is no
    longer in the space. A shard already in the ledger is skipped.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.store import example_store
    >>> folder, space = tempfile.mkdtemp(), example_store().create_space("t", dim=2)
    >>> entry = write_shard(os.path.join(folder, "shard-00000.parquet"), job="j1", name="shard-00000",
    ...                     recipe=recipe_hash(space.provenance), ids=["a", "b"], texts=["x", "y"],
    ...                     metadata=[{}, {}], hashes=[None, None], vectors=np.eye(2, dtype="float32"),
    ...                     embedded=np.array([True, True]))
    >>> ingest_shard(space, folder, entry, job="j1")
    ShardIngest(name='shard-00000', rows=2, added=2, replaced=0, updated=0, unchanged=0, skipped=False)
    >>> ingest_shard(space, folder, entry, job="j1").skipped  # the ledger has it: never ingested twice
    True
    """
    return land_shard(space, check_shard(space, job_dir, entry), job=job)


def ingest_shards(space: Space, job_dir: str | Path, entries: Iterable[Mapping[str, Any]], *,
                  job: str) -> Iterator[ShardIngest]:
    """Ingest shards in order, each as :func:`ingest_shard`, reading and checking the next one meanwhile.

    The next shard's file is read, checksummed and decoded in a thread while SQLite
    writes the current one (both release the GIL), so a job folder lands at about the
    rate of the writes alone. A bad shard raises when its turn comes: the shards
    before it are ingested, nothing from it or after it.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2)
    >>> folder = tempfile.mkdtemp()  # the job's folder
    >>> entries = [write_shard(os.path.join(folder, f"shard-0000{i}.parquet"), job="j1", name=f"shard-0000{i}",
    ...                        recipe=recipe_hash(space.provenance), ids=[f"a{i}", f"b{i}"], texts=[None, None],
    ...                        metadata=[{}, {}], hashes=[None, None], vectors=np.eye(2, dtype="float32"),
    ...                        embedded=np.array([True, True])) for i in range(3)]
    >>> [(r.name, r.added) for r in ingest_shards(space, folder, entries, job="j1")]
    [('shard-00000', 2), ('shard-00001', 2), ('shard-00002', 2)]
    >>> len(space), sorted(space.shards("j1")) == sorted(e["sha256"] for e in entries)
    (6, True)
    """
    from concurrent.futures import ThreadPoolExecutor

    todo = list(entries)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="shard-reader") as pool:
        ahead = pool.submit(check_shard, space, job_dir, todo[0]) if todo else None
        for i in range(len(todo)):
            assert ahead is not None
            checked = ahead.result()
            ahead = pool.submit(check_shard, space, job_dir, todo[i + 1]) if i + 1 < len(todo) else None
            yield land_shard(space, checked, job=job)


@dataclass(frozen=True)
class CheckedShard:
    """A shard read and checked against its manifest entry and the space (or one the ledger has: ``data`` None)."""

    name: str
    sha256: str
    rows: int
    data: ShardData | None


def check_shard(space: Space, job_dir: str | Path, entry: Mapping[str, Any]) -> CheckedShard:
    """Read a shard and check it (checksum, recipe, dimension) without writing anything."""
    name = str(entry["name"])
    sha = str(entry["sha256"])
    if space.shards(sha256=sha):  # a key lookup: the ledger may hold thousands of shards
        return CheckedShard(name, sha, int(entry.get("rows", 0)), None)
    path = Path(job_dir) / str(entry.get("file", f"{name}.parquet"))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NotFoundError(f"shard {name}: file {path} is missing; nothing ingested from it") from None
    if hashlib.sha256(data).hexdigest() != sha:
        raise BackendError(f"shard {name}: checksum mismatch ({path} is not the file the job wrote); "
                           "nothing ingested from it")
    shard = read_shard(path, data)
    want = recipe_hash(space.provenance)
    if shard.recipes != {want} or shard.info.get("recipe_hash") != want:
        got = ", ".join(sorted(r[:12] for r in shard.recipes)) or "none"
        raise ConflictError(f"shard {name} was embedded with recipe {got}, space {space.name!r} has {want[:12]}; "
                            "nothing ingested from it")
    if shard.vectors.shape[1] != space.dim:
        raise ConflictError(f"shard {name} has {shard.vectors.shape[1]}-d vectors, space {space.name!r} "
                            f"{space.dim}-d; nothing ingested from it")
    return CheckedShard(name, sha, len(shard.ids), shard)


def land_shard(space: Space, checked: CheckedShard, *, job: str) -> ShardIngest:
    """Write a checked shard and its ledger entry in one transaction (stored vectors filled in for reused texts)."""
    shard = checked.data
    if shard is None or space.shards(sha256=checked.sha256):
        return ShardIngest(checked.name, checked.rows, 0, 0, 0, 0, skipped=True)
    vectors = shard.vectors
    reused = np.flatnonzero(~shard.embedded)
    if reused.size:
        wanted = [None] * len(reused) if shard.hashes is None else [shard.hashes[i] for i in reused]
        if any(h is None for h in wanted):
            raise InputError(f"shard {checked.name}: a row without a vector has no text hash; "
                             "nothing ingested from it")
        found = space.rows_for_hashes(wanted)  # type: ignore[arg-type]
        missing = [h for h in wanted if h not in found]
        if missing:
            raise ConflictError(f"shard {checked.name}: {len(missing)} text(s) it reuses are no longer in space "
                                f"{space.name!r} (e.g. hash {missing[0]}); delete the job folder and run the "
                                "job again")
        vectors = vectors.copy()
        vectors[reused] = space.read_rows([found[h] for h in wanted])  # type: ignore[index]
    r = space.add(shard.ids, vectors, shard.texts, shard.metadata, shard=ShardEntry(checked.sha256, job, checked.name))
    return ShardIngest(checked.name, len(shard.ids), r.added, r.replaced, r.updated, r.unchanged)


def job_folder(store_path: str | Path, space: str, job: str) -> Path:
    """The default folder of a job's shards: ``<store>.shards/<space>/<job>`` beside the store."""
    safe = "".join(c if c.isalnum() or c in "-_.@" else "_" for c in space)
    return Path(f"{os.fspath(store_path)}.shards") / safe / job
