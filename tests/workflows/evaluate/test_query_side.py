"""Evaluation subjects embed retrieval queries with the query side: encoders, transforms, hubness, spaces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _asymmetric import DOCS, QRELS, QUERIES, SPEC, beir_data, one_torch_thread, registered  # noqa: F401 - autouse

from repspace.engines.encoders import get_encoder
from repspace.workflows.evaluate import encoder_subjects, evaluate, run, space_subject


@pytest.fixture
def synonyms():
    with registered() as encoder:
        yield encoder


@pytest.fixture
def beir_folder(tmp_path: Path) -> Path:
    root = tmp_path / "syn"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n"
                                               for i, t in DOCS.items()))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUERIES.items()))
    (root / "qrels" / "test.tsv").write_text("".join(f"{q}\t{d}\t{s}\n" for q, ds in QRELS.items()
                                                     for d, s in ds.items()))
    return root


def test_run_retrieval_embeds_queries_on_the_query_side(synonyms, beir_folder: Path) -> None:
    (r,) = run("retrieval", beir_folder, encoder=SPEC).results
    assert r.main_score == 1.0 and synonyms.query_calls == 1


@pytest.mark.parametrize("options", [{"transform": "center"}, {"hubness": "csls", "kappa": 1},
                                     {"transform": "center", "hubness": "csls", "kappa": 1}])
def test_transforms_and_hubness_keep_the_query_side(synonyms, options: dict) -> None:
    (r,) = evaluate("retrieval", encoder_subjects(SPEC), beir_data(), **options)
    assert r.main_score == 1.0


def test_progress_names_the_query_phase(synonyms) -> None:
    phases: list[str] = []
    (subject,) = encoder_subjects(SPEC, progress=lambda phase, done, total: phases.append(phase))
    evaluate("retrieval", [subject], beir_data())
    assert "encode" in phases and "encode queries" in phases


@pytest.mark.slow
def test_symmetric_subjects_share_one_cache_entry_per_text() -> None:
    (subject,) = encoder_subjects("static")
    assert not subject.encode.asymmetric
    a = subject.encode(["a cat"])
    np.testing.assert_array_equal(subject.encode.encode_queries(["a cat"]), a)
    assert subject.encode.n_encoded == 1
    layers = encoder_subjects("hf-layers:minilm", layer=[0, 6])
    np.testing.assert_array_equal(layers[1].encode.encode_queries(["a cat"]), layers[1].encode(["a cat"]))
    assert layers[0].encode.n_encoded == 1 and not layers[0].encode.asymmetric


@pytest.mark.slow
def test_e5_subject_caches_queries_and_documents_apart() -> None:
    enc = get_encoder("e5")
    (subject,) = encoder_subjects("e5")
    text = ["what is the boundary layer of a wing"]
    doc, query = subject.encode(text), subject.encode.encode_queries(text)
    np.testing.assert_array_equal(doc, enc.encode(text))
    np.testing.assert_array_equal(query, enc.encode_queries(text))
    assert not np.allclose(doc, query, atol=1e-3)
    subject.encode(text), subject.encode.encode_queries(text)
    assert subject.encode.n_encoded == 2


def test_a_space_of_an_asymmetric_encoder_embeds_queries_with_its_query_side(synonyms, store) -> None:
    data = beir_data()
    # the space stores the documents and, as an item, the text of one query (a document vector)
    texts = [*DOCS.values(), "feline"]
    store.create_space("syn", dim=synonyms.dim, provenance=synonyms.provenance()).add(
        [*DOCS, "note"], synonyms.encode(texts), texts=texts)
    subject = space_subject(store, "syn")
    assert subject.encode.asymmetric
    np.testing.assert_array_equal(subject.encode.encode_queries(["feline"]), synonyms.encode_queries(["feline"]))
    np.testing.assert_array_equal(subject.encode(["feline"]), synonyms.encode(["feline"]))
    (r,) = evaluate("retrieval", [subject], data)
    assert r.main_score == 1.0 and r.info["documents_from_space"] == len(DOCS)


def test_a_space_of_a_symmetric_encoder_answers_queries_from_its_vectors(store) -> None:
    enc = get_encoder("static")
    store.create_space("sym", dim=enc.dim, provenance=enc.provenance()).add(
        ["x"], enc.encode(["a cat"]), texts=["a cat"])
    subject = space_subject(store, "sym")
    assert not subject.encode.asymmetric
    subject.encode.encode_queries(["a cat"])
    assert subject.encode.n_encoded == 0
