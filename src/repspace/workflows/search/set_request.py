"""One set query (SetCSE): the stored examples items must be near and those they must not, validated once for the
library, the CLI (``repspace search SPACE --all-of ID --none-of ID``) and the HTTP API
(``POST /api/v1/spaces/{space}/set-search``).

:class:`SetQuery` is a frozen pydantic model, as :class:`~repspace.workflows.search.request.SearchRequest` is:
the library builds it from :func:`~repspace.workflows.search.set_search.set_search`'s keywords
(:meth:`SetQuery.of`), the CLI from its options, the HTTP service reads its JSON body into it (with the
service's bounds). Every rule is checked here, before the store is read: at least one example, no id twice in
a list, no id in both lists, a method or an index (not both).

Examples
--------
>>> q = SetQuery.of(all_of=["king", "woman"], none_of=["man"], k=5)
>>> q.to_dict()["all_of"], q.k
(['king', 'woman'], 5)
>>> try:
...     SetQuery.of(all_of=["king"], none_of=["king"])
... except InputError as e:
...     print(e)
id 'king' is in both all_of and none_of: an example is either wanted or not
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, InstanceOf, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from repspace.core.errors import InputError
from repspace.core.filters import Filter
from repspace.core.printable import excerpt
from repspace.engines.search.specs import IndexSpec
from repspace.workflows.search.request import (
    FILTER_SCHEMA,
    ID_SCHEMA,
    INDEX_SCHEMA,
    METHODS,
    Method,
    check_method,
    choice,
    input_error,
    nullable,
    scalar,
)

#: An example id of the library's request (no upper length: a longer id is simply not in the space).
EXAMPLE_SCHEMA: dict[str, Any] = {k: v for k, v in ID_SCHEMA.items() if k != "maxLength"}


def _at_least_one(name: str) -> dict[str, Any]:
    return {"required": [name], "properties": {name: {"type": "array", "minItems": 1}}}


#: JSON Schema: the rules between fields that JSON can state (an id in both lists it cannot: the model says so).
_RULES: dict[str, Any] = {
    "anyOf": [_at_least_one("all_of"), _at_least_one("none_of")],
    "allOf": [{"anyOf": [{"not": {"required": ["index"], "properties": {"index": {"not": {"type": "null"}}}}},
                         {"properties": {"method": {"const": "auto"}}}],
               "description": "a method or an index, not both"}],
}


def _schema(schema: dict[str, Any]) -> None:
    schema.update(_RULES)


def _ids(items: dict[str, Any] | None = None) -> Any:
    """A list of example ids, each at most once (JSON Schema's ``uniqueItems``)."""
    return Field(default_factory=list, json_schema_extra={"uniqueItems": True, "items": items or EXAMPLE_SCHEMA})


class SetQuery(BaseModel):
    """A set query: rank a space's items by summed cosine to ``all_of`` minus summed cosine to ``none_of``.

    Fields
    ------
    all_of, none_of : stored ids: the examples items should be near, and those they should not (either may be
        empty, not both; each id once; none in both lists). The examples are left out of the hits.
    k : how many results.
    where : a metadata filter (the grammar of ``repspace search --where``).
    method, index, ef : how to search (:func:`~repspace.workflows.search.knn`): a cosine space searches the set
        query as one vector with any index; other metrics score every item exactly (``auto`` or ``exact``).

    Examples
    --------
    >>> SetQuery.model_validate_json('{"all_of": ["a", "b"], "k": 3}').all_of
    ['a', 'b']
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, arbitrary_types_allowed=True,
                              json_schema_extra=_schema)

    all_of: list[Annotated[str, Field(min_length=1)]] = _ids()
    none_of: list[Annotated[str, Field(min_length=1)]] = _ids()
    k: Annotated[int, scalar("k", low=1)] = Field(10, ge=1)
    where: str | SkipJsonSchema[InstanceOf[Filter]] | None = Field(None, json_schema_extra=nullable(FILTER_SCHEMA))
    method: Annotated[Method, choice("method", METHODS)] = Field(
        "auto", description="auto, exact or hnsw (a cosine space only); not with index.")
    index: str | SkipJsonSchema[InstanceOf[IndexSpec]] | None = Field(None, json_schema_extra=nullable(INDEX_SCHEMA))
    ef: Annotated[int, Field(ge=1), scalar("ef", low=1)] | None = Field(None, description="HNSW search beam.")

    @model_validator(mode="after")
    def _rules(self) -> SetQuery:
        """The rules between fields, each with one line; checked before the store is read."""
        if not self.all_of and not self.none_of:
            raise InputError("a set query needs at least one example: give all_of (--all-of ID) or none_of "
                             "(--none-of ID)")
        for name, ids in (("all_of", self.all_of), ("none_of", self.none_of)):
            seen: set[str] = set()
            for i in ids:
                if i in seen:
                    raise InputError(f"id {excerpt(i)} is given twice in {name}")
                seen.add(i)
        both = next((i for i in self.all_of if i in set(self.none_of)), None)
        if both is not None:
            raise InputError(f"id {excerpt(both)} is in both all_of and none_of: an example is either wanted or not")
        check_method(self.method, self.index)
        return self

    @property
    def examples(self) -> list[str]:
        """Every example id, all-of first."""
        return [*self.all_of, *self.none_of]

    def to_dict(self) -> dict[str, Any]:
        """The query as JSON values (a parsed filter or index spec as its text)."""
        return {"all_of": list(self.all_of), "none_of": list(self.none_of), "k": self.k,
                "where": None if self.where is None else str(self.where), "method": self.method,
                "index": None if self.index is None else str(self.index), "ef": self.ef}

    @classmethod
    def of(cls, all_of: Any = (), none_of: Any = (), k: Any = 10, **options: Any) -> SetQuery:
        """The query of :func:`~repspace.workflows.search.set_search.set_search`'s arguments: ``all_of`` and
        ``none_of`` any sequences of ids (a bare string is refused: it would be a list of characters), the other
        keywords the fields; a broken rule is an :class:`InputError`, an unknown keyword a :class:`TypeError`.

        Examples
        --------
        >>> SetQuery.of(("a",), k=2).all_of
        ['a']
        >>> try:
        ...     SetQuery.of("king")
        ... except InputError as e:
        ...     print(e)
        all_of must be a list of ids, not a string (write ['king'])
        """
        fields: dict[str, Any] = {"k": k, **options}
        for name, ids in (("all_of", all_of), ("none_of", none_of)):
            if isinstance(ids, str):
                raise InputError(f"{name} must be a list of ids, not a string (write [{excerpt(ids)}])")
            try:
                fields[name] = list(ids or ())
            except TypeError:
                raise InputError(f"{name} must be a list of ids, not {type(ids).__name__}") from None
        try:
            return cls.model_validate(fields)
        except ValidationError as e:
            error = input_error(e)
            if isinstance(error, TypeError):
                raise TypeError(str(error).replace("search got", "set_search got")) from None
            raise error from None
