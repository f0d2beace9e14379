"""Pooling recipes scored on retrieval and classification: each score is the evaluator's on directly pooled vectors.

The reference pools every text with transformers alone (:mod:`_direct_pooling`: one text per forward pass, no
padding, pooled by hand) and scores those vectors with the evaluators' vector entry points
(:func:`~repspace.engines.eval.retrieval.retrieval_from_vectors`, :func:`~repspace.engines.eval.labels.classification`
on an array); :func:`~repspace.workflows.layer_pooling.compare_poolings` batches, pads and pools inside repspace.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _data_subsets import cranfield_head
from _direct_pooling import DIRECT_RECIPES, direct_recipes, load_minilm
from _sentiment_data import pang_lee_rows

from repspace.engines.eval.labels import classification
from repspace.engines.eval.retrieval import load_beir, retrieval_from_vectors
from repspace.workflows.layer_pooling import compare_poolings

pytestmark = [pytest.mark.numerics, pytest.mark.slow]  # compares scores with a reference; loads MiniLM

ENC = "hf-layers:minilm"
RECIPES = ",".join(DIRECT_RECIPES)


@pytest.fixture(scope="module")
def raw():
    from repspace.engines.encoders.registry import minilm_folder

    return load_minilm(minilm_folder())


def _by_recipe(comparison) -> dict[str, float]:
    assert all(not r.whitened for r in comparison.rows)
    return {r.recipe: r.score for r in comparison.rows}


def test_retrieval_scores_equal_the_evaluator_on_directly_pooled_vectors(raw, shared_data, tmp_path) -> None:
    # The vectors agree to 1e-5 (tests/engines/encoders/test_pooling_recipes.py); no two documents of a query's
    # ranking are that close on these 120 documents, so every ranking and nDCG@10 is the same, up to summation
    # order in the mean over queries.
    folder = cranfield_head(shared_data, tmp_path / "cran", 120, judged_queries_only=True)
    data = load_beir(folder)
    got = compare_poolings(ENC, "retrieval", folder, recipes=RECIPES, bootstrap=200, batch_size=16)
    assert (got.task, got.metric, got.unit) == ("retrieval:cran", "ndcg_at_10", "queries")
    assert (got.n_units, got.n_texts) == (data.n_queries, data.n_documents + data.n_queries)
    expected = direct_recipes(raw, data.texts())
    n = data.n_documents
    for name, score in _by_recipe(got).items():
        ref = retrieval_from_vectors(expected[name][n:], expected[name][:n], data)["ndcg_at_10"]
        assert score == pytest.approx(ref, abs=1e-12), name
    assert all(r.ci_low <= r.score <= r.ci_high for r in got.rows)
    # mean pooling, what MiniLM was fine-tuned with, beats its last [SEP] token on retrieval
    assert _by_recipe(got)["mean"] > _by_recipe(got)["last"]


def test_classification_scores_equal_the_evaluator_on_directly_pooled_vectors(raw, tmp_path) -> None:
    rows = pang_lee_rows()
    path = tmp_path / "pang-lee.jsonl"
    path.write_text("".join(json.dumps({"review": t, "polarity": y}) + "\n" for t, y in rows), encoding="utf-8")
    got = compare_poolings(ENC, "classification", path, recipes=RECIPES, bootstrap=200, text_col="review",
                           label_col="polarity", folds=4, seed=3)
    assert (got.task, got.metric, got.unit, got.n_units, got.n_texts) == (
        "classification:pang-lee", "accuracy", "texts", 200, 200)
    expected = direct_recipes(raw, [t for t, _ in rows])
    labels = [y for _, y in rows]
    for name, score in _by_recipe(got).items():
        ref = classification(expected[name], labels, folds=4, seed=3, bootstrap=0).main_score
        # accuracy counts right predictions of 200 items: equal vectors to 1e-5 give the same predictions
        assert score == pytest.approx(ref, abs=1e-12), name
    assert all(r.ci_low <= r.score <= r.ci_high for r in got.rows)
    assert np.isfinite([r.score for r in got.rows]).all()


def test_whitened_rows_follow_the_raw_ones_on_every_task(tmp_path) -> None:
    rows = pang_lee_rows()[90:110]  # 10 negative, 10 positive
    path = tmp_path / "few.jsonl"
    path.write_text("".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in rows), encoding="utf-8")
    got = compare_poolings(ENC, "classification", path, recipes="mean,cls", whiten=True, bootstrap=0, folds=2)
    assert [(r.recipe, r.whitened) for r in got.rows] == [("mean", False), ("cls", False), ("mean", True),
                                                         ("cls", True)]
    assert got.to_dict()["n_units"] == 20 and got.rows[0].ci_low is None
