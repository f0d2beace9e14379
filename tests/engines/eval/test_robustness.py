"""Robustness: each drop is the difference of two task scores computed apart, with a paired interval and test.

The references: :func:`sts` and :func:`retrieval` run on data sets whose texts were perturbed beforehand
(:func:`perturb`, the same seed); scipy's bootstrap and permutation test through paired_comparison (tested
against ranx and a numpy bootstrap in test_uncertainty.py) on the per-unit arrays recomputed here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from _data_subsets import cranfield_head

from repspace.core.errors import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval.perturb import PERTURBATIONS, perturb
from repspace.engines.eval.retrieval import load_beir, retrieval
from repspace.engines.eval.robustness import retrieval_robustness, sts_robustness
from repspace.engines.eval.sts import StsPairs, load_sts, paired_cosine, sts
from repspace.engines.eval.uncertainty import paired_comparison, spearman_statistic
from repspace.engines.learn.wordnet import wordnet_available

pytestmark = pytest.mark.numerics

#: Every perturbation this machine can run (synonyms needs Debian's wordnet-base).
KINDS = PERTURBATIONS if wordnet_available() else tuple(k for k in PERTURBATIONS if k != "synonyms")


def subset(pairs: StsPairs, n: int, seed: int = 0) -> StsPairs:
    """``n`` pairs drawn without replacement (seeded), in file order."""
    keep = np.sort(np.random.default_rng(seed).choice(len(pairs), size=n, replace=False))
    return StsPairs([pairs.sentences1[i] for i in keep], [pairs.sentences2[i] for i in keep], pairs.scores[keep],
                    pairs.name, pairs.split)


@pytest.fixture(scope="module")
def stsb(shared_data: Path) -> StsPairs:
    return load_sts(shared_data / "stsb" / "stsb-en-test.csv")


def perturbed_pairs(pairs: StsPairs, kind: str, rate: float, seed: int) -> StsPairs:
    texts = perturb(pairs.texts(), kind, rate=rate, seed=seed)
    n = len(pairs)
    return replace(pairs, sentences1=texts[:n], sentences2=texts[n:])


def test_sts_drops_are_differences_of_sts_scores_with_intervals_around_them(stsb):
    pairs = subset(stsb, 300)
    static = get_encoder("static")
    r = sts_robustness(static, pairs, KINDS, rate=0.2, seed=3, bootstrap=300)
    original = sts(static, pairs, bootstrap=0).main_score
    assert r.original == pytest.approx(original, abs=1e-12)
    assert r.interval is not None and r.interval.low < r.original < r.interval.high
    assert [p.perturbation for p in r.perturbed] == list(KINDS)
    gold = pairs.scores
    base = static.encode(pairs.texts())
    for p in r.perturbed:
        moved = perturbed_pairs(pairs, p.perturbation, 0.2, 3)
        score = sts(static, moved, bootstrap=0).main_score
        assert p.score == pytest.approx(score, abs=1e-12)
        assert p.drop == pytest.approx(original - score, abs=1e-12)
        assert p.changed == sum(a != b for a, b in zip(pairs.texts(), moved.texts())) and p.texts == 600
        assert p.ci_low <= p.drop <= p.ci_high, p
        # the same comparison made here on the arrays: (gold, cosine) rows of the original and perturbed pairs
        vec = static.encode(moved.texts())
        ref = paired_comparison(spearman_statistic, (gold, paired_cosine(base[:300], base[300:])),
                                (gold, paired_cosine(vec[:300], vec[300:])), n_resamples=300, seed=3)
        assert (p.ci_low, p.ci_high, p.p_value) == pytest.approx((ref.ci_low, ref.ci_high, ref.p_value), abs=1e-12)
    drops = r.drops()
    assert drops["typos"] > 0.02 and r.perturbed[0].p_value < 0.01  # typos hurt a static model, clearly
    if "reorder" in drops:
        # reorder is rare on STS-B (a handful of sentences qualify); a perturbation that changes nothing drops 0
        row = r.perturbed[list(KINDS).index("reorder")]
        if row.changed == 0:
            assert (row.drop, row.ci_low, row.ci_high, row.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_the_same_seed_gives_the_same_result_and_bootstrap_zero_gives_no_interval(stsb):
    pairs = subset(stsb, 120, seed=1)
    static = get_encoder("static")
    a = sts_robustness(static, pairs, "typos,casing", seed=5, bootstrap=100)
    b = sts_robustness(static, pairs, ["typos", "casing"], seed=5, bootstrap=100)
    assert a.to_dict() | {"evaluation_time": 0} == b.to_dict() | {"evaluation_time": 0}
    c = sts_robustness(static, pairs, "typos", seed=5, bootstrap=0)
    assert c.interval is None and c.perturbed[0].ci_low is None and c.perturbed[0].p_value is None
    assert c.perturbed[0].drop == a.perturbed[0].drop
    d = c.to_dict()
    assert d["ci_low"] is None and d["perturbed"][0]["perturbation"] == "typos" and d["repspace"]["units"] == "pairs"


@pytest.mark.slow  # loads MiniLM
def test_minilm_drops_under_typos(stsb):
    pairs = subset(stsb, 200)
    (typo,) = sts_robustness(get_encoder("minilm"), pairs, "typos", seed=0, bootstrap=500).perturbed
    assert typo.drop > 0 and typo.changed > 350


def test_retrieval_perturbs_the_queries_only_and_drops_are_differences_of_retrieval_scores(tmp_path, shared_data):
    data = load_beir(cranfield_head(shared_data, tmp_path / "cran", 400, judged_queries_only=True))
    static = get_encoder("static")
    r = retrieval_robustness(static, data, "typos,casing,punctuation", rate=0.2, seed=1, bootstrap=200)
    original = retrieval(static, data, bootstrap=0).main_score
    assert r.original == pytest.approx(original, abs=1e-12)
    assert r.info["units"] == "queries" and r.info["n_units"] == data.n_queries
    for p in r.perturbed:
        queries = perturb(list(data.query_texts), p.perturbation, rate=0.2, seed=1)
        score = retrieval(static, replace(data, query_texts=tuple(queries)), bootstrap=0).main_score
        assert p.score == pytest.approx(score, abs=1e-12)
        assert p.drop == pytest.approx(original - score, abs=1e-12)
        assert p.changed == sum(a != b for a, b in zip(data.query_texts, queries)) and p.texts == data.n_queries
        assert p.ci_low <= p.drop <= p.ci_high and 0 < p.p_value <= 1


def test_bad_arguments_fail_before_anything_is_embedded(stsb):
    def encode(texts):
        raise AssertionError("embedded before the arguments were checked")

    pairs = subset(stsb, 10)
    for kwargs, message in (({"rate": 0.0}, "rate must be"), ({"seed": -1}, "seed must be"),
                            ({"bootstrap": -5}, "bootstrap must be"), ({"perturbations": "typo"}, "one of")):
        with pytest.raises(InputError, match=message):
            sts_robustness(encode, pairs, **kwargs)
