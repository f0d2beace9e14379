"""Filtered search (``where=``): results equal brute force over the matching live items."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core import filters
from repspace.workflows.search import dense as query
from repspace.workflows.search import knn

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

LANGS = ["en", "de", "fr", "ja"]

# (expression, python predicate over (id, text, metadata))
CASES = [
    ("year >= 2020", lambda i, t, m: m["year"] >= 2020),
    ("lang in ('en','de')", lambda i, t, m: m["lang"] in ("en", "de")),
    ("not draft", lambda i, t, m: not m["draft"]),
    ("year >= 2020 and lang in ('en','de') and not draft",
     lambda i, t, m: m["year"] >= 2020 and m["lang"] in ("en", "de") and not m["draft"]),
    ("year < 2005 or lang in ('ja')", lambda i, t, m: m["year"] < 2005 or m["lang"] == "ja"),
    ("_id in ('i3', 'i10', 'i999', 'i0')", lambda i, t, m: i in ("i3", "i10", "i999", "i0")),
    ("_text in ('doc 7', 'doc 8')", lambda i, t, m: t in ("doc 7", "doc 8")),
    ("year >= 3000", lambda i, t, m: False),
    ("info.score > 0.5 and not (lang in ('en'))", lambda i, t, m: m["info"]["score"] > 0.5 and m["lang"] != "en"),
]


@pytest.fixture
def filtered_space(store, rng):
    dim = 10
    sp = store.create_space("flt", dim=dim, metric="cosine")
    n = 600
    ids = [f"i{i}" for i in range(n)]
    texts = [f"doc {i}" for i in range(n)]
    metas = [{"year": int(rng.integers(2000, 2025)), "lang": LANGS[int(rng.integers(0, 4))],
              "draft": bool(rng.integers(0, 2)), "info": {"score": float(rng.uniform())}} for _ in range(n)]
    x = rng.standard_normal((n, dim)).astype(np.float32)
    sp.add(ids, x, texts=texts, metadata=metas)
    model = {i: (t, m, v) for i, t, m, v in zip(ids, texts, metas, x)}
    # Churn: deletes, new vectors, metadata changes.
    gone = ids[::7]
    sp.delete(gone)
    for g in gone:
        model.pop(g)
    moved = [i for i in ids[1::9] if i in model]
    newx = rng.standard_normal((len(moved), dim)).astype(np.float32)
    newm = [{"year": 2024, "lang": "en", "draft": False, "info": {"score": 0.75}}] * len(moved)
    sp.add(moved, newx, texts=[model[i][0] for i in moved], metadata=newm)
    for i, v, m in zip(moved, newx, newm):
        model[i] = (model[i][0], m, v)
    return sp, model


@pytest.mark.parametrize("expr,pred", CASES, ids=[c[0] for c in CASES])
def test_filter_rows_equal_python_predicate(filtered_space, expr, pred):
    sp, model = filtered_space
    rows = sp.filter_rows(expr)
    items = sp.items(rows)
    got = sorted(items[r].id for r in rows)
    assert got == sorted(i for i, (t, m, _) in model.items() if pred(i, t, m))
    assert np.all(np.diff(rows) > 0)
    assert np.array_equal(sp.filter_rows(filters.Filter.parse(expr)), rows)


@pytest.mark.parametrize("expr,pred", CASES, ids=[c[0] for c in CASES])
def test_exact_filtered_knn_equals_brute_force(filtered_space, rng, brute, expr, pred):
    sp, model = filtered_space
    match = sorted((i for i, (t, m, _) in model.items() if pred(i, t, m)), key=lambda i: sp.get([i])[0].row)
    q = rng.standard_normal((6, sp.dim)).astype(np.float32)
    res = knn(sp, q, 12, where=expr, method="exact")
    assert res.plan.candidates == len(match)
    if not match:
        assert res.rows.shape[1] == 0
        assert sp.search(q[0], k=5, where=expr) == []
        return
    x = np.array([model[i][2] for i in match])
    match_rows = np.array([sp.get([i])[0].row for i in match])
    pos = np.searchsorted(match_rows, res.rows)
    assert np.array_equal(match_rows[np.minimum(pos, len(match) - 1)], res.rows), "a row outside the filter"
    brute.check(res.scores, pos, q, x, 12, "cosine")
    hits = sp.search(q[0], k=12, where=expr, method="exact")
    assert all(pred(h.id, model[h.id][0], model[h.id][1]) for h in hits)
    assert [h.id for h in hits] == [match[j] for j in pos[0]]


@pytest.mark.parametrize("expr,pred", CASES[:5], ids=[c[0] for c in CASES[:5]])
def test_hnsw_filtered_returns_only_matches(filtered_space, rng, expr, pred, monkeypatch):
    sp, model = filtered_space
    # Every filter of this small space is selective enough for exact search over the matches;
    # switched off here, so that the graph's masked search itself is what is tested.
    monkeypatch.setattr(query, "EXACT_US_PER_MAC", float("inf"))  # exact priced out
    monkeypatch.setattr(query, "EXACT_MAX_SELECTIVITY", 0.0)
    q = rng.standard_normal((20, sp.dim)).astype(np.float32)
    res = knn(sp, q, 10, where=expr, method="hnsw")
    exact = knn(sp, q, 10, where=expr, method="exact")
    assert res.plan.method == "hnsw"
    items = sp.items(np.unique(res.rows[res.rows >= 0]))
    for r in res.rows[res.rows >= 0]:
        it = items[int(r)]
        assert pred(it.id, it.text, it.metadata), (expr, it)
    recall = np.mean([len(set(a[a >= 0]) & set(b)) / len(b) for a, b in zip(res.rows, exact.rows)])
    assert recall >= 0.9


@pytest.mark.parametrize("how", [{"method": "hnsw"}, {"index": "hnsw16"}, {"index": "int8>rescore4"},
                                 {"index": "pca4,hnsw16>rerank"}])
def test_a_selective_filter_keeps_recall_one_whatever_index_is_named(filtered_space, rng, how):
    """The planner's promise holds when the caller names an index: a selective filter is searched exactly."""
    sp, _ = filtered_space
    q = rng.standard_normal((8, sp.dim)).astype(np.float32)
    want = knn(sp, q, 10, where="lang = 'de' and year >= 2015", method="exact")
    got = knn(sp, q, 10, where="lang = 'de' and year >= 2015", **how)
    assert got.plan.method == "exact" and "exact over the matches" in got.plan.reason
    assert np.array_equal(got.rows, want.rows) and np.allclose(got.scores, want.scores)
    assert knn(sp, q, 10, **how).plan.method != "exact"  # without the filter the named index is used


