"""The ``shardsN`` item of an HNSW spec (``hnsw32,shards4``): parsed, printed, refused where it does not apply."""

from __future__ import annotations

import pytest

from repspace.core.errors import InputError
from repspace.engines.search.specs import IndexSpec, parse_spec


@pytest.mark.parametrize(("text", "canonical", "slug", "shards", "ef"), [
    ("hnsw32,shards4", "hnsw32,shards4", "hnsw32-shards4", 4, None),
    (" HNSW16 , ef128 , Shards2 ", "hnsw16,shards2,ef128", "hnsw16-shards2", 2, 128),
])
def test_shards_parse_print_and_round_trip(text, canonical, slug, shards, ef):
    spec = parse_spec(text)
    assert (str(spec), spec.slug, spec.shards, spec.ef, spec.kind, spec.codes) == (canonical, slug, shards, ef,
                                                                                  "hnsw", None)
    assert parse_spec(str(spec)) == spec and spec.graph and not spec.needs_training


def test_existing_specs_are_unchanged():
    assert parse_spec("hnsw32").shards is None and str(parse_spec("hnsw32,ef64")) == "hnsw32,ef64"
    assert parse_spec("hnsw32").slug == "hnsw32" and parse_spec("hnsw32,shards4") != parse_spec("hnsw32")


@pytest.mark.parametrize(("text", "message"), [
    ("hnsw32,shards1", "HNSW shards must be between 2 and 4096, not 1"),
    ("hnsw32,shards", "shards needs a number, e.g. shards4"),
    ("hnsw32,int8,shards4", "shards split a plain float graph"),
    ("hnsw32,shards4>rerank", "shards split a plain float graph"),
    ("pca64,shards2", "shards2 does not fit after pca64"),
    ("ivf64,pq10,shards2", "shards2 does not fit after ivf64"),
    ("int8,shards2", "shards2 does not fit after int8"),
    ("hnsw32,shards2,shards4", "shards4 repeated"),
])
def test_shards_refused_where_they_do_not_apply(text, message):
    with pytest.raises(InputError, match=message):
        parse_spec(text)


def test_shards_on_the_dataclass():
    with pytest.raises(InputError, match="HNSW shards does not apply to int8 indexes"):
        IndexSpec("int8", shards=2)
    assert repr(IndexSpec("hnsw", m=8, shards=3)) == "IndexSpec('hnsw8,shards3')"
