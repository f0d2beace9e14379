"""What :mod:`repspace.workflows.explore` returns: frozen dataclasses whose ``to_dict`` is the HTTP API's JSON.

Neighbours are ``{"id", "score"}`` and hits ``{"id", "score", "text", "metadata"}`` dicts, as the JSON has them.

Examples
--------
>>> PairJaccard(k=10, mean=0.5, values=(0.25, None, 0.75)).to_dict()
{'k': 10, 'mean': 0.5, 'values': [0.25, None, 0.75]}
>>> MapColumn("lang", "category", categories=("en",), codes=(0, -1)).to_dict()
{'name': 'lang', 'kind': 'category', 'categories': ['en'], 'codes': [0, -1]}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MapFields:
    """The fields a map can be coloured by (``{"name", "kind", "count"}`` each) and the overlays
    (``{"name", "label"}`` each), at a space generation.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> from repspace.workflows.explore import map_fields
    >>> f = map_fields(sp)
    >>> f.generation, [(x["name"], x["kind"], x["count"]) for x in f.fields], [o["name"] for o in f.overlays]
    (1, [('n', 'number', 60), ('ok', 'bool', 60)], ['@map_agreement', '@recall'])
    >>> sorted(f.to_dict())
    ['fields', 'generation', 'overlays']
    """

    generation: int
    fields: tuple[dict[str, Any], ...]
    overlays: tuple[dict[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"generation": self.generation, "fields": list(self.fields), "overlays": list(self.overlays)}


@dataclass(frozen=True)
class MapColumn:
    """One field or overlay for every point of a map: ``values`` (numbers and booleans, None where missing),
    or ``categories`` and per-point ``codes`` (-1: missing); an overlay (``@...``) also has its ``mean``.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> from repspace.workflows.explore import map_column
    >>> col = map_column(sp, "ok")
    >>> col.kind, col.values[:4], col.overlay
    ('bool', (True, False, False, True), False)
    >>> overlay = map_column(sp, "@map_agreement")
    >>> overlay.overlay, len(overlay.values), sorted(overlay.to_dict())
    (True, 60, ['kind', 'mean', 'name', 'values'])
    """

    name: str
    kind: str
    values: tuple[Any, ...] | None = None
    categories: tuple[str, ...] | None = None
    codes: tuple[int, ...] | None = None
    overlay: bool = False
    mean: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "category":
            out.update(categories=list(self.categories or ()), codes=list(self.codes or ()))
        else:
            out["values"] = list(self.values or ())
        if self.overlay:
            out["mean"] = self.mean
        return out


@dataclass(frozen=True)
class ItemNeighbours:
    """An item's exact neighbours and, when the space has an index, that ``index``'s (``approximate``).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(metadata=[{"n": j, "ok": j % 3 == 0} for j in range(60)])
    >>> from repspace.workflows.explore import item_neighbours
    >>> nb = item_neighbours(sp, "i0", k=3)
    >>> len(nb.exact), sorted(nb.exact[0]), nb.approximate, nb.index  # no index built yet: exact only
    (3, ['id', 'score'], None, None)
    >>> sorted(nb.to_dict())
    ['approximate', 'exact', 'index']
    """

    exact: tuple[dict[str, Any], ...]
    approximate: tuple[dict[str, Any], ...] | None
    index: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"exact": list(self.exact),
                "approximate": None if self.approximate is None else list(self.approximate), "index": self.index}


@dataclass(frozen=True)
class PairJaccard:
    """Each point of a map: the Jaccard similarity of its ``k`` neighbourhoods in two spaces (None: not in both).

    Examples
    --------
    Returned by :func:`~repspace.workflows.explore.pair_jaccard`; item 2 of this map is not in the other space:

    >>> PairJaccard(k=5, mean=0.75, values=(1.0, 0.5, None)).to_dict()
    {'k': 5, 'mean': 0.75, 'values': [1.0, 0.5, None]}
    """

    k: int
    mean: float | None
    values: tuple[float | None, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "mean": self.mean, "values": list(self.values)}


@dataclass(frozen=True)
class PairItem:
    """One item's neighbours in spaces ``a`` and ``b``: kept, lost (``a`` only), gained (``b`` only).

    Examples
    --------
    Returned by :func:`~repspace.workflows.explore.pair_item`: of ``i0``'s two neighbours, ``b`` keeps ``i3``:

    >>> p = PairItem("i0", 2, 1 / 3, kept=("i3",), lost=("i7",), gained=("i9",),
    ...              a=({"id": "i3", "score": 0.9}, {"id": "i7", "score": 0.8}),
    ...              b=({"id": "i3", "score": 0.9}, {"id": "i9", "score": 0.7}))
    >>> p.to_dict()["kept"], p.to_dict()["lost"], round(p.jaccard, 3)
    (['i3'], ['i7'], 0.333)
    """

    id: str
    k: int
    jaccard: float
    kept: tuple[str, ...]
    lost: tuple[str, ...]
    gained: tuple[str, ...]
    a: tuple[dict[str, Any], ...]
    b: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "k": self.k, "jaccard": self.jaccard, "kept": list(self.kept),
                "lost": list(self.lost), "gained": list(self.gained), "a": list(self.a), "b": list(self.b)}


@dataclass(frozen=True)
class PairSearch:
    """A query's hits in ``a``, in ``b``, and ``mapped`` into ``b`` by the stored alignment ``map`` (or None).

    Examples
    --------
    Returned by :func:`~repspace.workflows.explore.pair_search`; with no stored alignment nothing is mapped:

    >>> hit = {"id": "i0", "score": 1.0, "text": None, "metadata": {}}
    >>> d = PairSearch(a=(hit,), b=(hit,), mapped=None, map=None).to_dict()
    >>> d["a"][0]["id"], d["mapped"], d["map"]
    ('i0', None, None)
    """

    a: tuple[dict[str, Any], ...]
    b: tuple[dict[str, Any], ...]
    mapped: tuple[dict[str, Any], ...] | None
    map: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"a": list(self.a), "b": list(self.b), "mapped": None if self.mapped is None else list(self.mapped),
                "map": self.map}
