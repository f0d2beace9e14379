"""Derived sparse spaces: SAE codes equal the dictionary's own encoding; BM25 impact search equals bm25s's BM25."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace.core.errors import ConflictError, InputError
from repspace.engines.encoders.registry import get_encoder
from repspace.engines.search.lexical import LexicalIndex
from repspace.workflows.dictionary import fit_dictionary, load_dictionary
from repspace.workflows.ingest.derived import derive_bm25, derive_sae_codes, derived_text_query

pytestmark = pytest.mark.numerics


def _cranfield(shared_data, n: int = 300) -> tuple[list[str], list[str], list[str]]:
    folder = shared_data / "cranfield-beir"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")][:n]
    queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").open(encoding="utf-8")][:25]
    return [d["_id"] for d in docs], [f"{d['title']} {d['text']}" for d in docs], queries


@pytest.fixture()
def dense(store, shared_data):
    """300 Cranfield abstracts embedded by the static (model2vec) encoder, with metadata."""
    ids, texts, _ = _cranfield(shared_data)
    enc = get_encoder("static")
    sp = store.create_space("docs", dim=enc.dim, metric="cosine", provenance=enc.provenance())
    sp.add(ids, enc.encode(texts), texts=texts, metadata=[{"n": i} for i in range(len(ids))])
    return sp


def test_sae_codes_equal_the_dictionarys_encoding_and_text_queries_go_through_it(store, dense, shared_data):
    rep = fit_dictionary(dense, 64, 8, epochs=2)
    r = derive_sae_codes(store, "docs", rep.name, "codes")
    codes = store.space("codes")
    d = load_dictionary(dense, rep.name)
    want = d.transform(dense.vectors()).toarray()
    rows, got = codes.sparse_rows()
    got = got.to_scipy().toarray()
    assert got.shape == want.shape and r.nnz <= 8 * len(want)
    # float32 values written and read back: equal to the model's within its rounding
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert (got >= 0).all() and (np.count_nonzero(got, axis=1) <= 8).all()
    assert codes.ids() == dense.ids()
    item = codes.get(["11"])[0]
    assert item.metadata == {"n": 10} and item.text == dense.get(["11"])[0].text
    # a text query: the static encoder's query side, then the same dictionary
    _, _, queries = _cranfield(shared_data)
    q = derived_text_query(codes, queries[0])
    qv = np.asarray(get_encoder("static").encode_queries([queries[0]]), dtype=np.float32)
    direct = d.transform(qv).toarray()[0]
    assert {int(k): v for k, v in q.items()} == pytest.approx(
        {int(j): float(direct[j]) for j in np.flatnonzero(direct)}, abs=1e-6)
    hits = codes.search(queries[0], k=5)
    scores = got @ direct.astype(np.float64)
    np.testing.assert_allclose([h.score for h in hits], np.sort(scores)[::-1][:5], rtol=0, atol=1e-5)


def test_a_dictionary_of_another_space_encodes_the_source_and_its_text_queries(store, dense, shared_data):
    """Codes from a dictionary fitted on a larger space of the same encoder (Cranfield abstracts 300-1,000)."""
    folder = shared_data / "cranfield-beir"
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")][300:1000]
    enc = get_encoder("static")
    texts = [f"{d['title']} {d['text']}" for d in docs]
    vecs = np.asarray(enc.encode(texts), dtype=np.float32)
    keep = np.flatnonzero(np.linalg.norm(vecs, axis=1) > 0)  # a text of no known word: no direction
    docs, texts = [docs[i] for i in keep], [texts[i] for i in keep]
    big = store.create_space("big", dim=enc.dim, metric="cosine", provenance=enc.provenance())
    big.add([d["_id"] for d in docs], vecs[keep], texts=texts)
    rep = fit_dictionary(big, 64, 8, epochs=2)
    r = derive_sae_codes(store, "docs", rep.name, "codes", dictionary_space="big")
    assert r.recipe["dictionary_space"] == "big" and r.recipe["dictionary_space_uid"] == big.uid
    d = load_dictionary(big, rep.name)
    _, got = store.space("codes").sparse_rows()
    np.testing.assert_allclose(got.to_scipy().toarray(), d.transform(dense.vectors()).toarray(), rtol=0, atol=1e-6)
    _, _, queries = _cranfield(shared_data)
    direct = d.transform(np.asarray(enc.encode_queries([queries[1]]), dtype=np.float32)).toarray()[0]
    q = derived_text_query(store.space("codes"), queries[1])
    assert {int(k): v for k, v in q.items()} == pytest.approx(
        {int(j): float(direct[j]) for j in np.flatnonzero(direct)}, abs=1e-6)
    # cosine: the codes normalised on both sides, as scipy's brute force over the same float32 codes
    derive_sae_codes(store, "docs", rep.name, "codes-cos", dictionary_space="big", metric="cosine")
    assert store.space("codes-cos").metric.value == "cosine"
    hits = store.space("codes-cos").search(queries[1], k=5)
    want = got.to_scipy().toarray().astype(np.float64)
    want /= np.maximum(np.linalg.norm(want, axis=1, keepdims=True), 1e-300)
    cos = want @ (direct / np.linalg.norm(direct))
    np.testing.assert_allclose([h.score for h in hits], np.sort(cos)[::-1][:5], rtol=0, atol=1e-5)
    with pytest.raises(InputError, match="metric"):
        derive_sae_codes(store, "docs", rep.name, "codes-l2", dictionary_space="big", metric="l2")
    # the dictionary's space must stay current: a changed one refuses text queries, as the source's own would
    big.delete([docs[0]["_id"]])
    with pytest.raises(ConflictError, match="stale"):
        derived_text_query(store.space("codes"), queries[1])


def test_a_dictionary_of_another_encoder_or_dimension_is_refused(store, dense):
    other = store.create_space("other", dim=dense.dim, metric="cosine", provenance={"encoder": "minilm"})
    other.add([f"o{j}" for j in range(300)], np.random.default_rng(0).standard_normal((300, dense.dim)))
    rep = fit_dictionary(other, 16, 4, epochs=1)
    with pytest.raises(InputError, match="embedded differently"):
        derive_sae_codes(store, "docs", rep.name, "codes", dictionary_space="other")
    narrow = store.create_space("narrow", dim=8, metric="cosine", provenance=dense.provenance)
    narrow.add([f"n{j}" for j in range(300)], np.random.default_rng(0).standard_normal((300, 8)))
    rep = fit_dictionary(narrow, 16, 4, epochs=1)
    with pytest.raises(InputError, match="dimension 8"):
        derive_sae_codes(store, "docs", rep.name, "codes", dictionary_space="narrow")
    assert "codes" not in [s.name for s in store.spaces()]


def test_bm25_impact_search_equals_bm25s(store, dense, shared_data):
    ids, texts, queries = _cranfield(shared_data)
    r = derive_bm25(store, "docs", "lex")
    lex = store.space("lex")
    assert r.count == len(ids) and r.kind == "bm25" and lex.feature_names() == sorted(lex.feature_names())
    ix = LexicalIndex.build(texts, np.arange(len(texts)))
    ref_scores, ref_rows = ix.search(queries, k=10)
    for q, s_ref, r_ref in zip(queries, ref_scores, ref_rows):
        hits = lex.search(q, k=10)
        got = np.array([h.score for h in hits])
        n = int((r_ref >= 0).sum())
        # the same sums of float32 bm25s weights in float64 (bm25s's own scores are float32): 1e-5 relative
        np.testing.assert_allclose(got[:n], s_ref[:n], rtol=1e-5, atol=1e-6)
        for h, row, s in zip(hits, r_ref[:n], s_ref[:n]):  # ids equal except where scores tie
            if ids[row] != h.id:
                assert abs(h.score - s) <= 1e-5 * abs(s)


def test_refusals_leave_the_store_unchanged(store, dense):
    derive_bm25(store, "docs", "lex")
    before = store.space("lex").info().generation
    with pytest.raises(InputError, match="exists"):
        derive_bm25(store, "docs", "lex")
    with pytest.raises(InputError, match="method"):
        derive_bm25(store, "docs", "lex2", method="bm25l")
    assert store.space("lex").info().generation == before
    assert "lex2" not in [s.name for s in store.spaces()]
    with pytest.raises(InputError, match="no term of the query"):
        derived_text_query(store.space("lex"), "zzzqqq")
    plain = store.create_space("plain", dim=3, layout="sparse")
    with pytest.raises(InputError, match="no encoder"):
        derived_text_query(plain, "wing")


def test_query_k_codes_text_queries_with_more_latents_than_the_items(store, dense, shared_data):
    rep = fit_dictionary(dense, 64, 8, epochs=2)
    assert derive_sae_codes(store, "docs", rep.name, "codes").recipe["query_k"] == 8  # default: the items' k
    r = derive_sae_codes(store, "docs", rep.name, "codes-all", query_k="all")
    assert (r.recipe["k"], r.recipe["query_k"]) == (8, 0)
    assert store.space("codes-all").provenance["derived"]["query_k"] == 0  # kept in the recipe
    d = load_dictionary(dense, rep.name)
    _, got = store.space("codes-all").sparse_rows()
    got = got.to_scipy().toarray()
    assert (np.count_nonzero(got, axis=1) <= 8).all()  # the items stay top-k
    _, _, queries = _cranfield(shared_data)
    qv = np.asarray(get_encoder("static").encode_queries([queries[2]]), dtype=np.float64)
    # every positive pre-activation, from the model's arrays in float64: ReLU((x̂ - b_pre) W_encᵀ + b_lat)
    x = qv / np.linalg.norm(qv)
    m = d.model
    pre = (x - m.pre_bias_.astype(np.float64)) @ m.encoder_.astype(np.float64).T + m.latent_bias_
    want = np.maximum(pre[0], 0.0)
    q = derived_text_query(store.space("codes-all"), queries[2])
    assert len(q) == np.count_nonzero(want) > 8
    # float32 pre-activations against float64 ones: 384 products of unit-scale terms, well within 1e-5
    assert {int(k): v for k, v in q.items()} == pytest.approx(
        {int(j): float(want[j]) for j in np.flatnonzero(want)}, abs=1e-5)
    hits = store.space("codes-all").search(queries[2], k=5)
    np.testing.assert_allclose([h.score for h in hits], np.sort(got @ want)[::-1][:5], rtol=0, atol=1e-4)
    derive_sae_codes(store, "docs", rep.name, "codes-16", query_k=16)
    q16 = derived_text_query(store.space("codes-16"), queries[2])
    top16 = np.argsort(-want, kind="stable")[:16]
    assert sorted(int(k) for k in q16) == sorted(int(j) for j in top16 if want[j] > 0)


def test_decoder_query_code_is_the_querys_top_inner_products_with_the_atoms(store, dense, shared_data):
    rep = fit_dictionary(dense, 64, 8, epochs=2)
    r = derive_sae_codes(store, "docs", rep.name, "codes-dec", query_code="decoder", query_k=20)
    assert (r.recipe["query_code"], r.recipe["query_k"]) == ("decoder", 20)
    d = load_dictionary(dense, rep.name)
    _, _, queries = _cranfield(shared_data)
    qv = np.asarray(get_encoder("static").encode_queries([queries[3]]), dtype=np.float64)[0]
    u = d.model.components_.astype(np.float64) @ (qv / np.linalg.norm(qv))  # x · atom_j for every atom
    top = np.argsort(-u, kind="stable")[:20]
    want = {int(j): float(u[j]) for j in top if u[j] > 0}
    q = derived_text_query(store.space("codes-dec"), queries[3])
    assert {int(k): v for k, v in q.items()} == pytest.approx(want, abs=1e-5)
    # the score is the query's inner product with each item's decoding (less b_pre and the dropped weights)
    _, got = store.space("codes-dec").sparse_rows()
    z = got.to_scipy().toarray().astype(np.float64)
    full = d.transform(dense.vectors()).toarray().astype(np.float64) @ d.model.components_.astype(np.float64)
    qn = qv / np.linalg.norm(qv)
    kept = np.zeros(64)
    kept[list(want)] = list(want.values())
    np.testing.assert_allclose(z @ kept, full @ qn - z @ np.where(np.isin(np.arange(64), list(want)), 0.0, u),
                               rtol=0, atol=1e-4)
    with pytest.raises(InputError, match="query coding"):
        derive_sae_codes(store, "docs", rep.name, "codes-x", query_code="dense")


def test_bad_query_k_is_refused_and_nothing_is_written(store, dense):
    rep = fit_dictionary(dense, 64, 8, epochs=1)
    for bad, what in ((-1, "between 0"), (65, "between 0"), ("many", "integer"), (2.5, "integer")):
        with pytest.raises(InputError, match=what):
            derive_sae_codes(store, "docs", rep.name, "codes", query_k=bad)
    assert "codes" not in [s.name for s in store.spaces()]
