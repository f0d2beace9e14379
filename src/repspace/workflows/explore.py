"""What the explorer shows on a map, computed in the original spaces.

Every per-item array here is aligned with the space's layout
(:func:`repspace.workflows.layout.space_layout`: the live items in row order at one
generation), so the browser colours point ``i`` of the map with value ``i``:

* :func:`map_fields` and :func:`map_column`: metadata fields (and the diagnostics
  ``diagnose --save`` stores there: ``k_occurrence``, ``hub``, ``local_id``) as
  columns, read by the same code filters are evaluated with;
* :func:`map_agreement`: for each item, the share of its ``k`` nearest neighbours on
  the 2-D map that are among its ``k`` nearest in the original space (where the map
  misleads);
* :func:`index_recall`: recall@k of the approximate index for a seeded sample of
  items used as queries (NaN for the others): where on the map the index loses
  neighbours;
* :func:`pair_jaccard`, :func:`pair_item`, :func:`pair_search`: two spaces over the
  same items: each item's neighbourhood Jaccard, one item's kept / lost / gained
  neighbours, a query's top-k in both (and mapped from one into the other when a
  stored alignment exists).

Overlays are kept beside the store by state, like layouts, and recomputed after a
write (beside a read-only store: in this process's memory only).

Examples
--------
>>> from repspace.store import example_space
>>> sp = example_space(metadata=[{"n": j, "lang": "ab"[j % 2]} for j in range(60)])
>>> [(f["name"], f["kind"]) for f in map_fields(sp).fields]
[('lang', 'category'), ('n', 'number')]
>>> map_column(sp, "lang").categories
('a', 'b')
>>> agree = map_agreement(sp, k=5)
>>> agree.shape, bool(0 <= agree.min() <= agree.max() <= 1)
((60,), True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.atomic import read_npz, write_npz
from repspace.core.cache import LRUCache
from repspace.core.errors import ConflictError, InputError, NotFoundError
from repspace.core.printable import excerpt
from repspace.core.exact import normalize_rows
from repspace.core.space import Metric
from repspace.workflows.explore_results import ItemNeighbours, MapColumn, MapFields, PairItem, PairJaccard, PairSearch
from repspace.workflows.layout import space_layout
from repspace.workflows.search.persist import IndexNotReady

if TYPE_CHECKING:
    from repspace.core.store import Space, Store

__all__ = ["OVERLAYS", "map_fields", "map_column", "map_agreement", "index_recall", "item_neighbours",
           "pair_jaccard", "pair_item", "pair_search", "find_alignment", "MapFields", "MapColumn", "ItemNeighbours",
           "PairJaccard", "PairItem", "PairSearch"]

#: Computed per-item overlays, by the name the API and the page use for them.
OVERLAYS = {"@map_agreement": "2-D map vs original space: share of the 10 map neighbours that are true neighbours",
            "@recall": "recall@10 of the approximate index, for a sample of items used as queries"}
#: Categories listed for a text field (the most frequent; the rest are "(other)").
MAX_CATEGORIES = 40
#: Items used as queries for the recall overlay (seeded sample).
RECALL_SAMPLE = 10_000
FORMAT = 1


def map_fields(space: Space) -> MapFields:
    """The fields a map can be coloured by: ``{"generation", "fields": [{"name", "kind", "count"}], "overlays"}``
    (:meth:`MapFields.to_dict`).

    ``kind`` is ``number`` (integers and reals), ``bool``, or ``category`` (text, or
    a mix of types); fields holding only arrays, objects or nulls are left out.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> [(f["name"], f["kind"]) for f in map_fields(sp).fields]
    [('n', 'number'), ('ok', 'bool')]
    >>> _ = sp.add(["x"], np.ones((1, 8)), metadata=[{"n": "text"}])  # a mix of types is a category
    >>> [(f["name"], f["kind"], f["count"]) for f in map_fields(sp).fields]
    [('n', 'category', 61), ('ok', 'bool', 60)]
    """
    generation, found = space.field_counts()
    by_field: dict[str, dict[str, int]] = {}
    for name, kind, n in found:
        by_field.setdefault(name, {})[kind] = n
    fields = []
    for name, kinds in by_field.items():
        kind = _kind(kinds)
        if kind is not None:
            fields.append({"name": name, "kind": kind,
                           "count": sum(n for t, n in kinds.items() if t not in ("null", "array", "object"))})
    overlays = [{"name": k, "label": v} for k, v in OVERLAYS.items()]
    return MapFields(generation, tuple(fields), tuple(overlays))


def _kind(kinds: dict[str, int]) -> str | None:
    types = set(kinds) - {"null", "array", "object"}
    if not types:
        return None
    if types <= {"integer", "real"}:
        return "number"
    if types <= {"true", "false"}:
        return "bool"
    return "category"


def map_column(space: Space, name: str, method: str = "pca") -> MapColumn:
    """One field or overlay for every point of the map, in the layout's order (:class:`MapColumn`).

    Numbers and booleans: ``{"name", "kind", "values"}`` (None where an item has no
    such value); categories: ``{"name", "kind": "category", "categories", "codes"}``
    (code -1: missing; the least frequent values beyond :data:`MAX_CATEGORIES` share
    the last category, ``(other)``). Overlay names start with ``@`` (:data:`OVERLAYS`).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> map_column(sp, "n").values[:3]
    (0.0, 1.0, 2.0)
    >>> map_column(sp, "ok").values[:3]
    (True, False, False)
    >>> map_column(sp, "missing").values[:2]  # a field no item has: None everywhere
    (None, None)
    >>> map_column(sp, "@nope")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: unknown overlay '@nope'; use one of: @map_agreement, @recall
    """
    if name.startswith("@"):
        if name == "@map_agreement":
            values = map_agreement(space, method)
        elif name == "@recall":
            values = index_recall(space)
        else:
            raise InputError(f"unknown overlay {name!r}; use one of: {', '.join(OVERLAYS)}")
        return MapColumn(name, "number", values=tuple(_finite_or_none(values)), overlay=True,
                         mean=float(np.nanmean(values)) if np.isfinite(values).any() else None)
    if not name or len(name) > 200:
        raise InputError("a field name must have 1 to 200 characters")
    lay = space_layout(space, method)
    generation, rows, cols = space.columns([name])
    if generation != lay.generation or len(rows) != len(lay.ids):
        raise ConflictError(f"space {space.name!r} changed while its map was read; ask again")
    col = cols[name]
    from repspace.core.filters.columns import FALSE, INTEGER, REAL, TEXT, TRUE

    kinds = col.kind
    present = {int(t) for t in np.unique(kinds)} - _NONE
    if not present or present <= {INTEGER, REAL}:
        numbers = np.where(np.isin(kinds, (INTEGER, REAL)), col.number, np.nan)
        return MapColumn(name, "number", values=tuple(_finite_or_none(numbers)))
    if present <= {TRUE, FALSE}:
        values = [True if t == TRUE else False if t == FALSE else None for t in kinds.tolist()]
        return MapColumn(name, "bool", values=tuple(values))
    # categories: text as it is, other scalars as their JSON text
    labels = np.full(len(kinds), None, dtype=object)
    if col.strings is not None:
        is_text = kinds == TEXT
        labels[is_text] = col.strings[col.codes[is_text]]
    for code, text in ((TRUE, "true"), (FALSE, "false")):
        labels[kinds == code] = text
    for i in np.flatnonzero(np.isin(kinds, (INTEGER, REAL))).tolist():
        v = col.big.get(i, col.number[i])
        labels[i] = str(int(v)) if kinds[i] == INTEGER else repr(float(v))
    has = np.array([x is not None for x in labels], dtype=bool)
    values, inverse, counts = np.unique(labels[has].astype(str), return_inverse=True, return_counts=True)
    order = np.lexsort((values, -counts))  # most frequent first, ties by value
    rank = np.empty(len(values), np.int64)
    rank[order] = np.arange(len(values))
    categories = values[order].tolist()
    codes = np.full(len(kinds), -1, np.int64)
    codes[has] = rank[inverse]
    if len(categories) > MAX_CATEGORIES:
        codes[codes >= MAX_CATEGORIES - 1] = MAX_CATEGORIES - 1
        categories = categories[: MAX_CATEGORIES - 1] + ["(other)"]
    return MapColumn(name, "category", categories=tuple(categories), codes=tuple(codes.tolist()))


_NONE = {0, 1}  # MISSING, NULL


def _finite_or_none(values: np.ndarray) -> list[float | None]:
    out = np.round(np.asarray(values, dtype=np.float64), 6)
    return [None if not np.isfinite(v) else float(v) for v in out.tolist()]


# ---------------------------------------------------------------------------------------------- overlays
def map_agreement(space: Space, method: str = "pca", k: int = 10) -> np.ndarray:
    """Per item of the layout: the share of its ``k`` nearest points on the 2-D map that are among its ``k``
    nearest items in the space (with the space's metric; exact up to 50,000 items, HNSW beyond).

    1 where the map keeps the item's neighbourhood, near 0 where the map puts it among
    strangers. The 2-D neighbours come from SciPy's k-d tree (exact; a point at the same
    place as another counts as a neighbour).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> agree = map_agreement(sp, k=5)
    >>> agree.shape, bool(0 <= agree.min() <= agree.max() <= 1)  # shares of 5: multiples of 0.2
    ((60,), True)
    >>> bool(np.allclose(agree * 5, np.round(agree * 5)))
    True
    """
    from scipy.spatial import cKDTree

    from repspace.core.knn import knn_graph
    from repspace.engines.compare.neighbours import overlap_counts

    lay = space_layout(space, method)
    n = len(lay.ids)
    if n <= k:
        raise InputError(f"space {space.name!r} has {n} items; a {k}-neighbour overlay needs more than {k}")
    state = [space.uid, lay.generation, method, k, FORMAT]
    path = space.store.index_dir / space.uid / "layouts" / f"{method}.agreement{k}.npz"
    kept = _load(path, state, n)
    if kept is not None:
        return kept
    snap = _snapshot_at(space, lay.generation, "its map was read")
    high = knn_graph(snap.vectors, k, metric=space.metric.value).indices
    _, low = cKDTree(lay.coords.astype(np.float64)).query(lay.coords.astype(np.float64), k=k + 1)
    low = _without_self(np.asarray(low, dtype=np.int64), k)
    values = overlap_counts(high, low).astype(np.float64) / k
    _save(space, path, state, values)
    return values


def _without_self(neighbours: np.ndarray, k: int) -> np.ndarray:
    """Each row's ``k`` first entries other than the row itself (a k-d tree lists the point first, or a twin)."""
    n = len(neighbours)
    own = neighbours == np.arange(n)[:, None]
    keep = ~own
    keep[own.sum(axis=1) == 0, -1] = False  # the point was not listed (k+1 twins): drop the farthest
    return neighbours[keep].reshape(n, k)


