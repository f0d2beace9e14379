"""Training and applying the learned reranker on Cranfield (static encoder: seconds, no transformer)."""

from __future__ import annotations

import numpy as np
import pytest
from _cranfield_space import cranfield_store

from repspace import Store
from repspace.core.errors import InputError
from repspace.engines.search.ltr import RankerModel
from repspace.workflows.rerank import (
    SYSTEMS,
    RerankApplyRequest,
    RerankTrainRequest,
    apply_reranker,
    train_reranker,
)

# Ingesting Cranfield and training several times takes over ~10 s.
pytestmark = [pytest.mark.numerics, pytest.mark.slow]

#: nDCG values are means of float64 sums of a few dozen terms.
NDCG_TOL = 1e-12


@pytest.fixture(scope="module")
def cran(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cran")
    store = Store(cranfield_store(shared_data, folder))
    yield store.space("cran"), shared_data / "cranfield-beir", folder
    store.close()


@pytest.fixture(scope="module")
def trained(cran):
    space, qrels, folder = cran
    request = RerankTrainRequest(qrels=str(qrels), out=str(folder / "ranker.json"), seed=3, bootstrap=200)
    return request, train_reranker(space, request)


def test_figures_match_pytrec_eval_of_the_saved_model(cran, trained):
    """Apply the saved model to the test queries; trec_eval's nDCG@10 of that run is the reported figure."""
    import pytrec_eval

    from repspace.engines.eval.retrieval import load_beir

    space, qrels, _ = cran
    request, res = trained
    assert res.queries == {"test": 45, "dev": 45, "train": 135} and res.missing_documents == 1
    assert list(res.scores) == list(SYSTEMS) and [c["b"] for c in res.comparisons] == ["dense", "bm25", "rrf"]
    model = RankerModel.load(request.out)
    test_ids = model.recipe["trained_on"]["queries"]["test"]
    data = load_beir(qrels)
    text_of = dict(zip(data.query_ids, data.query_texts))
    applied = apply_reranker(space, RerankApplyRequest(model=request.out, queries=[text_of[q] for q in test_ids]))
    run = {q: {h["id"]: 10.0 - rank for rank, h in enumerate(r["hits"])} for q, r in zip(test_ids, applied.results)}
    ev = pytrec_eval.RelevanceEvaluator({q: data.qrels[q] for q in test_ids}, {"ndcg_cut.10"})
    ref = np.mean([v["ndcg_cut_10"] for v in ev.evaluate(run).values()])
    assert abs(res.scores["reranker"]["ndcg_at_10"] - ref) < NDCG_TOL
    s = res.scores["reranker"]
    assert s["low"] <= s["ndcg_at_10"] <= s["high"]
    diff = res.comparisons[0]
    assert abs(diff["difference"] - (s["ndcg_at_10"] - res.scores["dense"]["ndcg_at_10"])) < NDCG_TOL
    assert model.recipe["space"]["uid"] == space.uid and model.recipe["candidates"] == 100


def test_training_is_seeded(cran, trained, tmp_path):
    space, _, _ = cran
    request, res = trained
    again = train_reranker(space, RerankTrainRequest(**{**request.to_dict(), "out": str(tmp_path / "again.json")}))
    assert RankerModel.load(request.out).model == RankerModel.load(again.model).model
    assert again.scores == res.scores


def test_model_refused_on_another_space(cran, trained):
    space, _, _ = cran
    request, _ = trained
    other = space.store.create_space("other", dim=space.dim)
    other.add(["a"], np.ones((1, space.dim), np.float32), texts=["a wing"])
    with pytest.raises(InputError, match="was trained for space 'cran', not 'other'"):
        apply_reranker(other, RerankApplyRequest(model=request.out, queries=["wing"]))


def test_bad_requests(cran, tmp_path):
    space, qrels, _ = cran
    with pytest.raises(InputError, match="is a folder"):
        RerankTrainRequest(qrels=str(qrels), out=str(tmp_path))
    with pytest.raises(InputError, match="sum < 1"):
        RerankTrainRequest(qrels=str(qrels), out="m.json", dev_fraction=0.5, test_fraction=0.5)
    with pytest.raises(InputError, match="non-empty"):
        RerankApplyRequest(model="m.json", queries=["  "])
    with pytest.raises(InputError, match="is missing"):
        train_reranker(space, RerankTrainRequest(qrels=str(tmp_path), out=str(tmp_path / "m.json")))
    wrong = space.store.create_space("unrelated", dim=2)
    wrong.add(["x"], [[1.0, 0.0]], texts=["x"])
    with pytest.raises(InputError, match="holds none of the 1400 documents"):
        train_reranker(wrong, RerankTrainRequest(qrels=str(qrels), out=str(tmp_path / "m.json")))
    assert not (tmp_path / "m.json").exists()
