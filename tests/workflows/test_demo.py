"""The demo's data and a quick run of it (the full run is `make demo`)."""

from __future__ import annotations

import pytest

from repspace.workflows.demo import glove_records, run_demo, stdlib_docstrings


def test_stdlib_docstrings_are_real_and_deterministic():
    a = stdlib_docstrings(limit=300)
    b = stdlib_docstrings(limit=300)
    assert a.ids == b.ids and a.texts == b.texts
    assert len(a) == 300 and len(set(a.ids)) == 300
    assert all(len(t) >= 40 for t in a.texts)
    assert {m["kind"] for m in a.metadata} >= {"module", "function", "class"}


def test_glove_vectors_are_the_packaged_ones():
    r = glove_records()
    assert r.vectors.shape[1] == 50 and len(r) >= 399_000
    assert len(set(r.ids)) == len(r.ids)
    assert r.ids[:3] == ["the", ",", "."]


@pytest.mark.slow  # embeds 500 docstrings with MiniLM
def test_quick_demo_twice_embeds_once(store):
    lines: list[str] = []
    first = run_demo(store, say=lines.append, quick=True)
    distinct = len(set(stdlib_docstrings(limit=500).texts))  # a few docstrings repeat word for word
    assert 400 < distinct <= 500
    assert first.spaces["stdlib-docs"]["encoded"] == distinct
    assert first.spaces["stdlib-docs"]["added"] == 500
    assert any("Try next" in ln for ln in lines)
    # A search about dates finds a docstring about dates or times.
    dates = first.searches[0]
    assert dates["query"] == "parse a date from a string"
    assert any("date" in (h["text"] or "").lower() or "time" in (h["text"] or "").lower() for h in dates["hits"])
    # The explorer's colours exist: each item's diagnostics and its Jaccard against the static model's space.
    (item,) = store.space("stdlib-docs").get([dates["hits"][0]["id"]])
    assert {"k_occurrence", "hub", "local_id", "jaccard"} <= set(item.metadata)
    assert item.metadata["jaccard_vs"] == "stdlib-docs-static" and 0 < first.comparison["cka_linear"] < 1
    second = run_demo(store, say=lambda s: None, quick=True)
    assert second.spaces["stdlib-docs"]["encoded"] == 0 and second.spaces["stdlib-docs"]["added"] == 0
    # the records' metadata lacks the saved diagnostics: those items are updated (not re-embedded), then re-diagnosed
    assert second.spaces["stdlib-docs"]["unchanged"] + second.spaces["stdlib-docs"]["updated"] == 500
