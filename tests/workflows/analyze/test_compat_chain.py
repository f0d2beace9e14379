"""Compatibility over a chain of updates: the cross-model retrieval matrix on Cranfield against a direct computation
(Procrustes by numpy's SVD, nDCG@10 written out from the judgements), the chain's criteria, CoReS's AC and AM, and
transitivity on planted chains."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval import BeirData, load_beir
from repspace.workflows.analyze import compat_chain

CRANFIELD = Path(__file__).resolve().parents[4] / "shared" / "data" / "cranfield-beir"


def _unit(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, np.float64)
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    return a / np.where(norms > 0, norms, 1.0)


def _ndcg10(q: np.ndarray, d: np.ndarray, data: BeirData) -> float:
    """trec_eval's ndcg_cut_10 written out: gains are the judgement values, log2(rank + 1) discounts."""
    scores = _unit(q) @ _unit(d).T
    out = []
    for i, qid in enumerate(data.query_ids):
        gains = {j: g for j, g in ((data.corpus_ids.index(doc), g) for doc, g in data.qrels[qid].items()) if g > 0}
        top = np.argsort(-scores[i], kind="stable")[:10]
        dcg = sum(gains.get(int(j), 0) / np.log2(r + 2) for r, j in enumerate(top))
        ideal = sorted(gains.values(), reverse=True)[:10]
        out.append(dcg / sum(g / np.log2(r + 2) for r, g in enumerate(ideal)))
    return float(np.mean(out))


