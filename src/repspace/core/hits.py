"""Search results."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload


@dataclass(frozen=True)
class Hit:
    """One search result: ``{id, score, text, metadata}`` in ``--json``.

    ``score`` is a similarity (cosine, inner product; higher is nearer) or a
    Euclidean distance (l2; lower is nearer), as the space's metric says.

    Examples
    --------
    A space's search returns them in a :class:`SearchResult`; ``row`` is the item's row, not part of the JSON:

    >>> hit = Hit("a", 0.981, "apple", {"n": 1}, row=0)
    >>> hit
    Hit('a', score=0.9810, text='apple')
    >>> hit.to_dict()
    {'id': 'a', 'score': 0.981, 'text': 'apple', 'metadata': {'n': 1}}
    """

    id: str
    score: float
    text: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    row: int = -1

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "score": self.score, "text": self.text, "metadata": self.metadata}

    @classmethod
    def of(cls, id: str, score: float, text: str | None, metadata: dict[str, Any] | str, row: int) -> Hit:
        """A hit from values of the right types (a search's own records), made without the dataclass's
        ``__init__``: a third of the time, for the ten hits of every one-query call. Equal to ``Hit(...)``.

        ``metadata`` may be the stored JSON text of the metadata: it is decoded when first read
        (a loop of one query per call that reads ids and scores never pays for the decoding), and
        each hit decodes its own dict.

        Examples
        --------
        >>> Hit.of("a", 0.5, None, {}, 3) == Hit("a", 0.5, None, {}, row=3)
        True
        >>> Hit.of("a", 0.5, None, '{"n": 1}', 3).metadata
        {'n': 1}
        """
        hit = _new(cls)
        fields = hit.__dict__  # frozen: fields are set once, here, as the generated __init__ would
        fields["id"] = id
        fields["score"] = score
        fields["text"] = text
        fields["metadata" if type(metadata) is not str else "_metadata_json"] = metadata
        fields["row"] = row
        return hit

    def __getattr__(self, name: str) -> Any:
        """``metadata`` of a hit made from its JSON text (:meth:`of`), decoded on first read."""
        raw = self.__dict__.get("_metadata_json") if name == "metadata" else None
        if raw is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = self.__dict__["metadata"] = _loads(raw)
        return value

    def __repr__(self) -> str:
        text = (self.text or "").replace("\n", " ")
        text = text[:60] + "…" if len(text) > 60 else text
        return f"Hit({self.id!r}, score={self.score:.4f}, text={text!r})"


@dataclass(frozen=True)
class SearchPlan:
    """How a search was run, for ``--explain``: method, candidates, effort and why.

    A space's search (:mod:`repspace.workflows.search`) writes one beside its hits
    (:class:`SearchResult`): ``candidates`` are the items it could return (a filter's
    matches), ``total`` the live items, ``ef`` the HNSW effort (``None`` for an exact scan).

    Examples
    --------
    >>> plan = SearchPlan("hnsw", 120, 5000, ef=64, reason="5000 items, index current", index_action="loaded")
    >>> plan.method, plan.candidates, plan.total, plan.ef
    ('hnsw', 120, 5000, 64)
    >>> sorted(plan.to_dict())
    ['candidates', 'ef', 'index_action', 'method', 'reason', 'total']
    >>> SearchPlan("exact", 3, 3).ef is None
    True
    """

    method: str  # "exact" or "hnsw"
    candidates: int  # items the search could return (filter matches, or all live items)
    total: int  # live items in the space
    ef: int | None = None
    reason: str = ""
    index_action: str | None = None  # for hnsw: loaded, built, extended, rebuilt

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_new = object.__new__
_loads = json.loads


@dataclass(frozen=True, eq=False)
class SearchResult(Sequence[Hit]):
    """What a search returns: its ``hits``, best first, and the ``plan`` it ran by.

    A read-only sequence of its hits, so ``result[0].id`` and ``for hit in result`` read the hits
    (and it equals a list or tuple of the same hits, as the list a search returned before did).

    Examples
    --------
    >>> res = SearchResult((Hit("a", 0.9), Hit("b", 0.5)), SearchPlan("exact", 2, 2, reason="2 items"))
    >>> len(res), res[0].id, [h.id for h in res], res.plan.method
    (2, 'a', ['a', 'b'], 'exact')
    >>> res.to_dict()["hits"][1]
    {'id': 'b', 'score': 0.5, 'text': None, 'metadata': {}}
    """

    hits: tuple[Hit, ...]
    plan: SearchPlan

    def __post_init__(self) -> None:
        object.__setattr__(self, "hits", tuple(self.hits))

    def __len__(self) -> int:
        return len(self.hits)

    @overload
    def __getitem__(self, index: int) -> Hit: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Hit, ...]: ...

    def __getitem__(self, index: int | slice) -> Hit | tuple[Hit, ...]:
        return self.hits[index]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SearchResult):
            return self.hits == other.hits and self.plan == other.plan
        if isinstance(other, (list, tuple)):
            return list(self.hits) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # hits hold dicts

    def to_dict(self) -> dict[str, Any]:
        """``{"hits": [{id, score, text, metadata}, ...], "plan": {...}}``: the JSON of ``--json --explain`` and
        of the HTTP search."""
        return {"hits": [h.to_dict() for h in self.hits], "plan": self.plan.to_dict()}
