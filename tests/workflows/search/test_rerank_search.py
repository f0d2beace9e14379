"""Search with a learned reranker as its last stage (``search_space(..., rerank=...)``, ``repspace search
--rerank``): the dense or the hybrid candidates, reordered; the same ranking as ``rerank apply`` with the model
trained on those candidates, and the rules of the request."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cranfield_space import cranfield_store
from _cli_process import one_error_line, run_quiet

from repspace import Store
from repspace.core.errors import InputError
from repspace.engines.eval.retrieval import load_beir
from repspace.engines.search.ltr import RankerModel
from repspace.workflows.rerank import RerankApplyRequest, RerankTrainRequest, apply_reranker, train_reranker

# Ingesting Cranfield and training two models takes ~10 s.
pytestmark = [pytest.mark.numerics, pytest.mark.slow]

#: The model's scores are float64 sums of tree leaves, computed from the same features on both paths; the features
#: differ only by the dense score, float64 from the same float32 vectors (both paths: exact_scores).
SCORE_TOL = 1e-6


@pytest.fixture(scope="module")
def cran(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cran-search")
    db = cranfield_store(shared_data, folder)
    store = Store(db)
    space = store.space("cran")
    models = {}
    for source in ("dense", "hybrid"):
        req = RerankTrainRequest(qrels=str(shared_data / "cranfield-beir"), out=str(folder / f"{source}.json"),
                                 seed=1, bootstrap=0, first_stage=source)
        train_reranker(space, req)
        models[source] = req.out
    data = load_beir(shared_data / "cranfield-beir")
    test_ids = RankerModel.load(models["dense"]).recipe["trained_on"]["queries"]["test"]
    texts = dict(zip(data.query_ids, data.query_texts))
    yield space, models, [texts[q] for q in test_ids[:8]], db
    store.close()


@pytest.mark.parametrize("source", ["dense", "hybrid"])
def test_search_equals_rerank_apply_of_the_model_of_its_candidates(cran, source):
    """``search(text, rerank=model)`` (``hybrid`` for the hybrid candidates) ranks as ``rerank apply`` does with
    the model trained on those candidates (batch first stage: exact knn, and BM25 fused by RRF)."""
    space, models, queries, _ = cran
    applied = apply_reranker(space, RerankApplyRequest(model=models[source], queries=queries, k=10))
    for query, want in zip(queries, applied.results):
        res = space.search(query, k=10, rerank=models[source], hybrid=source == "hybrid")
        assert [h.id for h in res.hits] == [h["id"] for h in want["hits"]]
        np.testing.assert_allclose([h.score for h in res.hits], [h["score"] for h in want["hits"]], atol=SCORE_TOL)
        assert res.plan.method.endswith("+ rerank") and f"trained on {source} candidates" in res.plan.reason
        assert res.plan.method.startswith("hybrid") == (source == "hybrid")


def test_candidates_are_the_first_stages(cran):
    """The reranked hits are a reordering of the first stage's top 100 (dense, or hybrid), whatever k."""
    space, models, queries, _ = cran
    for hybrid in (False, True):
        pool = {h.id for h in space.search(queries[0], k=100, hybrid=hybrid)}
        got = space.search(queries[0], k=100, rerank=models["hybrid" if hybrid else "dense"], hybrid=hybrid)
        assert {h.id for h in got} == pool and len(got) == 100
        scores = [h.score for h in got]
        assert scores == sorted(scores, reverse=True)


def test_a_loaded_model_and_a_filter(cran):
    space, models, queries, _ = cran
    model = RankerModel.load(models["dense"])
    by_path = space.search(queries[1], k=5, rerank=models["dense"], where="_id < '5'")
    by_object = space.search(queries[1], k=5, rerank=model, where="_id < '5'")
    assert [h.id for h in by_path] == [h.id for h in by_object] and all(h.id < "5" for h in by_path)


@pytest.mark.parametrize("options, fragment", [
    ({"id": "1"}, "give a text"),
    ({"bm25": True}, "not bm25"),
    ({"mmr": 0.5}, "not bm25, mmr or hubness"),
    ({"hubness": "csls"}, "not bm25, mmr or hubness"),
])
def test_rules(cran, options, fragment):
    space, models, queries, _ = cran
    query = None if "id" in options else queries[0]
    with pytest.raises(InputError, match=fragment):
        space.search(query, rerank=models["dense"], **options)


def test_refused_on_another_space_and_a_missing_file(cran, tmp_path):
    space, models, _, _ = cran
    other = Store(tmp_path / "o.db").create_space("other", dim=space.dim)
    other.add(["a"], np.ones((1, space.dim), np.float32), texts=["a wing"])
    with pytest.raises(InputError, match="trained for space 'cran', not 'other'"):
        other.search("wing", rerank=models["dense"])
    with pytest.raises(Exception, match="no reranker model at"):
        space.search("wing", rerank=str(tmp_path / "none.json"))


def test_cli_search_rerank(cran, capsys):
    space, models, queries, db = cran
    r = run_quiet(capsys, "--store", str(db), "search", "cran", queries[2], "--hybrid", "--rerank", models["hybrid"],
                  "-k", "3", "--json")
    want = space.search(queries[2], k=3, hybrid=True, rerank=models["hybrid"])
    assert r.code == 0 and [h["id"] for h in json.loads(r.out)] == [h.id for h in want]
    one_error_line(run_quiet(capsys, "--store", str(db), "search", "cran", "--id", "1", "--rerank", models["dense"]),
                   2, "give a text")
