"""The JSON bodies and parameters of the HTTP API (pydantic models: FastAPI validates requests and writes the
OpenAPI schema from them).

The schema says what the code checks, so that a client (or a fuzzer) that follows it is
never refused: bounds (``k`` at most :data:`MAX_K`, a batch at most :data:`MAX_BATCH`
items), the choices (layout methods, map formats, hubness corrections, overlays, comparison
measures), what an id is (:data:`ID_SCHEMA`), and the rules between fields ("exactly one
of text, vector, id", "hybrid needs a text", "every item a vector, or none") as
``oneOf``/``anyOf``. What no JSON Schema can say is named by a ``format`` and described:
a filter (``repspace-filter``: the grammar of ``repspace search --where``), an index spec
(``repspace-index``) and a vector's length (the space's ``dim``). A request outside the
schema is a 422 with one line before any work is done.

Examples
--------
>>> SearchRequest.model_validate_json('{"id": "a", "k": 3}').k
3
>>> import re
>>> bool(re.search(ID_SCHEMA["pattern"], " x ")), bool(re.search(ID_SCHEMA["pattern"], "   "))
(True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from repspace.core.errors import InputError
from repspace.core.store.validate import MAX_ID_LENGTH
from repspace.engines.compare import MEASURES
from repspace.workflows.explore import OVERLAYS
from repspace.workflows.layout import METHODS
from repspace.core.limits import MAX_BATCH, MAX_EF, MAX_FIELD_NAME, MAX_K, MAX_PAIR_K, MAX_PAIR_TEXT, MAX_SET_EXAMPLES
from repspace.workflows.search import request as search_request
from repspace.workflows.search import set_request
from repspace.workflows.search.rerank_stage import MAX_RERANKER_NAME, RERANKER_NAME_PATTERN
from repspace.workflows.search.request import (  # noqa: F401 - the schemas of the fields, re-exported
    FILTER_SCHEMA,
    FLOAT32_MAX,
    ID_SCHEMA,
    INDEX_SCHEMA,
    TEXT_SCHEMA,
    VECTOR_SCHEMA,
    JsonInt,
    integral,
    given,
    nullable,
    only,
)

#: Largest neighbourhood of a hubness reduction's statistics.
MAX_KAPPA = 100
#: What ``GET .../map`` answers in.
MAP_FORMATS = ("json", "arrow", "f32", "ids")
#: Integers of this magnitude and below are exact in float32; beyond, a JSON integer must be one float32 holds.
EXACT_INTEGERS = 2**24

#: An id as a path segment: not ``.`` or ``..``, which a client resolves (``GET .../items?id=`` takes those).
ID_SEGMENT_SCHEMA: dict[str, Any] = {**ID_SCHEMA, "not": {"anyOf": [ID_SCHEMA["not"], {"enum": [".", ".."]}]},
                                     "description": "An item id, percent-encoded; '/' in it is part of the id. The "
                                                    "ids '.' and '..' cannot be a path segment (clients resolve "
                                                    "them): give them to GET .../items?id= instead."}
#: A space name (:func:`repspace.core.space.check_space_name`).
SPACE_SCHEMA: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 128,
                                "pattern": "^[A-Za-z0-9][A-Za-z0-9._@:+-]*$"}
#: A field name of ``GET .../column``: a metadata field (not starting with @, no NUL) or one of the overlays.
FIELD_NAME_PATTERN = "^(?:[^@\\x00][^\\x00]*|" + "|".join(OVERLAYS) + ")$"
#: ``measures`` of ``GET /compare/{a}/{b}``: comma-separated measure keys.
MEASURES_SCHEMA: dict[str, Any] = {"anyOf": [{"type": "string", "pattern": "^(?:{m})(?:,(?:{m}))*$".format(
    m="|".join(MEASURES))}, {"type": "null"}], "description": "Comma-separated measure keys (default: all)."}

LayoutMethod = Literal[METHODS]  # type: ignore[valid-type]
MapFormat = Literal[MAP_FORMATS]  # type: ignore[valid-type]


def lossy_integer(vector: list[Any]) -> int | None:
    """The position of the first JSON integer of ``vector`` that float32 cannot hold exactly, or None.

    The library refuses such integer arrays (:func:`repspace.core.store.validate.lossy_in_float32`);
    a JSON body read by :func:`json.loads` keeps its integers as Python ints, so the same rule holds
    over HTTP. Floats are rounded as floats always are.

    Examples
    --------
    >>> lossy_integer([1, 0.5, 2**24]), lossy_integer([0.5, 2**24 + 1]), lossy_integer([16777217.0, 2**40])
    (None, 1, None)
    """
    for i, v in enumerate(vector):
        if type(v) is int and not -EXACT_INTEGERS <= v <= EXACT_INTEGERS and (
                abs(v) > FLOAT32_MAX or int(np.float32(v)) != v):
            return i
    return None


def vector_values(vector: list[float | int], what: str = "vector",
                  original: Callable[[], list[Any]] | None = None) -> np.ndarray:
    """``vector`` as float64, refusing (400, one line) a JSON integer float32 cannot hold (:func:`lossy_integer`).

    ``original``: where ``vector`` came from a model that read every number as a float (the search's, for
    speed), a function giving the numbers as the JSON wrote them; it is called only when some magnitude is
    beyond 2**24, so the common case costs two reductions.

    Examples
    --------
    >>> vector_values([1, 2.5]).tolist()
    [1.0, 2.5]
    >>> try:
    ...     vector_values([0.5, 16777217])
    ... except InputError as e:
    ...     print(str(e)[:60])
    vector component 1 is the integer 16777217, which float32 ca
    """
    try:
        arr = np.asarray(vector, dtype=np.float64)
    except OverflowError:  # an integer beyond float64's range
        arr = np.full(len(vector), np.inf)
    if not arr.size or (arr.max() <= EXACT_INTEGERS and arr.min() >= -EXACT_INTEGERS):
        return arr
    given = original() if original is not None else vector
    at = lossy_integer(given)
    if at is not None:
        v = given[at]
        if abs(v) > FLOAT32_MAX:
            raise InputError(f"{what} component {at} is an integer beyond float32's range")
        raise InputError(f"{what} component {at} is the integer {v}, which float32 cannot hold exactly "
                         f"(beyond 2**24): write it as a float ({float(v)!r}) to accept rounding")
    return arr


class SearchRequest(search_request.SearchRequest):
    """The search body: :class:`repspace.workflows.search.request.SearchRequest` with the service's bounds
    (``k`` at most :data:`MAX_K`, ``ef`` at most the largest beam, ``kappa`` at most :data:`MAX_KAPPA`, an
    ``id`` at most as long as a stored one may be); ``rerank`` names a reranker the service loaded at start,
    never a file (a client does not choose what the server reads)."""

    id: str | None = Field(None, min_length=1, max_length=MAX_ID_LENGTH,
                           description="Search with this stored item's vector (the item is left out).",
                           json_schema_extra=nullable(ID_SCHEMA))
    k: JsonInt = Field(10, ge=1, le=MAX_K)
    ef: Annotated[int, Field(ge=1, le=MAX_EF), BeforeValidator(integral)] | None = Field(
        None, description="HNSW search beam.")
    kappa: JsonInt = Field(10, ge=1, le=MAX_KAPPA,
                           description="Hubness reduction: neighbourhood size of the statistics.")
    rerank: str | None = Field(
        None, min_length=1, max_length=MAX_RERANKER_NAME, pattern=RERANKER_NAME_PATTERN,
        description="Reorder the candidates (dense, or hybrid with hybrid) with the reranker of this name, one the "
                    "service was started with (repspace serve --reranker NAME=PATH); an unknown name is a 404.")


#: An example id of a set query over HTTP: at most as long as a stored id may be.
ExampleId = Annotated[str, Field(min_length=1, max_length=MAX_ID_LENGTH)]


def _examples(side: str) -> Any:
    return Field(default_factory=list, max_length=MAX_SET_EXAMPLES,
                 description=f"Stored ids the hits should {side} (each once; none in both lists).",
                 json_schema_extra={"uniqueItems": True, "items": ID_SCHEMA})


class SetQuery(set_request.SetQuery):
    """The set-query body: :class:`repspace.workflows.search.set_request.SetQuery` with the service's bounds
    (``k`` at most :data:`MAX_K`, ``ef`` at most the largest beam, at most :data:`MAX_SET_EXAMPLES` examples per
    list, each id at most as long as a stored one may be)."""

    all_of: list[ExampleId] = _examples("be near")
    none_of: list[ExampleId] = _examples("be far from")
    k: JsonInt = Field(10, ge=1, le=MAX_K)
    ef: Annotated[int, Field(ge=1, le=MAX_EF), BeforeValidator(integral)] | None = Field(
        None, description="HNSW search beam.")


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


class SparseStatisticsOut(BaseModel):
    """``sparse.*`` of ``repspace info``: what a sparse space's live rows hold and cost to search."""

    rows: int
    n_features: int
    nnz: int
    mean_nnz: float
    max_nnz: int
    empty_rows: int
    features_used: int
    expected_flops: float = Field(description="Σ_j p_j² (Paria et al. 2020): expected multiply-adds per "
                                              "(query, row) pair.")
    negative_weights: bool
    feature_names: bool


