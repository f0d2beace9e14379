"""repspace.engines.compare.compare: every measure at once, the same numbers as the single functions, JSON, GloVe."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.compare import (
    MEASURES,
    Comparison,
    cka_debiased,
    cka_linear,
    compare,
    mutual_knn,
    neighbourhood_jaccard,
    procrustes,
    rsa,
    svcca,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture(scope="module")
def pair() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 8)) + 1.0
    Y = np.tanh(X @ rng.standard_normal((8, 6))) + 0.3 * rng.standard_normal((200, 6))
    return X, Y


def test_same_numbers_as_the_single_functions(pair) -> None:
    X, Y = pair
    c = compare(X, Y, k=7)
    assert isinstance(c, Comparison) and c.n_shared == 200 and c.k == 7 and not c.skipped
    assert list(c.results) == list(MEASURES)
    assert c["cka_linear"] == pytest.approx(cka_linear(X, Y), abs=1e-13)
    assert c["cka_debiased"] == pytest.approx(cka_debiased(X, Y), abs=1e-13)
    assert c["procrustes"] == pytest.approx(procrustes(X, Y), abs=1e-12)
    assert c["svcca"].value == pytest.approx(svcca(X, Y).value, abs=1e-13)
    assert c["mutual_knn"].value == mutual_knn(X, Y, k=7).value
    np.testing.assert_array_equal(c["neighbourhood_jaccard"].per_item, neighbourhood_jaccard(X, Y, k=7).per_item)
    assert c["rsa"] == rsa(X, Y)


def test_to_dict_is_json_in_metrics_names(pair) -> None:
    X, Y = pair
    d = compare(X, Y).to_dict()
    assert list(d) == ["n_shared", "k", *MEASURES, "skipped"]
    assert isinstance(d["cka_linear"], float) and isinstance(d["procrustes"], float)
    assert set(d["rsa"]) == {"value", "low", "high", "exact", "n_pairs"}
    assert set(d["mutual_knn"]) == {"value", "k", "knn"}
    assert set(d["mutual_knn"]["knn"]) == {"method", "metric", "recall", "recall_x", "recall_y", "recall_sample"}
    assert set(d["neighbourhood_jaccard"]) == {"mean", "median", "min", "k", "knn"}
    assert d["svcca"]["dims_x"] >= 1
    json.dumps(d, allow_nan=False)
    assert len(compare(X, Y, measures=["neighbourhood_jaccard"]).to_dict(per_item=True)
               ["neighbourhood_jaccard"]["per_item"]) == 200


def test_subset_order_and_repr(pair) -> None:
    X, Y = pair
    c = compare(X, Y, measures=["svcca", "procrustes", "svcca"])
    assert list(c.results) == ["svcca", "procrustes"]
    assert compare(X, Y, measures="rsa").scores() == {"rsa": rsa(X, Y).value}
    text = repr(c)
    assert text.startswith("Comparison(n_shared=200, k=10, svcca=") and "procrustes=" in text
    with pytest.raises(InputError, match="unknown measure 'cka'"):
        compare(X, Y, measures=["cka"])
    with pytest.raises(InputError, match="no measure"):
        compare(X, Y, measures=[])


def test_undefined_measures_are_skipped_with_a_reason_or_raised_when_strict(pair) -> None:
    X, _ = pair
    const = np.ones((200, 3))
    c = compare(X, const)
    assert set(c.skipped) == {"cka_linear", "cka_debiased", "rsa", "procrustes", "svcca"}
    assert "Y has no variance" in c.skipped["cka_linear"]
    assert set(c.results) == {"mutual_knn", "neighbourhood_jaccard"}
    assert c.to_dict()["skipped"] == c.skipped
    with pytest.raises(InputError, match="no variance"):
        compare(X, const, strict=True)
    small = compare(X[:5], X[:5] * 2.0)
    assert set(small.skipped) == {"mutual_knn", "neighbourhood_jaccard"}
    with pytest.raises(InputError, match="needs at least 11 items"):
        compare(X[:5], X[:5], strict=True)


def test_errors_in_the_arrays_always_raise(pair) -> None:
    X, Y = pair
    with pytest.raises(InputError, match="X has 200 rows and Y has 199"):
        compare(X, Y[:199])
    bad = Y.copy()
    bad[3, 0] = np.inf
    with pytest.raises(InputError, match="row 3"):
        compare(X, bad)
    with pytest.raises(InputError, match="precision"):
        compare(X, Y, precision="float16")


def test_memory_mapped_float32(tmp_path, pair) -> None:
    X, Y = pair
    np.save(tmp_path / "x.npy", X.astype(np.float32))
    np.save(tmp_path / "y.npy", Y.astype(np.float32))
    c = compare(np.load(tmp_path / "x.npy", mmap_mode="r"), np.load(tmp_path / "y.npy", mmap_mode="r"))
    ref = compare(X, Y).scores()
    for key, v in c.scores().items():
        assert v == pytest.approx(ref[key], abs=1e-4), key


def test_glove_rotated_copy_and_noisy_copy(glove_vectors) -> None:
    X = np.array(glove_vectors[:1000], dtype=np.float64)
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    rotated = compare(X, 3.0 * X @ Q).scores()
    assert rotated["cka_linear"] == pytest.approx(1.0, abs=1e-10)
    assert rotated["cka_debiased"] == pytest.approx(1.0, abs=1e-10)
    assert rotated["svcca"] == pytest.approx(1.0, abs=1e-8)
    assert rotated["procrustes"] < 1e-6
    assert rotated["rsa"] == pytest.approx(1.0, abs=1e-10)
    assert rotated["mutual_knn"] >= 0.999 and rotated["neighbourhood_jaccard"] >= 0.998
    noisy = compare(X, X + 0.4 * rng.standard_normal(X.shape)).scores()
    for key, m in MEASURES.items():
        lo, hi = m.value_range
        assert lo <= noisy[key] <= hi
        worse = noisy[key] < rotated[key] if m.larger_is_more_similar else noisy[key] > rotated[key]
        assert worse, key


def test_changed_items_come_from_the_same_graphs(monkeypatch):
    import repspace.engines.compare.neighbours as nb
    from repspace.engines.compare import changed_items, compare

    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 12))
    Y = X + 0.8 * rng.standard_normal((300, 12))
    alone = changed_items(X, Y, k=5, top=4)
    calls = []
    real = nb.graphs
    monkeypatch.setattr(nb, "graphs", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    c = compare(X, Y, ["mutual_knn"], k=5, changed=4)
    assert len(calls) == 1  # one pair of graphs serves the measure and the moved items
    assert [m.row for m in c.changed] == [m.row for m in alone]
    assert c.to_dict()["changed"]["items"][0]["row"] == alone[0].row
    assert compare(X, Y, ["cka_linear"]).changed is None
    with pytest.raises(Exception, match="changed must be"):
        compare(X, Y, changed=-1)
