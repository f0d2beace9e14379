"""One search contract: SearchRequest validates once (library, CLI, HTTP), SearchResult is what every search returns."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.core.hits import Hit, SearchPlan, SearchResult
from repspace.engines.search.hnsw import HNSWParams
from repspace.workflows.search.request import SearchRequest

WEIGHT = "the lexical weight must be a number in [0, 1e+06]"
BAD = [
    ({"query": "x", "k": 0}, "k must be a positive integer, not 0"),
    ({"query": "x", "k": True}, "k must be a positive integer, not True"),
    ({"query": "x", "k": "3"}, "k must be a positive integer, not '3'"),
    ({"query": "x", "ef": 0}, "ef must be a positive integer, not 0"),
    ({"query": "x", "method": "fast"}, "method must be one of auto, exact, hnsw, not 'fast'"),
    ({"query": "x", "method": "exact", "index": "hnsw32"}, "choose exact search or index 'hnsw32', not both"),
    ({"query": "x", "hnsw": HNSWParams(), "index": "hnsw32"}, "carries its own parameters"),
    ({"query": "x", "hnsw": HNSWParams(), "method": "exact"}, "do not apply to exact"),
    ({"query": "x", "fusion": "sum"}, "apply to hybrid search only"),
    ({"query": "x", "hybrid": True, "fusion": "max"}, "fusion must be one of rrf, sum, not 'max'"),
    ({"query": "x", "hybrid": True, "lexical_weight": -1.0}, f"{WEIGHT}, not -1.0"),
    ({"query": "x", "hybrid": True, "lexical_weight": float("nan")}, f"{WEIGHT}, not nan"),
    ({"query": "x", "hybrid": True, "lexical_weight": 6.7e307}, WEIGHT),
    ({"query": np.ones(2), "hybrid": True}, "need a query text"),
    ({"query": "x", "hybrid": True, "bm25": True}, "choose hybrid or bm25, not both"),
    ({"query": "x", "hybrid": True, "mmr": 0.7}, "does not combine with hybrid or bm25"),
    ({"query": "x", "mmr": 1.5}, "the MMR lambda must be a number in [0, 1], not 1.5"),
    ({"query": "x", "mmr": True}, "the MMR lambda must be a number in [0, 1], not True"),
    ({"query": "x", "hubness": "csls", "mmr": 0.5}, "does not combine"),
    ({"query": "x", "hubness": "bogus"}, "unknown hubness reduction 'bogus'"),
    ({"query": "x", "kappa": 0}, "kappa must be a positive integer, not 0"),
    ({"query": "   "}, "the query text is empty"),
    ({}, "exactly one of"),
    ({"query": "x", "id": "a"}, "exactly one of"),
]


@pytest.mark.parametrize("given, message", BAD)
def test_each_rule_is_one_input_error_line(given, message):
    given = dict(given)
    with pytest.raises(InputError) as e:
        SearchRequest.of(given.pop("query", None), **given)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_an_unknown_option_is_a_type_error_and_the_request_is_frozen():
    with pytest.raises(TypeError, match="colour"):
        SearchRequest.of("x", colour="red")
    r = SearchRequest.of("x", k=3, hubness="mp", ef=np.int64(32))
    assert (r.k, r.hubness, r.ef) == (3, "mutual-proximity", 32)
    with pytest.raises(Exception):
        r.k = 4  # type: ignore[misc]


def test_a_vector_keeps_its_dtype():
    r = SearchRequest.of(np.array([1, 2], dtype=np.int64))
    assert r.vector.dtype == np.int64 and r.text is None


@pytest.mark.parametrize("none", [{}, {"where": None, "index": None, "ef": None}])
@pytest.mark.parametrize("k", [1, 7, 7.0, np.int64(3)])
def test_a_plain_vector_request_equals_the_validated_one(k, none):
    vector = np.ones(3, np.float32)
    quick, full = SearchRequest.of(vector, k, **none), SearchRequest.model_validate({"vector": vector, "k": k})
    assert quick.vector is vector and full.vector is vector
    assert {n: getattr(quick, n) for n in SearchRequest.model_fields if n != "vector"} == \
        {n: getattr(full, n) for n in SearchRequest.model_fields if n != "vector"}
    assert type(quick.k) is int


@pytest.mark.parametrize("k", [0, -1, True, 2.5, "3", None])
def test_a_plain_vector_request_checks_k_as_any_request(k):
    with pytest.raises(InputError, match="k must be a positive integer"):
        SearchRequest.of(np.ones(3, np.float32), k)


def test_search_result_is_a_read_only_sequence_of_hits():
    plan = SearchPlan("exact", 2, 2, reason="2 items")
    res = SearchResult([Hit("a", 0.9, "A"), Hit("b", 0.5)], plan)
    assert len(res) == 2 and res[0].id == "a" and res[-1].id == "b" and [h.id for h in res[:1]] == ["a"]
    assert res == [Hit("a", 0.9, "A"), Hit("b", 0.5)] and res != []
    assert res.to_dict() == {"hits": [{"id": "a", "score": 0.9, "text": "A", "metadata": {}},
                                      {"id": "b", "score": 0.5, "text": None, "metadata": {}}],
                             "plan": plan.to_dict()}
    with pytest.raises(Exception):
        res.hits = ()  # type: ignore[misc]


def test_every_search_returns_a_result_with_its_plan(tmp_path):
    from repspace import Store

    sp = Store(str(tmp_path / "s.db")).create_space("t", dim=2)
    sp.add(["a", "b", "c"], [[1, 0], [0.9, 0.1], [0, 1]])
    for res in (sp.search(np.array([1.0, 0.0]), k=2), sp.search(id="a", k=1, mmr=0.5),
                sp.search(SearchRequest.of(None, id="a", k=2))):
        assert isinstance(res, SearchResult) and res.plan.candidates == 3 and res[0].id in ("a", "b")
    with pytest.raises(InputError, match="not both"):
        sp.search(SearchRequest.of(None, id="a"), where="x = 1")
