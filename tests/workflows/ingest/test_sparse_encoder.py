"""A sentence-transformers SparseEncoder folder as a sparse space's encoder, through the CLI: the stored rows are
the model's own ``encode_document`` and a text search is its ``encode_query`` scored against them by scipy.

No model with a masked-language head ships here, so the folder is a real inference-free SparseEncoder built
locally (a ``SparseStaticEmbedding`` of IDF weights over Cranfield, on the bundled MiniLM tokenizer) and
saved with ``model.save``; sentence-transformers loads it again as a user's folder would be.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sps
from _cli_process import one_error_line, run_quiet

from repspace import Store
from repspace.engines.encoders.sparse_st import tiny_sparse_folder

pytestmark = [pytest.mark.slow, pytest.mark.numerics]  # loads a sentence-transformers model


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory):
    folder = shared_data / "cranfield-beir"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")][:150]
    queries = [json.loads(line)["text"] for line in (folder / "queries.jsonl").open(encoding="utf-8")][:6]
    texts = [f"{d['title']} {d['text']}" for d in docs]
    tmp = tmp_path_factory.mktemp("sparse-encoder")
    model = tiny_sparse_folder(tmp / "model", texts)
    data = tmp / "docs.jsonl"
    data.write_text("".join(json.dumps({"id": d["_id"], "text": t}) + "\n" for d, t in zip(docs, texts)))
    return tmp, model, data, [d["_id"] for d in docs], texts, queries


def _to_csr(t) -> sps.csr_array:
    coo = t.coalesce()
    ij = coo.indices().numpy()
    return sps.csr_array((coo.values().numpy().astype(np.float64), (ij[0], ij[1])), shape=tuple(coo.shape))


def test_ingest_and_text_search_are_the_models_own(corpus, capsys):
    from sentence_transformers import SparseEncoder

    tmp, model_dir, data, ids, texts, queries = corpus
    db = str(tmp / "s.db")
    r = run_quiet(capsys, "--store", db, "ingest", "spl", str(data), "--encoder", f"sparse:{model_dir}", "--json")
    assert r.code == 0, r.err
    sp = Store(db, readonly=True).space("spl")
    model = SparseEncoder(str(model_dir), device="cpu", local_files_only=True)
    assert sp.info().layout == "sparse" and sp.dim == model.get_embedding_dimension()
    assert sp.feature_names() == model.tokenizer.convert_ids_to_tokens(list(range(sp.dim)))
    assert sp.provenance["encoder"] == f"sparse:{model_dir}" and len(sp.provenance["model_fingerprint"]) == 64
    docs = _to_csr(model.encode_document(texts, convert_to_sparse_tensor=True))
    stored = sp.sparse_of(ids).to_scipy()
    assert (stored.indptr.tolist(), stored.indices.tolist()) == (docs.indptr.tolist(), docs.indices.tolist())
    np.testing.assert_allclose(stored.data, docs.data, rtol=1e-6)  # float32 weights as the model gives them
    for q in queries:
        qv = _to_csr(model.encode_query([q], convert_to_sparse_tensor=True)).toarray()[0]
        scores = docs @ qv
        order = np.lexsort((np.arange(len(scores)), -scores))[:5]
        got = run_quiet(capsys, "--store", db, "search", "spl", q, "-k", "5", "--json")
        assert got.code == 0, got.err
        hits = json.loads(got.out)
        assert [h["id"] for h in hits] == [ids[i] for i in order]
        np.testing.assert_allclose([h["score"] for h in hits], scores[order], rtol=1e-5)


def test_bad_input_is_one_line(corpus, capsys):
    tmp, model_dir, data, *_ = corpus
    db = str(tmp / "bad.db")
    one_error_line(run_quiet(capsys, "--store", db, "ingest", "x", str(data), "--encoder",
                             f"sparse:{tmp / 'missing'}"), 3, "missing")
    assert run_quiet(capsys, "--store", db, "ingest", "spl", str(data), "--encoder", f"sparse:{model_dir}").code == 0
    # a query whose tokens the model weighs 0 (none occurs in the corpus the IDF was taken on)
    one_error_line(run_quiet(capsys, "--store", db, "search", "spl", "猫"), 2, "matches nothing")
    one_error_line(run_quiet(capsys, "--store", db, "ingest", "spl", str(data), "--encoder", "minilm"), 4,
                   "not 'minilm'")
