"""The evaluation workflow: subjects (encoders, layers, spaces), caching, sweeps, recorded results."""

from __future__ import annotations

import numpy as np
import pytest

from repspace import InputError
from repspace.engines.encoders import get_encoder
from repspace.engines.eval._encode import TextCache
from repspace.engines.eval.sts import StsPairs, load_sts, sts_scores
from repspace.workflows.evaluate import encoder_subjects, evaluate, run, space_subject
from repspace.workflows.evaluate._subjects import Subject

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def stsb(shared_data) -> StsPairs:
    full = load_sts(shared_data / "stsb" / "stsb-en-test.csv")
    n = 80
    return StsPairs(full.sentences1[:n], full.sentences2[:n], full.scores[:n], "stsb80", "test")


def _counting_subject(enc, calls: list) -> Subject:
    def encode(texts):
        calls.append(list(texts))
        return enc.encode(texts)

    return Subject("counted", {"encoder": "static"}, TextCache(encode), enc.dim)


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_every_layer_from_one_pass_matches_each_layer_encoded_alone(stsb):
    subjects = encoder_subjects("hf-layers:minilm", layer="all")
    results = evaluate("sts", subjects, stsb)
    assert [r.info["layer"] for r in results] == list(range(7))
    distinct = len(set(stsb.texts()))
    assert subjects[0].encode.n_encoded == distinct  # one pass for all 7 layers
    for layer in (0, 3, 6):
        vec = get_encoder("hf-layers:minilm", layer=layer).encode(stsb.texts())
        alone = sts_scores(vec[: len(stsb)], vec[len(stsb):], stsb.scores)["spearman"]
        assert results[layer].main_score == pytest.approx(alone, abs=1e-6)
    # The layers really differ: the embedding layer is the worst at STS.
    assert results[0].main_score < results[6].main_score


def test_a_sweep_embeds_each_distinct_text_once(stsb):
    from repspace.engines.eval.compression import sweep_codecs

    calls: list = []
    subject = _counting_subject(get_encoder("static"), calls)
    codecs = sweep_codecs([16, 32, None], ["float32", "int8", "binary"], full_dim=64)
    results = evaluate("sts", [subject], stsb, codecs=codecs)
    assert len(results) == len(codecs) >= 9
    assert len(calls) == 1 and len(calls[0]) == len(set(stsb.texts()))
    full = [r for r in results if r.info["codec"]["dims"] in (None, 64) and r.info["codec"]["precision"] == "float32"]
    assert full[0].main_score == pytest.approx(evaluate("sts", encoder_subjects("static"), stsb)[0].main_score)


def test_a_stored_space_answers_for_its_texts_and_its_encoder_for_the_rest(store, stsb):
    enc = get_encoder("static")
    texts = sorted(set(stsb.sentences1))  # only one side of the pairs is stored
    store.create_space("half", dim=enc.dim, provenance=enc.provenance()).add(
        [f"t{i}" for i in range(len(texts))], enc.encode(texts), texts=texts)
    subject = space_subject(store, "half")
    (r,) = evaluate("sts", [subject], stsb)
    (direct,) = evaluate("sts", encoder_subjects("static"), stsb)
    assert r.main_score == pytest.approx(direct.main_score, abs=1e-6)
    assert subject.encode.n_encoded == len(set(stsb.sentences2) - set(texts))
    assert (r.info["space"], r.info["generation"]) == ("half", 1)


def test_a_space_of_precomputed_vectors_cannot_answer_for_unknown_texts(store, stsb):
    store.create_space("pre", dim=2).add(["a"], np.ones((1, 2)), texts=[stsb.sentences1[0]])
    with pytest.raises(InputError, match="space pre holds no vector for .* cannot embed them"):
        evaluate("sts", [space_subject(store, "pre")], stsb)


def test_saved_results_link_to_the_generation_read(store, stsb, tmp_path):
    enc = get_encoder("static")
    texts = stsb.texts()
    uniq = sorted(set(texts))
    sp = store.create_space("sts", dim=enc.dim, provenance=enc.provenance())
    sp.add([f"t{i}" for i in range(len(uniq))], enc.encode(uniq), texts=uniq)
    path = tmp_path / "pairs.csv"
    path.write_text("".join(f'"{a}","{b}",{s}\n' for a, b, s in zip(stsb.sentences1, stsb.sentences2, stsb.scores)))
    report = run("sts", path, store=store, space="sts", save=True)
    (saved,) = store.results(space="sts")
    assert saved.id == report.saved[0] and saved.generation == 1 and not saved.stale
    assert saved.main_score == pytest.approx(report.results[0].main_score)
    sp.add(["extra"], np.ones((1, enc.dim)))
    assert store.results(space="sts")[0].stale
    report = run("sts", path, store=store, encoder="static", save=True)
    assert store.results()[-1].subject == "static" and store.results()[-1].space is None


def test_sweep_report_has_a_tradeoff_table_and_a_plot(stsb, tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("".join(f'"{a}","{b}",{s}\n' for a, b, s in zip(stsb.sentences1, stsb.sentences2, stsb.scores)))
    report = run("sts", path, encoder="static", dims="16,full", precision="float32,binary",
                 plot=tmp_path / "p.png")
    assert report.plot == tmp_path / "p.png" and report.plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bytes_ = sorted(row["bytes_per_vector"] for row in report.tradeoff)
    assert bytes_ == sorted([2, 2, 8, 64, 64, 256])  # prefix/pca16 binary, full binary, 16 float32 x2, full
    assert all(np.isfinite(row["main_score"]) for row in report.tradeoff)


@pytest.mark.parametrize("kwargs, message", [
    ({"encoder": ["static", "minilm"], "layer": "all"}, "one layer of each"),
    ({"encoder": "hf-layers:minilm", "layer": "all", "dims": "16", "plot": "p.png"}, "one layer"),
    ({"encoder": "static", "layer": "all"}, "layered encoder"),
    ({"space": "x"}, "store is needed"),
])
def test_bad_combinations_are_one_clear_error(tmp_path, kwargs, message):
    path = tmp_path / "p.csv"
    path.write_text("a cat,a kitten,5\na car,a dog,0\n")
    with pytest.raises(InputError, match=message):
        run("sts", path, **kwargs)


def test_unknown_task_is_refused():
    with pytest.raises(InputError, match="task must be one of"):
        run("nope", None)


def test_retrieval_on_a_space_reuses_documents_by_id(store, shared_data):
    from repspace.engines.eval import load_beir

    data = load_beir(shared_data / "cranfield-beir")
    enc = get_encoder("static")
    bodies = [t.upper() for t in data.corpus_texts]  # stored under another text layout
    # Two of the 1,400 documents are empty: a cosine space refuses their zero vectors, so they are not stored
    # and the evaluation embeds them itself.
    kept = [i for i, t in enumerate(bodies) if t.strip()]
    store.create_space("cran", dim=enc.dim, provenance=enc.provenance()).add(
        [data.corpus_ids[i] for i in kept], enc.encode([bodies[i] for i in kept]), texts=[bodies[i] for i in kept])
    subject = space_subject(store, "cran")
    (r,) = evaluate("retrieval", [subject], data)
    assert r.info["documents_from_space"] == len(kept) == 1398
    # only the queries (and the one distinct empty text) were embedded
    assert subject.encode.n_encoded == len(set(data.query_texts) | {""})
    # The stored vectors really were used: they are those of the upper-cased texts.
    (direct,) = evaluate("retrieval", encoder_subjects("static"), data)
    assert r.scores != direct.scores
