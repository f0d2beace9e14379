"""Index spec strings: parsing, canonical strings, slugs, defaults and errors."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repspace.core.errors import InputError
from repspace.engines.search.specs import (
    DEFAULT_FACTOR,
    DEFAULT_INT8_FACTOR,
    IndexSpec,
    parse_spec,
)

# (text, canonical string, slug)
CASES = [
    ("exact", "exact", "exact"),
    ("hnsw32", "hnsw32", "hnsw32"),
    ("hnsw32,ef64", "hnsw32,ef64", "hnsw32"),
    ("hnsw16>rerank3", "hnsw16>rerank3", "hnsw16"),
    ("int8", "int8", "int8"),
    ("int8>rescore4", "int8>rescore4", "int8"),
    ("int8>rerank", "int8>rescore4", "int8"),
    ("binary>rescore8", "binary>rescore8", "binary"),
    ("binary>rescore", "binary>rescore10", "binary"),
    ("pca64>rerank", "pca64>rerank10", "pca64"),
    ("pca64>rescore2", "pca64>rerank2", "pca64"),
    ("prefix64>rerank", "prefix64>rerank10", "prefix64"),
    ("ivf1024,pq32>rerank", "ivf1024,pq32>rerank10", "ivf1024-pq32"),
    ("ivf1024,pq32,nprobe16", "ivf1024,pq32,nprobe16", "ivf1024-pq32"),
    ("pca64,hnsw32>rerank", "pca64,hnsw32>rerank10", "pca64-hnsw32"),
    ("prefix64,hnsw32,ef128>rerank5", "prefix64,hnsw32,ef128>rerank5", "prefix64-hnsw32"),
    ("  PCA64 , HNSW32 > Rerank ", "pca64,hnsw32>rerank10", "pca64-hnsw32"),
    ("IVF256,PQ10>RESCORE", "ivf256,pq10>rerank10", "ivf256-pq10"),
    ("opq32,ivf1024,pq32", "opq32,ivf1024,pq32", "opq32-ivf1024-pq32"),
    ("OPQ16, IVF64, PQ32, NPROBE8 > rerank", "opq16,ivf64,pq32,nprobe8>rerank10", "opq16-ivf64-pq32"),
    ("prefix64,ivf1024>rerank", "prefix64,ivf1024>rerank10", "prefix64-ivf1024"),
    ("prefix64,ivf1024,nprobe16>rerank4", "prefix64,ivf1024,nprobe16>rerank4", "prefix64-ivf1024"),
]


@pytest.mark.parametrize("text,canonical,slug", CASES)
def test_parse_str_and_slug(text, canonical, slug):
    spec = parse_spec(text)
    assert str(spec) == canonical
    assert parse_spec(str(spec)) == spec  # the canonical string round-trips
    assert parse_spec(spec) is spec  # an IndexSpec passes through
    assert spec.slug == slug
    assert re.fullmatch(r"[a-z0-9-]+", spec.slug)  # safe in any file name
    assert repr(spec) == f"IndexSpec({canonical!r})"


def test_fields_of_each_form():
    assert parse_spec("hnsw32,ef64") == IndexSpec("hnsw", m=32, ef=64)
    assert parse_spec("pca64,hnsw16,ef32>rerank3") == IndexSpec("pca", dims=64, graph_m=16, ef=32, refine_factor=3)
    assert parse_spec("prefix8") == IndexSpec("prefix", dims=8)
    assert parse_spec("ivf1024,pq32,nprobe4>rerank") == IndexSpec(
        "ivfpq", nlist=1024, pq_m=32, nprobe=4, refine_factor=DEFAULT_FACTOR)
    assert parse_spec("int8>rescore").refine_factor == DEFAULT_INT8_FACTOR == 4
    assert parse_spec("binary>rerank").refine_factor == DEFAULT_FACTOR == 10
    assert parse_spec("int8>rescore7") == parse_spec("int8>rerank7")  # synonyms
    assert parse_spec("opq32,ivf1024,pq32,nprobe8>rerank") == IndexSpec(
        "ivfpq", nlist=1024, pq_m=32, nprobe=8, opq=32, refine_factor=DEFAULT_FACTOR)
    assert parse_spec("prefix64,ivf256,nprobe4") == IndexSpec("prefix", dims=64, nlist=256, nprobe=4)


def test_slug_ignores_search_time_parameters():
    a, b = parse_spec("pca64,hnsw32,ef16>rerank2"), parse_spec("pca64,hnsw32>rerank20")
    assert a != b and a.slug == b.slug
    assert parse_spec("ivf64,pq8,nprobe2").slug == parse_spec("ivf64,pq8>rerank").slug
    assert parse_spec("pca64").slug != parse_spec("prefix64").slug != parse_spec("pca64,hnsw32").slug
    assert parse_spec("opq8,ivf64,pq8,nprobe2").slug == parse_spec("opq8,ivf64,pq8>rerank").slug
    assert parse_spec("opq8,ivf64,pq8").slug != parse_spec("ivf64,pq8").slug  # the rotation is stored
    assert parse_spec("prefix8,ivf64,nprobe2").slug == parse_spec("prefix8,ivf64>rerank").slug != "prefix8"


@pytest.mark.parametrize("text,needs_training,exact_rerank,graph", [
    ("exact", False, False, False),
    ("hnsw32", False, False, True),
    ("int8", True, False, False),
    ("int8>rescore4", True, True, False),
    ("binary>rescore8", False, True, False),
    ("pca16>rerank", True, True, False),
    ("pca16,hnsw8>rerank", True, True, True),
    ("prefix16>rerank", False, True, False),
    ("prefix16,hnsw8", False, False, True),
    ("ivf64,pq8>rerank", True, True, False),
    ("opq8,ivf64,pq8>rerank", True, True, False),
    ("prefix16,ivf64>rerank", True, True, False),
    ("prefix16,ivf64", True, False, False),
])
def test_properties(text, needs_training, exact_rerank, graph):
    spec = parse_spec(text)
    assert (spec.needs_training, spec.exact_rerank, spec.graph) == (needs_training, exact_rerank, graph)


# (text, a fragment of the message)
ERRORS = [
    ("hnsw1", "HNSW M must be between 2 and 256, not 1"),
    ("hnsw300", "HNSW M must be between 2 and 256, not 300"),
    ("pca64,hnsw1", "HNSW M must be between 2 and 256"),
    ("pca0", "dimensions must be between 1"),
    ("prefix0>rerank", "dimensions must be between 1"),
    ("ivf1024", "ivf1024 needs a product quantizer: write ivf1024,pq32"),
    ("ivf0,pq8", "IVF lists must be between 1"),
    ("ivf16,pq0", "PQ sub-quantizers must be between 1"),
    ("ivf4,pq2,nprobe8", "nprobe 8 exceeds the 4 IVF lists"),
    ("int8>rescore0", "refine factor must be between 1 and 10000, not 0"),
    ("pca8>rerank0", "refine factor must be between 1"),
    ("hnsw32,ef0", "HNSW ef must be between 1"),
    ("foo", "unknown stage 'foo'"),
    ("int16", "unknown stage 'int16'"),
    ("binary8", "unknown stage 'binary8'"),
    ("exact>rerank", "exact search needs no refine stage"),
    ("int8,hnsw32", "hnsw32 does not fit after int8"),
    ("hnsw32,hnsw16", "hnsw16 does not fit after hnsw32"),
    ("ivf16,pq4,pq8", "pq8 repeated"),
    ("pca64,ef10", "ef needs a graph: write pca64,hnsw32,ef10"),
    ("pq8,ivf16", "starts with exact, hnsw, int8, binary, pca, tldr, prefix, opq or ivf"),
    ("opq32", "opq32 rotates the vectors for a product quantizer: write opq32,ivf1024,pq32"),
    ("opq32,hnsw32", "write opq32,ivf1024,pq32"),
    ("opq,ivf16,pq4", "opq needs a number, e.g. opq32"),
    ("opq0,ivf16,pq4", "OPQ sub-spaces must be between 1"),
    ("ivf16,opq8,pq8", "opq8 does not fit after ivf16"),
    ("opq8,ivf16", "ivf16 needs a product quantizer"),
    ("prefix64,hnsw32,ivf16", "prefix64 is searched by a graph or by IVF lists, not both"),
    ("prefix64,ivf16,int8", "prefix64,ivf16 holds float prefixes in its lists; int8 codes do not apply"),
    ("prefix64,nprobe4", "nprobe needs IVF lists: write prefix64,ivf1024,nprobe4"),
    ("prefix64,ivf16,ef10", "ef needs a graph"),
    ("prefix8,ivf4,nprobe8", "nprobe 8 exceeds the 4 IVF lists"),
    ("pca64,ivf16", "ivf16 does not fit after pca64"),
    ("prefix64,ivf16,pq8", "pq8 does not fit after prefix64"),
    ("hnsw", "hnsw needs a number, e.g. hnsw32"),
    ("pca", "pca needs a number"),
    ("", "empty index spec"),
    ("   ", "empty index spec"),
    (">rerank", "has no first stage"),
    ("int8>rescore4>rerank2", "at most one refine stage"),
    ("int8>refine4", "unknown refine stage 'refine4'"),
    ("int8>", "unknown refine stage ''"),
    ("hnsw32;ef64", "unknown stage"),
]


@pytest.mark.parametrize("text,fragment", ERRORS)
def test_errors_are_one_clear_line(text, fragment):
    with pytest.raises(InputError) as e:
        parse_spec(text)
    msg = str(e.value)
    assert fragment in msg, msg
    assert "\n" not in msg


def test_unknown_stage_lists_the_accepted_forms():
    with pytest.raises(InputError, match="accepted forms: exact, hnsw32") as e:
        parse_spec("lsh64")
    for form in ("int8", "binary", "pca64", "prefix64", "ivf1024,pq32", ">rerank", ">rescore", "prefix64,ivf1024",
                 "opq32,ivf1024,pq32"):
        assert form in str(e.value)


def test_not_a_string():
    with pytest.raises(InputError, match="is a string"):
        parse_spec(32)  # type: ignore[arg-type]


def test_direct_construction_is_validated_and_frozen():
    with pytest.raises(InputError, match="unknown index kind 'lsh'"):
        IndexSpec("lsh")
    with pytest.raises(InputError, match="needs HNSW M"):
        IndexSpec("hnsw")
    with pytest.raises(InputError, match="dimensions does not apply to int8 indexes"):
        IndexSpec("int8", dims=4)
    with pytest.raises(InputError, match="must be an integer"):
        IndexSpec("pca", dims=4.0)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="exact search needs no refine stage"):
        IndexSpec("exact", refine_factor=2)
    spec = IndexSpec("hnsw", m=16)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.m = 8  # type: ignore[misc]
    assert hash(spec) == hash(parse_spec("hnsw16"))


_small = st.integers(1, 5000)
_specs = st.one_of(
    st.just(IndexSpec("exact")),
    st.builds(lambda m, ef, f: IndexSpec("hnsw", m=m, ef=ef, refine_factor=f),
              st.integers(2, 256), st.none() | _small, st.none() | st.integers(1, 50)),
    st.builds(lambda kind, f: IndexSpec(kind, refine_factor=f),
              st.sampled_from(["int8", "binary"]), st.none() | st.integers(1, 50)),
    st.builds(lambda kind, d, gm, ef, f: IndexSpec(kind, dims=d, graph_m=gm, ef=ef if gm else None, refine_factor=f),
              st.sampled_from(["pca", "prefix"]), _small, st.none() | st.integers(2, 256),
              st.none() | _small, st.none() | st.integers(1, 50)),
    st.builds(lambda n, m, p, f, o: IndexSpec("ivfpq", nlist=n, pq_m=m, nprobe=min(p, n) if p else None,
                                              refine_factor=f, opq=o),
              _small, st.integers(1, 64), st.none() | _small, st.none() | st.integers(1, 50),
              st.none() | st.integers(1, 64)),
    st.builds(lambda d, n, p, f: IndexSpec("prefix", dims=d, nlist=n, nprobe=min(p, n) if p else None,
                                           refine_factor=f),
              _small, _small, st.none() | _small, st.none() | st.integers(1, 50)),
)


@settings(max_examples=100, deadline=None)
@given(_specs)
def test_every_spec_round_trips(spec):
    assert parse_spec(str(spec)) == spec
    assert parse_spec(str(spec).upper()) == spec
    assert re.fullmatch(r"[a-z0-9-]+", spec.slug)
