"""The retrieval task: BEIR loading, exact and HNSW search, codecs, and Cranfield end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from repspace.core.errors import InputError
from repspace.core.exact import exact_search
from repspace.engines.eval._encode import TextCache
from repspace.engines.eval.retrieval import (
    SCORE_KEYS,
    load_beir,
    parse_index,
    retrieval,
    retrieval_from_vectors,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

REQUIRED_KEYS = {"ndcg_at_10", "recall_at_10", "recall_at_100", "mrr_at_10", "map_at_100"}


def write_beir(root: Path, corpus, queries, qrels_lines, split="test", header=True) -> Path:
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    head = "query-id\tcorpus-id\tscore\n" if header else ""
    (root / "qrels" / f"{split}.tsv").write_text(head + "".join("\t".join(map(str, ln)) + "\n" for ln in qrels_lines))
    return root


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    corpus = [
        {"_id": "d1", "title": "Cats", "text": "Cats purr and sleep."},
        {"_id": "d2", "title": "", "text": "Dogs bark loudly. "},
        {"_id": 3, "title": "Stocks", "text": "Markets fell today."},
        {"_id": "d4", "text": "A kitten is a young cat."},
    ]
    queries = [
        {"_id": "q1", "text": "cat"},
        {"_id": "q2", "text": "dog"},
        {"_id": "q3", "text": "unjudged query"},
        {"_id": "q4", "text": "only zero judgements"},
    ]
    qrels = [("q1", "d1", 2), ("q1", "d4", 1), ("q1", "d99", 1), ("q2", "d2", 1), ("q2", "3", 0), ("q4", "d1", 0)]
    return write_beir(tmp_path / "toy-set", corpus, queries, qrels)


# ---------------------------------------------------------------------------- load_beir


def test_load_beir(toy):
    data = load_beir(toy)
    assert data.name == "toy-set" and data.split == "test"
    assert data.corpus_ids == ("d1", "d2", "3", "d4")
    assert data.corpus_texts == ("Cats Cats purr and sleep.", "Dogs bark loudly.", "Stocks Markets fell today.",
                                 "A kitten is a young cat.")
    assert data.query_ids == ("q1", "q2") and data.query_texts == ("cat", "dog")
    assert data.qrels == {"q1": {"d1": 2, "d4": 1}, "q2": {"d2": 1, "3": 0}}
    assert data.dropped_qrels == 1  # d99
    assert data.dropped_queries == 2  # q3 (no judgement), q4 (nothing relevant)
    assert data.texts() == list(data.corpus_texts) + ["cat", "dog"]


def test_load_beir_without_header(tmp_path):
    root = write_beir(tmp_path / "x", [{"_id": "d", "text": "t"}], [{"_id": "q", "text": "s"}], [("q", "d", 1)],
                      header=False)
    assert load_beir(root).qrels == {"q": {"d": 1}}


def test_load_beir_errors(toy, tmp_path):
    with pytest.raises(InputError, match="retrieval data folder .*nowhere does not exist"):
        load_beir(tmp_path / "nowhere")
    with pytest.raises(InputError, match=r"qrels.dev\.tsv is missing .*split 'dev'; splits here: test"):
        load_beir(toy, split="dev")

    (toy / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"\n')
    with pytest.raises(InputError, match=r"corpus\.jsonl:2: invalid JSON"):
        load_beir(toy)
    (toy / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n\n{"text": "b"}\n')
    with pytest.raises(InputError, match=r"corpus\.jsonl:3: expected a JSON object with an '_id' field"):
        load_beir(toy)
    (toy / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n')
    with pytest.raises(InputError, match=r"corpus\.jsonl:2: id 'd1' appears a second time"):
        load_beir(toy)
    (toy / "corpus.jsonl").unlink()
    with pytest.raises(InputError, match=r"corpus\.jsonl is missing"):
        load_beir(toy)


@pytest.mark.parametrize(
    "line, message",
    [
        ("q1\td1", r"test\.tsv:3: expected 3 tab-separated fields .*got 2"),
        ("q1\td1\thigh", r"test\.tsv:3: the score 'high' is not an integer"),
        ("q9\td1\t1", r"test\.tsv:3: query id 'q9' is not in queries\.jsonl"),
    ],
)
def test_load_beir_bad_qrels_line(tmp_path, line, message):
    root = write_beir(tmp_path / "b", [{"_id": "d1", "text": "t"}], [{"_id": "q1", "text": "s"}], [("q1", "d1", 1)])
    path = root / "qrels" / "test.tsv"
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(InputError, match=message) as err:
        load_beir(root)
    assert "\n" not in str(err.value)


def test_load_beir_no_relevant_query(tmp_path):
    root = write_beir(tmp_path / "z", [{"_id": "d1", "text": "t"}], [{"_id": "q1", "text": "s"}], [("q1", "d1", 0)])
    with pytest.raises(InputError, match="gives no query of queries.jsonl a relevant document"):
        load_beir(root)


# ---------------------------------------------------------------------------- the task on toy data


def word_counts(texts):
    """A bag-of-words encoder over a fixed vocabulary (deterministic, no model)."""
    vocab = ["cat", "dog", "market", "kitten", "purr", "bark"]
    return np.array([[t.lower().count(w) for w in vocab] + [0.01] for t in texts], dtype=np.float32)


def test_retrieval_on_toy_data(toy):
    calls = []

    def enc(texts):
        calls.append(list(texts))
        return word_counts(texts)

    r = retrieval(enc, toy)
    assert r.task_name == "retrieval:toy-set" and r.split == "test" and r.main_metric == "ndcg_at_10"
    assert REQUIRED_KEYS <= set(r.scores) and set(r.scores) == set(SCORE_KEYS)
    assert r.main_score == pytest.approx(1.0)  # q1 -> d1 (cat x2 after title), d4; q2 -> d2
    assert r.info["n_queries"] == 2 and r.info["n_documents"] == 4 and r.info["index"] == "exact"
    assert r.info["dropped_qrels"] == 1
    assert r.evaluation_time > 0
    # corpus in one call, queries in one call
    assert len(calls) == 2 and len(calls[0]) == 4 and calls[1] == ["cat", "dog"]
    assert retrieval(word_counts, load_beir(toy), name="mine").task_name == "mine"


def test_retrieval_accepts_a_text_cache(toy):
    cache = TextCache(word_counts)
    a = retrieval(cache, toy)
    b = retrieval(cache, toy)
    assert a.scores == b.scores
    assert cache.n_encoded == 6  # each distinct text once


def test_k_larger_than_the_corpus(toy):
    data = load_beir(toy)
    for index in (None, "hnsw8,ef16"):
        r = retrieval(word_counts, data, k=1000, index=index)
        assert r.scores["recall_at_100"] == pytest.approx(1.0)
    short = retrieval(word_counts, data, k=1)  # one document per query
    assert short.scores["recall_at_10"] == pytest.approx((1 / 2 + 1) / 2)


def test_split_and_k_checks(toy):
    with pytest.raises(InputError, match="split 'dev' asked for, but the data given holds split 'test'"):
        retrieval(word_counts, load_beir(toy), split="dev")
    with pytest.raises(InputError, match="k must be a positive integer"):
        retrieval(word_counts, toy, k=0)
    data = load_beir(toy)
    with pytest.raises(InputError, match="3 query and 4 document vectors for 2 queries"):
        retrieval_from_vectors(np.ones((3, 7)), np.ones((4, 7)), data)


def test_parse_index():
    assert parse_index(None) == ("exact", 0, 0)
    assert parse_index("exact") == ("exact", 0, 0)
    assert parse_index("hnsw32") == ("hnsw32,ef128", 32, 128)
    assert parse_index("hnsw32", k=500) == ("hnsw32,ef500", 32, 500)
    assert parse_index("hnsw16,ef64", k=10) == ("hnsw16,ef64", 16, 64)
    for bad in ("hnsw", "ivf1024", "hnsw32,ef", "hnsw32;ef64", "flat", "hnsw1", "hnsw300"):
        with pytest.raises(InputError, match="hnsw|HNSW"):
            parse_index(bad)
    with pytest.raises(InputError, match=r"unknown index 'ivf'; use 'exact', 'hnsw<M>' or 'hnsw<M>,ef<E>'"):
        parse_index("ivf")


def test_hnsw_orders_duplicate_documents_like_exact_search():
    from repspace.engines.eval.retrieval import _search

    rng = np.random.default_rng(0)
    docs = rng.standard_normal((300, 64)).astype(np.float32)
    docs[100:200] = docs[:100]
    docs[200:] = docs[:100]  # every document three times: exact ties, broken by the lower row
    queries = (docs[:30] + 0.3 * rng.standard_normal((30, 64))).astype(np.float32)
    exact = _search(queries, docs, 10, 0, 0)
    approx = _search(queries, docs, 10, 32, 300)  # a beam that finds everything
    # the first 9 are three whole groups of copies (the 10th is any copy of the 4th group: HNSW may
    # return another copy than the lowest row, a miss of the true top 10)
    for a, e in zip(approx, exact):
        assert a[:9].tolist() == e[:9].tolist()


class PrefixCodec:
    """Keeps the first ``keep`` dimensions (a toy compression)."""

    name = "prefix"

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.bytes_per_vector = 4 * keep
        self.fitted_on: tuple[int, ...] | None = None

    def fit(self, x):
        self.fitted_on = x.shape
        return self

    def transform(self, x):
        return np.ascontiguousarray(x[:, : self.keep], dtype=np.float32)

    def to_dict(self):
        return {"name": self.name, "keep": self.keep}


def test_codec(toy):
    data = load_beir(toy)
    codec = PrefixCodec(2)  # "cat", "dog" counts only
    r = retrieval(word_counts, data, codec=codec)
    assert codec.fitted_on == (4, 7)  # fitted on the corpus vectors
    assert r.info["bytes_per_vector"] == 8
    assert r.info["codec"] == {"name": "prefix", "keep": 2}
    d = word_counts(list(data.corpus_texts))[:, :2]
    q = word_counts(list(data.query_texts))[:, :2]
    assert r.scores == retrieval_from_vectors(q, d, data)


# ---------------------------------------------------------------------------- Cranfield, real data


@pytest.fixture(scope="module")
def cranfield(shared_data):
    return load_beir(shared_data / "cranfield-beir")


@pytest.fixture(scope="module")
def static_vectors(cranfield):
    from repspace.engines.encoders import get_encoder

    enc = get_encoder("static")
    return enc.encode(list(cranfield.query_texts)), enc.encode(list(cranfield.corpus_texts))


def test_cranfield_counts(cranfield):
    assert cranfield.n_documents == 1400 and cranfield.n_queries == 225
    assert sum(len(j) for j in cranfield.qrels.values()) == 1612 - cranfield.dropped_qrels
    assert cranfield.name == "cranfield-beir" and cranfield.split == "test"


def test_cranfield_static_matches_pytrec_eval(cranfield, static_vectors):
    from repspace.engines.encoders import get_encoder

    r = retrieval(get_encoder("static"), cranfield)
    q, d = static_vectors
    assert r.scores == retrieval_from_vectors(q, d, cranfield)
    # The same run, scored by trec_eval: rank-based scores keep our order with no ties.
    _, idx = exact_search(q, d, 100, metric="cosine")
    run = {qid: {cranfield.corpus_ids[j]: float(100 - rank) for rank, j in enumerate(row)}
           for qid, row in zip(cranfield.query_ids, idx)}
    ref = pytrec_eval.RelevanceEvaluator(cranfield.qrels, {"ndcg_cut.10", "recall.10,100", "map_cut.100"}).evaluate(run)
    assert len(ref) == 225
    for ours, theirs in [("ndcg_at_10", "ndcg_cut_10"), ("recall_at_10", "recall_10"),
                         ("recall_at_100", "recall_100"), ("map_at_100", "map_cut_100")]:
        assert r.scores[ours] == pytest.approx(np.mean([v[theirs] for v in ref.values()]), abs=1e-12)
    # far above random vectors
    rng = np.random.default_rng(0)
    rand = retrieval(lambda texts: rng.standard_normal((len(texts), 64)), cranfield)
    assert r.main_score > 0.1
    assert rand.main_score < 0.05
    assert r.main_score > 3 * rand.main_score


def test_cranfield_hnsw_equals_exact_with_large_ef(cranfield, static_vectors):
    q, d = static_vectors
    exact = retrieval_from_vectors(q, d, cranfield)
    approx = retrieval_from_vectors(q, d, cranfield, index="hnsw32,ef2000", k=1000)
    assert approx == exact
    # An index searches 100 deep unless told: the cut-offs stop at 100, and those agree with exact search.
    shallow = retrieval_from_vectors(q, d, cranfield, index="hnsw32,ef2000")
    assert "ndcg_at_1000" not in shallow and shallow == {k: v for k, v in exact.items() if not k.endswith("_1000")}
    small = retrieval_from_vectors(q, d, cranfield, index="hnsw8,ef10", k=10)
    assert all(np.isfinite(v) and 0 <= v <= 1 for v in small.values())
    with pytest.raises(InputError, match="unknown index 'hnsw-32'"):
        retrieval_from_vectors(q, d, cranfield, index="hnsw-32")


def test_cranfield_bm25_and_hybrid(cranfield):
    import pytrec_eval

    from repspace.engines.encoders import get_encoder
    from repspace.engines.search.fusion import rrf
    from repspace.engines.search.lexical import LexicalIndex

    calls = []

    def never(texts):
        calls.append(texts)
        raise AssertionError("BM25 alone must not encode")

    bm25 = retrieval(never, cranfield, lexical="bm25")
    assert not calls and bm25.info["index"] == "bm25"
    # Independent run: the same BM25 index used directly, judged by pytrec_eval.
    ix = LexicalIndex.build(list(cranfield.corpus_texts), np.arange(cranfield.n_documents))
    _, rows = ix.search(list(cranfield.query_texts), 100)
    ids = np.asarray(cranfield.corpus_ids, dtype=object)
    run = {q: {ids[r]: float(100 - j) for j, r in enumerate(rr[rr >= 0])} for q, rr in zip(cranfield.query_ids, rows)}
    ev = pytrec_eval.RelevanceEvaluator({q: dict(v) for q, v in cranfield.qrels.items()}, {"ndcg_cut_10"})
    per = ev.evaluate(run)
    assert bm25.main_score == pytest.approx(np.mean([per[q]["ndcg_cut_10"] for q in cranfield.qrels]), abs=1e-9)
    assert 0.33 < bm25.main_score < 0.42  # BM25 on Cranfield (0.373 measured)

    enc = get_encoder("static")
    dense = retrieval(enc, cranfield)
    hybrid = retrieval(enc, cranfield, lexical="hybrid")
    only_bm25 = retrieval(enc, cranfield, lexical="hybrid", lexical_weight=1e6)
    assert hybrid.main_score not in (dense.main_score, bm25.main_score)
    assert only_bm25.main_score == pytest.approx(bm25.main_score, abs=1e-9)  # the dense list only breaks ties
    # The fusion is the RRF of the two rankings, judged independently.
    d_rows = exact_search(enc.encode(list(cranfield.query_texts)), enc.encode(list(cranfield.corpus_texts)), 100,
                          metric="cosine")[1]
    fused_run = {}
    for q, dr, lr in zip(cranfield.query_ids, d_rows, rows):
        _, fused = rrf([dr, lr[lr >= 0]], 100)
        fused_run[q] = {ids[r]: float(100 - j) for j, r in enumerate(fused[fused >= 0])}
    per = ev.evaluate(fused_run)
    assert hybrid.main_score == pytest.approx(np.mean([per[q]["ndcg_cut_10"] for q in cranfield.qrels]), abs=1e-9)
    with pytest.raises(InputError):
        retrieval(enc, cranfield, lexical="splade")


# ---------------------------------------------------------------------------- MTEB's scores


def test_cranfield_scores_are_mtebs_retrieval_scores(cranfield, static_vectors):
    """Every score at every MTEB cut-off equals what mteb 2.26.24's retrieval evaluation computes on the same run."""
    pytest.importorskip("mteb")
    from mteb._evaluators.retrieval_metrics import (
        calculate_retrieval_scores,
        make_score_dict,
    )

    from repspace.engines.eval.retrieval import CUTOFFS, DEPTH

    q, d = static_vectors
    ours = retrieval_from_vectors(q, d, cranfield)
    assert set(ours) == set(SCORE_KEYS) and len(SCORE_KEYS) == 35 and DEPTH == max(CUTOFFS) == 1000
    # the same ranking (top 1000 by cosine) with rank-based scores, so no tie is left to break
    _, idx = exact_search(q, d, DEPTH, metric="cosine")
    run = {qid: {cranfield.corpus_ids[j]: float(DEPTH - rank) for rank, j in enumerate(row)}
           for qid, row in zip(cranfield.query_ids, idx)}
    ev = calculate_retrieval_scores(run, cranfield.qrels, list(CUTOFFS))
    theirs = make_score_dict(ndcg=ev.ndcg, _map=ev.map, recall=ev.recall, precision=ev.precision, mrr=ev.mrr,
                             naucs=ev.naucs, naucs_mrr=ev.naucs_mrr, hit_rate=ev.hit_rate, task_scores={})
    for key in SCORE_KEYS:
        # mteb rounds nDCG, MAP, recall and precision to 5 decimals; MRR is not rounded
        tol = 1e-12 if key.startswith("mrr") else 5.1e-6
        assert ours[key] == pytest.approx(theirs[key], abs=tol), key
    assert ours["recall_at_1000"] > ours["recall_at_100"]  # the deep cut-offs see more than 100 documents


def test_an_exact_ranking_1000_deep_keeps_the_scores_of_a_ranking_100_deep(cranfield, static_vectors):
    q, d = static_vectors
    deep, shallow = retrieval_from_vectors(q, d, cranfield), retrieval_from_vectors(q, d, cranfield, k=100)
    assert shallow == {k: v for k, v in deep.items() if not k.endswith("_1000")}
    bm25_deep = retrieval(None, cranfield, lexical="bm25")
    bm25_shallow = retrieval(None, cranfield, lexical="bm25", k=100)
    assert bm25_deep.info["depth"] == 1000 and bm25_shallow.info["depth"] == 100
    assert bm25_shallow.scores == {k: v for k, v in bm25_deep.scores.items() if not k.endswith("_1000")}
