"""The JSON bodies of the HTTP API (pydantic models: FastAPI validates requests and writes the OpenAPI schema).

Bounds live here, so that a request outside them is a 422 with one line before any work
is done: ``k`` at most :data:`MAX_K`, a batch at most :data:`MAX_BATCH` items.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Largest k a search may ask for (the CLI has no such bound; a service must).
MAX_K = 1000
#: Largest number of items one write may carry.
MAX_BATCH = 10_000


class SearchRequest(BaseModel):
    """One query: a ``text``, a ``vector`` or a stored ``id`` (exactly one), and how to search."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(None, description="A query text, embedded with the space's own encoder.")
    vector: list[float] | None = Field(None, description="A query vector of the space's dimension.")
    id: str | None = Field(None, description="Search with this stored item's vector (the item is left out).")
    k: int = Field(10, ge=1, le=MAX_K)
    where: str | None = Field(None, description="A metadata filter, e.g. \"year >= 2020 and not draft\".")
    index: str | None = Field(None, description="An index spec (hnsw32, int8>rescore4, ...).")
    ef: int | None = Field(None, ge=1, le=4096, description="HNSW search beam.")
    hubness: Literal["csls", "mutual-proximity", "local-scaling"] | None = None
    hybrid: bool = Field(False, description="Fuse the dense ranking with BM25 over the texts (text queries).")

    @model_validator(mode="after")
    def _one_query(self) -> SearchRequest:
        given = sum(x is not None for x in (self.text, self.vector, self.id))
        if given != 1:
            raise ValueError("give exactly one of text, vector, id")
        return self


class Hit(BaseModel):
    id: str
    score: float
    text: str | None
    metadata: dict[str, Any]


class SearchResponse(BaseModel):
    hits: list[Hit]
    plan: dict[str, Any]


class SpaceSummary(BaseModel):
    name: str
    count: int
    dim: int
    metric: str
    dtype: str
    generation: int
    provenance: dict[str, Any]


class Neighbour(BaseModel):
    id: str
    score: float


class ItemResponse(BaseModel):
    id: str
    text: str | None
    metadata: dict[str, Any]
    neighbours: list[Neighbour]
    exact: list[Neighbour]
    approximate: list[Neighbour] | None = Field(description="The approximate index's neighbours (null: none).")
    index: str | None = Field(description="The index ``approximate`` came from.")


class PairSearchRequest(BaseModel):
    """A query in two spaces: a ``text`` or a stored ``id`` (exactly one)."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = Field(None, max_length=10_000)
    id: str | None = None
    k: int = Field(10, ge=1, le=100)

    @model_validator(mode="after")
    def _one_query(self) -> PairSearchRequest:
        if (self.text is None) == (self.id is None):
            raise ValueError("give exactly one of text, id")
        return self


class NewItem(BaseModel):
    """An item to write: its vector, or its text (embedded with the space's encoder)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str | None = None
    vector: list[float] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class WriteRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[NewItem] = Field(min_length=1, max_length=MAX_BATCH)


class WriteResponse(BaseModel):
    """What a write did (``repspace ingest``'s report): items added, replaced (new vector), updated (new text or
    metadata), unchanged; texts embedded and stored vectors reused."""

    added: int
    replaced: int
    updated: int
    unchanged: int
    encoded: int
    reused: int


class Error(BaseModel):
    """Every error: one line."""

    error: str
