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
