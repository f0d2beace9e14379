"""2-D layouts of a space for a map (the explorer's first view).

PCA is the default: instant and deterministic. UMAP (umap-learn) is fed repspace's own
kNN graph (:func:`repspace.core.knn.knn_graph`: exact up to 50,000 items, HNSW beyond)
instead of finding its neighbours with its own NN-descent.

PCA It is scikit-learn's ``PCA`` with the
``covariance_eigh`` solver (a d x d covariance and its eigenvectors: one pass over the
rows, 0.2 s for 100,000 x 384), whose signs scikit-learn fixes, so the same vectors give
the same map on any machine up to rounding.

Examples
--------
>>> import numpy as np
>>> X = np.random.default_rng(0).standard_normal((200, 8)).astype(np.float32)
>>> Y = pca_layout(X)
>>> Y.shape, Y.dtype
((200, 2), dtype('float32'))
"""

from __future__ import annotations

import warnings

from typing import TYPE_CHECKING

import numpy as np

from repspace.core.checks import check_choice
from repspace.core.errors import InputError

if TYPE_CHECKING:
    from repspace.core.backend import Backend

__all__ = ["pca_layout", "umap_layout"]


def pca_layout(X: np.ndarray, dims: int = 2) -> np.ndarray:
    """The rows of ``X`` projected on their ``dims`` first principal axes, float32 (n, dims).

    Parameters
    ----------
    X : (n, d) array
        Vectors as the space compares them (normalised first for a cosine space).
    dims : int
        2 for a map (3 for a 3-D view).
    """
    from sklearn.decomposition import PCA

    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or X.shape[0] == 0:
        raise InputError(f"a layout needs a non-empty (n, d) array, not shape {X.shape}")
    n, d = X.shape
    k = min(dims, n, d)
    out = np.zeros((n, dims), dtype=np.float32)
    if n > 1 and k > 0:
        out[:, :k] = PCA(n_components=k, svd_solver="covariance_eigh").fit_transform(X).astype(np.float32)
    return out


def umap_layout(X: np.ndarray, *, metric: str = "cosine", n_neighbors: int = 15, seed: int | None = 0,
                dims: int = 2, backend: Backend | None = None) -> np.ndarray:
    """UMAP of the rows of ``X`` on repspace's kNN graph, float32 (n, dims).

    ``seed`` makes the layout reproducible (umap-learn then optimises on one thread);
    ``None`` lets it use every core, with a layout that differs run to run. The graph
    passed to umap-learn holds each item as its own first neighbour at distance 0, as
    its own search returns it. ``backend`` builds that graph
    (:class:`repspace.core.backend.Backend`; ``None``: this process).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((300, 8)).astype(np.float32)
    >>> umap_layout(X, n_neighbors=10).shape
    (300, 2)
    """
    import umap

    from repspace.core.knn import knn_graph

    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or X.shape[0] <= n_neighbors:
        raise InputError(f"UMAP with {n_neighbors} neighbours needs more than {n_neighbors} rows, not shape {X.shape}")
    check_choice(metric, "metric", ("cosine", "l2", "poincare"))
    graph = knn_graph(X, n_neighbors - 1, metric=metric, backend=backend)
    n = X.shape[0]
    indices = np.concatenate([np.arange(n)[:, None], graph.indices], axis=1)
    distances = np.concatenate([np.zeros((n, 1), np.float32), np.maximum(graph.distances, 0)], axis=1)
    model = umap.UMAP(n_neighbors=n_neighbors, n_components=dims, metric={"l2": "euclidean"}.get(metric, metric),
                      random_state=seed, precomputed_knn=(indices, distances, None))
    with warnings.catch_warnings():  # umap-learn warns of what is chosen here: no transform(), one thread with a seed
        warnings.filterwarnings("ignore", message=".*knn_search_index.*")
        warnings.filterwarnings("ignore", message=".*n_jobs value .* overridden.*")
        warnings.filterwarnings("ignore", message=".*gradient function is not yet implemented.*")  # poincare
        return np.asarray(model.fit_transform(X), dtype=np.float32)
