"""Schemathesis hooks for fuzzing ``repspace serve`` (loaded by schemathesis through the ``hooks`` key of the
configuration tests/security/test_http_fuzz.py writes; not imported by pytest).

The OpenAPI schema states every rule it can (enums, lengths, ``oneOf``); these hooks supply what no JSON Schema
can, so that schema-valid requests are meaningful for the served store:

* the strings the schema names by a ``format``: ``repspace-filter`` (a filter over the fuzz store's metadata:
  ``n`` a number, ``lang`` a string, ``long`` a boolean) and ``repspace-index`` (an index spec);
* the served store (``REPSPACE_FUZZ_DATA``): in the valid parts of a case, space names and ids are mostly
  those of the store (one case in :data:`KEEP` keeps its generated ones, which a 404 answers), and writes go to
  a space of their own;
* what the data decides: a valid vector gets the space's dimension and stays within what a cosine space can
  normalise in float32 (not zero, no square beyond float32), and a valid text to embed gets a word the
  encoder knows (one of only symbols or control characters embeds to the zero vector, which is refused);
* a rule between items: the ids of a batch are distinct, and so are a set query's examples across its lists.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

import schemathesis
from hypothesis import strategies as st
from schemathesis.core.parameters import ParameterLocation

#: Filters over the fuzz store's metadata (``n``: int, ``lang``: 'en' | 'de' | 'fr', ``long``: bool).
FILTER_ATOMS = ["n > 10", "n <= 150", "lang = 'en'", "lang != 'de'", "lang in ('en', 'fr')", "not long", "long",
                "lang is not null", "n = 7", "_id != 'i3'", "lang like 'e%'", "missing is null"]
#: Index specs a small space can build (or that a read-only store searches exactly, saying so).
INDEXES = ["exact", "hnsw16", "hnsw32", "hnsw16,ef64", "int8>rescore4", "binary>rescore4"]

FILTERS = st.one_of(
    st.sampled_from(FILTER_ATOMS),
    st.builds(lambda a, op, b: f"{a} {op} {b}", st.sampled_from(FILTER_ATOMS), st.sampled_from(["and", "or"]),
              st.sampled_from(FILTER_ATOMS)),
    st.builds(lambda a: f"not ({a})", st.sampled_from(FILTER_ATOMS)),
)
schemathesis.openapi.format("repspace-filter", FILTERS)
schemathesis.openapi.format("repspace-index", st.sampled_from(INDEXES))


#: The served store (the test sets it): ``{"dim": int, "spaces": [names], "written": name, "ids": [ids]}``: writes
#: go to the space ``written`` only, so that the spaces searched and compared keep their size (a write of the
#: 10,000 items the schema allows would make every comparison of them slow).
DATA: dict[str, Any] = json.loads(os.environ.get("REPSPACE_FUZZ_DATA", "{}"))
#: Largest (and 1 / smallest) magnitude kept in a valid vector: a cosine space normalises in float32, whose
#: squares overflow beyond (and underflow below).
LARGEST = 1e15


def _pick(values: list[str], seed: object, keep: object, keeps: bool) -> Any:
    """A value of ``values`` chosen by ``seed``, or ``keep`` when the case ``keeps`` its generated names."""
    return keep if keeps else random.Random(repr(seed)).choice(values)


#: One valid case in KEEP keeps its generated names (they name nothing: a 404). Drawn once per case, not per
#: name: drawn per name, a route of two spaces and an id would keep one in three cases, and a run cut short by
#: its time limit could see only 404s there ("missing test data").
KEEP = 8


def _vector(vector: Any, dim: int) -> Any:
    """``vector`` with ``dim`` numbers (repeated or cut), scaled into what float32 normalises, never zero."""
    if not isinstance(vector, list) or not vector or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                             for v in vector):
        return vector
    out = (vector * (dim // len(vector) + 1))[:dim]
    top = max(abs(v) for v in out)
    if top == 0:  # no direction
        out[0] = 1.0
    elif not 1 / LARGEST <= top <= LARGEST:  # its squares would underflow or overflow float32
        out = [v / top for v in out]  # floats now: an integer beyond 2**24 is a float, rounded as floats are
    return out


def _text(text: Any) -> Any:
    """A text the encoder finds a word in (one of only symbols or control characters embeds to nothing)."""
    return f"{text} river" if isinstance(text, str) and not text.endswith(" river") else text


def _examples(body: dict[str, Any], seed: str, keeps: bool) -> None:
    """A set query's ``all_of`` and ``none_of``: stored ids, distinct within and across the lists (no JSON Schema
    says "not in both"), as many as were generated."""
    lists = [name for name in ("all_of", "none_of") if isinstance(body.get(name), list)
             and all(isinstance(i, str) for i in body[name])]
    if keeps or not lists:
        return
    order = random.Random(repr(("examples", seed))).sample(DATA["ids"], len(DATA["ids"]))
    taken = 0
    for name in lists:
        count = min(len(body[name]), len(order) - taken)
        body[name] = order[taken:taken + count]
        taken += count


@schemathesis.hook
def map_case(context: schemathesis.HookContext, case: schemathesis.Case) -> schemathesis.Case:
    """Name the served spaces and ids in the valid parts of a case; give a valid body's vectors the space's
    dimension and its texts a word (the parts generated invalid are left as they are)."""
    meta = case.meta
    if not DATA:
        return case

    def valid(location: str) -> bool:
        return meta is None or not meta.is_negative_at(ParameterLocation(location))

    seed = repr((case.path_parameters, case.query, case.body))  # the whole case: the coverage phase repeats paths
    keeps = random.Random(seed).random() < 1 / KEEP
    if case.path_parameters and valid("path"):
        writes = str(case.method).upper() == "POST" and case.path.endswith("/items")
        for name in ("space", "a", "b"):
            if isinstance(case.path_parameters.get(name), str):
                given = case.path_parameters[name]
                if not writes and given == DATA["written"]:  # a name read back from GET /spaces: not read here
                    given = DATA["spaces"][0]
                names = [DATA["written"]] if writes else DATA["spaces"]
                case.path_parameters[name] = _pick(names, (name, seed), given, keeps)
        if isinstance(case.path_parameters.get("item_id"), str):
            segments = [i for i in DATA["ids"] if i not in (".", "..")]  # a client resolves those in a path
            case.path_parameters["item_id"] = _pick(segments, ("item", seed), case.path_parameters["item_id"],
                                                   keeps)
    if case.query and valid("query") and isinstance(case.query.get("id"), str):
        case.query["id"] = _pick(DATA["ids"], ("query", seed), case.query["id"], keeps)
    body = case.body
    if isinstance(body, dict) and valid("body"):
        if isinstance(body.get("id"), str):
            body["id"] = _pick(DATA["ids"], ("body", seed), body["id"], keeps)
        _examples(body, seed, keeps)
        if body.get("sparse") is not None:
            # the fuzz store's spaces are dense: a sparse query (valid only for a sparse space, which no JSON
            # Schema can say) becomes the vector query it stands in for
            body.pop("sparse")
            body["vector"] = [1.0]
        if body.get("candidates") is not None:
            # a MUVERA shortlist applies to a multi-vector space (which no JSON Schema can say); the fuzz store's
            # spaces are dense
            body.pop("candidates")
        if isinstance(body.get("mmr_length"), str):
            # a length is the stored text's or a numeric metadata field's, which the data decides: the text's
            body["mmr_length"] = "text"
        items = [i for i in body.get("items") or [] if isinstance(i, dict)]
        seen: set[str] = set()
        for n, item in enumerate(items):  # a batch names each id once (no JSON Schema says "unique by a key")
            if isinstance(item.get("id"), str):
                if item["id"] in seen:
                    item["id"] = f"{item['id']} #{n}"
                seen.add(item["id"])
        for holder in [body, *items]:
            if "vector" in holder:
                holder["vector"] = _vector(holder["vector"], DATA["dim"])
            if holder.get("text") is not None and (holder is body or holder.get("vector") is None):
                holder["text"] = _text(holder["text"])
    return case
