"""The ideal-words, feature-audit, feature-norms and simplex workflows: a stored space's or an encoder's vectors
handed to the engines unchanged, metadata and CSV read as documented."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.analyze import feature_audit, ideal_words
from repspace.store import example_store
from repspace.workflows.analyze import (
    feature_audit_space,
    grid_texts,
    ideal_words_encoder,
    ideal_words_space,
    read_norms,
    simplex_space,
)

COLOURS, OBJECTS = ["red", "green", "blue", "black"], ["car", "cup", "hat", "ball", "chair"]


def test_encoder_grid_is_the_engine_on_the_encoded_texts():
    from repspace.engines.encoders import get_encoder

    r = ideal_words_encoder("static", COLOURS, OBJECTS, template="a {attribute} {object}")
    texts = [t for row in grid_texts(COLOURS, OBJECTS, "a {attribute} {object}") for t in row]
    U = get_encoder("static").encode(texts).reshape(4, 5, -1)
    assert r.to_dict() == {"source": "static", "template": "a {attribute} {object}",
                           **ideal_words(U, COLOURS, OBJECTS).to_dict()}


@pytest.mark.slow
def test_minilm_colour_grid_is_nearly_additive():
    r = ideal_words_encoder("minilm", COLOURS, OBJECTS).result
    assert r.explained_variance > 0.9
    assert r.held_out["ideal_words"]["top1"] > 0.9 > r.held_out["object"]["top1"]


def test_stored_grid_and_metadata_read_as_documented():
    rng = np.random.default_rng(0)
    sp = example_store().create_space("w", dim=6)
    ids = [f"{a} {o}" for a in COLOURS for o in OBJECTS]
    X = rng.standard_normal((20, 6)).astype(np.float32)  # as stored
    meta = [{"n": i, "c": "xy"[i % 2], "odd": [1]} if i % 5 else {"c": "xy"[i % 2]} for i in range(20)]
    sp.add(ids, X, metadata=meta)
    r = ideal_words_space(sp, COLOURS, OBJECTS).result
    assert r.to_dict() == ideal_words(X.reshape(4, 5, 6), COLOURS, OBJECTS).to_dict()
    audit = feature_audit_space(sp, ["n", "c"]).audit
    direct = feature_audit(X, {"n": [i if i % 5 else None for i in range(20)], "c": ["xy"[i % 2] for i in range(20)]})
    assert audit == direct
    with pytest.raises(InputError, match="no item of space 'w' has a scalar field 'odd'"):
        feature_audit_space(sp, ["odd"])
    with pytest.raises(InputError, match="named twice"):
        feature_audit_space(sp, ["c", "c"])


def test_read_norms_takes_a_named_word_column(tmp_path):
    p = tmp_path / "n.csv"
    p.write_text('a,concept,b\n1,"ice cream",2\n3,cat,4\n', encoding="utf-8")
    words, names, Y = read_norms(p, word_column="concept")
    assert words == ["ice cream", "cat"] and names == ["a", "b"] and Y.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(InputError, match="no column 'word'"):
        read_norms(p, word_column="word")


def test_simplex_words_drop_what_two_synsets_share():
    from repspace.workflows.analyze import category_words

    cats = ["feline.n.01", "big_cat.n.01"]  # big cats are felines: every big-cat word is shared
    words = category_words(cats)
    vocab = sorted({w for ws in words.values() for w in ws})
    sp = example_store().create_space("w", dim=4)
    sp.add(vocab, np.random.default_rng(0).standard_normal((len(vocab), 4)))
    with pytest.raises(InputError, match="'big_cat.n.01' has 0 word"):
        simplex_space(sp, cats, folds=2)
