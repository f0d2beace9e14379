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
    (``{"name", "label"}`` each), at a space generation."""

    generation: int
    fields: tuple[dict[str, Any], ...]
    overlays: tuple[dict[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"generation": self.generation, "fields": list(self.fields), "overlays": list(self.overlays)}


@dataclass(frozen=True)
class MapColumn:
    """One field or overlay for every point of a map: ``values`` (numbers and booleans, None where missing),
    or ``categories`` and per-point ``codes`` (-1: missing); an overlay (``@...``) also has its ``mean``."""

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
    """An item's exact neighbours and, when the space has an index, that ``index``'s (``approximate``)."""

    exact: tuple[dict[str, Any], ...]
    approximate: tuple[dict[str, Any], ...] | None
    index: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"exact": list(self.exact),
                "approximate": None if self.approximate is None else list(self.approximate), "index": self.index}


@dataclass(frozen=True)
class PairJaccard:
    """Each point of a map: the Jaccard similarity of its ``k`` neighbourhoods in two spaces (None: not in both)."""

    k: int
    mean: float | None
    values: tuple[float | None, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "mean": self.mean, "values": list(self.values)}


@dataclass(frozen=True)
class PairItem:
    """One item's neighbours in spaces ``a`` and ``b``: kept, lost (``a`` only), gained (``b`` only)."""

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
    """A query's hits in ``a``, in ``b``, and ``mapped`` into ``b`` by the stored alignment ``map`` (or None)."""

    a: tuple[dict[str, Any], ...]
    b: tuple[dict[str, Any], ...]
    mapped: tuple[dict[str, Any], ...] | None
    map: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"a": list(self.a), "b": list(self.b), "mapped": None if self.mapped is None else list(self.mapped),
                "map": self.map}
