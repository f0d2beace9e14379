"""One search request: what to search with and how, validated once for the library, the CLI and the HTTP API.

:class:`SearchRequest` is a frozen pydantic model. The library builds it from
:func:`~repspace.workflows.search.search_space`'s keywords (:meth:`SearchRequest.of`), the
CLI from its options, and the HTTP service reads its JSON body into it (the OpenAPI schema of
``POST .../search`` is this model's, with the service's bounds on ``k``, ``ef`` and ``kappa``).
Every rule (types, bounds, choices, the rules between fields) is checked here, before a text
is embedded or an index loaded; the library reports a broken rule as one
:class:`~repspace.core.errors.InputError` line (:func:`input_error`).

The JSON schema of a field says what a client may send (an id is 1 to 1024 characters, not
only whitespace; a vector's numbers fit float32); what JSON cannot say (a numpy vector, a
parsed :class:`~repspace.core.filters.Filter`, an :class:`~repspace.engines.search.specs.IndexSpec`,
:class:`~repspace.engines.search.hnsw.HNSWParams`) the library may give and the schema leaves out.

Examples
--------
>>> r = SearchRequest.of("parse a date", k=5, where="year >= 2020")
>>> r.text, r.k, r.method
('parse a date', 5, 'auto')
>>> try:
...     SearchRequest.of("x", mmr=0.7, hybrid=True)
... except InputError as e:
...     print(e)
MMR diversifies a dense ranking; it does not combine with hybrid or bm25
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, InstanceOf, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.filters import Filter
from repspace.core.limits import MAX_LEXICAL_WEIGHT, MAX_MUVERA_CANDIDATES
from repspace.core.store.validate import MAX_ID_LENGTH
from repspace.engines.search.hnsw import HNSWParams
from repspace.engines.search.hubness import parse_method
from repspace.engines.search.ltr import RankerModel
from repspace.engines.search.specs import IndexSpec

#: Largest magnitude of a vector component (float32's largest finite value).
FLOAT32_MAX = float(np.finfo(np.float32).max)

#: An id: 1 to MAX_ID_LENGTH characters, not only whitespace, no control character (the library's rules).
ID_SCHEMA: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH, "pattern": r"\S",
                             "not": {"pattern": "[\\x00-\\x1f\\x7f-\\x9f]"},
                             "description": "An item id: any text of 1 to 1024 characters but control characters, "
                                            "not only whitespace."}
#: A text to embed: something that is not whitespace (an encoder drops whitespace: nothing would be left).
TEXT_SCHEMA: dict[str, Any] = {"type": "string", "minLength": 1, "pattern": r"\S"}
#: A metadata filter (``repspace search --where``); not a free string.
FILTER_SCHEMA: dict[str, Any] = {"type": "string", "format": "repspace-filter",
                                 "description": "A metadata filter, e.g. \"year >= 2020 and not draft\" (the grammar "
                                                "of repspace search --where)."}
#: An index spec (``repspace index build``).
INDEX_SCHEMA: dict[str, Any] = {"type": "string", "format": "repspace-index",
                                "description": "An index spec (exact, hnsw32, int8>rescore4, ...)."}
#: A vector: finite numbers float32 holds, as many as the space's dimension.
VECTOR_SCHEMA: dict[str, Any] = {
    "type": "array", "minItems": 1,
    "items": {"type": "number", "minimum": -FLOAT32_MAX, "maximum": FLOAT32_MAX},
    "description": "As many numbers as the space's dim. A JSON integer beyond 2**24 must be one float32 holds "
                   "exactly (write 16777217.0, not 16777217, to accept rounding).",
}
#: A sparse query: feature ids (as strings) or tokens mapped to finite weights.
SPARSE_SCHEMA: dict[str, Any] = {
    "type": "object", "minProperties": 1,
    "additionalProperties": {"type": "number", "minimum": -FLOAT32_MAX, "maximum": FLOAT32_MAX},
    "description": "Sparse spaces only: {feature: weight}, a feature named by its id (\"12\") or, in a space with "
                   "feature names, by its token.",
}
#: The hubness reductions a search can re-rank by.
HUBNESS = ("csls", "mutual-proximity", "local-scaling")


def integral(value: Any) -> Any:
    """A JSON number with no fraction (``10.0``, ``1e3``) or a numpy integer as an int; anything else as is."""
    if type(value) is float and value.is_integer():
        return int(value)
    return int(value) if isinstance(value, np.integer) else value


def field_check(check: Callable[[Any], Any]) -> BeforeValidator:
    """A field validated by one of the library's checks, with its message: the check's :class:`InputError`
    becomes a field error (a ``ValueError``: a 422 over HTTP, one line for the library), not a rule's."""
    def run(value: Any) -> Any:
        try:
            return check(value)
        except InputError as e:
            raise ValueError(str(e)) from None

    return BeforeValidator(run)


