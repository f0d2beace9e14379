"""A stored space's 2-D layout, kept beside the store by state (like an index).

A layout is computed once per (space, generation, method) and written to
``STORE.indexes/<uid>/layouts/<method>.npz`` with the state it was computed at (uid,
generation, next row, dead rows); it is read back while the space is unchanged, by this
or any process, and recomputed after a write. Nothing is pickled. Beside a read-only
store nothing is written: the layout is kept in this process's memory instead.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_space
>>> sp = example_space(vectors=np.eye(3))
>>> lay = space_layout(sp)
>>> lay.ids, lay.coords.shape, lay.cached
(['i0', 'i1', 'i2'], (3, 2), False)
>>> space_layout(sp).cached
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import read_npz, write_npz
from repspace.core.checks import check_choice
from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.core.space import Metric

if TYPE_CHECKING:
    from repspace.core.store import Space

#: Layout methods: PCA (instant, the default) and UMAP on repspace's kNN graph (seed 0, 15 neighbours).
METHODS = ("pca", "umap")
FORMAT = 2
#: Layouts of read-only stores, kept by this process (file path -> (state, ids, coords)): never written to disk.
_MEMORY: dict[str, tuple[list[int | str], list[str], np.ndarray]] = {}


@dataclass(frozen=True)
class Layout:
    """Item ids and their 2-D coordinates (float32, row order), with what made them.

    Examples
    --------
    Made by :func:`space_layout`; ``to_dict`` is the JSON the map is drawn from:

    >>> Layout(["a", "b"], np.array([[0, 1], [2, 3]], np.float32), "pca", generation=1, cached=False).to_dict()
    {'ids': ['a', 'b'], 'coords': [[0.0, 1.0], [2.0, 3.0]], 'method': 'pca', 'generation': 1, 'cached': False}
    """

    ids: list[str]
    coords: np.ndarray
    method: str
    generation: int
    cached: bool

    def to_dict(self) -> dict[str, Any]:
        """Ids, coordinates (``[x, y]`` per item) and what made them, as JSON values."""
        return {"ids": list(self.ids), "coords": self.coords.tolist(), "method": self.method,
                "generation": self.generation, "cached": self.cached}


def space_layout(space: Space, method: str = "pca") -> Layout:
    """The space's layout by ``method``, from the file beside the store when it is current.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(vectors=np.eye(3))
    >>> space_layout(space).cached, space_layout(space).cached  # computed, then read back
    (False, True)
    >>> _ = space.add(["d"], np.ones((1, 3)))
    >>> lay = space_layout(space)  # a write makes the kept layout stale
    >>> lay.ids, lay.generation, lay.cached
    (['i0', 'i1', 'i2', 'd'], 2, False)
    """
    from repspace.engines.geometry.layout import pca_layout, umap_layout

    check_choice(method, "the layout method", METHODS)
    info = space.info()
    state = [space.uid, info.generation, info.next_row, info.dead_rows]
    path = space.store.index_dir / space.uid / "layouts" / f"{method}.npz"
    held = _MEMORY.get(str(path))
    if held is not None and held[0] == state:
        return Layout(held[1], held[2], method, info.generation, True)
    kept = _load(path, state, method)
    if kept is not None:
        return Layout(kept[0], kept[1], method, info.generation, True)
    snap = space.snapshot()
    vectors = normalize_rows(snap.vectors) if space.metric is Metric.COSINE else snap.vectors
    if space.metric is Metric.POINCARE and len(snap.ids):
        # PCA is linear: it projects the ball's points from the tangent space at the origin (log map),
        # where distances from the origin are the hyperbolic ones; UMAP uses the Poincare distance itself.
        from repspace.core.hyperbolic import log_map

        vectors = np.asarray(log_map(snap.vectors), dtype=np.float32)
    if not len(snap.ids):
        coords = np.zeros((0, 2), np.float32)
    elif method == "umap":
        if space.metric is Metric.IP:
            raise InputError("a UMAP layout needs a cosine, l2 or poincare space; this space's metric is ip")
        coords = umap_layout(snap.vectors, metric=space.metric.value)
    else:
        coords = pca_layout(vectors)
    if snap.generation == info.generation:  # the snapshot is of the state read above: keep it
        if space.store.readonly:  # nothing is written beside a read-only store: this process keeps it
            _MEMORY[str(path)] = (state, list(snap.ids), coords)
        else:
            _save(path, state, method, snap.ids, coords)
    return Layout(list(snap.ids), coords, method, snap.generation, False)


def _save(path: Path, state: list[int | str], method: str, ids: list[str], coords: np.ndarray) -> None:
    try:
        write_npz(path, {"format": FORMAT, "state": state, "method": method},
                  {"coords": coords, "ids": np.frombuffer(json.dumps(ids, ensure_ascii=False).encode(), np.uint8)})
    except OSError:
        pass  # a cache: a read-only folder only costs a recomputation


def _load(path: Path, state: list[int | str], method: str) -> tuple[list[str], np.ndarray] | None:
    z = read_npz(path, {"format": FORMAT, "state": state, "method": method})
    if z is None or "ids" not in z or "coords" not in z:
        return None
    try:
        ids = json.loads(bytes(z["ids"]).decode())
    except ValueError:  # UnicodeDecodeError included
        return None
    coords = z["coords"]
    if not isinstance(ids, list) or coords.shape != (len(ids), 2):
        return None
    return ids, coords
