"""The learn workflow on real corpora: gensim's Lee corpus and Cranfield (../shared/data).

Spaces are learned once per module (a few seconds on one core) and checked
against independent computations: word counts from a plain tokenisation, the
engine trained directly, SHA-256 of the model file, search ranks.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from repspace import Store
from repspace.core.errors import ConflictError, EncoderError, InputError
from repspace.workflows.learn import LearnedEncoder, learn_space
from repspace.workflows.stored_transforms import encoder_for_space

W2V = dict(sg=True, vector_size=50, epochs=10, min_count=2, seed=0)
FT = dict(sg=True, vector_size=50, epochs=10, min_count=2, seed=0, bucket=50_000)
D2V = dict(dm=False, vector_size=50, epochs=20, min_count=2, seed=0)


@pytest.fixture(scope="module")
def cranfield(shared_data) -> Path:
    path = shared_data / "cranfield-beir" / "corpus.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


@pytest.fixture(scope="module")
def learned(tmp_path_factory, lee_path):
    """One store with word2vec and fastText spaces learned on the Lee corpus."""
    store = Store(tmp_path_factory.mktemp("learn") / "s.db")
    reports = {"w2v": learn_space(store, "w2v", "word2vec", lee_path, **W2V),
               "ft": learn_space(store, "ft", "fasttext", lee_path, **FT)}
    yield store, reports
    store.close()


@pytest.fixture(scope="module")
def cran_store(tmp_path_factory, cranfield):
    store = Store(tmp_path_factory.mktemp("cran") / "s.db")
    report = learn_space(store, "cran", "doc2vec", cranfield, text_field="text", id_field="_id", **D2V)
    yield store, report
    store.close()


def model_files(store: Store) -> list[Path]:
    return sorted(store.index_dir.glob("*/learn/*")) if store.index_dir.is_dir() else []


def test_word2vec_space_holds_the_words_their_counts_and_the_full_recipe(learned, lee_path):
    store, reports = learned
    space, report = store.space("w2v"), reports["w2v"]
    prov = space.provenance
    assert prov["encoder"] == "learn:word2vec" and space.metric.value == "cosine"
    assert prov["params"]["seed"] == 0 and prov["params"]["vector_size"] == 50 and prov["params"]["sg"] == 1
    assert prov["workers"] == 1 and prov["deterministic"] is True and prov["tokenizer"]["lowercase"] is True
    assert {"gensim_version", "numpy_version", "corpus_fingerprint"} <= set(prov)
    # the counts against a plain tokenisation of the file (letters only, lowercase, 2 to 15 characters)
    counts = Counter(t for line in lee_path.read_text(encoding="utf-8").splitlines()
                     for t in re.findall(r"[^\W\d_]+", line.lower()) if 2 <= len(t) <= 15)
    kept = {w for w, c in counts.items() if c >= 2}
    assert set(space.ids()) == kept and len(space) == report.n == len(kept)
    for item in space.get(["the", "government", "palestinian"]):
        assert item.metadata == {"count": counts[item.id]} and item.text is None
    # the model beside the store, under the space's uid, recorded by its SHA-256
    path = report.model_path
    assert path == store.index_dir / space.uid / "learn" / "word2vec.model"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == prov["model_sha256"] == report.model_sha256
    d = report.to_dict()
    assert json.loads(json.dumps(d))["recipe"]["corpus_fingerprint"] == report.corpus_fingerprint
    assert d["space"] == "w2v" and d["method"] == "word2vec" and d["dim"] == 50


def test_stored_vectors_are_the_engines_and_seed_repeats_them(learned, lee_path):
    from repspace.engines.learn import read_text_corpus, train_word2vec

    store, _ = learned
    small = dict(vector_size=16, epochs=2, min_count=3, seed=7, workers=1)
    learn_space(store, "rep-a", "word2vec", lee_path, **small)
    learn_space(store, "rep-b", "word2vec", lee_path, **small)
    a, b = store.space("rep-a").snapshot(), store.space("rep-b").snapshot()
    assert a.ids == b.ids and np.array_equal(a.vectors, b.vectors)
    direct = train_word2vec(read_text_corpus(lee_path), **small)
    assert list(direct.keys) == a.ids and np.array_equal(direct.vectors, a.vectors)
    other = learn_space(store, "rep-c", "word2vec", lee_path, **{**small, "seed": 8})
    assert not np.array_equal(store.space("rep-c").vectors(), a.vectors) and other.seed == 8


def test_word2vec_text_query_is_the_mean_of_its_known_words(learned):
    store, _ = learned
    space = store.space("w2v")
    enc = encoder_for_space(space)
    assert isinstance(enc, LearnedEncoder) and enc.dim == 50 and enc.spec == "learn:word2vec"
    v = enc.encode(["Palestinian, Israeli! xqzzy"])[0]  # the unknown word is left out
    expected = space.vectors_of(["palestinian", "israeli"]).mean(axis=0)
    assert np.allclose(v, expected, atol=1e-6)
    hits = [h.id for h in space.search("palestinian israeli", k=5)]
    assert {"palestinian", "israeli"} <= set(hits), hits
    assert [h.id for h in space.search(id="government", k=3)][0] != "government"
    with pytest.raises(InputError, match="no token of the text 'xqzzy plokk' is in the word2vec vocabulary") as e:
        space.search("xqzzy plokk", k=3)
    assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="has no token"):
        space.search("1234 !!", k=3)


@pytest.mark.parametrize("typo, word", [("governmnet", "government"), ("palestinan", "palestinian"),
                                        ("militnat", "militant"), ("australain", "australia")])
def test_fasttext_finds_a_misspelled_word_near_the_top(learned, typo, word):
    store, _ = learned
    space = store.space("ft")
    assert typo not in set(space.ids())
    hits = [h.id for h in space.search(typo, k=5)]
    assert word in hits, hits


def test_doc2vec_finds_a_documents_own_text_first(cran_store, cranfield):
    store, report = cran_store
    space = store.space("cran")
    raw = [json.loads(line) for line in cranfield.read_text(encoding="utf-8").splitlines() if line.strip()]
    with_text = [r for r in raw if r["text"].strip()]
    assert report.method == "doc2vec" and len(space) == report.n == len(with_text)
    sample = with_text[::70]  # 20 documents
    items = {it.id: it for it in space.get([r["_id"] for r in sample])}
    for r in sample:  # the item keeps its text, the other fields and its token count
        assert items[r["_id"]].text == r["text"].strip() and items[r["_id"]].metadata["title"] == r["title"]
    ranks = []
    for r in sample:
        ids = [h.id for h in space.search(r["text"], k=10)]
        ranks.append(ids.index(r["_id"]) + 1 if r["_id"] in ids else None)
    assert sum(rank == 1 for rank in ranks) >= 0.8 * len(sample), ranks
    # inference is deterministic: the same text twice gives the same vector
    enc = encoder_for_space(space)
    assert np.array_equal(enc.encode([sample[0]["text"]]), enc.encode([sample[0]["text"]]))


def test_new_documents_ingested_into_a_doc2vec_space_are_inferred(tmp_path, cranfield):
    from repspace.workflows.ingest import ingest_file

    lines = [line for line in cranfield.read_text(encoding="utf-8").splitlines() if line.strip()]
    first, later = tmp_path / "first.jsonl", tmp_path / "later.jsonl"
    first.write_text("\n".join(lines[:600]) + "\n", encoding="utf-8")
    later.write_text("\n".join(lines[600:640]) + "\n", encoding="utf-8")
    store = Store(tmp_path / "s.db")
    learn_space(store, "d2v", "doc2vec", first, text_field="text", id_field="_id", **D2V)
    space = store.space("d2v")
    before = len(space)  # the first 600 documents but those without text
    report = ingest_file(store, "d2v", later, id_col="_id")
    added = [json.loads(line) for line in lines[600:640]]
    assert 590 < before <= 600 and (report.added, report.encoded, len(space)) == (40, 40, before + 40)
    # The stored vectors are the model's inference for those texts (what a text query gets).
    want = encoder_for_space(space).encode([r["text"] for r in added[:5]])
    got = space.vectors_of([r["_id"] for r in added[:5]])
    assert np.allclose(got, want, atol=1e-6)
    hits = [space.search(r["text"], k=1)[0].id for r in added[:10]]
    assert sum(h == r["_id"] for h, r in zip(hits, added[:10])) >= 8, hits
    store.close()


def test_learning_from_a_stored_spaces_texts_reads_the_same_corpus(cran_store):
    store, report = cran_store
    r = learn_space(store, "cran-w2v", "word2vec", from_space="cran", vector_size=8, epochs=1, min_count=5)
    prov = store.space("cran-w2v").provenance
    assert prov["corpus_fingerprint"] == report.corpus_fingerprint
    assert prov["corpus_space"]["space"] == "cran" and prov["corpus_space"]["uid"] == report.uid
    assert r.documents == report.documents


def test_a_space_derived_from_a_learned_one_embeds_texts_through_its_chain(learned):
    from repspace.workflows.transform import derive_space

    store, _ = learned
    derived = derive_space(store, "w2v", "w2v-centered", "center")
    hits = [h.id for h in derived.search("palestinian", k=3)]
    assert hits[0] == "palestinian", hits
    twice = derive_space(store, "w2v-centered", "w2v-centered-unit", "normalize")  # the model is two steps away
    assert twice.provenance["model_uid"] == store.space("w2v").uid
    assert [h.id for h in twice.search("palestinian", k=1)] == ["palestinian"]
    store.delete_space("w2v-centered-unit")


@pytest.mark.parametrize("case", ["empty", "min_count", "existing", "method", "param", "both", "write"])
def test_bad_input_is_one_line_and_stores_nothing(tmp_path, lee_path, monkeypatch, case):
    store = Store(tmp_path / "s.db")
    learn_space(store, "taken", "word2vec", lee_path, vector_size=4, epochs=1, min_count=20)
    before = [s.name for s in store.spaces()]
    files_before = model_files(store)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n\n")
    calls = {
        "empty": (InputError, "is empty", lambda: learn_space(store, "x", "word2vec", empty)),
        "min_count": (InputError, "no token occurs at least min_count=100000",
                      lambda: learn_space(store, "x", "fasttext", lee_path, min_count=100_000)),
        "existing": (ConflictError, "space 'taken' already exists",
                     lambda: learn_space(store, "taken", "doc2vec", lee_path)),
        "method": (InputError, "method must be one of word2vec, fasttext, doc2vec, not 'glove'",
                   lambda: learn_space(store, "x", "glove", lee_path)),
        "param": (InputError, "word2vec has no hyper-parameter dm",
                  lambda: learn_space(store, "x", "word2vec", lee_path, dm=True)),
        "both": (InputError, "not both or neither",
                 lambda: learn_space(store, "x", "word2vec", lee_path, from_space="taken")),
        "write": (RuntimeError, "disk on fire", lambda: learn_space(store, "x", "word2vec", lee_path,
                                                                    vector_size=4, epochs=1)),
    }
    error, message, call = calls[case]
    if case == "write":  # a failure after the space and its model file were created
        from repspace.core.store import Space

        def fail(self, *a, **k):
            raise RuntimeError("disk on fire")

        monkeypatch.setattr(Space, "add", fail)
    with pytest.raises(error, match=message) as e:
        call()
    assert "\n" not in str(e.value)
    assert [s.name for s in store.spaces()] == before and model_files(store) == files_before
    store.close()


def test_a_swapped_or_missing_model_file_is_refused_on_a_text_query(tmp_path, lee_path):
    store = Store(tmp_path / "s.db")
    a = learn_space(store, "a", "word2vec", lee_path, vector_size=8, epochs=1, min_count=3)
    b = learn_space(store, "b", "word2vec", lee_path, vector_size=8, epochs=1, min_count=3, seed=1)
    assert len(store.space("a").search("government", k=3)) == 3  # loaded and kept for the next query
    a.model_path.write_bytes(b.model_path.read_bytes())  # same kind, same size, another model
    with pytest.raises(EncoderError, match="not the one space 'a' was learned with") as e:
        store.space("a").search("government", k=3)
    assert "\n" not in str(e.value)
    a.model_path.unlink()
    with pytest.raises(EncoderError, match="model of space 'a' is missing"):
        store.space("a").search("government", k=3)
    assert len(store.space("a").search(id="government", k=3)) == 3  # search by id needs no model
    store.delete_space("b")  # the model file goes with its space
    assert not b.model_path.exists()
    store.close()


@pytest.mark.parametrize("method", ["word2vec", "fasttext", "doc2vec"])
def test_progress_reports_every_epoch_then_the_write(store, lee_path, method):
    seen = []
    extra = {"bucket": 20_000} if method == "fasttext" else {}
    learn_space(store, "p", method, lee_path, vector_size=8, epochs=3, min_count=5,
                progress=lambda phase, done, total: seen.append((phase, done, total)), **extra)
    assert [s for s in seen if s[0] == "train"] == [("train", k, 3) for k in range(4)]
    assert seen[-1][0] == "write" and seen[-1][1] == seen[-1][2]