def scalar(name: str, kind: type[int] | type[float] = int, **bounds: Any) -> BeforeValidator:
    """A field checked by :func:`~repspace.core.checks.check_scalar` (``kind`` and ``bounds`` as there); an
    integer field also takes a JSON number with no fraction (:func:`integral`)."""
    return field_check(lambda v: check_scalar(integral(v) if kind is int else v, name, kind, **bounds))


def choice(name: str, choices: tuple[str, ...]) -> BeforeValidator:
    """A field checked by :func:`~repspace.core.checks.check_choice`."""
    return field_check(lambda v: check_choice(v, name, choices))


def _hubness(value: Any) -> Any:
    """A hubness reduction's canonical name (``mp``, ``ls`` and any case accepted, as the CLI does)."""
    return parse_method(value) if isinstance(value, str) else value


#: An integer field, as JSON Schema's ``integer``: ``10`` or ``10.0``, never ``"10"``, ``true`` or ``10.5``
#: (the models are strict: a value of another JSON type than the schema's is refused, not converted).
JsonInt = Annotated[int, BeforeValidator(integral)]
METHODS = ("auto", "exact", "hnsw")
FUSIONS = ("rrf", "sum")
Method = Literal["auto", "exact", "hnsw"]


def given(name: str) -> dict[str, Any]:
    """JSON Schema: ``name`` is present and not null (pydantic's fields default to null)."""
    return {"required": [name], "properties": {name: {"not": {"type": "null"}}}}


