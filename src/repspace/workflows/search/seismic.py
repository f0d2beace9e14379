"""A sparse space searched with Seismic (``index="sparse,seismic[,...]"``), its index persisted beside the store.

:func:`ensure_seismic` gives the :class:`~repspace.engines.search.seismic.SeismicIndex` of a sparse
space's live rows: held in memory per generation, else read from
``<store>.indexes/<space uid>/seismic-<build parameters>.seismic`` when the JSON stamp beside it
describes the space exactly as it is now (uid, generation, rows, dead rows, metric, vocabulary,
build parameters, pyseismic version), else built and written there (index file first, then its
stamp, so that a crash leaves at worst a stamp that does not match: rebuilt, never trusted).
Seismic cannot add rows to an index, so a space that changed gets a new one, built whole. A
read-only store builds in memory and writes nothing.

:func:`search_seismic` answers the request. Seismic cannot restrict a search to some rows, so a
``where`` filter over-fetches: Seismic is asked for ``FILTER_OVERFETCH · k / share`` rows (share:
the filter's matches over the live rows) and the matches among them are kept. When that would ask
for more than ``EXACT_FILTER_SHARE`` of the rows, or leaves fewer than ``k`` matches, the filter's
matches are scored exactly instead (what the exact search does with a filter), and the plan says so.

Examples
--------
>>> import tempfile, os
>>> from repspace import Store
>>> from repspace.core.sparse import SparseRows
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=3, metric="ip", layout="sparse")
>>> _ = sp.add(["a", "b", "c"], SparseRows.from_pairs([([0], [1.0]), ([0, 1], [0.5, 2.0]), ([2], [1.0])], 3))
>>> res = sp.search({"0": 1.0, "1": 0.5}, k=2, index="sparse,seismic")
>>> [(h.id, h.score) for h in res], res.plan.method, res.plan.index_action
([('b', 1.5), ('a', 1.0)], 'sparse-seismic', 'built')
>>> sp.search({"0": 1.0}, k=1, index="sparse,seismic,cut=5").plan.index_action
'loaded'
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.cache import LRUCache
from repspace.core.errors import ConflictError
from repspace.core.hits import SearchPlan, SearchResult
from repspace.core.progress import Progress
from repspace.engines.search.seismic import SeismicIndex, SeismicParams, parse_seismic_spec, seismic_version
from repspace.engines.search.sparse import SparseQuery, top_k_by_score
from repspace.workflows.search.hits import hits_for
from repspace.workflows.search.persist import read_json, stamp_matches, write_json

if TYPE_CHECKING:
    from repspace.core.space import SpaceInfo
    from repspace.core.store import Space
    from repspace.workflows.search.request import SearchRequest

__all__ = ["ensure_seismic", "search_seismic", "seismic_paths"]

#: Seismic indexes kept in memory (each with its space's rows).
SEISMIC_INDEXES = 2
#: With a filter, rows asked of Seismic per hit wanted, over the filter's share of the rows.
FILTER_OVERFETCH = 2.0
#: A filter that would make Seismic return more than this share of the rows is scored exactly instead.
EXACT_FILTER_SHARE = 0.25
#: Version of the stamp's layout; another one means rebuild.
STAMP_FORMAT = 1

_INDEXES: LRUCache[tuple[np.ndarray, SeismicIndex]] = LRUCache(SEISMIC_INDEXES)
#: Plans of unfiltered searches kept, by space, generation, parameters and index action (emptied when full).
SEISMIC_PLANS = 64
_PLANS: dict[tuple[Any, ...], SearchPlan] = {}


def seismic_paths(space: Space, params: SeismicParams) -> tuple[Path, Path]:
    """Where a space's Seismic index of these build parameters and its stamp live.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> path, stamp = seismic_paths(example_space(3, 2), SeismicParams())
    >>> path.name, stamp.name
    ('seismic-lambda1000-beta0.1-alpha0.4.seismic', 'seismic-lambda1000-beta0.1-alpha0.4.json')
    """
    b = params.build_dict()
    slug = "seismic-" + "-".join(f"{k}{'all' if v is None else v}" for k, v in b.items())
    folder = space.store.index_dir / space.uid
    return folder / f"{slug}.seismic", folder / f"{slug}.json"


def _stamp(info: SpaceInfo, params: SeismicParams, ntotal: int) -> dict[str, Any]:
    """What the stamp of an index of the space described by ``info`` must say (every field compared)."""
    return {"format": STAMP_FORMAT, "spec": params.build_spec(), "space_uid": info.uid,
            "metric": info.metric.value, "dim": info.dim, "generation": info.generation, "rows": info.next_row,
            "dead_rows_seen": info.dead_rows, "ntotal": ntotal, "pyseismic": seismic_version()}


def _load(path: Path, rows: Any, params: SeismicParams, metric: str) -> SeismicIndex | None:
    """The index on disk, or None when it cannot be read (a damaged file is only a cache: rebuilt)."""
    try:
        return SeismicIndex.load(path, rows, params, metric)
    except BaseException as e:  # noqa: BLE001 - pyo3 reports a damaged file as a PanicException (a BaseException)
        if isinstance(e, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        return None


def ensure_seismic(space: Space, spec: str | SeismicParams = "sparse,seismic", *,
                   progress: Progress | None = None, info: SpaceInfo | None = None
                   ) -> tuple[np.ndarray, SeismicIndex, str]:
    """The live rows of a sparse space and their Seismic index: ``(rows, index, action)``.

    ``action`` is ``loaded`` (from memory or disk), ``built`` or ``rebuilt`` (a stale index was
    on disk), as a search plan reports it. The index searches with ``spec``'s query parameters.
    ``info``: the space's description as the caller just read it (one version check less).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> from repspace.core.sparse import SparseRows
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=3, layout="sparse")
    >>> _ = sp.add(["a", "b"], SparseRows.from_pairs([([0], [1.0]), ([2], [2.0])], 3))
    >>> rows, index, action = ensure_seismic(sp)
    >>> rows.tolist(), index.n_features, action, ensure_seismic(sp)[2]
    ([0, 1], 3, 'built', 'loaded')
    """
    params = spec if isinstance(spec, SeismicParams) else parse_seismic_spec(spec)
    metric = space.metric.value
    if info is None:
        info = space.info()
    held = _INDEXES.get((space.uid, info.generation, metric, params.build_spec()))
    if held is not None:  # built from the live rows of this generation (kept with them): no file looked at
        return held[0], held[1].with_params(params), "loaded"
    for _ in range(3):  # the rows and the description of one state of the space (a write may come between)
        info = space.info()
        rows, data = space.sparse_rows()
        if space.info() == info:
            break
    else:
        raise ConflictError(f"space {space.name!r} keeps changing: its Seismic index waits for a quiet moment")
    key = (space.uid, info.generation, metric, params.build_spec())
    held = _INDEXES.get(key)
    if held is not None and held[0] is rows:  # held in memory: no file is looked at
        return rows, held[1].with_params(params), "loaded"
    path, stamp_path = seismic_paths(space, params)
    wanted = _stamp(info, params, len(rows))
    index = None
    if stamp_matches(read_json(stamp_path), wanted) and path.is_file():
        index = _load(path, data, params, metric)
    action = "loaded"
    if index is None:
        action = "rebuilt" if path.exists() or stamp_path.exists() else "built"
        if progress is not None:
            progress("index", 0, len(rows))
        index = SeismicIndex(data, params, metric=metric)
        if progress is not None:
            progress("index", len(rows), len(rows))
        if not space.store.readonly:
            path.parent.mkdir(parents=True, exist_ok=True)
            stamp_path.unlink(missing_ok=True)
            part = path.with_name(f"{path.name}.{os.getpid()}.part")
            index.save(part)
            os.replace(part, path)
            write_json(stamp_path, wanted)
    _INDEXES.put(key, (rows, index))
    return rows, index, action


def forget_seismic(space: Space, params: SeismicParams) -> None:
    """Drop what this process holds of the space's Seismic index of these build parameters (its file is
    being deleted: ``repspace index drop``).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> from repspace.core.sparse import SparseRows
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=3, layout="sparse")
    >>> _ = sp.add(["a", "b"], SparseRows.from_pairs([([0], [1.0]), ([2], [2.0])], 3))
    >>> _ = ensure_seismic(sp)
    >>> forget_seismic(sp, SeismicParams())
    >>> os.remove(seismic_paths(sp, SeismicParams())[0])
    >>> ensure_seismic(sp)[2]
    'rebuilt'
    """
    build = params.build_spec()
    for key in [k for k in _INDEXES.keys() if k[0] == space.uid and k[3] == build]:  # type: ignore[index]
        _INDEXES.pop(key)


def search_seismic(space: Space, req: SearchRequest, q: SparseQuery, exclude: str | None,
                   allowed: np.ndarray | None, *, info: SpaceInfo | None = None) -> SearchResult:
    """Answer ``req`` (its ``index`` a Seismic spec) with the query ``q``; ``allowed``: the filter's positions;
    ``info``: the space's description, read before its rows (the hits' records are served from memory for its
    generation)."""
    assert req.index is not None
    if info is None:
        info = space.info()
    rows, index, action = ensure_seismic(space, str(req.index), info=info)
    total, p = len(rows), index.params
    n_cand = total if allowed is None else len(allowed)
    k = min(req.k + (exclude is not None), n_cand)
    if allowed is None:  # the plan of a loop of one query per call: made once
        scores, found = index.search(q, k=k)
        hits = hits_for(space, rows[found], scores, exclude=exclude, generation=info.generation)[: req.k]
        key = (space.uid, info.generation, p, action)
        plan = _PLANS.get(key)
        if plan is None:
            if len(_PLANS) >= SEISMIC_PLANS:
                _PLANS.clear()
            plan = _PLANS[key] = SearchPlan("sparse-seismic", total, total, reason=_reason(space, p),
                                            index_action=action)
        return SearchResult(tuple(hits), plan)
    reason = _reason(space, p)
    fetch = math.ceil(FILTER_OVERFETCH * k * total / max(n_cand, 1))
    found = np.zeros(0, np.int64)
    if fetch <= EXACT_FILTER_SHARE * total:
        scores, found = index.search(q, k=k, fetch=fetch)
        keep = np.isin(found, allowed)
        scores, found = scores[keep][:k], found[keep][:k]
        reason += f"; the filter's matches among {fetch} rows found"
    if len(found) < k:
        scores = index.scores(allowed, q)
        top = top_k_by_score(scores, k)
        scores, found = scores[top].astype(np.float32), allowed[top]
        reason = f"exact {space.metric.value} over {space.dim} features: the filter's {n_cand} matches scored"
    hits = hits_for(space, rows[found], scores, exclude=exclude, generation=info.generation)[: req.k]
    method = "sparse-seismic" if reason.startswith("Seismic") else "sparse-exact"
    return SearchResult(tuple(hits), SearchPlan(method, n_cand, total, reason=reason, index_action=action))


def _reason(space: Space, p: SeismicParams) -> str:
    return (f"Seismic (pyseismic-lsr {seismic_version()}) over {space.dim} features, lambda {p.lambda_ or 'all'}, "
            f"cut {p.cut or 'all'}, heap {p.heap}")