def index_recall(space: Space, k: int = 10, sample: int = RECALL_SAMPLE, seed: int = 0) -> np.ndarray:
    """Per item of the layout: recall@k of the space's HNSW index (the planner's, built when missing) with the
    item's own vector as the query, against exact search; NaN for the items outside a seeded sample of
    ``sample`` queries. The item itself is left out of both lists.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> recall = index_recall(sp, k=5, sample=10)  # builds the planner's HNSW index
    >>> recall.shape, int(np.isfinite(recall).sum()), bool(np.nanmin(recall) >= 0.0)
    ((60,), 10, True)
    """
    from repspace.workflows.search.query import knn

    info = space.info()
    n = info.count
    if n <= k:
        raise InputError(f"space {space.name!r} has {n} items; a recall@{k} overlay needs more than {k}")
    state = [space.uid, info.generation, info.next_row, info.dead_rows, "hnsw", k, sample, seed, FORMAT]
    path = space.store.index_dir / space.uid / "layouts" / f"recall{k}.npz"
    kept = _load(path, state, n)
    if kept is not None:
        return kept
    snap = _snapshot_at(space, info.generation, "it was measured")
    chosen = np.sort(np.random.default_rng(seed).permutation(n)[: min(sample, n)])
    queries = np.asarray(snap.vectors[chosen], dtype=np.float32)
    exact = knn(space, queries, k + 1, method="exact").rows
    found = knn(space, queries, k + 1, method="hnsw")
    if found.plan.method != "hnsw":  # a read-only store without a current graph searched exactly
        raise IndexNotReady(f"the recall overlay measures the HNSW index of space {space.name!r}: "
                            f"{found.plan.reason}")
    approx = found.rows
    own = snap.rows[chosen][:, None]
    values = np.full(n, np.nan)
    for i, (e, a, o) in enumerate(zip(exact, approx, own)):
        truth = [r for r in e.tolist() if r != o[0]][:k]
        got = {r for r in a.tolist() if r != o[0]}
        values[chosen[i]] = len(got.intersection(truth)) / len(truth)
    _save(space, path, state, values)
    return values


