"""Summarization scored as mteb 2.26.24's SummarizationEvaluator (SummEvalSummarization.v2's) scores it.

The data is the small hand-written set of ``_summarization_data`` (SummEval itself cannot be had here);
the references are scipy's correlations and mteb's own evaluator run in-process on the same vectors.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _summarization_data import HAND_BUILT, write_hand_built
from scipy import stats

from repspace.core.errors import InputError
from repspace.engines.eval import SummarizationData, load_summarization, summarization, summarization_scores

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture()
def summeval_file(tmp_path: Path) -> Path:
    return write_hand_built(tmp_path / "summeval-hand-test.jsonl")


# ---------------------------------------------------------------------------- loading


def test_load_summarization_reads_summevals_layout(summeval_file):
    data = load_summarization(summeval_file)
    assert len(data) == 5 and data.split == "test" and data.name == "summeval-hand-test"
    assert data.human_scores[0].tolist() == [4.67, 1.67, 3.33, 4.0, 1.0]
    assert len(data.summaries()) == sum(len(r["human_summaries"]) + len(r["machine_summaries"]) for r in HAND_BUILT)


@pytest.mark.parametrize("row, message", [
    ({"human_summaries": ["a"], "machine_summaries": ["b", "c"]}, ":2: no human scores ('relevance')"),
    ({"human_summaries": ["a"], "machine_summaries": ["b", "c"], "relevance": [1.0]},
     ":2: 2 machine summaries but 1 human scores"),
    ({"human_summaries": [], "machine_summaries": ["b"], "relevance": [1.0]}, "'human_summaries' must be a non-empty"),
    ({"human_summaries": ["a"], "machine_summaries": ["b"], "relevance": ["high"]}, "list of finite numbers"),
    ({"human_summaries": ["a"], "machine_summaries": ["b"], "relevance": [float("nan")]}, "list of finite numbers"),
])
def test_a_text_without_its_human_scores_is_one_error_line(tmp_path, row, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(HAND_BUILT[0]) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        load_summarization(path)
    assert "\n" not in str(e.value)


def test_data_of_mismatched_lengths_is_refused():
    with pytest.raises(InputError, match="text 1 has 2 machine summaries but 1 human scores"):
        SummarizationData(("t",), (("a",),), (("b", "c"),), (np.array([1.0]),))


# ---------------------------------------------------------------------------- scores, worked and against scipy


def test_scores_are_scipys_correlations_of_the_best_similarity_averaged_over_texts():
    rng = np.random.default_rng(11)
    refs = [rng.normal(size=(3, 6)), rng.normal(size=(2, 6))]
    machine = [rng.normal(size=(5, 6)), rng.normal(size=(4, 6))]
    gold = [rng.uniform(1, 5, 5), rng.uniform(1, 5, 4)]

    def best(m, r, cosine):
        if cosine:
            m = m / np.linalg.norm(m, axis=1, keepdims=True)
            r = r / np.linalg.norm(r, axis=1, keepdims=True)
        return (m @ r.T).max(axis=1)

    s = summarization_scores(refs, machine, gold)
    for kind, cosine in (("cosine", True), ("dot", False)):
        sp = [stats.spearmanr(g, best(m, r, cosine)).statistic for r, m, g in zip(refs, machine, gold)]
        pe = [stats.pearsonr(g, best(m, r, cosine)).statistic for r, m, g in zip(refs, machine, gold)]
        assert s[f"{kind}_spearman"] == pytest.approx(np.mean(sp), abs=1e-12)
        assert s[f"{kind}_pearson"] == pytest.approx(np.mean(pe), abs=1e-12)
    assert s["spearman"] == s["cosine_spearman"] and s["pearson"] == s["cosine_pearson"]
    assert s["dot_spearman"] != s["cosine_spearman"]  # raw vectors: the two similarities rank differently


def test_texts_without_a_defined_correlation_are_left_out_and_none_left_is_an_error():
    refs = [np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]])]
    machine = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])]
    s = summarization_scores(refs, machine, [np.array([5.0, 1.0]), np.array([3.0, 3.0])])
    assert s["spearman"] == pytest.approx(1.0, abs=1e-15)  # the second text (equal human scores) is left out
    with pytest.raises(InputError, match="every correlation is undefined"):
        summarization_scores(refs[1:], machine[1:], [np.array([3.0, 3.0])])


# ---------------------------------------------------------------------------- against mteb itself


def test_scores_equal_mtebs_summarization_evaluator(summeval_file):
    from _mteb_inprocess import SummarizationTask, TableEncoder, evaluate

    from repspace.engines.encoders import get_encoder

    data = load_summarization(summeval_file)
    texts = data.summaries()
    table = dict(zip(texts, get_encoder("static", normalize=False).encode(texts)))  # raw: dot differs from cosine
    ours = summarization(lambda t: np.array([table[x] for x in t]), data, bootstrap=200)
    rows = {k: [r[k] for r in HAND_BUILT] for k in ("text", "human_summaries", "machine_summaries", "relevance")}
    theirs = evaluate(SummarizationTask(rows), TableEncoder(table))
    # mteb takes the cosines and dot products in float32 (torch): its correlations agree to float32's precision
    for key in ("cosine_spearman", "cosine_pearson", "dot_spearman", "dot_pearson", "spearman", "pearson"):
        assert ours.scores[key] == pytest.approx(theirs[key], abs=1e-6), key
    assert theirs["main_score"] == theirs["cosine_spearman"] == pytest.approx(ours.main_score, abs=1e-6)
    assert ours.info == {"n_texts": 5, "n_summaries": len(texts), "n_skipped_texts": 1}
    assert ours.scores["dot_spearman"] != ours.scores["cosine_spearman"]
    assert 0.3 < ours.main_score <= 1.0  # closer machine summaries were rated higher
    assert ours.interval.low <= ours.main_score <= ours.interval.high and ours.interval.n_resamples > 0
