"""Hubness reduction over a stored space: per-item neighbour statistics cached beside the store.

CSLS, mutual proximity and local scaling (:mod:`repspace.engines.search.hubness`) need,
for every base item, statistics of its ``kappa`` nearest neighbours in the
space. They depend on the whole space (adding one item can change any item's
neighbours), so they are not extended like an index: they are computed once
per state of the space (generation, rows, dead rows) and kappa, written to
``<store>.indexes/<uid>/hubness-k<kappa>.npz`` with a JSON stamp, and
recomputed when the space has changed (a read-only store keeps them in memory
only, and beyond the exact limit needs a current HNSW graph). Up to :data:`EXACT_MAX_ITEMS` live
items the neighbours are exact; beyond, they come from the space's HNSW graph
(built if needed), which the stamp records.

A search then takes the plain top :data:`POOL` candidates (filters applied),
the query's own ``kappa`` nearest items (without the filter: the query's
neighbourhood is the space's), and re-ranks the candidates by the reduced
similarity (:func:`search_hubness`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import InputError
from repspace.core.limits import EXACT_MAX_ITEMS
from repspace.core.space import Metric
from repspace.engines.search.hubness import (
    NeighbourStatistics,
    base_statistics,
    statistics_from_neighbours,
)
from repspace.workflows.search.persist import (
    IndexNotReady,
    read_json,
    stamp_matches,
    write_json,
)

if TYPE_CHECKING:
    from repspace.core.store import Space

#: Plain candidates each query re-ranks.
POOL = 100
#: Queries per HNSW batch while computing the statistics.
BATCH = 20_000
_FORMAT = 1
_MEMORY: dict[str, tuple[dict[str, Any], BaseStatistics]] = {}


@dataclass(frozen=True)
class BaseStatistics:
    """Neighbour statistics of a space's live items, and the rows they belong to (ascending)."""

    rows: np.ndarray
    stats: NeighbourStatistics
    method: str  # "exact" or "hnsw"

    def at(self, rows: np.ndarray) -> NeighbourStatistics | None:
        """The statistics of the given rows (same shape), or None if one is not covered."""
        pos = np.searchsorted(self.rows, rows)
        pos_c = np.minimum(pos, len(self.rows) - 1)
        if not np.array_equal(self.rows[pos_c], rows):
            return None
        s = self.stats
        return NeighbourStatistics(s.kappa, s.metric, s.r[pos_c], s.sigma[pos_c], s.mu[pos_c], s.sd[pos_c])


def _paths(space: Space, kappa: int) -> tuple[Path, Path]:
    folder = space.store.index_dir / space.uid
    return folder / f"hubness-k{kappa}.npz", folder / f"hubness-k{kappa}.json"


def ensure_statistics(space: Space, kappa: int = 10) -> BaseStatistics:
    """The space's per-item statistics for ``kappa``: from memory, from the cache file, or computed."""
    info = space.info()
    stamp = {"format": _FORMAT, "uid": info.uid, "generation": info.generation, "next_row": info.next_row,
             "dead_rows": info.dead_rows, "kappa": kappa, "metric": info.metric.value}
    path, stamp_path = _paths(space, kappa)
    held = _MEMORY.get(str(path))
    if held is not None and held[0] == stamp:
        return held[1]
    loaded = _load(path, stamp_path, stamp)
    if loaded is None:
        try:
            loaded = _compute(space, kappa)
        except IndexNotReady as e:
            raise IndexNotReady(f"hubness reduction over {info.count} items needs the neighbour statistics of "
                                f"every item, and {e}") from None
        if not space.store.readonly:  # a read-only store keeps them in this process only
            _save(path, stamp_path, stamp, loaded)
    _MEMORY[str(path)] = (stamp, loaded)
    return loaded


def _compute(space: Space, kappa: int) -> BaseStatistics:
    rows, vectors = space.rows_and_vectors()
    n = len(rows)
    if n < kappa + 1:
        raise InputError(f"hubness reduction with kappa={kappa} needs more than {kappa} items; "
                         f"space {space.name!r} has {n}")
    metric = space.metric
    if n <= EXACT_MAX_ITEMS:
        return BaseStatistics(np.asarray(rows), base_statistics(vectors, kappa, metric), "exact")
    from repspace.workflows.search.hnsw import ensure_hnsw

    loaded = ensure_hnsw(space)
    allowed = None
    if loaded.needs_mask:
        allowed = np.zeros(loaded.stamp.rows, dtype=bool)
        allowed[rows[rows < loaded.stamp.rows]] = True
    ef = max(64, 4 * kappa)
    out = np.empty((n, kappa), np.float64)
    for lo in range(0, n, BATCH):
        hi = min(n, lo + BATCH)
        scores, found = loaded.index.search(vectors[lo:hi], kappa + 1, ef, allowed)
        if metric is Metric.L2:
            scores = np.sqrt(np.maximum(scores, 0))
        keep = found != rows[lo:hi, None]  # the item itself is left out ...
        absent = keep.all(axis=1)
        keep[absent, -1] = False  # ... or, when the graph missed it, the farthest one
        out[lo:hi] = np.asarray(scores, np.float64)[keep].reshape(hi - lo, kappa)
    return BaseStatistics(np.asarray(rows), statistics_from_neighbours(out, kappa, metric), "hnsw")


def _load(path: Path, stamp_path: Path, stamp: dict[str, Any]) -> BaseStatistics | None:
    saved = read_json(stamp_path)
    method = None if saved is None else saved.get("method")
    if not stamp_matches(saved, stamp) or method not in ("exact", "hnsw"):
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            rows = np.asarray(z["rows"], np.int64)
            stats = NeighbourStatistics.from_arrays({k: z[k] for k in z.files if k != "rows"})
    except (OSError, ValueError, KeyError, TypeError, InputError):
        return None  # missing, damaged or of another state: recomputed
    if len(rows) != len(stats) or stats.kappa != stamp["kappa"]:
        return None
    return BaseStatistics(rows, stats, method)


def _save(path: Path, stamp_path: Path, stamp: dict[str, Any], value: BaseStatistics) -> None:
    write_atomic(path, lambda f: np.savez(f, rows=value.rows, **value.stats.to_arrays()))
    write_json(stamp_path, {**stamp, "method": value.method})