def only(names: tuple[str, ...], extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """JSON Schema: exactly one of ``names`` is given (and ``extra`` holds)."""
    out: dict[str, Any] = {"oneOf": [given(n) for n in names]}
    if extra:
        out["allOf"] = extra
    return out


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema: ``schema`` or null."""
    return {"anyOf": [schema, {"type": "null"}]}


def _true(name: str) -> dict[str, Any]:
    """JSON Schema: the flag ``name`` is given and true."""
    return {"required": [name], "properties": {name: {"const": True}}}


def _not_both(a: dict[str, Any], b: dict[str, Any], description: str) -> dict[str, Any]:
    return {"anyOf": [{"not": a}, {"not": b}], "description": description}


def _implies(a: dict[str, Any], b: dict[str, Any], description: str) -> dict[str, Any]:
    return {"anyOf": [{"not": a}, b], "description": description}


#: JSON Schema: the rules between fields (the model checks each, with the library's message).
_RULES = only(("text", "vector", "id", "sparse"), [
    _implies(_true("hybrid"), given("text"), "hybrid needs a text"),
    _not_both(_true("hybrid"), given("hubness"), "hubness re-ranks a dense ranking: not with hybrid"),
    _implies(_true("bm25"), given("text"), "bm25 needs a text"),
    _not_both(_true("hybrid"), _true("bm25"), "hybrid or bm25, not both"),
    _implies(given("fusion"), _true("hybrid"), "fusion applies to hybrid search only"),
    _implies(given("lexical_weight"), _true("hybrid"), "lexical_weight applies to hybrid search only"),
    _not_both(given("mmr"), {"anyOf": [_true("hybrid"), _true("bm25")]}, "MMR diversifies a dense ranking"),
    _implies(given("mmr_length"), given("mmr"), "mmr_length applies to MMR (give mmr, its lambda)"),
    _not_both(given("hubness"), {"anyOf": [_true("bm25"), given("mmr")]},
              "hubness re-ranks a dense ranking: not with bm25 or mmr"),
    _implies(given("index"), {"properties": {"method": {"const": "auto"}}}, "a method or an index, not both"),
    _implies(given("rerank"), given("text"), "a reranker scores a text query's candidates"),
    _not_both(given("rerank"), {"anyOf": [_true("bm25"), given("mmr"), given("hubness")]},
              "rerank reorders dense or hybrid candidates: not with bm25, mmr or hubness"),
])
#: The fields that only the library can give (Python objects): not in the JSON schema.
_PYTHON_ONLY = ("hnsw",)


def _schema(schema: dict[str, Any]) -> None:
    for name in _PYTHON_ONLY:
        schema.get("properties", {}).pop(name, None)
    schema.update(_RULES)


class SearchRequest(BaseModel):
    """One query: a ``text``, a ``vector`` or a stored ``id`` (exactly one), and how to search.

    Fields
    ------
    text, vector, id, sparse : the query (a vector of the space's dim; an id's own item is left out; a
        ``{feature: weight}`` map for a sparse space).
    k : how many results (more than the items: every item).
    where : a metadata filter (the grammar of ``repspace search --where``).
    method, index, ef, hnsw : how to search (:func:`~repspace.workflows.search.knn`): ``method``
        (auto, exact, hnsw) or an ``index`` spec, not both; ``ef`` the HNSW beam; ``hnsw`` the
        construction parameters (library only).
    hybrid, bm25, fusion, lexical_weight : BM25 fused with the dense ranking (``rrf`` or ``sum``,
        the BM25 list weighted by ``lexical_weight``), or BM25 alone; text queries only.
    mmr : diversify with maximal marginal relevance, λ in [0, 1].
    mmr_length : with ``mmr``, diversify the hits' lengths instead (DL-MMR): ``text`` (words of the
        stored text) or a numeric metadata field.
    hubness, kappa : re-rank by a hubness-reduced similarity over ``kappa`` neighbours.
    rerank : reorder the candidates of the dense search (of the hybrid one with ``hybrid``) with a
        learned reranker: a model file written by ``repspace rerank train`` or a loaded
        :class:`~repspace.engines.search.ltr.RankerModel` (library and CLI); over HTTP the name of
        a reranker the service was started with (``repspace serve --reranker NAME=PATH``).
    candidates : multi-vector spaces: the MUVERA shortlist rescored by exact MaxSim.

    Examples
    --------
    >>> SearchRequest.model_validate_json('{"id": "a", "k": 3}').k
    3
    >>> SearchRequest.of(None, id="a", hubness="MP").hubness
    'mutual-proximity'
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, arbitrary_types_allowed=True,
                              json_schema_extra=_schema)

    text: str | None = Field(None, description="A query text, embedded with the space's own encoder.",
                             json_schema_extra=nullable(TEXT_SCHEMA))
    vector: list[float] | SkipJsonSchema[InstanceOf[np.ndarray]] | None = Field(
        None, json_schema_extra=nullable(VECTOR_SCHEMA))
    # No upper bound here: an id longer than any stored one is simply not in the space (one NotFoundError
    # line); the HTTP body bounds it (interfaces/server/schemas.py), as it bounds k.
    id: str | None = Field(None, min_length=1,
                           description="Search with this stored item's vector (the item is left out).",
                           json_schema_extra=nullable({k: v for k, v in ID_SCHEMA.items() if k != "maxLength"}))
    sparse: dict[str, Annotated[float, Field(allow_inf_nan=False)]] | None = Field(
        None, json_schema_extra=nullable(SPARSE_SCHEMA))
    k: Annotated[int, scalar("k", low=1)] = Field(10, ge=1)
    where: str | SkipJsonSchema[InstanceOf[Filter]] | None = Field(None, json_schema_extra=nullable(FILTER_SCHEMA))
    index: str | SkipJsonSchema[InstanceOf[IndexSpec]] | None = Field(None,
                                                                      json_schema_extra=nullable(INDEX_SCHEMA))
    ef: Annotated[int, Field(ge=1), scalar("ef", low=1)] | None = Field(None, description="HNSW search beam.")
    hubness: Annotated[Literal[HUBNESS], field_check(_hubness)] | None = None  # type: ignore[valid-type]
    hybrid: bool = Field(False, description="Fuse the dense ranking with BM25 over the texts (needs a text).")
    method: Annotated[Method, choice("method", METHODS)] = Field(
        "auto", description="auto (exact up to 50,000 items or for selective filters, HNSW beyond), exact or hnsw; "
                            "not with index.")
    hnsw: InstanceOf[HNSWParams] | None = None
    bm25: bool = Field(False, description="BM25 over the stored texts alone (needs a text).")
    fusion: Annotated[Literal["rrf", "sum"], choice("fusion", FUSIONS)] | None = Field(
        None, description="Hybrid only: reciprocal-rank fusion (the default) or a weighted sum of scores.")
    lexical_weight: Annotated[float, Field(ge=0, le=MAX_LEXICAL_WEIGHT, allow_inf_nan=False),
                              scalar("the lexical weight", float, low=0, high=MAX_LEXICAL_WEIGHT)] | None = Field(
        None, description="Hybrid only: weight of the BM25 list (default 1).")
    mmr: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False),
                   scalar("the MMR lambda", float, low=0, high=1)] | None = Field(
        None, description="Diversify with maximal marginal relevance, lambda in [0, 1].")
    mmr_length: str | None = Field(
        None, min_length=1, max_length=MAX_ID_LENGTH,
        description="With mmr: diversify lengths instead of vectors (DL-MMR); 'text' (words of the stored text) "
                    "or a numeric metadata field.")
    kappa: Annotated[int, scalar("kappa", low=1)] = Field(
        10, ge=1, description="Hubness reduction: neighbourhood size of the statistics.")
    rerank: Annotated[str, Field(min_length=1)] | SkipJsonSchema[InstanceOf[RankerModel]] | None = Field(
        None, description="Reorder the dense (or, with hybrid, the hybrid) candidates with a learned "
                                        "reranker: a model file written by 'repspace rerank train'.")
    candidates: Annotated[int, Field(ge=1, le=MAX_MUVERA_CANDIDATES),
                          scalar("candidates", low=1, high=MAX_MUVERA_CANDIDATES)] | None = Field(
        None, description="Multi-vector spaces: documents MUVERA's first stage shortlists for exact MaxSim "
                          "rescoring (default 100, at least k); method exact scores every document instead.")

    @model_validator(mode="after")
    def _rules(self) -> SearchRequest:
        """The rules between fields, each with the library's message; checked before any work."""
        if sum(x is not None for x in (self.text, self.vector, self.id, self.sparse)) != 1:
            raise ValueError("give exactly one of text, vector, id, sparse (a query text, a query vector, a stored "
                             "id or a sparse query)")
        if self.sparse is not None and not self.sparse:
            raise InputError("the sparse query is empty: give at least one {feature: weight}")
        check_method(self.method, self.index, self.hnsw)
        if not self.hybrid and (self.fusion is not None or self.lexical_weight is not None):
            raise InputError("fusion and lexical_weight apply to hybrid search only (hybrid=True, --hybrid)")
        if (self.hybrid or self.bm25) and self.text is None:
            raise InputError("hybrid and BM25 search need a query text")
        if self.hybrid and self.bm25:
            raise InputError("choose hybrid or bm25, not both")
        if self.mmr is not None and (self.hybrid or self.bm25):
            raise InputError("MMR diversifies a dense ranking; it does not combine with hybrid or bm25")
        if self.mmr_length is not None and self.mmr is None:
            raise InputError("mmr_length (--mmr-length) applies to MMR: give mmr (--mmr), its lambda")
        if self.hubness is not None and (self.hybrid or self.bm25 or self.mmr is not None):
            raise InputError("hubness reduction re-ranks a dense ranking; it does not combine with hybrid, bm25 "
                             "or mmr")
        if self.rerank is not None and (self.text is None or self.bm25 or self.mmr is not None
                                        or self.hubness is not None):
            raise InputError("a reranker reorders the dense or hybrid candidates of a query text (its features are "
                             "the text's BM25 and term overlap): give a text, and not bm25, mmr or hubness")
        if self.text is not None and not self.text.strip():
            raise InputError("the query text is empty")
        return self

    @classmethod
    def of(cls, query: Any = None, k: Any = 10, **options: Any) -> SearchRequest:
        """The request of :func:`~repspace.workflows.search.search_space`'s arguments: ``query`` a text or a
        vector (any array-like; its dtype is kept), the other keywords the fields; a broken rule is an
        :class:`InputError`, an unknown keyword a :class:`TypeError`.

        Examples
        --------
        >>> SearchRequest.of([1, 0], k=2).vector.tolist()
        [1, 0]
        >>> try:
        ...     SearchRequest.of("x", k=0)
        ... except InputError as e:
        ...     print(e)
        k must be a positive integer, not 0
        """
        if isinstance(query, np.ndarray):
            template = vector_template(k, options)
            if template is not None:
                return template.model_copy(update={"vector": query, "id": None})
        fields: dict[str, Any] = {"k": k, **options}
        if isinstance(query, str):
            fields["text"] = query
        elif isinstance(query, Mapping):  # {feature: weight}: a sparse query
            fields["sparse"] = {str(key): float(value) if isinstance(value, (np.floating, np.integer)) else value
                                for key, value in query.items()}
        elif query is not None:
            fields["vector"] = np.asarray(query)
        try:
            return cls.model_validate(fields)
        except ValidationError as e:
            raise input_error(e) from None


