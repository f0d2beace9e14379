"""The compare workflow: stored spaces joined on id, measures on the shared items, moved items, saved Jaccard."""

from __future__ import annotations

import numpy as np
import pytest

from repspace import ConflictError, InputError, Store
from repspace.engines.compare import compare, neighbourhood_jaccard
from repspace.workflows.compare import compare_spaces, joined

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture()
def store(store, glove_vectors):
    """tests/conftest.py's fresh store holding spaces ``old`` and ``new`` (below), with their vectors."""
    x = np.ascontiguousarray(glove_vectors[:1500], np.float32)
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    store.create_space("old", dim=50).add([f"w{i}" for i in range(1500)], x)
    # the new space: a rotated, noisy copy of words 200..1699, stored in another order, 200 of them new
    y = np.vstack([x[200:], glove_vectors[1500:1700]]).astype(np.float32) @ q.astype(np.float32)
    y += 0.3 * rng.standard_normal(y.shape).astype(np.float32)
    ids = [f"w{i}" for i in range(200, 1700)]
    order = rng.permutation(len(ids))
    store.create_space("new", dim=50).add([ids[i] for i in order], y[order])
    return store, x, y


def test_join_on_ids_and_measures_equal_the_engine(store):
    s, x, y = store
    j = joined(s.space("old"), s.space("new"))
    assert len(j.ids) == 1300 and j.ids[0] == "w200" and (j.n_x, j.n_y) == (1500, 1500)
    assert np.array_equal(j.x, x[200:1500]) and np.allclose(j.y, y[:1300])
    r = compare_spaces(s.space("old"), s.space("new"), k=10)
    direct = compare(x[200:1500], y[:1300], k=10)
    assert r.n_shared == 1300 and r.comparison.scores() == pytest.approx(direct.scores())
    data = r.to_dict()
    assert data["n_shared"] == 1300 and data["a"] == "old" and 0.5 < data["cka_linear"] <= 1.0


def test_changed_items_name_ids_and_neighbours(store):
    s, x, y = store
    r = compare_spaces(s.space("old"), s.space("new"), measures=["mutual_knn"], k=10, changed=5)
    assert len(r.changed) == 5
    jac = neighbourhood_jaccard(x[200:1500], y[:1300], k=10).per_item
    assert [c["jaccard"] for c in r.changed] == pytest.approx(sorted(jac)[:5])
    first = r.changed[0]
    assert first["id"].startswith("w") and len(first["old"]) == len(first["new"]) == 10
    assert set(first["old"]) - set(first["new"]) == set(first["lost"])


def test_save_writes_jaccard_into_both_spaces(store):
    s, x, y = store
    r = compare_spaces(s.space("old"), s.space("new"), measures=["cka_linear"], k=10, save=True)
    jac = r.comparison["neighbourhood_jaccard"].per_item
    old, new = s.space("old").get(["w200"])[0], s.space("new").get(["w200"])[0]
    assert old.metadata == {"jaccard": pytest.approx(jac[0], abs=1e-6), "jaccard_vs": "new"}
    assert new.metadata["jaccard_vs"] == "old" and new.metadata["jaccard"] == old.metadata["jaccard"]
    assert "jaccard" not in s.space("old").get(["w0"])[0].metadata  # not shared: untouched
    low = s.space("new").filter_rows("jaccard < 0.3")
    assert len(low) == int((jac < 0.3).sum())


def test_bad_requests(store, monkeypatch):
    s, x, _ = store
    s.create_space("tiny", dim=50).add(["w0", "w1"], x[:2])
    with pytest.raises(InputError, match="share 2 item"):
        compare_spaces(s.space("old"), s.space("tiny"))
    with pytest.raises(InputError, match="unknown measure"):
        compare_spaces(s.space("old"), s.space("new"), measures=["cosine_soup"])
    import repspace.workflows.compare as workflow

    real = workflow.compare

    def compare_then_write(*args, **kwargs):
        out = real(*args, **kwargs)
        other = Store(s.path)
        other.space("new").add(["late"], x[:1])
        other.close()
        return out

    monkeypatch.setattr(workflow, "compare", compare_then_write)
    with pytest.raises(ConflictError, match="changed while"):
        compare_spaces(s.space("old"), s.space("new"), measures=["cka_linear"], save=True)
    assert "jaccard" not in s.space("old").get(["w200"])[0].metadata  # refused whole: neither space written
