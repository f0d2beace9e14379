"""Embed on Ray: input slices -> encoder actors -> Parquet shards -> the store, each shard once.

The pipeline is Ray Data's batch-inference pattern (``map_batches`` over a
callable class with a fixed pool of actors, the model loaded once per actor),
applied to *slices* of the input rather than to rows:

1. The driver cuts the input (a file, or every JSONL/CSV/Parquet file of a
   folder) into slices of ``shard_rows`` records
   (:func:`repspace.workflows.ingest.readers.plan_slices`). The cut depends only
   on the files and ``shard_rows``, and the job's id is a hash of the space, its
   recipe, the files (path, size, modification time) and the column options: the
   same command run again is the same job, with the same shards.
2. Encoder actors (:class:`ShardEmbedder`) read their slice themselves (workers on
   other machines read the input from shared storage), validate it as the local
   reader does, embed every text whose content hash is not already in the space
   (the hashes go to the actors once, through the object store) and write shard
   ``shard-NNNNN.parquet`` atomically, returning its SHA-256.
3. The driver, the store's only writer, records each returned shard in the job's
   ``manifest.json`` and ingests it at once (one transaction, written with its
   ledger entry: :func:`repspace.workflows.distributed.shards.ingest_shard`), while
   the actors embed the next slices.

Resuming: a shard in the ledger is skipped; a shard in the manifest but not in
the ledger (the driver died between writing and ingesting) is ingested without
embedding; only slices with neither are embedded. Why slices and not Ray Data's
own readers: a resumed job must know which rows a finished shard holds, and Ray
Data's read blocks are not cut deterministically.

Ray Data restarts an actor lost with its node and retries its slice elsewhere
(``max_restarts=-1``); a job that still fails leaves its finished shards in the
manifest, and running the command again resumes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import BackendError, ConflictError, InputError, NotFoundError, RepspaceError
from repspace.core.limits import DEFAULT_ENCODER
from repspace.core.progress import Progress
from repspace.core.store import Space, Store
from repspace.core.store import validate as v
from repspace.workflows.distributed.backend import node_id, one_line, ray_session
from repspace.workflows.distributed.shards import (
    MANIFEST,
    ingest_shard,
    ingest_shards,
    job_folder,
    read_manifest,
    recipe_hash,
    write_manifest,
    write_shard,
)
from repspace.workflows.ingest.readers import Slice, input_files, plan_slices, read_slice

#: Records per shard when none is given: 10,000 x 384 float32 is 15 MiB of vectors.
SHARD_ROWS = 10_000


@dataclass(frozen=True)
class EmbedJobReport:
    """What a distributed ingest did (the ``--json`` shape of ``repspace ingest --backend ray``).

    Examples
    --------
    Made by :func:`ingest_ray` and :func:`ingest_job` (which ingests shards embedded elsewhere: ``backend`` local):

    >>> r = EmbedJobReport("t", "j1", "/shared/t/j1", shards=2, embedded_shards=2, ingested_shards=2,
    ...                    skipped_shards=0, read=4, encoded=3, reused=1, added=4, replaced=0, updated=0,
    ...                    unchanged=0, seconds=1.5, workers=2, nodes={"10.0.0.5": 2})
    >>> r.to_dict()["added"], r.backend
    (4, 'ray')
    """

    space: str
    job: str
    job_dir: str
    shards: int
    embedded_shards: int
    ingested_shards: int
    skipped_shards: int
    read: int
    encoded: int
    reused: int
    added: int
    replaced: int
    updated: int
    unchanged: int
    seconds: float
    workers: int
    nodes: dict[str, int] = field(default_factory=dict)
    backend: str = "ray"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def ingest_ray(
    store: Store,
    space: str,
    path: str | Path,
    *,
    text_col: str | None = "text",
    id_col: str | None = "id",
    meta_cols: list[str] | None = None,
    auto_id: bool = False,
    encoder: str | None = None,
    encoder_options: dict[str, Any] | None = None,
    metric: str | None = None,
    dtype: str = "float32",
    batch_size: int = 64,
    shard_rows: int = SHARD_ROWS,
    workers: int | None = None,
    address: str | None = None,
    shard_dir: str | Path | None = None,
    ingest: bool = True,
    on_conflict: str = "upsert",
    progress: Progress | None = None,
) -> EmbedJobReport:
    """Embed a file or a folder of files on Ray and ingest the shards into ``space`` (created when missing).

    Parameters
    ----------
    store, space : the store and the space's name.
    path : a JSONL, CSV or Parquet file, or a folder of them (read in sorted order).
    text_col, id_col, meta_cols, auto_id : as :func:`repspace.workflows.ingest.ingest_file`.
    encoder, encoder_options, metric, dtype, batch_size : as the local ingest (a new space only;
        an existing space is embedded with its own recipe).
    shard_rows : records per shard (the unit of work, of resumption and of one store transaction).
    workers : encoder actors (default: the cluster's CPUs, one CPU each).
    address : a Ray cluster (``host:port``, ``ray://host:port``, ``auto``); default a local Ray.
    shard_dir : folder for the job's shards (default ``<store>.shards/<space>/<job>``); on a real
        cluster it must be shared by every node (NFS or similar).
    ingest : False writes the shards and the manifest only (ingest them later by running
        the same command, or :func:`ingest_job`).

    Returns
    -------
    EmbedJobReport

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace.store import example_store
    >>> p = os.path.join(tempfile.mkdtemp(), "docs.jsonl")
    >>> _ = open(p, "w").write('{"id": "a", "text": "hello"}\\n{"id": "b", "text": "world"}\\n')
    >>> r = ingest_ray(example_store(), "docs", p, encoder="static", shard_rows=1, workers=1)  # doctest: +SKIP
    >>> r.added, r.shards  # doctest: +SKIP
    (2, 2)
    """
    t0 = time.perf_counter()
    if text_col is None:
        raise InputError("--backend ray embeds texts: name the text column (vectors you bring need no Ray)")
    if on_conflict != "upsert":
        raise InputError("--backend ray ingests shards with upsert only (a re-run must be able to land a shard)")
    check_scalar(workers, "workers", int, low=1, none=True)
    files = input_files(path)
    slices = [s for f in files for s in plan_slices(f, shard_rows)]
    if not slices:
        raise InputError(f"{path}: no items to ingest")
    target, created = _space_for_job(store, space, encoder, encoder_options, metric, dtype)
    try:
        columns = {"text_col": text_col, "id_col": id_col, "meta_cols": meta_cols, "auto_id": auto_id}
        recipe = recipe_hash(target.provenance)
        job = _job_id(target, recipe, files, shard_rows, columns)
        job_dir = Path(shard_dir) / job if shard_dir is not None else job_folder(store.path, target.name, job)
        job_dir.mkdir(parents=True, exist_ok=True)
        manifest = read_manifest(job_dir) or {
            "format": 1, "job": job, "space": target.name, "space_uid": target.uid, "recipe_hash": recipe,
            "recipe": target.provenance, "shard_rows": shard_rows, "columns": columns,
            "inputs": [str(f) for f in files], "shards": {},
        }
        if manifest.get("recipe_hash") != recipe:
            raise ConflictError(f"{job_dir / MANIFEST} was made with recipe {str(manifest.get('recipe_hash'))[:12]}, "
                                f"space {target.name!r} has {recipe[:12]}; nothing ingested")
        names = [f"shard-{i:05d}" for i in range(len(slices))]
        totals: Counter[str] = Counter()
        nodes: Counter[str] = Counter()
        ledger = target.shards()
        done = 0

        def land(entry: Mapping[str, Any]) -> None:
            nonlocal done
            if ingest:
                r = ingest_shard(target, job_dir, entry, job=job)
                key = "skipped_shards" if r.skipped else "ingested_shards"
                totals.update({key: 1, "added": r.added, "replaced": r.replaced, "updated": r.updated,
                               "unchanged": r.unchanged})
            done += 1
            if progress is not None:
                progress("shards", done, len(slices))

        todo = []
        for name, piece in zip(names, slices):
            entry = manifest["shards"].get(name)
            if entry is not None and entry["sha256"] in ledger:
                totals.update({"skipped_shards": 1})
                done += 1
            elif entry is not None:
                land(entry)  # written by an earlier run that stopped before ingesting it
            else:
                todo.append((name, piece))
        workers_used = 0
        if todo:
            known = target.text_hashes()
            with ray_session(address) as ray:
                workers_used = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
                workers_used = min(workers_used, len(todo))
                for entry in _embed(ray, todo, target.provenance, recipe, job, job_dir, columns, known,
                                    batch_size, workers_used):
                    manifest["shards"][entry["name"]] = {k: entry[k] for k in
                                                         ("name", "file", "sha256", "rows", "embedded", "source")}
                    write_manifest(job_dir, manifest)
                    totals.update({"embedded_shards": 1, "read": entry["rows"], "encoded": entry["encoded"],
                                   "reused": entry["rows"] - entry["embedded"]})
                    nodes.update({entry["node"]: 1})
                    land(entry)
        write_manifest(job_dir, manifest)
    except BaseException:
        if created and target.info().next_row == 0:
            store.delete_space(target.name)
        raise
    return EmbedJobReport(
        target.name, job, str(job_dir), len(slices), totals["embedded_shards"], totals["ingested_shards"],
        totals["skipped_shards"], totals["read"], totals["encoded"], totals["reused"], totals["added"],
        totals["replaced"], totals["updated"], totals["unchanged"], time.perf_counter() - t0, workers_used,
        dict(nodes),
    )


def ingest_job(store: Store, space: str, job_dir: str | Path) -> EmbedJobReport:
    """Ingest every shard of a finished (or partly finished) job folder not yet in ``space``'s ledger.

    For shards embedded elsewhere (``ingest=False`` on a cluster) and ingested by the
    machine that holds the store. Each shard is checked (checksum, recipe) and
    written in its own transaction; a bad shard stops the run with one error line,
    the shards before it stay ingested.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from repspace.store import Store
    >>> from repspace.workflows.distributed.shards import recipe_hash, write_manifest, write_shard
    >>> folder = tempfile.mkdtemp()
    >>> store = Store(os.path.join(folder, "s.db"))
    >>> space = store.create_space("t", dim=2)
    >>> shards = {f"shard-0000{i}": write_shard(os.path.join(folder, f"shard-0000{i}.parquet"), job="j1",
    ...                                         name=f"shard-0000{i}", recipe=recipe_hash(space.provenance),
    ...                                         ids=[f"a{i}", f"b{i}"], texts=[None, None], metadata=[{}, {}],
    ...                                         hashes=[None, None], vectors=np.eye(2, dtype="float32"),
    ...                                         embedded=np.array([True, True])) for i in range(2)}
    >>> write_manifest(folder, {"format": 1, "job": "j1", "shards": shards})  # as a cluster's job leaves it
    >>> r = ingest_job(store, "t", folder)
    >>> r.ingested_shards, r.added, len(space)
    (2, 4, 4)
    >>> r = ingest_job(store, "t", folder)  # run again: every shard is in the ledger
    >>> r.ingested_shards, r.skipped_shards, r.added
    (0, 2, 0)
    """
    t0 = time.perf_counter()
    job_dir = Path(job_dir)
    manifest = read_manifest(job_dir)
    if manifest is None:
        raise NotFoundError(f"{job_dir}: no {MANIFEST} (not a job folder)")
    target = store.space(space)
    totals: Counter[str] = Counter()
    entries = [manifest["shards"][name] for name in sorted(manifest["shards"])]
    for r in ingest_shards(target, job_dir, entries, job=str(manifest["job"])):
        totals.update({"skipped_shards" if r.skipped else "ingested_shards": 1, "added": r.added,
                       "replaced": r.replaced, "updated": r.updated, "unchanged": r.unchanged})
    n = len(manifest["shards"])
    return EmbedJobReport(target.name, str(manifest["job"]), str(job_dir), n, 0, totals["ingested_shards"],
                          totals["skipped_shards"], 0, 0, 0, totals["added"], totals["replaced"],
                          totals["updated"], totals["unchanged"], time.perf_counter() - t0, 0, {}, "local")


# ------------------------------------------------------------------ the actors
class ShardEmbedder:
    """A Ray Data actor: loads the space's encoder once, then turns slice descriptions into shards.

    Each batch holds slice descriptions (JSON); each becomes one shard file and one
    output row (its manifest entry, plus the node it ran on and what it embedded).
    """

    def __init__(self, recipe: Mapping[str, Any], recipe_hash: str, job: str, job_dir: str,
                 columns: Mapping[str, Any], known: list[Any], batch_size: int) -> None:
        import ray

        from repspace.engines.encoders import from_provenance

        self.encoder = from_provenance(recipe)
        self.recipe_hash = recipe_hash
        self.job, self.job_dir = job, Path(job_dir)
        self.columns = dict(columns)
        self.known = ray.get(known[0])  # sorted S32 content hashes already in the space
        self.batch_size = batch_size
        self.node = node_id()
        self.cache: dict[str, Any] = {}

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = [json.dumps(self._shard(json.loads(str(spec)))) for spec in batch["spec"]]
        return {"entry": np.array(out, dtype=object)}

    def _shard(self, spec: dict[str, Any]) -> dict[str, Any]:
        t0 = time.perf_counter()
        try:
            records = read_slice(Slice(**spec["slice"]), table_cache=self.cache, **self.columns)
            ids = v.check_ids(records.ids)
            texts = v.check_texts(records.texts, ids)
            metas = [dict(m) for m in records.metadata]
            v.check_metas(metas, ids)
            v.check_texts_to_embed(texts, ids, records.source)  # the local ingest's rule, before any embedding
        except RepspaceError as e:
            return {"name": spec["name"], "error": type(e).__name__, "message": str(e)}
        hashes = [v.text_hash(t) for t in texts]  # type: ignore[arg-type]
        keys = np.array([h.encode() for h in hashes], dtype="S32")
        pos = np.searchsorted(self.known, keys)
        known = (pos < len(self.known)) & (self.known[np.minimum(pos, len(self.known) - 1)] == keys) \
            if len(self.known) else np.zeros(len(keys), dtype=bool)
        first: dict[str, int] = {}
        todo: list[str] = []
        for i, (h, k) in enumerate(zip(hashes, known)):
            if not k and h not in first:
                first[h] = len(todo)
                todo.append(texts[i])  # type: ignore[arg-type]
        vectors = np.zeros((len(ids), self.encoder.dim), dtype=np.float32)
        if todo:
            fresh = self.encoder.encode(todo, batch_size=self.batch_size)
            rows = [i for i in range(len(ids)) if not known[i]]
            vectors[rows] = fresh[[first[hashes[i]] for i in rows]]
        entry = write_shard(
            self.job_dir / f"{spec['name']}.parquet", job=self.job, name=spec["name"], recipe=self.recipe_hash,
            ids=ids, texts=texts, metadata=metas, hashes=hashes,  # type: ignore[arg-type]
            vectors=vectors, embedded=~known, source=spec["slice"],
        )
        entry.update(node=self.node, encoded=len(todo), seconds=time.perf_counter() - t0)
        return entry


def _embed(ray: Any, todo: list[tuple[str, Slice]], recipe: Mapping[str, Any], recipe_hash: str, job: str,
           job_dir: Path, columns: Mapping[str, Any], known: np.ndarray, batch_size: int,
           workers: int) -> Any:
    """Yield each shard's manifest entry as its actor finishes it (in completion order)."""
    specs = [{"spec": json.dumps({"name": name, "slice": piece.to_dict()})} for name, piece in todo]
    known_ref = ray.put(known)
    ds = ray.data.from_items(specs, override_num_blocks=len(specs))
    out = ds.map_batches(
        ShardEmbedder, batch_size=1, compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=1,
        fn_constructor_kwargs={"recipe": dict(recipe), "recipe_hash": recipe_hash, "job": job,
                               "job_dir": str(job_dir), "columns": dict(columns), "known": [known_ref],
                               "batch_size": batch_size},
    )
    try:
        for row in out.iter_rows():
            entry = json.loads(row["entry"])
            if "error" in entry:
                raise _error_class(entry["error"])(f"{entry['message']} (shard {entry['name']})")
            yield entry
    except RepspaceError:
        raise
    except Exception as e:  # a Ray failure: one line, the job resumable
        raise BackendError(f"the Ray job failed ({type(e).__name__}: {one_line(e)[:300]}); shards finished so far are "
                           "kept: run the same command again to resume") from None


def _error_class(name: str) -> type[RepspaceError]:
    from repspace.core import errors

    cls = getattr(errors, name, RepspaceError)
    return cls if isinstance(cls, type) and issubclass(cls, RepspaceError) else RepspaceError


def _space_for_job(store: Store, name: str, encoder: str | None, options: dict[str, Any] | None,
                   metric: str | None, dtype: str) -> tuple[Space, bool]:
    """The space to embed into and whether it was created here; refuses what the Ray path cannot do."""
    from repspace.engines.encoders import get_encoder
    from repspace.workflows.stored_transforms import STATE_NAME

    opts = dict(options or {})
    if opts.get("layer") == "all" or isinstance(opts.get("layer"), (list, tuple)):
        raise InputError("--layer all is not supported with --backend ray yet; use the local backend")
    try:
        existing: Space | None = store.space(name)
    except NotFoundError:
        existing = None
    if existing is not None:
        recorded = existing.provenance.get("encoder")
        if recorded in (None, "precomputed"):
            raise InputError(f"space {name!r} holds vectors made outside repspace: there is no recipe to embed with")
        if encoder is not None and encoder != recorded:
            raise ConflictError(f"space {name!r} was made with encoder {recorded!r}, not {encoder!r}; "
                                "ingest into a new space")
        if opts:
            raise InputError(f"space {name!r} exists: its own recipe is used; drop the encoder options")
        if existing.state(STATE_NAME) is not None:
            raise InputError(f"space {name!r} is derived ({existing.provenance.get('transforms_spec')}); "
                             "add texts to it with the local backend")
        return existing, False
    enc = get_encoder(encoder or DEFAULT_ENCODER, **opts)
    return store.create_space(name, enc.dim, metric or "cosine", dtype=dtype, provenance=enc.provenance()), True


def _job_id(space: Space, recipe: str, files: list[Path], shard_rows: int, columns: Mapping[str, Any]) -> str:
    stats = []
    for f in files:
        st = f.stat()
        stats.append([os.fspath(f.resolve()), st.st_size, st.st_mtime_ns])
    key = json.dumps({"space": space.uid, "recipe": recipe, "files": stats, "shard_rows": shard_rows,
                      "columns": dict(columns)}, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]