#: Overlays of read-only stores, kept by this process (file path -> (state, values)): never written to disk.
_MEMORY: dict[str, tuple[list[Any], np.ndarray]] = {}


def _load(path: Any, state: list[Any], n: int) -> np.ndarray | None:
    """The overlay kept for ``state`` (this process's, or the file's) when it has ``n`` values; else None."""
    held = _MEMORY.get(str(path))
    if held is not None and held[0] == state:
        values = held[1]
    else:
        got = read_npz(path, {"state": state})
        values = None if got is None else np.asarray(got["values"], dtype=np.float64)
    return values if values is not None and len(values) == n else None


def _snapshot_at(space: Space, generation: int, doing: str) -> Any:
    """The space's snapshot, refused (:class:`ConflictError`) when a write has moved it past ``generation``."""
    snap = space.snapshot()
    if snap.generation != generation:
        raise ConflictError(f"space {space.name!r} changed while {doing}; ask again")
    return snap


def _save(space: Space, path: Any, state: list[Any], values: np.ndarray) -> None:
    if space.store.readonly:  # nothing is written beside a read-only store: this process keeps it
        _MEMORY[str(path)] = (state, values)
        return
    try:
        write_npz(path, {"state": state}, {"values": np.asarray(values, dtype=np.float64)})
    except OSError:  # a read-only folder: the file is only a cache
        pass