def test_where_and_search_by_id(filtered_space):
    sp, model = filtered_space
    hits = sp.search(None, id="i2", k=5, where="lang in ('de')")
    assert hits and all(model[h.id][1]["lang"] == "de" for h in hits) and "i2" not in {h.id for h in hits}


def test_empty_where_means_no_filter(filtered_space, rng):
    sp, model = filtered_space
    q = rng.standard_normal(sp.dim).astype(np.float32)
    a = sp.search(q, k=5, where="  ", method="exact")
    b = sp.search(q, k=5, method="exact")
    assert [h.id for h in a] == [h.id for h in b]


def test_bad_filter_is_filter_error(filtered_space):
    from repspace import FilterError, InputError

    sp, _ = filtered_space
    for expr in ("year >=", "year >= 2020 and", "((lang", "year >= 1; DROP TABLE items"):
        with pytest.raises(FilterError) as e:
            sp.search(np.ones(sp.dim), k=3, where=expr)
        assert isinstance(e.value, InputError) and "\n" not in str(e.value)
    assert len(sp) == len(filtered_space[1])


def test_exact_filtered_snapshot_and_vector_file_paths_agree(filtered_space, rng, brute, monkeypatch):
    """A small space gathers the matches from its snapshot, a large one from its vector file
    (kept for a repeated filter): the same answers, and a write is seen at once."""
    import repspace.workflows.search.dense as search_mod

    sp, model = filtered_space
    expr = "not draft"
    q = rng.standard_normal((4, sp.dim)).astype(np.float32)
    via_snapshot = knn(sp, q, 9, where=expr, method="exact")
    monkeypatch.setattr(search_mod, "EXACT_MAX_ITEMS", 100)  # the space now counts as large
    via_file = knn(sp, q, 9, where=expr, method="exact")
    again = knn(sp, q, 9, where=expr, method="exact")  # the gathered copy of the selection
    assert any(key[0] == sp.uid for key in search_mod._GATHERED.cache.keys())
    for res in (via_file, again):
        assert np.array_equal(via_snapshot.rows, res.rows)
        np.testing.assert_allclose(via_snapshot.scores, res.scores, rtol=1e-6, atol=1e-6)
    sp.add(["new"], (q[0] / np.linalg.norm(q[0]))[None], metadata=[{"draft": False}])
    assert sp.get(["new"])[0].row == knn(sp, q[:1], 1, where=expr, method="exact").rows[0, 0]


