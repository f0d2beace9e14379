"""knn / Space.search with method="exact" over stored spaces, against brute force over the live items."""

from __future__ import annotations

import numpy as np
import pytest

from repspace import InputError, NotFoundError
from repspace.workflows.search import knn

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _churned_space(store, rng, metric, dtype="float32", dim=12):
    """A space after adds, deletes, upserts with new vectors and text-only updates; and its model."""
    sp = store.create_space(f"churn-{metric}-{dtype}", dim=dim, metric=metric, dtype=dtype)
    model: dict[str, np.ndarray] = {}

    def add(ids, x, **kw):
        sp.add(ids, x, **kw)
        stored = np.asarray(x, np.float32).astype(dtype).astype(np.float32)
        model.update(zip(ids, stored))

    add([f"i{i}" for i in range(300)], rng.standard_normal((300, dim)))
    sp.delete([f"i{i}" for i in range(0, 300, 6)])
    for i in range(0, 300, 6):
        model.pop(f"i{i}")
    replaced = [f"i{i}" for i in range(1, 300, 10)]
    add(replaced, rng.standard_normal((len(replaced), dim)) * 2)
    add(["i5", "i7"], np.vstack([model["i5"], model["i7"]]), texts=["new text", "other"])
    add([f"j{i}" for i in range(80)], rng.standard_normal((80, dim)))
    assert sp.info().dead_rows > 0
    return sp, model


def _live_matrix(sp, model):
    rows = sp.rows()
    items = sp.items(rows)
    ids = [items[r].id for r in rows]
    return rows, ids, np.array([model[i] for i in ids])


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_knn_exact_equals_brute_force_after_churn(store, rng, brute, metric):
    sp, model = _churned_space(store, rng, metric)
    rows, ids, x = _live_matrix(sp, model)
    assert sorted(ids) == sorted(model)
    q = rng.standard_normal((25, sp.dim)).astype(np.float32)
    for k in (1, 10, len(ids), len(ids) + 50):
        res = knn(sp, q, k, method="exact")
        assert res.plan.method == "exact" and res.plan.total == len(ids) == res.plan.candidates
        # Map returned space rows to positions in the live matrix, then compare.
        pos = np.searchsorted(rows, res.rows)
        assert np.array_equal(rows[pos], res.rows), "a returned row is not live"
        brute.check(res.scores, pos, q, x, k, metric)


@pytest.mark.parametrize("metric", ["cosine", "l2"])
def test_space_search_hits_equal_brute_force(store, rng, brute, metric):
    sp, model = _churned_space(store, rng, metric)
    _, ids, x = _live_matrix(sp, model)
    q = rng.standard_normal(sp.dim).astype(np.float32)
    hits = sp.search(q, k=15, method="exact")
    exp_s, exp_i = brute.topk(q, x, 15, metric)
    assert [h.id for h in hits] == [ids[j] for j in exp_i[0]]
    np.testing.assert_allclose([h.score for h in hits], exp_s[0], rtol=1e-4, atol=1e-4)
    for h in hits:
        assert h.row == sp.get([h.id])[0].row
        item = sp.get([h.id])[0]
        assert (h.text, h.metadata) == (item.text, item.metadata)
    # Deleted and replaced-away rows never show up even when k asks for everything.
    all_hits = sp.search(q, k=10_000, method="exact")
    assert sorted(h.id for h in all_hits) == sorted(model)
    assert len({h.row for h in all_hits}) == len(model)


def test_float16_space_searches_its_stored_vectors(store, rng, brute):
    sp, model = _churned_space(store, rng, "l2", dtype="float16")
    rows, ids, x = _live_matrix(sp, model)
    q = rng.standard_normal((5, sp.dim)).astype(np.float32)
    res = knn(sp, q, 7, method="exact")
    pos = np.searchsorted(rows, res.rows)
    brute.check(res.scores, pos, q, x, 7, "l2")


def test_search_by_id_excludes_the_item(store, rng):
    sp = store.create_space("byid", dim=6, metric="cosine")
    x = rng.standard_normal((50, 6)).astype(np.float32)
    ids = [f"i{i}" for i in range(50)]
    sp.add(ids, x)
    sp.add(["twin"], x[10:11])  # a duplicate of i10: the best hit for i10, with score 1
    hits = sp.search(None, id="i10", k=5)
    assert len(hits) == 5 and "i10" not in [h.id for h in hits]
    assert hits[0].id == "twin" and hits[0].score == pytest.approx(1.0, abs=1e-6)
    ref = sp.search(x[10], k=7, method="exact")
    assert [h.id for h in hits] == [h.id for h in ref if h.id != "i10"][:5]
    # k larger than the space: everything but itself.
    everything = sp.search(None, id="i3", k=1000)
    assert len(everything) == 50 and "i3" not in {h.id for h in everything}
    with pytest.raises(NotFoundError):
        sp.search(None, id="nope", k=3)
    with pytest.raises(InputError):
        sp.search(x[0], id="i1", k=3)


