"""Index specs on stored spaces: persisted, extended, masked, rebuilt, listed, dropped; hybrid and MMR search."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _data_subsets import glove_rows

import repspace.workflows.search.persist as persist_mod
from repspace import InputError, NotFoundError
from repspace.engines.search.specs import parse_spec
from repspace.workflows.search import knn, search_space
from repspace.workflows.search.indexes import (
    build_index,
    drop_index,
    funnel_paths,
    list_indexes,
)

#: Spec -> recall@10 floor on 6,000 GloVe 50d words (measured: 1.0, 0.80, 0.88, 0.88, 0.97, 0.975, 0.846).
SPECS = {"int8>rescore4": 0.97, "binary>rescore16": 0.7, "pca16>rerank10": 0.8, "prefix24,hnsw16>rerank10": 0.8,
         "ivf32,pq10>rerank10": 0.9, "opq10,ivf32,pq10>rerank10": 0.9, "prefix24,ivf32>rerank10": 0.8}


@pytest.fixture(autouse=True)
def _no_memory_cache(monkeypatch):
    monkeypatch.setattr(persist_mod, "_MEMORY", {})


def _clustered(n: int, seed: int = 1) -> np.ndarray:
    """Queries: other GloVe words than the stored ones."""
    return glove_rows(20_000 + 1000 * seed, n)


@pytest.fixture()
def space(store):
    x = glove_rows(0, 6000)
    sp = store.create_space("v", dim=50)
    sp.add([f"i{i}" for i in range(len(x))], x, metadata=[{"g": i % 100} for i in range(len(x))])
    return sp


def _recall(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean([len(set(x) & set(y)) / len(y) for x, y in zip(a, b)]))


#: OPQ's training (50 rounds of PQ training) takes ~25 s on an idle core here.
SLOW_SPECS = {"opq10,ivf32,pq10>rerank10"}


@pytest.mark.parametrize("spec", [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_SPECS else s for s in SPECS])
def test_every_funnel_spec_finds_the_exact_neighbours_of_stored_vectors(space, spec):
    q = _clustered(100, seed=1)
    exact = knn(space, q, 10, method="exact").rows
    r = knn(space, q, 10, index=spec)
    assert r.plan.method == str(parse_spec(spec)) and r.plan.index_action == "built"
    assert _recall(r.rows, exact) >= SPECS[spec]
    path, stamp = funnel_paths(space, parse_spec(spec))
    assert path.exists() and json.loads(stamp.read_text())["spec"] == parse_spec(spec).slug
    # Filtered: only matching rows, and close to exact over the matches.
    f = knn(space, q, 10, index=spec, where="g < 3")
    fe = knn(space, q, 10, where="g < 3", method="exact").rows
    got = f.rows[f.rows >= 0]
    assert set(np.unique(got % 100)) <= {0, 1, 2}
    assert _recall(f.rows, fe) >= SPECS[spec]


def test_a_funnel_index_is_extended_masked_and_rebuilt_never_stale(space):
    q = _clustered(20, seed=2)
    assert knn(space, q, 5, index="int8>rescore4").plan.index_action == "built"
    assert knn(space, q, 5, index="int8>rescore4").plan.index_action == "loaded"
    new = _clustered(500, seed=3)
    space.add([f"n{i}" for i in range(500)], new)
    r = knn(space, new[:5], 1, index="int8>rescore4")
    assert r.plan.index_action == "extended" and r.rows[:, 0].tolist() == list(range(6000, 6005))
    space.delete([f"n{i}" for i in range(5)])
    r = knn(space, new[:5], 1, index="int8>rescore4")
    assert r.plan.index_action == "loaded" and not set(r.rows[:, 0].tolist()) & set(range(6000, 6005))
    space.delete([f"i{i}" for i in range(2000)])  # a third of the index dies: rebuilt
    assert knn(space, q, 5, index="int8>rescore4").plan.index_action == "rebuilt"
    report = {r.spec: r for r in list_indexes(space)}["int8"]
    assert report.action == "current" and report.ntotal == len(space)


def test_a_damaged_or_foreign_index_file_is_rebuilt(space):
    build_index(space, "pca16>rerank")
    path, stamp = funnel_paths(space, parse_spec("pca16>rerank"))
    path.write_bytes(b"not an index")
    persist_mod._MEMORY.clear()
    assert knn(space, _clustered(3), 3, index="pca16>rerank").plan.index_action == "rebuilt"
    data = json.loads(stamp.read_text())
    data["spec"] = "pca8"
    stamp.write_text(json.dumps(data))
    assert build_index(space, "pca16>rerank").action == "rebuilt"


def test_list_and_drop(space):
    build_index(space, "hnsw16")
    build_index(space, "binary>rescore8")
    # the refine stage's rescoring tier is listed beside the indexes, with its file size
    listed = {r.spec: r for r in list_indexes(space)}
    assert sorted(listed) == ["binary", "hnsw16", "vectors"]
    assert listed["vectors"].memory_bytes == len(space) * space.dim * 4
    assert listed["vectors"].ntotal == len(space) and listed["vectors"].action == "current"
    drop_index(space, "binary>rescore8")
    drop_index(space, "vectors")
    assert [r.spec for r in list_indexes(space)] == ["hnsw16"]
    with pytest.raises(NotFoundError):
        drop_index(space, "vectors")
    with pytest.raises(NotFoundError):
        drop_index(space, "binary>rescore8")
    with pytest.raises(InputError):
        build_index(space, "exact")


def test_specs_differing_in_search_parameters_share_the_stored_codes(space):
    q = _clustered(100, seed=3)
    exact = knn(space, q, 10, method="exact").rows
    low = knn(space, q, 10, index="binary>rescore4")
    high = knn(space, q, 10, index="binary>rescore50")
    assert (low.plan.index_action, high.plan.index_action) == ("built", "loaded")
    assert _recall(high.rows, exact) > _recall(low.rows, exact) + 0.1  # the factor asked for is the one used
    assert [r.spec for r in list_indexes(space)] == ["binary", "vectors"]


def test_hnsw_and_exact_specs_route_to_their_methods(space):
    q = _clustered(5, seed=4)
    assert knn(space, q, 3, index="exact").plan.method == "exact"
    r = knn(space, q, 3, index="hnsw16,ef80")
    assert r.plan.method == "hnsw" and r.plan.ef == 80


@pytest.mark.parametrize("method", ["exact", "hnsw"])
def test_a_method_and_an_index_together_are_refused(space, text_space, method):
    """method and index both choose how to search: one rule for the API and the CLI, no silent winner."""
    q = _clustered(1, seed=4)[0]
    for call in (lambda: knn(space, q[None], 3, method=method, index="hnsw16"),
                 lambda: search_space(space, q, k=3, method=method, index="int8>rescore4"),
                 lambda: search_space(space, id="i0", k=3, method=method, index="exact"),
                 lambda: search_space(space, q, k=3, method=method, index=parse_spec("hnsw16"), mmr=0.5)):
        with pytest.raises(InputError, match=f"^choose {method} search or index '.+', not both$"):
            call()
    with pytest.raises(InputError, match="not both"):  # refused before the text query is embedded
        search_space(text_space, "cat on a mat", k=3, method=method, index="hnsw16", hybrid=True)
    assert list_indexes(space) == []  # nothing was built
    assert knn(space, q[None], 3, index="hnsw16").plan.method == "hnsw"  # each alone still works
    assert knn(space, q[None], 3, method=method).plan.method == method


def test_options_that_would_be_ignored_are_refused(space, text_space):
    """HNSW parameters beside an index spec or exact search, fusion settings without hybrid: an error, not a no-op."""
    from repspace.engines.search.hnsw import HNSWParams

    q = _clustered(1, seed=4)[0]
    with pytest.raises(InputError, match="give hnsw= or index=, not both"):
        knn(space, q[None], 3, hnsw=HNSWParams(m=8), index="hnsw16")
    with pytest.raises(InputError, match="do not apply to exact"):
        search_space(space, q, k=3, hnsw=HNSWParams(m=8), method="exact")
    for options in ({"fusion": "sum"}, {"lexical_weight": 0.5}):
        with pytest.raises(InputError, match="hybrid search only"):
            search_space(text_space, "cat on a mat", k=3, bm25=True, **options)
        with pytest.raises(InputError, match="hybrid search only"):
            search_space(text_space, "cat on a mat", k=3, **options)
    assert list_indexes(space) == []
    assert knn(space, q[None], 3, hnsw=HNSWParams(m=8)).plan.method in ("exact", "hnsw")


@pytest.fixture()
def text_space(store):
    texts = ["the cat sat on the mat", "dogs chase cats in the park", "stock markets fell sharply today",
             "a kitten sleeps on a warm mat", "investors sold shares as markets dropped", "the dog barked at the cat"]
    from repspace.engines.encoders import get_encoder

    enc = get_encoder("static")
    sp = store.create_space("t", dim=enc.dim, provenance=enc.provenance())
    sp.add([f"d{i}" for i in range(len(texts))], enc.encode(texts), texts=texts,
           metadata=[{"topic": "pets" if i in (0, 1, 3, 5) else "money"} for i in range(len(texts))])
    return sp


def test_bm25_and_hybrid_search_over_stored_texts(text_space):
    res = search_space(text_space, "markets fell", k=2, bm25=True)
    hits, plan = res.hits, res.plan
    assert plan.method == "bm25" and [h.id for h in hits][0] == "d2"
    res = search_space(text_space, "cat on a mat", k=3, hybrid=True)
    hits, plan = res.hits, res.plan
    assert plan.method.startswith("hybrid (rrf")
    assert hits[0].id in {"d0", "d3"}
    hits = search_space(text_space, "cat on a mat", k=6, hybrid=True, where="topic = 'money'")
    assert {h.id for h in hits} <= {"d2", "d4"}
    hits = search_space(text_space, "cat on a mat", k=3, hybrid=True, fusion="sum", lexical_weight=0.5)
    assert len(hits) == 3
    with pytest.raises(InputError, match="query text"):
        search_space(text_space, np.ones(text_space.dim), hybrid=True)


def test_mmr_diversifies_and_lambda_one_is_the_plain_ranking(text_space):
    vec = text_space.vectors_of(["d0"])[0]
    plain = [h.id for h in search_space(text_space, vec, k=4)]
    assert [h.id for h in search_space(text_space, vec, k=4, mmr=1.0)] == plain
    diverse = [h.id for h in search_space(text_space, vec, k=4, mmr=0.3)]
    assert diverse[0] == plain[0] and sorted(diverse) != sorted(plain) or diverse != plain
    with pytest.raises(InputError):
        search_space(text_space, vec, k=3, mmr=1.5)


def test_building_reads_the_space_a_batch_at_a_time(space, monkeypatch):
    monkeypatch.setattr(persist_mod, "ADD_BATCH", 1000)
    monkeypatch.setattr(persist_mod, "TRAIN_MAX", 1500)
    reads: list[int] = []
    original = type(space).live_rows

    def counting(self, lo=0, hi=None):
        rows, vectors = original(self, lo, hi)
        reads.append(len(rows))
        return rows, vectors

    monkeypatch.setattr(type(space), "live_rows", counting)
    q = _clustered(50, seed=5)
    r = knn(space, q, 10, index="pca24>rerank10")
    # 6,000 rows in six batches for the index, six for its rescoring tier: never all at once
    assert len(reads) == 12 and max(reads) == 1000
    assert _recall(r.rows, knn(space, q, 10, method="exact").rows) >= 0.9