#: Types of the option values a vector query's request is validated once for (:func:`_validated`).
_PLAIN_TYPES = frozenset({type(None), int, str, bool, float})
#: The fields that are the query itself (given beside a vector: the model names the error).
_QUERY_FIELDS = frozenset({"text", "vector", "id"})


def vector_template(k: Any, options: dict[str, Any]) -> SearchRequest | None:
    """The request of a vector query with these options, validated once per set of values, with a stored
    ``id`` standing for the vector (no rule tells a vector from an id); None when an option is not a
    plain value (an int, a string, None: hashable) or is the query itself. A broken rule raises
    :class:`InputError` as :meth:`SearchRequest.of` does.

    What the loop of one query per call validates: the model's validation costs ~17 us of a
    ~200 us exact search on 2,000 items, a lookup here well under 1 us.

    Examples
    --------
    >>> t = vector_template(5, {"index": "hnsw32"})
    >>> t.k, t.index, vector_template(5, {"where": np.int64(3)}) is None
    (5, 'hnsw32', True)
    """
    if (type(k) is not int or not _QUERY_FIELDS.isdisjoint(options)
            or not all(type(v) in _PLAIN_TYPES for v in options.values())):
        return None
    try:  # each value with its type: True and 1 are equal keys, not equal options
        return _validated(k, tuple((name, type(v), v) for name, v in options.items()))
    except TypeError:  # an unknown keyword (raised again by the caller's own path)
        return None


