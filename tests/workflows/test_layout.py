"""2-D layouts: scikit-learn's PCA of the vectors as compared, kept beside the store by state."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.engines.geometry.layout import pca_layout
from repspace.workflows.layout import space_layout


def test_pca_layout_is_sklearns_and_stable_under_tiny_perturbations(glove_vectors):
    X = np.asarray(glove_vectors[:5000], dtype=np.float32)
    Y = pca_layout(X)
    ref = PCA(n_components=2, svd_solver="covariance_eigh").fit_transform(X)
    np.testing.assert_allclose(Y, ref, rtol=1e-4, atol=1e-4)
    moved = pca_layout(X + np.random.default_rng(0).normal(0, 1e-6, X.shape).astype(np.float32))
    np.testing.assert_allclose(moved, Y, atol=1e-3)  # no axis flips for a 1e-6 nudge


def test_degenerate_inputs():
    assert pca_layout(np.ones((1, 4))).tolist() == [[0.0, 0.0]]
    assert pca_layout(np.arange(6, dtype=np.float32).reshape(3, 2)).shape == (3, 2)
    with pytest.raises(InputError):
        pca_layout(np.zeros((0, 3)))


def test_space_layout_is_kept_until_the_space_changes(store):
    sp = store.create_space("s", dim=6, metric="cosine")
    x = np.random.default_rng(0).standard_normal((400, 6)).astype(np.float32)
    sp.add([f"i{i}" for i in range(400)], x)
    first = space_layout(sp)
    assert not first.cached and first.ids == [f"i{i}" for i in range(400)]
    np.testing.assert_allclose(first.coords, pca_layout(normalize_rows(x)), atol=1e-6)
    again = space_layout(sp)
    assert again.cached and np.array_equal(again.coords, first.coords)
    sp.delete(["i0"])
    after = space_layout(sp)
    assert not after.cached and after.ids[0] == "i1" and len(after.ids) == 399
    path = store.index_dir / sp.uid / "layouts" / "pca.npz"
    path.write_bytes(b"damaged")
    assert not space_layout(sp).cached and space_layout(sp).cached
    with pytest.raises(InputError):
        space_layout(sp, "tsne")
