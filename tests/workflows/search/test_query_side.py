"""A text search embeds the query with the space's encoder's query side."""

from __future__ import annotations

from _asymmetric import DOCS, registered

from repspace.workflows.search import search_space


def test_text_search_uses_the_query_side(store) -> None:
    with registered() as enc:
        texts = list(DOCS.values())
        space = store.create_space("syn", dim=enc.dim, provenance=enc.provenance())
        space.add(list(DOCS), enc.encode(texts), texts=texts)
        hits = search_space(space, "feline", k=1)
        assert [h.id for h in hits] == ["d-cat"] and enc.query_calls == 1
        assert [h.id for h in search_space(space, "ocean", k=1)] == ["d-sea"]
        # an encoder given explicitly is used on its query side as well
        assert [h.id for h in search_space(space, "canine", k=1, encoder=enc)] == ["d-dog"]
