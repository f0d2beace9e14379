"""The compare workflow: two stored spaces joined on item id, through :func:`repspace.compare.compare`.

The store feeds the engine arrays (``DESIGN.md``): both spaces are read from
one snapshot each, the items they share are put in the same row order, and the
measures run on those rows; ``n_shared`` says how many there were. Optionally
the items whose neighbourhoods changed most are listed by id with their old and
new neighbours, and each item's neighbourhood Jaccard is written into the
metadata of both spaces (``jaccard``, and ``jaccard_vs``: the other space).

Examples
--------
>>> import numpy as np, tempfile, os
>>> from repspace import Store
>>> store = Store(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> x = np.random.default_rng(0).standard_normal((300, 8))
>>> _ = store.create_space("a", dim=8).add([f"i{j}" for j in range(300)], x)
>>> _ = store.create_space("b", dim=8).add([f"i{j}" for j in range(299, 49, -1)], x[299:49:-1] * 2)
>>> r = compare_spaces(store.space("a"), store.space("b"), measures=["cka_linear", "mutual_knn"], k=5)
>>> r.n_shared, round(r.comparison["cka_linear"], 6), r.comparison.scores()["mutual_knn"]
(250, 1.0, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.compare import Comparison, changed_items, compare
from repspace.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from repspace.store import Space

__all__ = ["SpaceComparison", "compare_spaces", "joined"]


@dataclass(frozen=True)
class Joined:
    """The items two spaces share, row-aligned: ids, both spaces' vectors and rows, and their generations."""

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
    """The items of ``a`` that ``b`` also holds, in ``a``'s order, with both spaces' vectors."""
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
    """

    a: str
    b: str
    n_a: int
    n_b: int
    comparison: Comparison
    changed: list[dict[str, Any]]
    saved: int = 0

    @property
    def n_shared(self) -> int:
        return self.comparison.n_shared

    def to_dict(self) -> dict[str, Any]:
        """``{"a", "b", "n_a", "n_b", "n_shared", "k", <measures>..., "skipped", "changed"?}``."""
        out = {"a": self.a, "b": self.b, "n_a": self.n_a, "n_b": self.n_b, **self.comparison.to_dict()}
        if self.changed:
            out["changed"] = self.changed
        return out


def compare_spaces(a: Space, b: Space, *, measures: str | Iterable[str] | None = None, k: int = 10,
                   seed: int = 0, exact: bool | None = None, changed: int = 0, save: bool = False) -> SpaceComparison:
    """Compare two stored spaces on the items they share (joined on id).

    Parameters
    ----------
    a, b : Space
        ``a`` is the old (reference) space, ``b`` the new one.
    measures, k, seed, exact
        See :func:`repspace.compare.compare` (``exact`` forces exact or HNSW kNN graphs).
    changed : int
        List this many items whose neighbourhoods changed most.
    save : bool
        Write each shared item's ``jaccard`` (and ``jaccard_vs``, the other
        space's name) into its metadata in both spaces; refused whole if
        either space changed meanwhile.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, not {k!r}")
    if isinstance(changed, bool) or not isinstance(changed, int) or changed < 0:
        raise InputError(f"changed must be a non-negative integer, not {changed!r}")
    j = joined(a, b)
    if len(j.ids) <= k:
        raise InputError(f"spaces {a.name!r} and {b.name!r} share {len(j.ids)} item(s); comparing with k={k} "
                         f"needs more than {k}")
    keys = None if measures is None else ([measures] if isinstance(measures, str) else list(measures))
    if save and keys is not None and "neighbourhood_jaccard" not in keys:
        keys.append("neighbourhood_jaccard")
    result = compare(j.x, j.y, keys, k=k, seed=seed, exact_knn=exact)
    listed: list[dict[str, Any]] = []
    if changed:
        moved = changed_items(j.x, j.y, k=k, top=changed, exact=exact, seed=seed)
        listed = [{"id": j.ids[c.row], "jaccard": c.jaccard, "old": [j.ids[r] for r in c.neighbours_x],
                   "new": [j.ids[r] for r in c.neighbours_y], "lost": [j.ids[r] for r in c.lost],
                   "gained": [j.ids[r] for r in c.gained]} for c in moved]
    saved = 0
    if save:
        from repspace.errors import ConflictError

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
    return SpaceComparison(a.name, b.name, j.n_x, j.n_y, result, listed, saved)
