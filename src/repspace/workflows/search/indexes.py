"""A space's indexes by spec string: built, persisted, kept up to date, listed and dropped.

``hnsw32`` is the graph of :mod:`repspace.engines.search.hnsw` and ``hnsw32,shards4``
the same graph over four disjoint shards of rows, searched by fan-out
(:class:`~repspace.engines.search.hnsw.ShardedHNSW`); every other spec but
``exact`` (``int8>rescore4``, ``binary>rescore8``, ``pca64>rerank``,
``prefix64,hnsw32>rerank``, ``ivf1024,pq32>rerank``) is a
:class:`~repspace.engines.search.funnel.FunnelIndex`. Both live in
``<store>.indexes/<space uid>/`` with a JSON stamp and obey the same rules
(:func:`repspace.workflows.search.persist.ensure_index`): extended with new rows,
dead rows masked, rebuilt when a quarter is dead or the stamp does not match.
Funnels keep only their compact codes in memory; the float vectors for the
rescoring stage are read for the shortlisted rows only, from a memory-mapped
copy of the space's vectors beside the store (:mod:`repspace.workflows.search.vectorfile`:
two tiers), so a space larger than memory stays searchable.

``build_index(..., backend="ray")`` builds the specs whose work splits by rows on a
Ray cluster (:mod:`repspace.workflows.distributed.index`): ``ivfN,pqM`` trained here
on the same seeded sample as a local build, filled by workers and merged (the index
a local build makes, code for code), and ``hnswM,shardsN`` one graph per worker. The
result is saved where and as the local build saves it, with the same stamp.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError, NotFoundError
from repspace.core.progress import Progress
from repspace.engines.search.funnel import FunnelIndex
from repspace.engines.search.hnsw import HNSWParams, ShardedHNSW
from repspace.engines.search.seismic import is_seismic_spec, parse_seismic_spec
from repspace.engines.search.specs import IndexSpec, parse_spec
from repspace.workflows.distributed.backend import check_backend
from repspace.workflows.search.hnsw import (
    ensure_hnsw,
    ensure_sharded_hnsw,
    index_paths,
    sharded_ident,
    sharded_paths,
)
from repspace.workflows.search.persist import (
    ADD_BATCH,
    Loaded,
    ensure_index,
    forget,
    install_index,
    training_rows,
    usable_stamp,
)
from repspace.workflows.search.vectorfile import ensure_vector_file, vector_file_paths

if TYPE_CHECKING:
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space


#: How :func:`list_indexes` names the rescoring tier (and :func:`drop_index` takes it).
VECTORS = "vectors"


def funnel_paths(space: Space, spec: IndexSpec) -> tuple[Path, Path]:
    """Where a space's funnel index and its stamp live."""
    folder = space.store.index_dir / space.uid
    return folder / f"{spec.slug}.faiss", folder / f"{spec.slug}.json"


def ensure_funnel(space: Space, spec: IndexSpec | str, *, progress: Progress | None = None,
                  info: SpaceInfo | None = None, recheck: bool = True) -> Loaded[FunnelIndex]:
    """Load a space's funnel index for ``spec``, building, extending or rebuilding it first.

    ``recheck``: see :func:`repspace.workflows.search.persist.ensure_index`.
    """
    spec = parse_spec(spec)
    if spec.kind == "exact" or (spec.kind == "hnsw" and spec.codes is None):
        raise InputError(f"{spec} is not a funnel index; use knn(index=...) or ensure_hnsw")
    path, stamp_path = funnel_paths(space, spec)
    # The stamp names what is stored (spec.slug): specs differing only in search-time
    # parameters (refine factor, ef, nprobe) share one index.
    return ensure_index(
        space, path, stamp_path, {"spec": spec.slug},
        create=lambda i: FunnelIndex(spec, i.dim, i.metric),
        load=lambda p, i: FunnelIndex.load(p, spec, i.dim, i.metric),
        progress=progress, info=info, recheck=recheck,
    )


@dataclass(frozen=True)
class IndexReport:
    """What :func:`build_index` did, or what :func:`list_indexes` found.

    Attributes
    ----------
    spec : str
        The canonical spec.
    action : str
        ``built``, ``rebuilt``, ``extended`` or ``loaded`` (already up to
        date); for a listed index, its state: ``current``, ``behind``
        (extended on next use) or ``stale`` (rebuilt on next use).
    ntotal : int
        Vectors indexed.
    rows : int
        Rows covered (``0 .. rows-1``).
    generation : int
        The space's generation the index was last brought to.
    memory_bytes : int or None
        Its size in memory (funnels: codes, graph and matrices; HNSW: file size).
    backend : str or None
        ``ray`` when the index was built on a Ray cluster (None otherwise).
    nodes : dict or None
        Ray builds: vectors added on each Ray node (node id to count).
    merge : str or None
        Ray builds of IVF-PQ: how the shards were merged, ``memory`` or ``disk``
        (FAISS' on-disk merge); ``none`` for HNSW shards (kept apart).

    ``backend``, ``nodes`` and ``merge`` are left out of :meth:`to_dict` when None.
    """

    spec: str
    action: str
    ntotal: int
    rows: int
    generation: int
    memory_bytes: int | None
    backend: str | None = None
    nodes: dict[str, int] | None = None
    merge: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {k: v for k, v in self.__dict__.items()
                if v is not None or k not in ("backend", "nodes", "merge")}


