"""The compare workflow: two stored spaces joined on item id, through :func:`repspace.engines.compare.compare`.

The store feeds the engine arrays (docs/ARCHITECTURE.md): both spaces are read from
one snapshot each, the items they share are put in the same row order, and the
measures run on those rows; ``n_shared`` says how many there were. Optionally
the items whose neighbourhoods changed most are listed by id with their old and
new neighbours, and each item's neighbourhood Jaccard is written into the
metadata of both spaces (``jaccard``, and ``jaccard_vs``: the other space).

Examples
--------
>>> from repspace.store import example_space, example_vectors
>>> x = example_vectors(300, 8)
>>> a = example_space(name="a", vectors=x)
>>> b = a.store.create_space("b", dim=8)  # items i299 ... i50 of a, scaled
>>> _ = b.add([f"i{j}" for j in range(299, 49, -1)], x[299:49:-1] * 2)
>>> r = compare_spaces(a, b, measures=["cka_linear", "mutual_knn"], k=5)
>>> r.n_shared, round(r.comparison["cka_linear"], 6), r.comparison.scores()["mutual_knn"]
(250, 1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.backend import Backend
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.compare import Comparison, compare
from repspace.workflows.distributed.backend import check_backend
from repspace.workflows.distributed.runner import open_backend

if TYPE_CHECKING:
    from collections.abc import Iterable

    from repspace.core.store import Space

__all__ = ["LayerMatrix", "SpaceComparison", "compare_layers", "compare_spaces", "joined"]


@dataclass(frozen=True)
class Joined:
    """The items two spaces share, row-aligned: ids, both spaces' vectors and rows, and their generations.

    Examples
    --------
    ``b`` holds the first 40 of the 60 items of ``a``:

    >>> from repspace.store import example_pair
    >>> j = joined(*example_pair())
    >>> j.ids[:2], j.rows_x[:2].tolist(), j.rows_y[:2].tolist(), (j.n_x, j.n_y), j.x.shape
    (['i0', 'i1'], [0, 1], [0, 1], (60, 40), (40, 8))
    """

    ids: list[str]
    x: np.ndarray
    y: np.ndarray
    rows_x: np.ndarray
    rows_y: np.ndarray
    generation_x: int
    generation_y: int
    n_x: int
    n_y: int


def joined(a: Space, b: Space) -> Joined:
    """The items of ``a`` that ``b`` also holds, in ``a``'s order, with both spaces' vectors.

    Examples
    --------
    ``y`` is only in ``a``, ``w`` only in ``b``; ``x`` and ``z`` are paired by id:

    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> _ = store.create_space("a", dim=2).add(["x", "y", "z"], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> _ = store.create_space("b", dim=2).add(["z", "w", "x"], [[2.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    >>> j = joined(store.space("a"), store.space("b"))
    >>> j.ids, j.x.tolist(), j.y.tolist()
    (['x', 'z'], [[1.0, 0.0], [1.0, 1.0]], [[3.0, 3.0], [2.0, 0.0]])
    """
    sa, sb = a.snapshot(), b.snapshot()
    where_b = {item_id: j for j, item_id in enumerate(sb.ids)}
    pairs = [(i, where_b[item_id]) for i, item_id in enumerate(sa.ids) if item_id in where_b]
    ia = np.fromiter((p[0] for p in pairs), np.int64, len(pairs))
    ib = np.fromiter((p[1] for p in pairs), np.int64, len(pairs))
    return Joined([sa.ids[i] for i in ia.tolist()], sa.vectors[ia], sb.vectors[ib], sa.rows[ia], sb.rows[ib],
                  sa.generation, sb.generation, len(sa.ids), len(sb.ids))


@dataclass(frozen=True)
class SpaceComparison:
    """Two stored spaces compared on their shared items.

    Attributes
    ----------
    a, b : str
        The spaces' names.
    n_a, n_b : int
        Their live items.
    comparison : Comparison
        The measures on the ``n_shared`` shared items.
    changed : list of dict
        The items whose neighbourhoods changed most (``--changed``), by id:
        ``{"id", "jaccard", "old", "new", "lost", "gained"}`` (neighbour ids).
    saved : int
        Items whose metadata received their Jaccard (both spaces counted once).
    backend : str
        The backend's name (``local``, ``ray``): where the moment pass (CKA, Procrustes, SVCCA) ran.
    """

    a: str
    b: str
    n_a: int
    n_b: int
    comparison: Comparison
    changed: list[dict[str, Any]]
    saved: int = 0
    backend: str = "local"

    @property
    def n_shared(self) -> int:
        return self.comparison.n_shared

    def to_dict(self) -> dict[str, Any]:
        """``{"a", "b", "n_a", "n_b", "n_shared", "k", <measures>..., "skipped", "changed"?, "backend"}``."""
        out = {"a": self.a, "b": self.b, "n_a": self.n_a, "n_b": self.n_b, **self.comparison.to_dict()}
        out["backend"] = self.backend
        if self.changed:
            out["changed"] = self.changed
        return out


def compare_spaces(a: Space, b: Space, *, measures: str | Iterable[str] | None = None, k: int = 10,
                   seed: int = 0, exact: bool | None = None, changed: int = 0, save: bool = False,
                   backend: str | Backend = "local", ray_address: str | None = None) -> SpaceComparison:
    """Compare two stored spaces on the items they share (joined on id).

    Parameters
    ----------
    a, b : Space
        ``a`` is the old (reference) space, ``b`` the new one.
    measures, k, seed, exact
        See :func:`repspace.engines.compare.compare` (``exact`` forces exact or HNSW kNN graphs).
    changed : int
        List this many items whose neighbourhoods changed most.
    save : bool
        Write each shared item's ``jaccard`` (and ``jaccard_vs``, the other
        space's name) into its metadata in both spaces; refused whole if
        either space changed meanwhile.
    backend : ``local``, ``ray`` or a Backend
        ``ray``: the moment pass behind ``cka_linear``, ``cka_debiased``,
        ``procrustes`` and ``svcca`` is summed shard by shard on a Ray cluster
        (a :class:`~repspace.workflows.distributed.measure.RayBackend` with
        ``knn=False``, opened by :func:`~repspace.workflows.distributed.runner.open_backend`
        for this call); the other measures run here. The figures equal the
        local ones to rounding. A :class:`repspace.core.backend.Backend`
        object is passed down to :func:`repspace.engines.compare.compare` as it is.
    ray_address : str, optional
        The cluster for ``backend="ray"`` (default ``$RAY_ADDRESS``, else a
        local Ray); an unreachable one is a :class:`~repspace.core.errors.BackendError`.

    Examples
    --------
    The new space scales every vector and swaps those of the first five items with the next five:

    >>> from repspace.store import example_space, example_vectors
    >>> x = example_vectors(60, 4)
    >>> y = x.copy(); y[:5] = x[5:10]
    >>> old = example_space(name="old", vectors=x)
    >>> new = example_space(store=old.store, name="new", vectors=2 * y)
    >>> r = compare_spaces(old, new, measures=["cka_linear", "mutual_knn"], k=3, changed=2, save=True)
    >>> r.n_shared, round(r.comparison["cka_linear"], 2), [c["id"] for c in r.changed], r.saved, r.backend
    (60, 0.9, ['i0', 'i1'], 60, 'local')
    >>> old.get(["i0"])[0].metadata
    {'jaccard': 0.0, 'jaccard_vs': 'new'}
    """
    if isinstance(backend, str):
        check_backend(backend, ray_address)
    check_scalar(k, "k", int, low=1)
    check_scalar(changed, "changed", int, low=0)
    # Neighbour graphs are cosine (METRICS.md); a poincare space keeps its hyperbolic distance (neighbour
    # measures only: the engine records the measures on coordinates as undefined for it).
    metrics = ("cosine" if a.metric.is_vector_space else a.metric.value,
               "cosine" if b.metric.is_vector_space else b.metric.value)
    j = joined(a, b)
    if len(j.ids) <= k:
        raise InputError(f"spaces {a.name!r} and {b.name!r} share {len(j.ids)} item(s); comparing with k={k} "
                         f"needs more than {k}")
    keys = None if measures is None else ([measures] if isinstance(measures, str) else list(measures))
    if save and keys is not None and "neighbourhood_jaccard" not in keys:
        keys.append("neighbourhood_jaccard")
    with open_backend(backend, ray_address, knn=False) as runner:
        result = compare(j.x, j.y, keys, k=k, seed=seed, exact_knn=exact, changed=changed,
                         metrics=metrics, backend=runner)  # one pair of graphs
        name = runner.name
    listed = [{"id": j.ids[c.row], "jaccard": c.jaccard, "old": [j.ids[r] for r in c.neighbours_x],
               "new": [j.ids[r] for r in c.neighbours_y], "lost": [j.ids[r] for r in c.lost],
               "gained": [j.ids[r] for r in c.gained]} for c in (result.changed or ())]
    saved = 0
    if save:
        from repspace.core.errors import ConflictError

        jac = result["neighbourhood_jaccard"].per_item
        targets = [(a, j.rows_x, j.generation_x, b.name), (b, j.rows_y, j.generation_y, a.name)]
        if a.uid == b.uid:
            targets = targets[:1]
        for space, _, generation, _ in targets:  # both checked before either is written
            if space.info().generation != generation:
                raise ConflictError(f"space {space.name!r} changed while it was compared; nothing was written, "
                                    "run again")
        for space, rows, generation, other in targets:
            patches = [{"jaccard": round(float(v), 6), "jaccard_vs": other} for v in jac]
            saved = space.patch_rows_metadata(rows, patches, generation=generation)
    return SpaceComparison(a.name, b.name, j.n_x, j.n_y, result, listed, saved, name)


@dataclass(frozen=True)
class LayerMatrix:
    """One measure between every pair of layers (of one encoder, or of two).

    Attributes
    ----------
    measure : str
        The JSON key of the measure (see :data:`repspace.engines.compare.MEASURES`).
    rows, cols : tuple of str
        Layer labels (``minilm@3``...).
    values : ndarray of shape (len(rows), len(cols))
    n : int
        Texts compared.
    """

    measure: str
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    values: np.ndarray
    n: int

    def to_dict(self) -> dict[str, Any]:
        """``{"measure", "n", "rows", "cols", "values": [[...], ...]}``."""
        return {"measure": self.measure, "n": self.n, "rows": list(self.rows), "cols": list(self.cols),
                "values": [[float(v) for v in row] for row in self.values]}

    def heatmap(self, path: str | Path) -> Path:
        """Write the matrix as a PNG heatmap (matplotlib, no global state) and return the path."""
        from matplotlib.figure import Figure

        path = Path(path)
        size = max(4.0, 0.5 * max(len(self.rows), len(self.cols)) + 2)
        fig = Figure(figsize=(size, size * 0.85), layout="constrained")
        ax = fig.add_subplot()
        image = ax.imshow(self.values, cmap="viridis", origin="lower", aspect="auto")
        ax.set_xticks(range(len(self.cols)), self.cols, rotation=60, ha="right", fontsize=8)
        ax.set_yticks(range(len(self.rows)), self.rows, fontsize=8)
        ax.set_title(f"{self.measure} between layers ({self.n:,} texts)", fontsize=10)
        fig.colorbar(image, ax=ax)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=120)
        return path


def compare_layers(encoder: str, texts: Sequence[str], *, layers: str | Sequence[int] = "all",
                   other: str | None = None, other_layers: str | Sequence[int] | None = None,
                   measure: str = "cka_linear", k: int = 10, options: dict[str, Any] | None = None,
                   batch_size: int = 64, progress: Progress | None = None) -> LayerMatrix:
    """``measure`` between every layer of ``encoder`` and every layer of ``other`` (default: itself).

    One forward pass per batch of texts and encoder gives all its layers;
    ``other_layers`` defaults to ``layers`` for the same encoder, to all for
    another one. An encoder without layers counts as one layer.

    Examples
    --------
    >>> m = compare_layers("hf-layers:minilm", [f"a sentence about {w}" for w in "abcdefghijklmnop"],
    ...                    layers=[0, -1], k=3)
    >>> m.rows, [round(float(v), 6) for v in m.values.diagonal()]
    (('hf-layers:minilm@0', 'hf-layers:minilm@6'), [1.0, 1.0])
    """
    from repspace.engines.compare import MEASURES

    check_choice(measure, "measure", MEASURES)
    texts = list(texts)
    if len(texts) <= k:
        raise InputError(f"{len(texts)} texts; comparing with k={k} needs more than {k}")
    left_labels, left = _layer_stack(encoder, texts, layers, options, batch_size, progress)
    if other is None and other_layers is None:
        right_labels, right = left_labels, left
    else:
        right_labels, right = _layer_stack(other or encoder, texts, "all" if other_layers is None else other_layers,
                                           options, batch_size, progress)
    values = np.empty((len(left_labels), len(right_labels)))
    for i in range(len(left_labels)):
        for j in range(len(right_labels)):
            if right is left and j < i and MEASURES[measure].symmetric:
                values[i, j] = values[j, i]
                continue
            result = compare(left[i], right[j], [measure], k=k, strict=True)
            values[i, j] = result.scores()[measure]
    return LayerMatrix(measure, tuple(left_labels), tuple(right_labels), values, len(texts))


def _layer_stack(spec: str, texts: list[str], layers: str | Sequence[int], options: dict[str, Any] | None,
                 batch_size: int, progress: Progress | None) -> tuple[list[str], np.ndarray]:
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.base import LayeredEncoder

    enc = get_encoder(spec, **(options or {}))
    if not isinstance(enc, LayeredEncoder):
        return [spec], enc.encode(texts, batch_size=batch_size, progress=progress)[None]
    chosen = enc.resolve_layers(layers)
    stacked = enc.encode_layers(texts, layers=chosen, batch_size=batch_size, progress=progress)
    return [f"{spec}@{lay}" for lay in chosen], stacked
