"""2-D layouts: scikit-learn's PCA of the vectors as compared, kept beside the store by state."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA

from repspace.core.errors import InputError
from repspace.core.exact import normalize_rows
from repspace.engines.geometry.layout import pca_layout
from repspace.workflows.layout import space_layout


@pytest.mark.numerics
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


def test_umap_on_our_graph_is_as_trustworthy_as_umap_on_its_own(glove_vectors):
    """The map of 2,000 GloVe words: UMAP fed repspace's exact kNN graph keeps 2-D neighbourhoods as well as
    umap-learn finding its own neighbours (trustworthiness@10 within 0.02), and the same seed gives the same map."""
    import umap
    from sklearn.manifold import trustworthiness

    from repspace.engines.geometry.layout import umap_layout

    X = normalize_rows(np.asarray(glove_vectors[:2000], dtype=np.float32))
    ours = umap_layout(X, metric="cosine")
    theirs = umap.UMAP(n_neighbors=15, metric="cosine", random_state=0).fit_transform(X)
    t_ours = trustworthiness(X, ours, n_neighbors=10, metric="cosine")
    t_theirs = trustworthiness(X, theirs, n_neighbors=10, metric="cosine")
    assert t_ours >= t_theirs - 0.02 and t_ours > 0.8, (t_ours, t_theirs)
    np.testing.assert_array_equal(umap_layout(X, metric="cosine"), ours)


def test_space_layout_by_umap_is_kept_apart_from_pca(store):
    sp = store.create_space("u", dim=6, metric="l2")
    sp.add([f"i{i}" for i in range(300)], np.random.default_rng(1).standard_normal((300, 6)).astype(np.float32))
    u = space_layout(sp, "umap")
    p = space_layout(sp, "pca")
    assert u.method == "umap" and not u.cached and p.method == "pca" and not p.cached
    assert space_layout(sp, "umap").cached and not np.allclose(u.coords, p.coords)
    ip = store.create_space("ip", dim=6, metric="ip")
    ip.add([f"i{i}" for i in range(30)], np.ones((30, 6), np.float32))
    with pytest.raises(InputError):
        space_layout(ip, "umap")
