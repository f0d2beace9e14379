"""The learning-to-rank reranker's engine: features against a direct computation, seeded fits, bad input."""

from __future__ import annotations

import json

import bm25s
import numpy as np
import pytest
import Stemmer

from repspace.core.errors import InputError, NotFoundError
from repspace.engines.search.lexical import LexicalIndex
from repspace.engines.search.ltr import (
    FEATURES,
    MAX_GRADE,
    RankerModel,
    RankerParams,
    candidate_features,
    fit_ranker,
    predict,
    rerank,
)

pytestmark = pytest.mark.numerics

#: BM25 scores are float32 sums of a few terms of size ~10: a few float32 ulps of the total.
BM25_TOL = 1e-5


@pytest.fixture(scope="module")
def cranfield(shared_data):
    from repspace.engines.eval.retrieval import load_beir

    return load_beir(shared_data / "cranfield-beir")


@pytest.fixture(scope="module")
def case(cranfield):
    """30 Cranfield queries, each with 20 candidates drawn from the first 400 documents (seeded)."""
    rng = np.random.default_rng(7)
    docs = list(cranfield.corpus_texts[:400])
    rows = np.arange(400) * 3 + 5  # rows other than positions: the features must follow rows
    ix = LexicalIndex.build(docs, rows)
    queries = list(cranfield.query_texts[:30])
    cand = np.stack([rng.choice(rows, 20, replace=False) for _ in queries])
    cand[3, 15:] = -1  # padding
    dense = rng.uniform(-1, 1, cand.shape)
    texts = dict(zip(rows.tolist(), docs))
    return ix, queries, cand, dense, texts


def test_features_equal_a_direct_computation(case):
    ix, queries, cand, dense, texts = case
    f = candidate_features(queries, cand, dense, texts, ix)
    assert f.shape == (30, 20, len(FEATURES))
    # the reference: bm25s's own tokenizer and its own scoring of every document, on the classic scale
    stem = Stemmer.Stemmer("english")

    def tok(xs: list[str]) -> list[list[str]]:
        return bm25s.tokenize(xs, stopwords="en", stemmer=stem, return_ids=False, show_progress=False)

    row_list = sorted(texts)
    ref = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    ref.index(bm25s.tokenize([texts[r] for r in row_list], stopwords="en", stemmer=stem, show_progress=False),
              show_progress=False)
    q_tok = tok(queries)
    position = {r: i for i, r in enumerate(row_list)}
    checked = 0
    for i, query in enumerate(queries):
        all_scores = ref.get_scores(q_tok[i]) * (1.5 + 1)
        terms = set(q_tok[i])
        for j, r in enumerate(cand[i]):
            if r < 0:
                assert np.isnan(f[i, j]).all()
                continue
            d_tok = tok([texts[int(r)]])[0]
            shared = len(terms & set(d_tok))
            want = [dense[i, j], j + 1, all_scores[position[int(r)]], len(q_tok[i]), len(d_tok), shared,
                    shared / len(terms)]
            np.testing.assert_allclose(f[i, j], want, rtol=BM25_TOL, atol=BM25_TOL)
            checked += 1
    assert checked == 30 * 20 - 5
    assert (f[:, :, 2] > 0).sum() > 100  # the BM25 column is not all zeros


def test_fit_is_seeded(case):
    ix, queries, cand, dense, texts = case
    f = candidate_features(queries, cand, dense, texts, ix)
    grades = (f[:, :, 5] >= 3).astype(np.int64)  # a relevance that follows the overlap
    p = RankerParams(n_estimators=30, min_child_samples=5, seed=4)
    a, ra = fit_ranker(f[:20], grades[:20], f[20:], grades[20:], p)
    b, rb = fit_ranker(f[:20], grades[:20], f[20:], grades[20:], p)
    assert a == b and ra == rb
    s = predict(a, f)
    assert np.isnan(s[3, 15:]).all() and np.isfinite(s[3, :15]).all()
    np.testing.assert_array_equal(s, predict(b, f))


def test_rerank_orders_by_score_and_keeps_first_stage_order_on_ties():
    rows = np.array([[10, 11, 12, 13], [5, -1, -1, -1]])
    scores = np.array([[0.2, 0.9, 0.2, 0.5], [1.0, np.nan, np.nan, np.nan]])
    r, s = rerank(rows, scores, k=3)
    assert r.tolist() == [[11, 13, 10], [5, -1, -1]]
    assert s[0].tolist() == [0.9, 0.5, 0.2] and np.isnan(s[1, 1:]).all()


def test_model_file_round_trip_and_refusals(tmp_path):
    x = np.random.default_rng(1).normal(size=(12, 6, len(FEATURES)))
    model, _ = fit_ranker(x, (x[:, :, 0] > 0).astype(int), params=RankerParams(n_estimators=3, min_child_samples=2))
    path = tmp_path / "m.json"
    RankerModel.new(model, {"candidates": 100}).save(path)
    back = RankerModel.load(path)
    assert back.model == model and back.recipe["candidates"] == 100 and back.recipe["lightgbm"] == "4.7.0"
    np.testing.assert_array_equal(predict(back.model, x), predict(model, x))
    data = json.loads(path.read_text())
    for change, fragment in (({"format": 99}, "format"), ({"features": ["dense_score"]}, "train it again")):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({"model": model, "recipe": {**data["recipe"], **change}}))
        with pytest.raises(InputError, match=fragment):
            RankerModel.load(bad)
    (tmp_path / "junk.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="not a reranker model"):
        RankerModel.load(tmp_path / "junk.json")
    with pytest.raises(NotFoundError):
        RankerModel.load(tmp_path / "absent.json")


def test_bad_input(case):
    ix, queries, cand, dense, texts = case
    with pytest.raises(InputError, match="shape"):
        candidate_features(queries, cand, dense[:, :3], texts, ix)
    with pytest.raises(InputError, match="30 queries but candidates for 2"):
        candidate_features(queries, cand[:2], dense[:2], texts, ix)
    nan = dense.copy()
    nan[0, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        candidate_features(queries, cand, nan, texts, ix)
    with pytest.raises(InputError, match="no text given"):
        candidate_features(queries, cand, dense, {}, ix)
    with pytest.raises(InputError, match="list of texts"):
        candidate_features("one query", cand[:1], dense[:1], texts, ix)
    x = np.zeros((4, 3, len(FEATURES)))
    with pytest.raises(InputError, match="grades must lie"):
        fit_ranker(x, np.full((4, 3), MAX_GRADE + 1))
    with pytest.raises(InputError, match="integers"):
        fit_ranker(x, np.full((4, 3), 0.5))
    with pytest.raises(InputError, match="relevant"):
        fit_ranker(x, np.zeros((4, 3), int))
    with pytest.raises(InputError, match="features must be"):
        fit_ranker(x[:, :, :3], np.ones((4, 3), int))
    with pytest.raises(InputError, match="learning_rate"):
        RankerParams(learning_rate=0.0)