def build_index(space: Space, spec: IndexSpec | str, *,
                progress: Progress | None = None, backend: str = "local", address: str | None = None,
                shards: int | None = None) -> IndexReport:
    """Build (or bring up to date) the index ``spec`` of a space and persist it.

    Parameters
    ----------
    space : Space
    spec : str or IndexSpec
        ``hnsw32``, ``hnsw32,shards4``, ``int8>rescore4``, ``binary>rescore8``,
        ``pca64>rerank``, ``ivf1024,pq32``... (``exact`` needs no index); a sparse space's
        ``sparse,seismic[,lambda=..,beta=..,alpha=..]`` (:mod:`repspace.workflows.search.seismic`).
    backend : ``local`` or ``ray``
        ``ray`` builds ``ivfN,pqM`` and ``hnswM,shardsN`` on a Ray cluster
        (:mod:`repspace.workflows.distributed.index`); an index that is current, or
        only behind by rows added since, is brought up to date here as a search would.
    address : str, optional
        The Ray cluster (``host:port``, ``ray://host:port``, ``auto``; default
        ``$RAY_ADDRESS``, else a local Ray); ``backend="ray"`` only.
    shards : int, optional
        ``backend="ray"``, ``ivfN,pqM``: pieces of work (default: the cluster's CPUs);
        an ``hnswM,shardsN`` spec names its own.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(300, 16)
    >>> r = build_index(sp, "int8>rescore4")
    >>> r.spec, r.action, r.ntotal
    ('int8>rescore4', 'built', 300)
    >>> build_index(sp, "int8>rescore4").action
    'loaded'
    """
    if is_seismic_spec(spec):
        return _build_seismic(space, str(spec), progress, backend, address, shards)
    spec = parse_spec(spec)
    if spec.kind == "exact":
        raise InputError("exact search needs no index")
    space.metric.require_vector_space(f"index {str(spec)!r}")
    if check_backend(backend) == "ray":
        return _build_on_ray(space, spec, address, shards, progress)
    if address is not None or shards is not None:
        raise InputError("a Ray address and shards go with backend 'ray' (--backend ray)")
    if spec.kind == "hnsw" and spec.shards is not None:
        params = HNSWParams(m=spec.m)
        loaded: Loaded[Any] = ensure_sharded_hnsw(space, params, spec.shards, progress=progress)
        size = sharded_paths(space, params, spec.shards)[0].stat().st_size
    elif spec.kind == "hnsw" and spec.codes is None:
        loaded = ensure_hnsw(space, HNSWParams(m=spec.m), progress=progress)
        size = index_paths(space, HNSWParams(m=spec.m))[0].stat().st_size
    else:
        loaded = ensure_funnel(space, spec, progress=progress)
        size = loaded.index.memory_bytes()
        if spec.exact_rerank:  # the rescoring tier is built with the index, not on first search
            ensure_vector_file(space)
    return IndexReport(str(spec), loaded.action, loaded.stamp.ntotal, loaded.stamp.rows, loaded.stamp.generation,
                       size)


def _build_seismic(space: Space, spec: str, progress: Progress | None, backend: str, address: str | None,
                   shards: int | None) -> IndexReport:
    """:func:`build_index` of a sparse space's ``sparse,seismic`` index (built here, whole)."""
    from repspace.workflows.search.seismic import ensure_seismic, seismic_paths

    params = parse_seismic_spec(spec)
    if check_backend(backend) != "local" or address is not None or shards is not None:
        raise InputError("a Seismic index is built here (backend 'local'), whole: no Ray address or shards")
    if space.layout != "sparse":
        raise InputError(f"index {params.build_spec()!r} is for sparse spaces; space {space.name!r} holds dense "
                         "vectors")
    rows, _, action = ensure_seismic(space, params, progress=progress)
    path = seismic_paths(space, params)[0]
    info = space.info()
    return IndexReport(params.build_spec(), action, len(rows), info.next_row, info.generation,
                       path.stat().st_size if path.is_file() else None)


