"""Shen et al.'s compatibility criteria in the upgrade check, on real Cranfield data (the upgrade tests' vectors),
against a direct computation from the judgements; and the d-simplex heads on the same data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.engines.align import RidgeMap
from repspace.engines.eval import load_beir
from repspace.workflows.analyze import compat_head_retrieval
from repspace.workflows.upgrade import upgrade_retrieval

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield-beir"
pytestmark = [pytest.mark.skipif(not CRANFIELD.is_dir(), reason=f"{CRANFIELD} is absent (the shared data sets)"),
              pytest.mark.numerics]


@pytest.fixture(scope="module")
def cranfield():
    from repspace.engines.encoders import get_encoder

    data = load_beir(CRANFIELD)
    enc = get_encoder("static")
    q, d = enc.encode_queries(list(data.query_texts)), enc.encode(list(data.corpus_texts))
    rng = np.random.default_rng(5)  # the "new model": a random linear map of the old one plus noise
    both = np.vstack([q, d])
    both = both @ rng.normal(size=(both.shape[1], 48)) + 0.3 * both.std() * rng.normal(size=(len(both), 48))
    return data, q, d, both[:len(q)].astype(np.float32), both[len(q):].astype(np.float32)


def test_mapped_rows_carry_both_criteria_equal_to_a_direct_computation(cranfield):
    data, q, d, qn, dn = cranfield
    r = upgrade_retrieval(q, d, qn, dn, data, pairs=["all"], methods=["ridge"], repeats=1)
    row, old, new = r.row("mapped", "ridge", len(d)), r.row("old"), r.row("new")
    mapped = RidgeMap().fit(dn, d).transform(qn)  # the same fit on all documents (deterministic)
    def unit(a: np.ndarray) -> np.ndarray:  # a zero row (a text of no known word) stays zero: cosine 0
        norms = np.linalg.norm(np.asarray(a, np.float64), axis=1, keepdims=True)
        return np.asarray(a, np.float64) / np.where(norms > 0, norms, 1.0)

    s_old, s_new = unit(q) @ unit(d).T, unit(mapped) @ unit(d).T
    col = {doc: j for j, doc in enumerate(data.corpus_ids)}
    rel = np.zeros(s_old.shape, dtype=bool)
    for i, qid in enumerate(data.query_ids):
        for doc, gain in data.qrels[qid].items():
            rel[i, col[doc]] = gain > 0
    closer = np.mean(s_new[rel] >= s_old[rel])
    farther = np.mean(s_new[~rel] <= s_old[~rel])
    # float32 map and cosines against float64 here: a pair within ~1e-6 of a tie may flip, 5 pairs of slack
    assert row.relevant_closer == pytest.approx(closer, abs=5 / rel.sum())
    assert row.irrelevant_farther == pytest.approx(farther, abs=5 / (~rel).sum())
    assert row.compatible == (row.ndcg_at_10 > old.ndcg_at_10)
    assert row.update_gain == pytest.approx((row.ndcg_at_10 - old.ndcg_at_10) / (new.ndcg_at_10 - old.ndcg_at_10))
    assert row.strict_compatible is False and 0.0 < row.relevant_closer < 1.0
    assert old.compatible is None and "relevant_closer" in r.to_dict()["rows"][2]


@pytest.mark.slow  # about 40 s: two heads of 157 classes fitted on 300-d and 48-d vectors
def test_simplex_heads_make_an_incompatible_new_model_searchable(cranfield):
    data, q, d, qn, dn = cranfield
    r = compat_head_retrieval(q, d, qn, dn, data, test_fraction=0.3, l2=1e-3)
    assert r.before is None  # 48-d new vectors cannot search the 300-d old index at all
    a = r.after
    assert r.n_test == 68 and r.n_classes == 225 - 68 and a.metric == "ndcg_at_10"
    # new queries through their head find relevant old documents (through theirs) far above chance
    assert a.cross > 0.5 * a.old and a.cross > 0.05