def test_auto_plan_choices(filtered_space, rng, monkeypatch):
    import repspace.workflows.search.dense as search_mod

    sp, model = filtered_space
    q = rng.standard_normal(sp.dim).astype(np.float32)
    monkeypatch.setattr(search_mod, "EXACT_MAX_ITEMS", 100)  # the space now counts as large
    res = sp.search(q, k=5)
    plan = res.plan
    assert plan.method == "hnsw" and plan.index_action in ("built", "loaded")
    res = sp.search(q, k=5, where="_id in ('i3', 'i4')")
    plan = res.plan
    assert plan.method == "exact" and plan.candidates == 2
    monkeypatch.setattr(search_mod, "EXACT_US_PER_MAC", float("inf"))  # a broad filter now costs more exactly
    res = sp.search(q, k=5, where="not draft")
    hits, plan = res.hits, res.plan
    assert plan.method == "hnsw" and plan.candidates == sum(not m["draft"] for _, m, _ in model.values())
    assert plan.ef >= 64 and all(not model[h.id][1]["draft"] for h in hits)


def test_the_planner_prices_exact_search_against_the_masked_graph():
    """The cost model's choices on the two data sets it was fitted on (BENCHMARKS.md, one query per call)."""
    ef10, ef50 = query._widened(64, 40_000, 400_000), query._widened(64, 200_000, 400_000)
    assert ef10 == 202 and ef50 == 90 and query._widened(64, 1, 10**9) == query.MAX_EF
    assert query._exact_is_cheaper(40_000, 50, ef10)  # GloVe 10%: exact 4,000 q/s, the graph 1,300
    assert not query._exact_is_cheaper(200_000, 50, ef50)  # GloVe 50%: exact 820 q/s, the graph 2,900
    assert query._exact_is_cheaper(10_000, 384, query._widened(64, 10_000, 100_000))  # MiniLM 10%
    assert not query._exact_is_cheaper(50_000, 384, query._widened(64, 50_000, 100_000))  # MiniLM 50%


def test_a_masked_graph_keeps_the_unfiltered_recall(store, glove_vectors, monkeypatch):
    """The widened beam (ef * (total / matches) ** 0.5) keeps a broad filter's recall at the unfiltered
    search's, on real GloVe vectors, queries held out; the exact path is priced out so the graph runs."""
    n = 20_000
    x = np.asarray(glove_vectors[:n], dtype=np.float32)
    q = np.asarray(glove_vectors[n : n + 200], dtype=np.float32)
    sp = store.create_space("g", dim=50, metric="cosine")
    sp.add([f"w{i}" for i in range(n)], x, metadata=[{"sel": i % 100} for i in range(n)])
    monkeypatch.setattr(query, "EXACT_US_PER_MAC", float("inf"))
    monkeypatch.setattr(query, "EXACT_MAX_SELECTIVITY", 0.0)
    recalls = {}
    for keep in (5, 20, 50, 100):
        where = None if keep == 100 else f"sel < {keep}"
        got = knn(sp, q, 10, where=where, method="hnsw", ef=32)
        want = knn(sp, q, 10, where=where, method="exact")
        assert got.plan.method == "hnsw" and got.plan.ef == query._widened(32, n * keep // 100, n)
        recalls[keep] = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got.rows, want.rows)])
    assert all(recalls[keep] >= recalls[100] - 0.02 for keep in (5, 20, 50)), recalls
