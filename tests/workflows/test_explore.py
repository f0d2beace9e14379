"""What the explorer colours a map by: fields, overlays and two-space views, aligned with the layout."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from repspace.core.errors import InputError, NotFoundError
from repspace.core.exact import normalize_rows
from repspace.workflows.compare import compare_spaces
from repspace.workflows.explore import (
    index_recall,
    item_neighbours,
    map_agreement,
    map_column,
    map_fields,
    pair_item,
    pair_jaccard,
    pair_search,
)
from repspace.workflows.layout import space_layout

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture()
def words(store, glove_vectors):
    """1,500 real GloVe words with metadata, after a delete and a replace (so rows have gaps)."""
    x = np.asarray(glove_vectors[:1500], dtype=np.float32)
    ids = [f"w{i}" for i in range(1500)]
    meta = [{"n": i, "half": i % 2 == 0, "lang": ["en", "de", "fr"][i % 3], **({"odd": "x"} if i % 7 == 0 else {}),
             "mixed": i if i % 2 else str(i)} for i in range(1500)]
    sp = store.create_space("words", dim=50, metric="cosine")
    sp.add(ids, x, metadata=meta)
    sp.delete(["w3", "w10"])
    sp.add(["w5"], x[5:6] * 2, metadata=[{"n": 5, "lang": "it"}])  # replaced: w5 moves to the last row
    return sp


def test_fields_are_typed(words):
    fields = {f["name"]: (f["kind"], f["count"]) for f in map_fields(words).to_dict()["fields"]}
    assert fields == {"n": ("number", 1498), "half": ("bool", 1497), "lang": ("category", 1498),
                      "odd": ("category", 215), "mixed": ("category", 1497)}


def test_columns_follow_the_layout_order(words):
    lay = space_layout(words)
    items = {it.id: it for it in words.get(lay.ids)}
    col = map_column(words, "n").to_dict()
    assert col["kind"] == "number" and col["values"] == [items[i].metadata["n"] for i in lay.ids]
    half = map_column(words, "half").to_dict()
    assert half["values"] == [items[i].metadata.get("half") for i in lay.ids]
    lang = map_column(words, "lang").to_dict()
    assert sorted(lang["categories"]) == ["de", "en", "fr", "it"]
    assert [lang["categories"][c] for c in lang["codes"]] == [items[i].metadata["lang"] for i in lay.ids]
    assert lang["categories"][-1] == "it"  # least frequent last
    missing = map_column(words, "no-such-field").to_dict()
    assert missing["kind"] == "number" and set(missing["values"]) == {None}
    mixed = map_column(words, "mixed").to_dict()
    assert mixed["kind"] == "category"
    shown = [mixed["categories"][c] if c >= 0 else None for c in mixed["codes"]]
    truth = [None if "mixed" not in items[i].metadata else str(items[i].metadata["mixed"]) for i in lay.ids]
    assert all(s in (t, "(other)") for s, t in zip(shown, truth)) and shown.count("(other)") == 1497 - 39


def test_many_categories_are_capped(store):
    sp = store.create_space("c", dim=4)
    sp.add([f"i{i}" for i in range(300)], np.random.default_rng(0).standard_normal((300, 4)),
           metadata=[{"tag": f"t{i % 100}"} for i in range(300)])
    col = map_column(sp, "tag").to_dict()
    assert len(col["categories"]) == 40 and col["categories"][-1] == "(other)"
    assert max(col["codes"]) == 39 and col["codes"].count(39) == 300 - 39 * 3


def test_map_agreement_is_the_overlap_of_true_and_map_neighbours(words):
    lay = space_layout(words)
    values = map_agreement(words, k=10)
    x = normalize_rows(np.asarray(words.snapshot().vectors, np.float64))
    high = NearestNeighbors(n_neighbors=11, metric="cosine").fit(x).kneighbors(x, return_distance=False)[:, 1:]
    low = NearestNeighbors(n_neighbors=11).fit(lay.coords).kneighbors(lay.coords, return_distance=False)[:, 1:]
    ref = np.array([len(set(a) & set(b)) / 10 for a, b in zip(high.tolist(), low.tolist())])
    assert np.mean(np.abs(values - ref) < 1e-9) > 0.995  # ties of equal distances aside
    assert 0.05 < values.mean() < 0.9  # a 2-D PCA map of 50-d words keeps some neighbourhoods, not all
    assert np.array_equal(map_agreement(words, k=10), values)  # read back from beside the store
    assert (words.store.index_dir / words.uid / "layouts" / "pca.agreement10.npz").is_file()
    words.delete(["w0"])
    assert len(map_agreement(words, k=10)) == len(values) - 1  # recomputed for the new generation


def test_map_agreement_is_stable_under_tiny_perturbations(store, glove_vectors):
    x = np.asarray(glove_vectors[:1000], dtype=np.float32)
    a, b = store.create_space("a", dim=50), store.create_space("b", dim=50)
    ids = [f"w{i}" for i in range(1000)]
    a.add(ids, x)
    b.add(ids, x + np.random.default_rng(1).normal(0, 1e-6, x.shape).astype(np.float32))
    va, vb = map_agreement(a), map_agreement(b)
    assert np.mean(va == vb) > 0.99 and abs(va.mean() - vb.mean()) < 1e-3


def test_index_recall_is_measured_on_a_sample_against_exact_search(store):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3000, 32)).astype(np.float32)
    sp = store.create_space("r", dim=32, metric="l2")
    sp.add([f"i{i}" for i in range(3000)], x)
    values = index_recall(sp, k=10, sample=400)
    measured = np.isfinite(values)
    assert measured.sum() == 400 and np.all((values[measured] >= 0) & (values[measured] <= 1))
    from repspace.workflows.search.query import knn

    rows = np.flatnonzero(measured)
    approx = knn(sp, x[rows], 11, method="hnsw").rows
    d = ((x[rows, None, :] - x[None, :, :]) ** 2).sum(-1)
    d[np.arange(len(rows)), rows] = np.inf
    truth = np.argsort(d, axis=1, kind="stable")[:, :10]
    ref = [len(set(t) & (set(a) - {r})) / 10 for t, a, r in zip(truth.tolist(), approx.tolist(), rows.tolist())]
    np.testing.assert_allclose(values[rows], ref)
    assert 0.5 < values[rows].mean() < 1.0  # random 32-d data: HNSW misses some, as it should be shown


def test_item_neighbours_exact_and_approximate(words):
    got = item_neighbours(words, "w1", k=5).to_dict()
    assert got["approximate"] is None and got["index"] is None  # small, no index: nothing built for a click
    assert [h["id"] for h in got["exact"]] == [h.id for h in words.search(id="w1", k=5, index="exact")]
    words.search(id="w1", k=5, index="hnsw16")  # an index now exists
    got = item_neighbours(words, "w1", k=5).to_dict()
    assert got["index"] == "hnsw16" and len(got["approximate"]) == 5


@pytest.fixture()
def two(store, glove_vectors):
    x = np.asarray(glove_vectors[:1200], dtype=np.float64)
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((50, 50)))
    y = x @ q + np.random.default_rng(1).normal(0, 0.3, x.shape)
    ids = [f"w{i}" for i in range(1200)]
    a = store.create_space("a", dim=50, metric="cosine")
    a.add(ids, x)
    b = store.create_space("b", dim=50, metric="cosine")
    b.add(ids[100:], y[100:])  # b lacks the first 100 items
    return store, a, b


def test_pair_jaccard_equals_compare_and_is_aligned_with_as_map(two):
    store, a, b = two
    got = pair_jaccard(a, b, k=10).to_dict()
    ref = compare_spaces(a, b, measures="neighbourhood_jaccard", k=10)
    per_item = ref.comparison["neighbourhood_jaccard"].per_item
    lay = space_layout(a)
    assert got["values"][:100] == [None] * 100 and lay.ids[100] == "w100"
    np.testing.assert_allclose(got["values"][100:], per_item, atol=1e-6)
    assert got["mean"] == pytest.approx(float(np.mean(per_item)))


def test_pair_item_lists_kept_lost_and_gained(two):
    store, a, b = two
    got = pair_item(a, b, "w500", k=10).to_dict()
    shared = [f"w{i}" for i in range(100, 1200)]
    xa, xb = a.vectors_of(shared), b.vectors_of(shared)
    me = shared.index("w500")

    def nearest(x):
        xn = normalize_rows(np.asarray(x, np.float64))
        s = xn @ xn[me]
        s[me] = -np.inf
        return [shared[i] for i in np.argsort(-s, kind="stable")[:10]]

    na, nb = nearest(xa), nearest(xb)
    assert [h["id"] for h in got["a"]] == na and [h["id"] for h in got["b"]] == nb
    assert got["kept"] == [i for i in na if i in nb] and got["lost"] == [i for i in na if i not in nb]
    assert got["gained"] == [i for i in nb if i not in na]
    assert got["jaccard"] == pytest.approx(len(got["kept"]) / (20 - len(got["kept"])))
    row = space_layout(a).ids.index("w500")
    assert got["jaccard"] == pytest.approx(pair_jaccard(a, b, k=10).to_dict()["values"][row], abs=1e-6)
    with pytest.raises(NotFoundError, match="not in both"):
        pair_item(a, b, "w5")  # not in b


def test_pair_search_maps_the_query_through_a_stored_alignment(two):
    from repspace.workflows.align import align_spaces

    store, a, b = two
    plain = pair_search(store, a, b, id="w600", k=5).to_dict()
    assert plain["mapped"] is None and plain["map"] is None and len(plain["a"]) == len(plain["b"]) == 5
    align_spaces(store, "a", "b", method="procrustes", pairs=800, test=200, out="a-in-b")
    got = pair_search(store, a, b, id="w600", k=5).to_dict()
    assert got["map"] == "a-in-b"
    vec = store.space("a-in-b").vectors_of(["w600"])[0]
    assert [h["id"] for h in got["mapped"]] == [h.id for h in b.search(np.asarray(vec, np.float64), k=5)]
    assert got["mapped"][0]["id"] == "w600"  # a rotation plus noise: the map finds the item itself
    with pytest.raises(InputError):
        pair_search(store, a, b, k=5)