# ---------------------------------------------------------------------------------------------- one item
def item_neighbours(space: Space, item_id: str, k: int = 10) -> ItemNeighbours:
    """An item's ``k`` exact neighbours and, when the space already has an approximate index, that index's.

    The approximate list comes from the first index listed for the space (``repspace index
    build``, or one a search built and kept); ``None`` when there is none: a click never
    builds an index (minutes for a million items), and exact search of one item is
    milliseconds even there.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> nb = item_neighbours(sp, "i0", k=3)
    >>> [h["id"] for h in nb.exact] == [h.id for h in sp.search(id="i0", k=3, index="exact")], nb.approximate
    (True, None)
    >>> _ = index_recall(sp, k=5, sample=10)  # builds and keeps an HNSW index
    >>> nb = item_neighbours(sp, "i0", k=3)
    >>> nb.index.startswith("hnsw"), len(nb.approximate)
    (True, 3)
    """
    from repspace.workflows.search.indexes import list_indexes

    exact = space.search(id=item_id, k=k, index="exact")
    spec = next((r.spec for r in list_indexes(space) if r.spec != "exact" and _searchable(r.spec)), None)
    approx = None
    if spec is not None:
        res = space.search(id=item_id, k=k, index=spec)
        hits, plan = res.hits, res.plan
        if plan.method == "exact":  # a read-only store whose index is behind searched exactly: no approximate list
            spec = None
        else:
            approx = hits
    return ItemNeighbours(tuple(_hit(h) for h in exact), None if approx is None else tuple(_hit(h) for h in approx),
                          spec)


