"""The analyze workflows on stored spaces: curvature saved as metadata, two spaces compared, capacity."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.engines.analyze import capacity, knn_ricci
from repspace.workflows.analyze import capacity_space, ricci_space, ricci_spaces

pytestmark = pytest.mark.numerics


@pytest.fixture()
def glove(store, glove_vectors):
    x = np.ascontiguousarray(glove_vectors[:400], np.float32)
    sp = store.create_space("glove", dim=50)
    sp.add([f"w{i}" for i in range(400)], x)
    return sp, x


def test_saved_node_curvature_is_the_engines_on_the_stored_vectors(glove):
    sp, x = glove
    r = ricci_space(sp, k=8, save="kappa")
    direct = knn_ricci(x, 8)
    stored = [it.metadata["kappa"] for it in sp.get([f"w{i}" for i in range(400)])]
    assert r.saved == 400 and np.allclose(stored, direct.node_curvature, atol=5e-7)  # rounded to 6 decimals
    d = r.to_dict(top=3)
    assert d["mean_curvature"] == pytest.approx(direct.edge_curvature.mean(), abs=1e-12)
    assert d["most_negative"][0]["curvature"] == pytest.approx(direct.node_curvature.min(), abs=1e-6)


def test_against_compares_the_shared_items_graphs(store, glove):
    sp, x = glove
    other = store.create_space("half", dim=50)
    noisy = x[100:] + np.random.default_rng(0).normal(0, 0.5, x[100:].shape).astype(np.float32)
    other.add([f"w{i}" for i in range(100, 400)], noisy)
    c = ricci_spaces(sp, other, k=6)
    a, b = knn_ricci(x[100:], 6), knn_ricci(noisy, 6)
    d = c.to_dict()
    assert d["n_shared"] == 300 and (d["n_a"], d["n_b"]) == (400, 300)
    assert np.allclose(c.difference, b.node_curvature - a.node_curvature, atol=1e-12)
    assert d["node_correlation"]["pearson"] == pytest.approx(np.corrcoef(a.node_curvature, b.node_curvature)[0, 1])
    assert d["largest_drops"][0]["curvature"] == pytest.approx(c.difference.min(), abs=1e-6)


def test_capacity_space_is_the_engine_on_the_vectors(glove):
    sp, x = glove
    assert capacity_space(sp, pairs=5000).capacity == capacity(x, pairs=5000)
