"""Reranking in MTEB's layout, scored as mteb 2.26.24's reranking task scores it (mteb itself is the reference)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _reranking_data import cranfield_reranking

from repspace.core.errors import InputError
from repspace.engines.eval import RerankingData, load_reranking, reranking, reranking_scores
from repspace.engines.eval.retrieval import SCORE_KEYS

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- loading


def test_load_reranking_reads_mtebs_layout_and_drops_queries_without_negatives(tmp_path):
    path = write_jsonl(tmp_path / "dup-questions-dev.jsonl", [
        {"query": "how do I mount a drive", "positive": ["mounting disks", "mount a usb drive"],
         "negative": ["install python", "mounting disks"], "id": 7},
        "",
        {"query": "no negatives", "positive": ["a"], "negative": []},
    ])
    data = load_reranking(path)
    assert data.name == "dup-questions-dev" and data.split == "dev" and len(data) == 1
    assert data.positives == (("mounting disks", "mount a usb drive"),)
    assert data.dropped_queries == 1 and data.n_candidates == 4
    assert data.texts() == ["mounting disks", "mount a usb drive", "install python"]


@pytest.mark.parametrize("rows, message", [
    ([{"query": "q", "positive": [], "negative": ["x"]}], ":1: the query has no positive candidate"),
    ([{"query": "q", "positive": ["a"], "negative": ["x"]}, {"query": "r", "negative": ["x"]}],
     ":2: missing 'positive'"),
    ([{"query": "q", "positive": "a", "negative": ["x"]}], "'positive' must be a list of strings"),
    ([{"query": 3, "positive": ["a"], "negative": ["x"]}], "'query' must be a string"),
    ([{"query": "q", "positive": ["a"], "negative": []}], "has a negative candidate: there is nothing to rerank"),
    (["[1, 2]"], "expected a JSON object"),
    ([], "holds no query"),
])
def test_bad_reranking_files_are_one_error_line(tmp_path, rows, message):
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError, match=message.replace("(", r"\(")) as e:
        load_reranking(path)
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="does not exist"):
        load_reranking(tmp_path / "missing.jsonl")


def test_data_without_a_positive_is_refused():
    with pytest.raises(InputError, match="query 2 .* has no positive candidate"):
        RerankingData(("a", "b"), (("x",), ()), (("y",), ("z",)))


# ---------------------------------------------------------------------------- scores, worked by hand


def test_scores_of_a_worked_example():
    # query 1: candidates (pos, pos, neg, neg) with cosines 0.9, 0.2, 0.5, 0.1 -> ranks: pos, neg, pos, neg
    # AP = (1/1 + 2/3) / 2, RR = 1; query 2: (pos, neg) cosines 0.3, 0.8 -> neg, pos: AP = RR = 1/2
    def unit(c):
        return [c, np.sqrt(1 - c * c)]

    q = np.array([[1.0, 0.0], [1.0, 0.0]])
    cands = [np.array([unit(0.9), unit(0.2), unit(0.5), unit(0.1)]), np.array([unit(0.3), unit(0.8)])]
    s = reranking_scores(q, cands, [2, 1])
    assert set(s) == set(SCORE_KEYS)
    assert s["map_at_1000"] == pytest.approx(((1 + 2 / 3) / 2 + 0.5) / 2, abs=1e-15)
    assert s["mrr_at_10"] == pytest.approx((1 + 0.5) / 2, abs=1e-15)
    assert s["recall_at_1"] == pytest.approx((0.5 + 0) / 2, abs=1e-15)
    assert s["precision_at_3"] == pytest.approx((2 / 3 + 1 / 3) / 2, abs=1e-15)


def test_a_negative_wins_a_tie_as_in_mtebs_ids():
    # the positive and the negative are the same vector: trec_eval's tie rule (document id descending)
    # puts MTEB's "negative_..." before "apositive_...", so the positive ranks second
    s = reranking_scores(np.array([[1.0, 0.0]]), [np.array([[1.0, 1.0], [1.0, 1.0]])], [1])
    assert s["mrr_at_10"] == 0.5 and s["map_at_1000"] == 0.5


# ---------------------------------------------------------------------------- Cranfield against mteb itself


@pytest.fixture(scope="module")
def cranfield_rr(shared_data, tmp_path_factory):
    path = cranfield_reranking(shared_data, tmp_path_factory.mktemp("rr") / "cranfield-rr-test.jsonl")
    return path, load_reranking(path)


def test_cranfield_reranking_file_is_built_as_documented(cranfield_rr, shared_data):
    from repspace.engines.eval import load_beir

    path, data = cranfield_rr
    beir = load_beir(shared_data / "cranfield-beir")
    assert len(data) == beir.n_queries == 225 and data.dropped_queries == 0
    assert all(len(n) == 20 for n in data.negatives)
    assert sum(len(p) for p in data.positives) == sum(1 for q in beir.qrels.values() for s in q.values() if s >= 1)
    assert all(not set(p) & set(n) for p, n in zip(data.positives, data.negatives))
    again = cranfield_reranking(shared_data, path.with_name("again.jsonl"))
    assert again.read_bytes() == path.read_bytes()  # seeded: the same file every time


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cranfield_scores_equal_mtebs_reranking_evaluator(cranfield_rr, monkeypatch):
    from _mteb_inprocess import TableEncoder, evaluate, reranking_task
    from mteb._evaluators.retrieval_evaluator import RetrievalEvaluator

    from repspace.engines.encoders import get_encoder

    path, data = cranfield_rr
    enc = get_encoder("static")
    texts, queries = data.texts(), list(data.queries)
    docs, qvecs = enc.encode(texts), enc.encode_queries(queries)
    table, qtable = dict(zip(texts, docs)), dict(zip(queries, qvecs))
    ours = reranking(lambda t: np.array([table[x] for x in t]), data,
                     encode_queries=lambda t: np.array([qtable[x] for x in t]), bootstrap=200)

    # mteb reads the very same lines (its own conversion of the reranking layout), scores with the same vectors
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    task = reranking_task({k: [r[k] for r in rows] for k in ("query", "positive", "negative")})
    captured = []
    original = RetrievalEvaluator.evaluate

    def keep(self, *args, **kwargs):
        captured.append(original(self, *args, **kwargs))
        return captured[-1]

    monkeypatch.setattr(RetrievalEvaluator, "evaluate", keep)
    theirs = evaluate(task, TableEncoder(table, qtable))
    (result,) = captured
    per_query = result.all_scores  # pytrec_eval's per-query values, before mteb rounds the means to 5 decimals
    assert len(per_query) == len(data) == 225
    for ours_key, trec in (("map_at_1000", "map_cut_1000"), ("ndcg_at_10", "ndcg_cut_10"),
                           ("recall_at_10", "recall_10"), ("precision_at_1", "P_1")):
        assert ours.scores[ours_key] == pytest.approx(np.mean([s[trec] for s in per_query.values()]), abs=1e-12)
    for key in SCORE_KEYS:
        tol = 1e-12 if key.startswith("mrr") else 5.1e-6  # mteb rounds all but MRR to 5 decimals
        assert ours.scores[key] == pytest.approx(theirs[key], abs=tol), key
    assert theirs["main_score"] == theirs["map_at_1000"] == pytest.approx(ours.main_score, abs=5.1e-6)
    assert 0.3 < ours.main_score < 0.95 and ours.scores["mrr_at_10"] > ours.main_score  # a real, imperfect ranking
    ci = ours.interval
    assert ci.low < ours.main_score < ci.high and ci.n_resamples == 200


def test_queries_go_to_the_query_side_and_a_codec_applies_to_both():
    from repspace.engines.eval.compression import Codec

    data = RerankingData(("cats", "stocks"), (("a cat purrs",), ("stocks fell",)),
                         (("stocks fell", "a dog"), ("a cat purrs", "a dog")), "toy")

    def docs(texts):
        return np.array([[t.count("cat"), t.count("stock"), 1.0] for t in texts])

    def wrong(texts):  # a query side that sees every query as the same vector: ties everywhere
        return np.ones((len(texts), 3))

    assert reranking(docs, data, encode_queries=docs).main_score == 1.0
    assert reranking(docs, data, encode_queries=wrong).main_score < 1.0
    r = reranking(docs, data, encode_queries=docs, codec=Codec(2, "prefix"))
    assert r.info["codec"]["dims"] == 2 and r.info["bytes_per_vector"] == 8 and r.main_score == 1.0
