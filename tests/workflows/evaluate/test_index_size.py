"""The index-size stress test: its distractor-free point is the plain evaluation; distractors only push down."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.workflows.evaluate.index_size import index_size_stress
from repspace.engines.eval.retrieval import load_beir, retrieval
from repspace.engines.eval.sts import load_sts

pytestmark = pytest.mark.numerics  # compares float means with the plain evaluation's

#: Both sides average the same 225 per-query scores in [0, 1] in different orders: at most 225 roundings apart.
MEAN_TOL = 225 * np.finfo(np.float64).eps


@pytest.fixture(scope="module")
def cranfield(shared_data):
    return load_beir(shared_data / "cranfield-beir")


@pytest.fixture(scope="module")
def stsb_sentences(shared_data):
    """STS-B test's distinct sentences (2,700 or so; 1,400 make Cranfield's index twice its size)."""
    pairs = load_sts(shared_data / "stsb" / "stsb-en-test.csv")
    return list(dict.fromkeys([*pairs.sentences1, *pairs.sentences2]))


@pytest.fixture(scope="module")
def stress(cranfield, stsb_sentences):
    from repspace.engines.encoders import get_encoder

    return index_size_stress(get_encoder("static"), cranfield, stsb_sentences, (1, 2), bootstrap=200)


@pytest.mark.parametrize("system", ["dense", "bm25"])
def test_distractor_free_point_is_the_plain_evaluation(stress, cranfield, system):
    from repspace.engines.encoders import get_encoder

    plain = retrieval(get_encoder("static"), cranfield, lexical=None if system == "dense" else "bm25", bootstrap=200)
    point = next(p for p in stress.points if p.system == system and p.factor == 1)
    assert point.n_documents == 1400 and point.n_distractors == 0 and point.distractors_in_top10 == 0
    assert point.ndcg_at_10 == pytest.approx(plain.scores["ndcg_at_10"], abs=MEAN_TOL)
    assert point.precision_at_10 == pytest.approx(plain.scores["precision_at_10"], abs=MEAN_TOL)
    # The same per-query values resampled with the same seed: the same interval.
    assert (point.ndcg_interval.low, point.ndcg_interval.high) == pytest.approx(
        (plain.interval.low, plain.interval.high), abs=MEAN_TOL)


def test_distractors_only_push_relevant_documents_down_in_an_exact_ranking(stress):
    """Exact cosine: the collection's documents left in a bigger index's top 10 were in the smaller one's."""
    x1, x2 = (p for p in stress.points if p.system == "dense")
    assert x2.n_documents == 2800 and x2.n_distractors == 1400
    assert x2.precision_at_10 <= x1.precision_at_10 and x2.ndcg_at_10 <= x1.ndcg_at_10
    assert x2.distractors_in_top10 > 0
    assert x2.ndcg_drop.difference == pytest.approx(x1.ndcg_at_10 - x2.ndcg_at_10, abs=MEAN_TOL)
    assert x2.ndcg_drop.ci_low <= x2.ndcg_drop.difference <= x2.ndcg_drop.ci_high
    assert stress.to_dict()["points"][1]["ndcg_drop"]["b"] == "x2"


@pytest.mark.parametrize(("factors", "message"), [((1, 3), "needs 2800 distractors"),
                                                  ((2, 1), "increasing"), ((0, 1), "factor")])
def test_bad_factors_are_one_clear_error(cranfield, stsb_sentences, factors, message):
    with pytest.raises(InputError, match=message):
        index_size_stress(None, cranfield, stsb_sentences[:1400], factors, systems=("bm25",), bootstrap=0)


@pytest.fixture(scope="module")
def reduced(cranfield, stsb_sentences):
    from repspace.engines.encoders import get_encoder

    return index_size_stress(get_encoder("static"), cranfield, stsb_sentences, (1, 2),
                             systems=("dense-prefix16", "dense-pca16"), bootstrap=0)


def test_a_prefix_width_is_the_plain_evaluation_of_the_truncated_encoder(reduced, cranfield):
    from repspace.engines.encoders import get_encoder

    enc = get_encoder("static")
    plain = retrieval(lambda texts: np.asarray(enc.encode(texts))[:, :16], cranfield,
                      encode_queries=lambda texts: np.asarray(enc.encode_queries(texts))[:, :16], bootstrap=0)
    point = next(p for p in reduced.points if p.system == "dense-prefix16" and p.factor == 1)
    assert point.ndcg_at_10 == pytest.approx(plain.scores["ndcg_at_10"], abs=MEAN_TOL)


def test_a_pca_width_ranks_as_scikit_learns_pca_of_the_largest_index(reduced, cranfield, stsb_sentences):
    """sklearn's PCA fitted on the x2 index's documents, rows normalised, exact cosine: the same nDCG@10."""
    from sklearn.decomposition import PCA

    from repspace.engines.encoders import get_encoder
    from repspace.engines.eval.ranking import query_scores

    enc = get_encoder("static")
    docs = np.asarray(enc.encode(list(cranfield.corpus_texts) + stsb_sentences[:1400]), dtype=np.float64)
    queries = np.asarray(enc.encode_queries(list(cranfield.query_texts)), dtype=np.float64)
    pca = PCA(16, svd_solver="full").fit(docs)
    d, q = pca.transform(docs), pca.transform(queries)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    ids = np.asarray(list(cranfield.corpus_ids) + [f"distractor:{i}" for i in range(1400)], dtype=object)
    for factor in (1, 2):
        n = factor * 1400
        top = np.argsort(-(q @ d[:n].T), axis=1, kind="stable")[:, :10]
        run = {qid: ids[r].tolist() for qid, r in zip(cranfield.query_ids, top)}
        want = np.mean([v["ndcg_at_10"] for v in query_scores(run, cranfield.qrels, (10,)).values()])
        point = next(p for p in reduced.points if p.system == "dense-pca16" and p.factor == factor)
        # sign flips of the axes leave cosines unchanged; ties aside, the same top 10 (float64 both sides)
        assert point.ndcg_at_10 == pytest.approx(want, abs=MEAN_TOL)


@pytest.mark.parametrize(("systems", "message"), [(("dense-pca0",), "systems must be"),
                                                  (("dense", "dense"), "distinct"),
                                                  (("dense-prefix64",), "between 1 and 63")])
def test_bad_widths_are_one_clear_error(cranfield, stsb_sentences, systems, message):
    from repspace.engines.encoders import get_encoder

    with pytest.raises(InputError, match=message):
        index_size_stress(get_encoder("static"), cranfield, stsb_sentences[:1400], (1, 2), systems=systems,
                          bootstrap=0)