def _searchable(spec: str) -> bool:
    """Whether a listed derived file is an index a search can name (not neighbour statistics or a vector tier)."""
    from repspace.engines.search.specs import parse_spec

    try:
        parse_spec(spec)
    except InputError:
        return False
    return True


def _hit(h: Any) -> dict[str, Any]:
    return {"id": h.id, "score": float(h.score)}


# ---------------------------------------------------------------------------------------------- two spaces
#: Per-item Jaccard values of two spaces' maps, by (space uid, generation, other uid, generation, k, layout).
_JACCARD: LRUCache[np.ndarray] = LRUCache(8)


def pair_jaccard(a: Space, b: Space, k: int = 10, method: str = "pca") -> PairJaccard:
    """Each item of ``a``'s map: the Jaccard similarity of its ``k`` nearest neighbours in ``a`` and in ``b``
    (over the items the spaces share; None for an item ``b`` lacks): ``{"k", "mean", "values"}``.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair()  # b: the first 40 items of a, rotated
    >>> pj = pair_jaccard(a, b, k=5)
    >>> pj.k, round(pj.mean, 3), pj.values[:2], pj.values[40:42]  # i40.. are not in b
    (5, 1.0, (1.0, 1.0), (None, None))
    """
    from repspace.engines.compare.neighbours import neighbourhood_jaccard
    from repspace.workflows.compare import joined

    lay = space_layout(a, method)
    key = (a.uid, lay.generation, b.uid, b.info().generation, k, method)
    hit = _JACCARD.get(key)
    if hit is None:
        j = joined(a, b)
        if len(j.ids) <= k:
            raise InputError(f"spaces {a.name!r} and {b.name!r} share {len(j.ids)} item(s); comparing with k={k} "
                             f"needs more than {k}")
        if j.generation_x != lay.generation:
            raise ConflictError(f"space {a.name!r} changed while it was compared; ask again")
        per_item = neighbourhood_jaccard(j.x, j.y, k).per_item
        where = {item: i for i, item in enumerate(lay.ids)}
        hit = np.full(len(lay.ids), np.nan)
        hit[[where[i] for i in j.ids]] = per_item
        _JACCARD.put(key, hit)
    values = _finite_or_none(hit)
    return PairJaccard(k, float(np.nanmean(hit)) if np.isfinite(hit).any() else None, tuple(values))


def pair_item(a: Space, b: Space, item_id: str, k: int = 10) -> PairItem:
    """One item's exact ``k`` neighbours in ``a`` and in ``b`` (among the items both hold), and which were kept,
    lost (in ``a`` only) and gained (in ``b`` only), with their Jaccard similarity.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair()  # b: the first 40 items of a, rotated
    >>> p = pair_item(a, b, "i0", k=3)  # among the 40 items both hold
    >>> p.id, p.jaccard, len(p.kept), p.lost, p.gained, all(h["id"] in p.kept for h in p.b)
    ('i0', 1.0, 3, (), (), True)
    >>> pair_item(a, b, "i50")
    Traceback (most recent call last):
    ...
    repspace.core.errors.NotFoundError: item 'i50' is not in both 'a' and 'b'
    """
    shared = set(a.existing_ids([item_id])) & set(b.existing_ids([item_id]))
    if not shared:
        raise NotFoundError(f"item {excerpt(item_id)} is not in both {a.name!r} and {b.name!r}")
    # Neighbours among shared items: ask for more, keep those the other space also holds.
    in_a = _shared_neighbours(a, b, item_id, k)
    in_b = _shared_neighbours(b, a, item_id, k)
    ia, ib = [h["id"] for h in in_a], [h["id"] for h in in_b]
    kept = [i for i in ia if i in set(ib)]
    inter = len(kept)
    jac = inter / (len(ia) + len(ib) - inter) if ia or ib else 1.0
    return PairItem(item_id, k, jac, tuple(kept), tuple(i for i in ia if i not in set(ib)),
                    tuple(i for i in ib if i not in set(ia)), tuple(in_a), tuple(in_b))