class SpaceDescription(SpaceSummary):
    """One space as ``repspace info --json`` describes it: the summary, its layout and, for a sparse space,
    the statistics of its rows."""

    layout: str = Field(description="dense or sparse")
    sparse: SparseStatisticsOut | None = Field(None, description="Only for a sparse space (null otherwise).")


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

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=only(("text", "id")))

    text: str | None = Field(None, max_length=MAX_PAIR_TEXT,
                             json_schema_extra=nullable({**TEXT_SCHEMA, "maxLength": MAX_PAIR_TEXT}))
    id: str | None = Field(None, min_length=1, max_length=MAX_ID_LENGTH,
                           json_schema_extra=nullable(ID_SCHEMA))
    k: JsonInt = Field(10, ge=1, le=MAX_PAIR_K)

    @model_validator(mode="after")
    def _one_query(self) -> PairSearchRequest:
        if (self.text is None) == (self.id is None):
            raise ValueError("give exactly one of text, id")
        return self


class NewItem(BaseModel):
    """An item to write: its vector, or its text (embedded with the space's encoder)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1, max_length=MAX_ID_LENGTH, json_schema_extra=ID_SCHEMA)
    text: str | None = None
    vector: list[float | int] | None = Field(None, json_schema_extra=nullable(VECTOR_SCHEMA))
    metadata: dict[str, Any] = Field(default_factory=dict)


class WriteRequest(BaseModel):
    """Items to add or replace, all or none: every item has a vector, or none has (their texts are embedded);
    each id at most once in a batch."""

    model_config = ConfigDict(extra="forbid", strict=True)

    items: list[NewItem] = Field(min_length=1, max_length=MAX_BATCH, description="Each id at most once.",
                                 json_schema_extra={"oneOf": [
        {"items": given("vector")},
        {"items": {"allOf": [{"not": given("vector")}, given("text"),
                             {"properties": {"text": TEXT_SCHEMA}}]}}]})


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

