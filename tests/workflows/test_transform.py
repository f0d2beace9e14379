"""Derived spaces: a source space through a fitted chain of transforms, stored whole, queried consistently."""

from __future__ import annotations

import numpy as np
import pytest

import repspace.workflows.transform as workflow
from repspace import ConflictError, InputError
from repspace.engines.encoders import get_encoder
from repspace.workflows.ingest import ingest_records
from repspace.workflows.ingest.readers import Records
from repspace.workflows.search import knn, search_space
from repspace.workflows.stored_transforms import encoder_for_space, stored_transforms
from repspace.workflows.transform import derive_space

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

WORDS = ["cat", "dog", "sea", "tree", "wine", "bread", "car", "road", "song", "rain", "snow", "king"]
TEXTS = [f"the {a} and the {b}" for a in WORDS for b in WORDS if a != b][:120]


@pytest.fixture()
def store(store):
    """tests/conftest.py's fresh store holding space ``docs``: TEXTS embedded by the static encoder."""
    vecs = get_encoder("static").encode(TEXTS)
    sp = store.create_space("docs", dim=vecs.shape[1], provenance=get_encoder("static").provenance())
    sp.add([f"d{i}" for i in range(len(TEXTS))], vecs, texts=TEXTS, metadata=[{"i": i} for i in range(len(TEXTS))])
    return store


def test_derived_space_holds_the_transformed_vectors_and_the_items(store):
    src = store.space("docs")
    x = src.vectors().astype(np.float64)
    new = derive_space(store, "docs", "white", "center,whiten8")  # the texts span ~14 dims
    assert new.dim == 8 and len(new) == len(src) and new.ids() == src.ids()
    y = new.vectors().astype(np.float64)
    assert np.allclose(y.mean(axis=0), 0, atol=1e-4)
    assert np.allclose(np.cov(y, rowvar=False), np.eye(8), atol=1e-3)  # whitened: identity covariance
    # the leading direction of the source's centred data is the first whitened axis, up to sign and scale
    u = np.linalg.svd(x - x.mean(axis=0), full_matrices=False)[0][:, 0]
    assert abs(np.corrcoef(u, y[:, 0])[0, 1]) > 0.999
    item = new.get(["d7"])[0]
    assert item.text == TEXTS[7] and item.metadata == {"i": 7}
    prov = new.provenance
    assert prov["encoder"] == "static" and prov["transforms_spec"] == "center,whiten8"
    assert prov["derived_from"]["space"] == "docs" and prov["derived_from"]["fit_rows"] == len(TEXTS)
    assert [t["spec"] for t in prov["transforms"]] == ["center", "whiten8"]
    assert [type(t).__name__ for t in stored_transforms(new)] == ["Center", "Whiten"]


def test_text_queries_and_new_texts_go_through_the_chain(store):
    new = derive_space(store, "docs", "abtt", "center,abtt2,normalize")
    chain = stored_transforms(new)
    q = get_encoder("static").encode(["the wine and the bread"])
    for step in chain:
        q = step.transform(q)
    expected = knn(new, q, 5, method="exact").rows[0]
    hits = search_space(new, "the wine and the bread", k=5, method="exact")
    assert [h.row for h in hits] == expected.tolist()
    ingest_records(store, "abtt", Records(ids=["late"], texts=["a song in the rain"], vectors=None,
                                          metadata=[{}], source="test"))
    stored = new.vectors_of(["late"])[0]
    direct = encoder_for_space(new).encode(["a song in the rain"])[0]
    assert np.allclose(stored, direct, atol=1e-6) and np.isclose(np.linalg.norm(stored), 1, atol=1e-5)


def test_a_derived_space_of_a_derived_space_extends_the_chain(store):
    derive_space(store, "docs", "c", "center")
    twice = derive_space(store, "c", "cw", "whiten8")
    assert twice.provenance["transforms_spec"] == "center,whiten8"
    assert twice.provenance["derived_from"] == {**twice.provenance["derived_from"], "space": "c", "spec": "whiten8"}
    text = "the dog and the road"
    via_encoder = encoder_for_space(twice).encode([text])[0]
    raw = get_encoder("static").encode([text])
    for step in stored_transforms(twice):
        raw = step.transform(raw)
    assert np.allclose(via_encoder, raw[0], atol=1e-6)


def test_bad_requests_change_nothing(store):
    derive_space(store, "docs", "taken", "center")
    before = [s.name for s in store.spaces()]
    with pytest.raises(ConflictError):
        derive_space(store, "docs", "taken", "whiten")
    with pytest.raises(InputError):
        derive_space(store, "docs", "other", "whiten0,frobnicate")
    with pytest.raises(InputError):
        derive_space(store, "docs", "bad name!", "center")
    assert [s.name for s in store.spaces()] == before


def test_a_failure_while_writing_leaves_no_partial_space(store, monkeypatch):
    monkeypatch.setattr(workflow, "WRITE_BATCH", 50)
    calls = []
    real_add = type(store.space("docs")).add

    def add_then_fail(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real_add(self, *args, **kwargs)

    monkeypatch.setattr(type(store.space("docs")), "add", add_then_fail)
    with pytest.raises(OSError):
        derive_space(store, "docs", "half", "center")
    assert [s.name for s in store.spaces()] == ["docs"]