def test_search_by_id_of_replaced_item_uses_new_vector(store):
    sp = store.create_space("repl", dim=2, metric="l2")
    sp.add(["a", "b", "c"], [[0.0, 0.0], [10.0, 10.0], [0.5, 0.0]])
    sp.add(["a"], [[10.0, 10.5]])  # a moves next to b
    hits = sp.search(None, id="a", k=1)
    assert [h.id for h in hits] == ["b"] and hits[0].score == pytest.approx(0.5)


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_bad_queries(store, metric):
    sp = store.create_space("bad", dim=3, metric=metric)
    sp.add(["a", "b"], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    bad = [
        dict(query=np.ones(4)),
        dict(query=np.ones((1, 2))),
        dict(query=np.ones((1, 1, 3))),
        dict(query=np.array([1.0, np.nan, 0.0])),
        dict(query=np.array([1.0, np.inf, 0.0])),
        dict(query=["a", "b", "c"]),
        dict(query=np.ones(3), k=0),
        dict(query=np.ones(3), k=-2),
        dict(query=np.ones(3), k=2.5),
        dict(query=np.ones(3), k=True),
        dict(query=np.ones(3), method="fast"),
        dict(query=""),
        dict(query="   "),
        dict(query=None),
    ]
    for kw in bad:
        query = kw.pop("query")
        with pytest.raises(InputError) as e:
            sp.search(query, **{"k": 2, **kw})
        assert "\n" not in str(e.value), kw
    with pytest.raises(InputError):
        knn(sp, np.ones((2, 4)), 1)


def test_search_by_id_with_k_zero_is_input_error(store):
    sp = store.create_space("k0", dim=2)
    sp.add(["a", "b"], np.eye(2))
    with pytest.raises(InputError):
        sp.search(None, id="a", k=0)


def test_space_search_by_id_keyword_only(store):
    sp = store.create_space("kw", dim=2, metric="l2")
    sp.add(["a", "b", "c"], [[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    assert [h.id for h in sp.search(id="a", k=2)] == ["b", "c"]


def test_search_space_by_id_keyword_only(store):
    from repspace.workflows.search import search_space

    sp = store.create_space("kw2", dim=2, metric="l2")
    sp.add(["a", "b", "c"], [[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    assert [h.id for h in search_space(sp, id="a", k=2)] == ["b", "c"]


def test_empty_space_returns_nothing(store):
    sp = store.create_space("empty", dim=4, metric="l2")
    assert sp.search(np.ones(4), k=5) == []
    assert sp.search(np.ones(4), k=5, method="exact") == []
    res = knn(sp, np.ones((3, 4)), 5)
    assert res.rows.shape == (3, 0) and res.scores.shape == (3, 0)
    assert res.plan.candidates == 0 and res.plan.total == 0
    # Still validated on an empty space.
    with pytest.raises(InputError):
        sp.search(np.ones(5), k=5)
    with pytest.raises(InputError):
        sp.search(np.ones(4), k=0)
    # Emptied by deletes.
    sp.add(["a"], np.ones((1, 4)))
    sp.delete(["a"])
    assert sp.search(np.ones(4), k=5) == []


def test_fewer_items_than_k(store):
    sp = store.create_space("few", dim=2, metric="ip")
    sp.add(["a", "b", "c"], [[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    hits = sp.search(np.array([1.0, 0.0]), k=10)
    assert [h.id for h in hits] == ["c", "b", "a"]
    assert [h.score for h in hits] == [3.0, 2.0, 1.0]


def test_auto_uses_exact_for_small_spaces_and_explain(store, rng):
    sp = store.create_space("auto", dim=4)
    sp.add([str(i) for i in range(100)], rng.standard_normal((100, 4)))
    res = sp.search(rng.standard_normal(4), k=3)
    hits, plan = res.hits, res.plan
    assert plan.method == "exact" and plan.total == 100 and len(hits) == 3
    assert plan.to_dict()["method"] == "exact"
    assert hits[0].to_dict().keys() == {"id", "score", "text", "metadata"}


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_metric_scores(store, rng, metric):
    sp = store.create_space(f"m-{metric}", dim=8, metric=metric)
    x = (rng.standard_normal((400, 8)) * rng.uniform(0.1, 5, (400, 1))).astype(np.float32)
    ids = [f"i{i}" for i in range(400)]
    sp.add(ids, x)
    q = (rng.standard_normal(8) * 3).astype(np.float32)
    for method in ("exact", "hnsw"):
        hits = sp.search(q, k=50, method=method)
        scores = np.array([h.score for h in hits])
        vecs = sp.vectors_of([h.id for h in hits]).astype(np.float64)
        if metric == "cosine":
            assert np.all(scores <= 1 + 1e-6) and np.all(scores >= -1 - 1e-6)
            expect = vecs @ q / np.linalg.norm(vecs, axis=1) / np.linalg.norm(q)
        elif metric == "ip":
            expect = vecs @ q
        else:
            expect = np.linalg.norm(vecs - q, axis=1)  # Euclidean, not squared
        np.testing.assert_allclose(scores, expect, rtol=1e-4, atol=1e-4)
        if metric == "l2":
            assert np.all(np.diff(scores) >= 0)
        else:
            assert np.all(np.diff(scores) <= 0)
