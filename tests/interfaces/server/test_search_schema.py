"""The HTTP search body (:class:`repspace.interfaces.server.schemas.SearchRequest`) is the library's request.

Its JSON schema is the one of :class:`repspace.workflows.search.request.SearchRequest` but for the service's
bounds, and refuses each body the model refuses (tests/workflows/search/test_request.py has the library's side).
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from repspace.core.errors import InputError, NotFoundError
from repspace.interfaces.server import schemas as S
from repspace.workflows.search.rerank_stage import load_rerankers
from repspace.workflows.search.request import SearchRequest

#: JSON bodies the model refuses, each for a field's bounds or a rule between fields.
REFUSED = [
    {"text": "x", "k": 0}, {"text": "x", "k": True}, {"text": "x", "k": "3"}, {"text": "x", "ef": 0},
    {"text": "x", "method": "fast"}, {"text": "x", "method": "exact", "index": "hnsw32"},
    {"text": "x", "fusion": "sum"}, {"text": "x", "hybrid": True, "fusion": "max"},
    {"text": "x", "hybrid": True, "lexical_weight": -1.0}, {"text": "x", "hybrid": True, "lexical_weight": 6.7e307},
    {"vector": [1.0, 1.0], "hybrid": True}, {"text": "x", "hybrid": True, "bm25": True},
    {"text": "x", "hybrid": True, "mmr": 0.7}, {"text": "x", "mmr": 1.5}, {"text": "x", "mmr": True},
    {"text": "x", "hubness": "csls", "mmr": 0.5}, {"text": "x", "hubness": "bogus"}, {"text": "x", "kappa": 0},
    {"text": "   "}, {}, {"text": "x", "id": "a"},
]


def test_the_http_schema_is_built_from_the_request():
    """The HTTP body is the library's request: the same fields, each with the same JSON schema, but for the
    service's bounds (``k``, ``ef``, ``kappa`` at most a maximum, ``id`` at most a length), the Python-only ``hnsw``
    and ``rerank``, which names a reranker the service was started with (never a path a client could choose)."""
    library, http = SearchRequest.model_json_schema(), S.SearchRequest.model_json_schema()
    assert issubclass(S.SearchRequest, SearchRequest)
    assert set(http["properties"]) == set(library["properties"]) == (
        set(SearchRequest.model_fields) - {"hnsw"})
    bounded = {"k": S.MAX_K, "ef": 4096, "kappa": S.MAX_KAPPA, "id": S.MAX_ID_LENGTH}
    for name, prop in library["properties"].items():
        if name in bounded:
            prop_http = http["properties"][name]
            limits = [prop_http.get("maximum"), prop_http.get("maxLength")]
            limits += [alt.get(key) for alt in prop_http.get("anyOf", []) for key in ("maximum", "maxLength")]
            assert bounded[name] in limits, (name, prop_http)
            continue
        if name == "rerank":  # a name, looked up among the rerankers the service was started with
            names = [alt for alt in http["properties"][name]["anyOf"] if alt.get("type") == "string"]
            assert names and names[0]["pattern"] == r"^[!-<>-~]+$" and names[0]["maxLength"] > 0, names
            continue
        assert http["properties"][name] == prop, name
    for rule in ("oneOf", "allOf"):
        assert http[rule] == library[rule]
    assert http["additionalProperties"] is False and library["additionalProperties"] is False


def test_the_json_rules_agree_with_the_model():
    """Each body the model refuses (a field's bounds, a rule between fields), the JSON schema refuses too."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(S.SearchRequest.model_json_schema())
    for body in REFUSED:
        assert not validator.is_valid(body), body
        with pytest.raises(ValidationError):
            S.SearchRequest.model_validate_json(json.dumps(body))
    assert validator.is_valid({"text": "x", "hybrid": True, "fusion": "sum", "lexical_weight": 0.5})
    assert validator.is_valid({"vector": [1.0, 0.0], "mmr": 0.5, "method": "exact", "k": 3})


#: Reranker names around the edges of what a body may give (printable ASCII but space and '=', 1 to 100 of them):
#: the first five are names, the others are not.
RERANKER_NAMES = ["cran", "a-b_c.1", "!", "~" * 100, "<>", "~" * 101, "a b", "a=b", "", "caf\u00e9", "x\x85",
                  "x\n", "\x7f", "x\u00a0", "x\t"]


@pytest.mark.parametrize("name", RERANKER_NAMES)
def test_a_service_loads_a_reranker_under_a_name_only_if_a_body_can_give_it(name):
    """``repspace serve --reranker NAME=PATH`` refuses (before reading PATH) each name the body's model refuses, and
    accepts each it accepts: no reranker is loaded that no request could name. (Python's ``jsonschema`` is not the
    judge here: its ``re.search`` lets ``$`` match before a final newline, which neither ECMA nor the model do.)"""
    try:
        S.SearchRequest.model_validate_json(json.dumps({"text": "x", "rerank": name}))
        model_ok = True
    except ValidationError:
        model_ok = False
    try:
        load_rerankers({name: "no-such-ranker.json"})
    except InputError:
        loaded_ok = False
    except NotFoundError:  # the name passed; the file was looked for
        loaded_ok = True
    assert model_ok == loaded_ok == (name in RERANKER_NAMES[:5]), (model_ok, loaded_ok)