def _shared_neighbours(x: Space, other: Space, item_id: str, k: int) -> list[dict[str, Any]]:
    ask = k + 1
    n = x.info().count
    while True:
        hits = [h for h in x.search(id=item_id, k=min(ask, n), index="exact") if h.id != item_id]
        there = other.existing_ids([h.id for h in hits])
        hits = [h for h in hits if h.id in there]
        if len(hits) >= k or ask >= n:
            return [_hit(h) for h in hits[:k]]
        ask *= 4


def find_alignment(store: Store, a: Space, b: Space) -> Space | None:
    """A stored space holding ``a`` mapped into ``b``'s coordinates (``repspace align --out``), if any.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair()  # b: the first 40 items of a, rotated
    >>> store = a.store
    >>> find_alignment(store, a, b) is None
    True
    >>> from repspace.workflows.align import align_spaces
    >>> _ = align_spaces(store, "a", "b", pairs=30, test=10, out="a-in-b")
    >>> find_alignment(store, a, b).name, find_alignment(store, b, a)
    ('a-in-b', None)
    """
    for info in store.spaces():
        src = (info.provenance or {}).get("derived_from") or {}
        to = src.get("aligned_to") or {}
        if src.get("uid") == a.uid and to.get("uid") == b.uid:
            return store.space(info.name)
    return None


def pair_search(store: Store, a: Space, b: Space, *, text: str | None = None, id: str | None = None,
                k: int = 10) -> PairSearch:
    """A query's top ``k`` in ``a``, in ``b``, and (when a stored alignment of ``a`` into ``b`` exists) the query
    embedded in ``a`` and mapped into ``b``, searched there.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair()  # b: the first 40 items of a, rotated
    >>> store = a.store
    >>> from repspace.workflows.align import align_spaces
    >>> _ = align_spaces(store, "a", "b", pairs=30, test=10, out="a-in-b")
    >>> ps = pair_search(store, a, b, id="i0", k=3)  # by id: no encoder is loaded
    >>> ps.map, len(ps.a), len(ps.b), ps.mapped[0]["id"]  # i0 mapped into b finds i0 itself
    ('a-in-b', 3, 3, 'i0')
    >>> pair_search(store, a, b)
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: give either a text or an id
    """
    if (text is None) == (id is None):
        raise InputError("give either a text or an id")
    hits_a = a.search(text, k=k, id=id)
    hits_b = b.search(text, k=k, id=id)
    mapped = None
    aligned = find_alignment(store, a, b)
    if aligned is not None:
        if id is not None:
            vec = aligned.vectors_of([id])[0]
        else:
            from repspace.workflows.stored_transforms import encoder_for_space

            vec = np.asarray(encoder_for_space(aligned).encode_queries([text]))[0]
        if b.metric is Metric.COSINE:
            vec = normalize_rows(np.asarray(vec, dtype=np.float32)[None, :])[0]
        mapped = tuple(h.to_dict() for h in b.search(np.asarray(vec, dtype=np.float64), k=k))
    return PairSearch(tuple(h.to_dict() for h in hits_a), tuple(h.to_dict() for h in hits_b), mapped,
                      None if aligned is None else aligned.name)
