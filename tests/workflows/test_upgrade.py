"""The upgrade check on real Cranfield data: arrays in (engine), encoders in (workflow), and the command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval import load_beir
from repspace.interfaces.cli import main
from repspace.workflows.upgrade import parse_pairs, upgrade_check, upgrade_retrieval

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield-beir"
pytestmark = pytest.mark.skipif(not CRANFIELD.is_dir(), reason=f"{CRANFIELD} is absent (the shared data sets)")


@pytest.fixture(scope="module")
def cranfield():
    from repspace.engines.encoders import get_encoder

    data = load_beir(CRANFIELD)
    enc = get_encoder("static")
    return data, enc.encode_queries(list(data.query_texts)), enc.encode(list(data.corpus_texts))


def _rotated(a: np.ndarray, seed: int, noise: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(a.shape[1], a.shape[1])))
    return (a @ q + noise * a.std() * rng.normal(size=a.shape)).astype(np.float32)


def test_a_rotated_new_model_is_fully_recovered_by_procrustes(cranfield):
    data, q, d = cranfield
    q_new, d_new = _rotated(np.vstack([q, d]), 1)[:len(q)], _rotated(np.vstack([q, d]), 1)[len(q):]
    r = upgrade_retrieval(q, d, q_new, d_new, data, pairs=[100, "all"], methods=["procrustes", "ridge"],
                          repeats=2)
    old = r.row("old").ndcg_at_10
    # Cosine is rotation-free, up to the float32 rounding of the rotated vectors: for query 120 the
    # documents at ranks 6 and 7 (one relevant) are 3.1e-7 apart, and a swap moves nDCG@10 by 2.8e-5.
    assert 0.05 < old < 0.5 and r.row("new").ndcg_at_10 == pytest.approx(old, abs=1e-4)
    for method in ("procrustes", "ridge"):
        assert r.row("mapped", method, len(d)).ndcg_at_10 == pytest.approx(old, abs=2e-3)
        assert r.row("mapped", method, 100).runs == 2
    assert r.pair_counts == [100, len(d)] and r.methods == ["procrustes", "ridge"]
    assert [row.setting for row in r.rows] == ["old", "new"] + ["mapped"] * 4


def test_fewer_pairs_do_worse_on_a_noisy_new_model(cranfield):
    data, q, d = cranfield
    both = _rotated(np.vstack([q, d]), 2, noise=0.5)
    r = upgrade_retrieval(q, d, both[:len(q)], both[len(q):], data, pairs=[80, 1000], methods=["ridge"],
                          repeats=2)
    assert r.row("mapped", "ridge", 80).ndcg_at_10 < r.row("mapped", "ridge", 1000).ndcg_at_10
    assert r.row("mapped", "ridge", 80).ndcg_at_10_sd >= 0.0


def test_unsupervised_is_given_no_pairs_but_finds_a_rotation(cranfield):
    data, q, d = cranfield
    both = _rotated(np.vstack([q, d]), 3)
    r = upgrade_retrieval(q, d, both[:len(q)], both[len(q):], data, pairs=["all"], methods=["unsupervised"])
    row = r.row("mapped", "unsupervised", len(d))
    assert row.ndcg_at_10 == pytest.approx(r.row("old").ndcg_at_10, abs=5e-3)
    assert row.trusted == 1 and r.info["restarts"] == 3 and r.row("old").trusted is None


def test_counts_at_or_above_the_corpus_are_skipped_and_bad_input_refused(cranfield):
    data, q, d = cranfield
    r = upgrade_retrieval(q, d, q, d, data, pairs="100,5000,all", methods=["procrustes"], repeats=1)
    assert r.skipped_pairs == [5000] and r.pair_counts == [100, len(d)]
    assert json.loads(json.dumps(r.to_dict()))["rows"][0]["setting"] == "old"
    with pytest.raises(InputError, match="an upgrade method must be one of"):
        upgrade_retrieval(q, d, q, d, data, methods=["vec2vec"])
    with pytest.raises(InputError, match="document vectors"):
        upgrade_retrieval(q, d[:10], q, d, data)
    with pytest.raises(InputError, match="positive integers or 'all'"):
        parse_pairs("100,-3")


@pytest.mark.slow  # about 10 s: four upgrade checks, each over the whole Cranfield corpus
def test_workflow_and_command_with_the_same_model_on_both_sides(capsys):
    r = upgrade_check("static", "static", CRANFIELD, pairs=[200, "all"], methods=["procrustes"], repeats=1)
    old = r.row("old").ndcg_at_10
    assert r.row("new").ndcg_at_10 == old and r.row("mapped", "procrustes", 1400).ndcg_at_10 == pytest.approx(old)
    assert r.info["old"]["encoder"] == "static" and r.info["data"]
    code = main(["upgrade-check", "static", "static", "--data", str(CRANFIELD), "--pairs", "100", "--methods",
                 "procrustes", "--repeats", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["rows"][2]["n_pairs"] == 100
    code = main(["upgrade-check", "static", "static", "--data", str(CRANFIELD), "--pairs", "100,all", "--methods",
                 "procrustes", "--repeats", "2"])
    text = capsys.readouterr().out
    assert code == 0 and "mapped: procrustes" in text and "± " in text and "1,400 pairs" in text
    code = main(["upgrade-check", "static", "static", "--data", str(CRANFIELD), "--methods", "nope"])
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1 and "an upgrade method must be one of" in err
