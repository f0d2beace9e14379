"""Search results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Hit:
    """One search result: ``{id, score, text, metadata}`` in ``--json``.

    ``score`` is a similarity (cosine, inner product; higher is nearer) or a
    Euclidean distance (l2; lower is nearer), as the space's metric says.
    """

    id: str
    score: float
    text: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    row: int = -1

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "score": self.score, "text": self.text, "metadata": self.metadata}

    def __repr__(self) -> str:
        text = (self.text or "").replace("\n", " ")
        text = text[:60] + "…" if len(text) > 60 else text
        return f"Hit({self.id!r}, score={self.score:.4f}, text={text!r})"


@dataclass(frozen=True)
class SearchPlan:
    """How a search was run, for ``--explain``: method, candidates, effort and why."""

    method: str  # "exact" or "hnsw"
    candidates: int  # items the search could return (filter matches, or all live items)
    total: int  # live items in the space
    ef: int | None = None
    reason: str = ""
    index_action: str | None = None  # for hnsw: loaded, built, extended, rebuilt

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)