@functools.lru_cache(maxsize=256)
def _validated(k: int, options: tuple[tuple[str, type, Any], ...]) -> SearchRequest:
    """A request with these options validated, an ``id`` standing for the vector (a broken rule raises
    :class:`InputError` and is not remembered)."""
    try:
        return SearchRequest.model_validate({"k": k, **{name: v for name, _, v in options}, "id": "a"})
    except ValidationError as e:
        raise input_error(e) from None


def check_method(method: str, index: str | IndexSpec | None, hnsw: HNSWParams | None = None) -> None:
    """One way to choose how to search: a ``method`` (auto, exact, hnsw) or an ``index``, not both.

    HNSW construction parameters go with ``method`` ``auto`` or ``hnsw`` only: an
    index spec carries its own (``hnsw16``), and exact search has none.

    Examples
    --------
    >>> try:
    ...     check_method("exact", "hnsw32")
    ... except InputError as e:
    ...     print(e)
    choose exact search or index 'hnsw32', not both
    """
    check_choice(method, "method", METHODS)
    if index is not None and method != "auto":
        raise InputError(f"choose {method} search or index {str(index)!r}, not both")
    if hnsw is not None and index is not None:
        raise InputError(f"index {str(index)!r} carries its own parameters: give hnsw= or index=, not both")
    if hnsw is not None and method == "exact":
        raise InputError("hnsw= parameters do not apply to exact search")


def input_error(error: ValidationError) -> Exception:
    """The first problem of a :class:`SearchRequest` as the library reports it: one :class:`InputError` line
    (a rule's own error as raised; a field's as its check wrote it), or a :class:`TypeError` for an unknown
    keyword (as a Python function's unknown keyword is).

    Examples
    --------
    >>> try:
    ...     SearchRequest.model_validate({"text": "x", "fusion": "max", "hybrid": True})
    ... except ValidationError as e:
    ...     print(input_error(e))
    fusion must be one of rrf, sum, not 'max'
    """
    first = error.errors(include_url=False)[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, InputError):
        return cause
    field = str(first["loc"][0]) if first.get("loc") else ""
    if first["type"] == "extra_forbidden":
        return TypeError(f"search got an unexpected keyword argument {field!r}")
    if isinstance(cause, ValueError):
        return InputError(str(cause))
    return InputError(f"{field}: {first['msg']}" if field else first["msg"])