def _procrustes(src: np.ndarray, dst: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Centred orthogonal Procrustes from src to dst (the smaller side zero-padded), applied to q."""
    s, t = np.asarray(src, np.float64), np.asarray(dst, np.float64)
    ms, mt = s.mean(axis=0), t.mean(axis=0)
    dim = max(s.shape[1], t.shape[1])
    pad = np.zeros((dim, dim))
    pad[:s.shape[1], :t.shape[1]] = (s - ms).T @ (t - mt)
    u, _, vt = np.linalg.svd(pad)
    W = (u @ vt)[:s.shape[1], :t.shape[1]]
    return (np.asarray(q, np.float64) - ms) @ W + mt


@pytest.fixture(scope="module")
def chain_vectors():
    if not CRANFIELD.is_dir():
        pytest.skip(f"{CRANFIELD} is absent (the shared data sets)")
    from repspace.engines.encoders import get_encoder

    data = load_beir(CRANFIELD)
    enc = get_encoder("static")
    q, d = enc.encode_queries(list(data.query_texts)), enc.encode(list(data.corpus_texts))
    rng = np.random.default_rng(5)  # two successive "updates": noisy random linear maps, 48-d then 40-d
    both = np.vstack([q, d]).astype(np.float64)
    m1 = both @ rng.normal(size=(both.shape[1], 48)) + 0.3 * both.std() * rng.normal(size=(len(both), 48))
    m2 = m1 @ rng.normal(size=(48, 40)) + 0.3 * m1.std() * rng.normal(size=(len(both), 40))
    n = len(q)
    return data, [q, m1[:n].astype(np.float32), m2[:n].astype(np.float32)], \
        [d, m1[n:].astype(np.float32), m2[n:].astype(np.float32)]


@pytest.mark.numerics
def test_procrustes_chain_matrix_equals_a_direct_computation_on_cranfield(chain_vectors):
    data, qs, ds = chain_vectors
    c = compat_chain(qs, ds, data, method="procrustes", names=["static", "v1", "v2"])
    for i in range(3):
        for j in range(i + 1):
            q = qs[i] if i == j else _procrustes(ds[i], ds[j], qs[i])
            # float32 maps and scores against float64 here: a near-tie at rank 10 may flip (one query of 225)
            assert c.matrix[i, j] == pytest.approx(_ndcg10(q, ds[j], data), abs=2e-3), (i, j)
        assert np.isnan(c.matrix[i, i + 1:]).all()
    d = c.to_dict()
    assert [(p["new_model"], p["old_model"]) for p in d["pairs"]] == [(1, 0), (2, 0), (2, 1)]
    for p in d["pairs"]:
        i, j = p["new_model"], p["old_model"]
        assert (p["old"], p["cross"], p["new"]) == (c.matrix[j, j], c.matrix[i, j], c.matrix[i, i])
        assert p["compatible"] == (c.matrix[i, j] > c.matrix[j, j])
        assert p["update_gain"] == pytest.approx((c.matrix[i, j] - c.matrix[j, j]) / (c.matrix[i, i] - c.matrix[j, j]))
    assert d["ac"] == pytest.approx(np.mean([p["compatible"] for p in d["pairs"]]))
    assert d["am"] == pytest.approx(np.mean(c.matrix[np.tril_indices(3)]))
    t = d["triples"][0]
    assert (t["new"], t["middle"], t["old"]) == (2, 1, 0)
    assert t["holds"] == (not (t["new_middle"] and t["middle_old"]) or t["new_old"])
    assert d["n_queries"] == 225 and d["n_documents"] == 1400 and d["matrix"][0][1] is None


def _toy(n_docs: int = 120, n_q: int = 40, dim: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    docs = rng.normal(size=(n_docs, dim))
    rel = {f"q{i}": {f"d{3 * i}": 1, f"d{3 * i + 1}": 1} for i in range(n_q)}
    data = BeirData(tuple(f"d{i}" for i in range(n_docs)), ("",) * n_docs, tuple(f"q{i}" for i in range(n_q)),
                    ("",) * n_q, rel)
    q = docs[0:3 * n_q:3] + docs[1:3 * n_q:3]
    return data, q, docs, rng


def test_raw_chain_of_noisier_versions_is_transitive_and_an_incompatible_step_breaks_the_chain():
    data, q, docs, rng = _toy()
    # each version sharper than the last (less noise on the queries): compatible at every step
    noise = [rng.normal(size=q.shape) for _ in range(3)]
    qs = [q + s * e for s, e in zip((2.0, 1.0, 0.3), noise, strict=True)]
    c = compat_chain(qs, [docs] * 3, data, method="raw")
    assert np.diff(np.diag(c.matrix)).min() > 0
    assert c.ac == 1.0 and c.transitive and c.triples[0].holds
    # the same queries from the three versions: cell (i, j) is model i's own score on the one shared index
    assert np.allclose(c.matrix[2, :3], c.matrix[2, 2])
    # a rotated last version: its raw queries miss the old indexes (not compatible), the triple's premise fails
    R = np.linalg.qr(rng.normal(size=(8, 8)))[0]
    c2 = compat_chain([qs[0], qs[1], qs[2] @ R], [docs, docs, docs @ R], data, method="raw")
    assert c2.pairs[1].compatibility.compatible is False and c2.transitive


def test_head_chain_measures_every_cell_on_held_out_queries():
    data, q, docs, rng = _toy(seed=1)
    R = np.linalg.qr(rng.normal(size=(8, 8)))[0]
    qs, ds = [q, q @ R + 0.1 * rng.normal(size=q.shape)], [docs, docs @ R]
    c = compat_chain(qs, ds, data, method="head", test_fraction=0.25, seed=0)
    raw = compat_chain(qs, ds, data, method="raw")
    assert c.n_queries == 10 and c.info["n_train_queries"] == 30 and raw.n_queries == 40
    # raw, the rotated model's queries miss the old index; through the heads (one set of prototypes) they find
    # the old documents about as well as the new model's own index (measured 0.482 against 0.505; raw 0.014)
    assert raw.matrix[1, 0] < 0.05 and c.matrix[1, 0] > 0.8 * c.matrix[1, 1] > 0.3


def test_bad_input_is_one_clear_error():
    data, q, docs, _ = _toy()
    with pytest.raises(InputError, match="at least two models"):
        compat_chain([q], [docs], data)
    with pytest.raises(InputError, match="one dimension for every model"):
        compat_chain([q, q[:, :4]], [docs, docs[:, :4]], data, method="raw")
    with pytest.raises(InputError, match="procrustes, ridge, raw, head"):
        compat_chain([q, q], [docs, docs], data, method="lsq")
    with pytest.raises(InputError, match="model 1: 39 query"):
        compat_chain([q, q[:39]], [docs, docs], data)
    with pytest.raises(InputError, match="3 names for 2 models"):
        compat_chain([q, q], [docs, docs], data, names=["a", "b", "c"])
    with pytest.raises(InputError, match="test_fraction"):
        compat_chain([q, q], [docs, docs], data, method="head", test_fraction=1.0)