def _build_on_ray(space: Space, spec: IndexSpec, address: str | None, shards: int | None,
                  progress: Progress | None) -> IndexReport:
    """:func:`build_index` with ``backend="ray"``: train here, fill or build the shards on Ray, save as local."""
    from repspace.workflows.distributed.backend import ray_session
    from repspace.workflows.distributed.index import add_ivf_shards, build_hnsw_shards

    info = space.info()
    if spec.kind == "ivfpq":
        path, stamp_path = funnel_paths(space, spec)
        ident: dict[str, Any] = {"spec": spec.slug}
    elif spec.kind == "hnsw" and spec.shards is not None:
        if shards is not None and shards != spec.shards:
            raise InputError(f"{spec} has {spec.shards} shards, not {shards}: the spec names them")
        params = HNSWParams(m=spec.m)
        path, stamp_path = sharded_paths(space, params, spec.shards)
        ident = sharded_ident(params, spec.shards)
    else:
        hint = f"; write hnsw{spec.m},shards4 to build its graph in shards" if spec.kind == "hnsw" else ""
        raise InputError(f"backend 'ray' builds ivfN,pqM and hnswM,shardsN indexes, not {spec}{hint}; "
                         "build it with backend 'local'")
    check_scalar(shards, "shards", int, low=1, none=True)
    if usable_stamp(path, stamp_path, ident, info) is not None:
        # Current, or behind by rows added since: extended here, as the next search would.
        report = build_index(space, spec, progress=progress)
        return replace(report, backend="ray")
    live = space.rows()
    live = live[live < info.next_row]
    with ray_session(address) as ray:
        if spec.kind == "ivfpq":
            index = FunnelIndex(spec, info.dim, info.metric)
            sample = training_rows(space, info)
            index.train(space.read_rows(sample))  # the local build's seeded sample, so the same quantisers
            n = shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
            path.parent.mkdir(parents=True, exist_ok=True)  # an on-disk merge works beside the store
            built = add_ivf_shards(index, _contiguous(space, live, n), n, address=address, workdir=path.parent,
                                   progress=progress)
            loaded: Loaded[Any] = install_index(space, path, stamp_path, ident, index, info)
            size = index.memory_bytes()
        else:
            assert spec.shards is not None
            built = build_hnsw_shards(_modulo(space, info.next_row, spec.shards), spec.shards, info.dim,
                                      info.metric, params, address=address, progress=progress)
            sharded = ShardedHNSW(spec.shards, info.dim, info.metric, params, built.index)
            loaded = install_index(space, path, stamp_path, ident, sharded, info)
            size = path.stat().st_size
    if spec.exact_rerank:
        ensure_vector_file(space)
    return IndexReport(str(spec), loaded.action, loaded.stamp.ntotal, loaded.stamp.rows, loaded.stamp.generation,
                       size, backend="ray", nodes=built.nodes, merge=built.merge)


def _contiguous(space: Space, live: np.ndarray, n: int) -> Any:
    """``(shard, vectors, rows)`` pieces: ``n`` contiguous, equal runs of the live rows, in row order."""
    for s, part in enumerate(np.array_split(live, min(n, max(1, len(live))))):
        for lo in range(0, len(part), ADD_BATCH):
            chunk = part[lo : lo + ADD_BATCH]
            rows, vectors = space.live_rows(int(chunk[0]), int(chunk[-1]) + 1)
            yield s, vectors, rows


def _modulo(space: Space, next_row: int, n: int) -> Any:
    """``(shard, vectors, rows)`` pieces: row ``r`` to shard ``r % n`` (as :class:`ShardedHNSW` adds)."""
    for start in range(0, next_row, ADD_BATCH):
        rows, vectors = space.live_rows(start, min(start + ADD_BATCH, next_row))
        for s in range(n):
            pick = np.flatnonzero(rows % n == s)
            if len(pick):
                yield s, vectors[pick], rows[pick]


def list_indexes(space: Space) -> list[IndexReport]:
    """The indexes persisted for a space, and whether each is current, behind or stale.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(300, 16)
    >>> list_indexes(sp)
    []
    >>> _ = build_index(sp, "hnsw16")
    >>> [(r.spec, r.action, r.rows) for r in list_indexes(sp)]
    [('hnsw16', 'current', 300)]
    >>> _ = sp.add(["new"], np.ones((1, 16)))
    >>> [(r.spec, r.action) for r in list_indexes(sp)]
    [('hnsw16', 'behind (extended on next use)')]
    """
    folder = space.store.index_dir / space.uid
    info = space.info()
    stamps = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return [r for r in (_report(stamp_file, info) for stamp_file in stamps) if r is not None]


def _report(stamp_file: Path, info: SpaceInfo) -> IndexReport | None:
    """What one stamp file says about its index (None: unreadable, or not an index's stamp)."""
    try:
        data = json.loads(stamp_file.read_text())
    except (OSError, ValueError):
        return None
    if "kappa" in data and "method" in data:  # hubness statistics (search/hubness_index.py)
        current = data.get("uid") == info.uid and data.get("generation") == info.generation
        npz = stamp_file.with_suffix(".npz")
        return IndexReport(f"hubness-k{data['kappa']}",
                           f"current ({data['method']} neighbours)" if current
                           else "stale (recomputed on next use)", int(data.get("next_row", 0))
                           - int(data.get("dead_rows", 0)), int(data.get("next_row", 0)),
                           int(data.get("generation", 0)), npz.stat().st_size if npz.exists() else None)
    seismic = is_seismic_spec(data.get("spec"))
    if "spec" in data:
        spec = str(data["spec"])
    elif data.get("tier") == "vectors":
        spec = VECTORS
    elif "m" in data:
        spec = f"hnsw{data['m']}" + (f",shards{data['shards']}" if "shards" in data else "") + (
            "" if data.get("ef_construction") == HNSWParams().ef_construction
            else f" (efConstruction {data.get('ef_construction')})")
    else:
        return None
    if data.get("space_uid") != info.uid or data.get("rows", 0) > info.next_row or (
            seismic and data.get("generation") != info.generation):  # a Seismic index is rebuilt, never extended
        state = "stale (rebuilt on next use)"
    elif data.get("rows") != info.next_row:
        state = "behind (extended on next use)"
    elif data.get("dead_rows_seen") != info.dead_rows:
        state = "current (deleted rows masked)"
    else:
        state = "current"
    index_file = stamp_file.with_suffix(".bin" if "tier" in data else ".shards" if "shards" in data
                                        else ".seismic" if seismic else ".faiss")
    size = index_file.stat().st_size if index_file.exists() else None
    return IndexReport(spec, state, int(data.get("ntotal", 0)), int(data.get("rows", 0)),
                       int(data.get("generation", 0)), size)


def drop_index(space: Space, spec: IndexSpec | str) -> IndexReport:
    """Delete a persisted index of a space (:class:`NotFoundError` if there is none).

    ``"vectors"`` drops the rescoring tier (rebuilt by the next rescoring search),
    ``"hubness-k10"`` the hubness statistics for kappa 10. Returns what was dropped,
    as :func:`list_indexes` described it, with ``action="dropped"``.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(300, 16)
    >>> _ = build_index(sp, "hnsw16")
    >>> r = drop_index(sp, "hnsw16")
    >>> r.spec, r.action, r.rows, list_indexes(sp)
    ('hnsw16', 'dropped', 300, [])
    >>> drop_index(sp, "hnsw16")
    Traceback (most recent call last):
    ...
    repspace.core.errors.NotFoundError: space t has no hnsw16 index
    """
    folder = space.store.index_dir / space.uid
    name = spec.strip().lower() if isinstance(spec, str) else None
    if name is not None and name.startswith("hubness-k"):
        path, stamp_path = folder / f"{name}.npz", folder / f"{name}.json"
        label, missing = name, f"space {space.name} has no {name} statistics"
    elif name == VECTORS:
        path, stamp_path = vector_file_paths(space)
        label, missing = VECTORS, f"space {space.name} has no vector file"
    elif is_seismic_spec(name):
        from repspace.workflows.search.seismic import forget_seismic, seismic_paths

        params = parse_seismic_spec(str(name))
        path, stamp_path = seismic_paths(space, params)
        forget_seismic(space, params)  # a search in this process builds it again, as in another
        label, missing = params.build_spec(), f"space {space.name} has no {params.build_spec()} index"
    else:
        spec = parse_spec(spec)
        if spec.kind == "hnsw" and spec.shards is not None:
            path, stamp_path = sharded_paths(space, HNSWParams(m=spec.m), spec.shards)
        elif spec.kind == "hnsw" and spec.codes is None:
            path, stamp_path = index_paths(space, HNSWParams(m=spec.m))
        elif spec.kind == "exact":
            raise InputError("exact search has no index to drop")
        else:
            path, stamp_path = funnel_paths(space, spec)
        label, missing = str(spec), f"space {space.name} has no {spec} index"
    if not path.exists() and not stamp_path.exists():
        raise NotFoundError(missing)
    listed = _report(stamp_path, space.info()) if stamp_path.exists() else None
    if listed is None:  # no readable stamp: only the file is known
        listed = IndexReport(label, "dropped", 0, 0, 0, path.stat().st_size if path.is_file() else None)
    _remove(stamp_path, path)
    forget(path)
    return replace(listed, action="dropped")


def _remove(*paths: Path) -> None:
    for p in paths:
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists():
            p.unlink()
