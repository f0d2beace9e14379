"""Categorical concepts as simplices: are k sibling categories' vectors the vertices of a (k − 1)-simplex?

Park, Choe, Jiang & Veitch (2024/2025, *The Geometry of Categorical and Hierarchical Concepts in Large Language
Models*, S023) represent a categorical concept such as {mammal, bird, fish, reptile} by the polytope whose vertices
are the vectors ``ℓ̄_w`` of its values, and predict that the values' vectors are affinely independent: k sibling
categories span a (k − 1)-simplex. :mod:`~repspace.engines.analyze.hierarchy` holds their estimator (the whitened
space, the LDA-style :func:`~repspace.engines.analyze.hierarchy.concept_vector`); here it is applied to k
siblings at once:

1. The vertices ``v_1..v_k``: each category's concept vector from its words (a word in two categories is left
   out of both).
2. Affine independence: the edge matrix ``E = [v_2 − v_1, …, v_k − v_1]`` has rank k − 1 (singular values above
   ``RANK_TOL`` of the largest). Beside it the simplex's (k − 1)-volume ``√det(E Eᵀ) / (k − 1)!``, the condition
   number of ``E`` (largest over smallest singular value: √k for a regular simplex, large when it is nearly
   flat), and the volume relative to the regular simplex with the
   same mean edge length ``ā``, ``ā^(k−1) √(k / 2^(k−1)) / (k − 1)!`` (1 regular, near 0 flat).
3. Held-out membership: each category's words split into ``folds`` folds; the vertices are estimated from the
   other folds and every held-out word is assigned to its nearest vertex (Euclidean, in the same space). Beside
   it the nearest category mean (the plain centroid classifier) and chance (the largest category's share); the
   balanced accuracy (mean per-category recall, chance 1/k) beside both, since sibling categories are rarely of
   one size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.analyze.hierarchy import concept_vector, whitening

__all__ = ["CategoricalSimplex", "DEFAULT_FOLDS", "categorical_simplex", "simplex_shape", "simplex_volume"]

#: Folds of the held-out membership test.
DEFAULT_FOLDS = 5
#: Singular values of the edge matrix below this share of the largest count as 0 (affinely dependent).
RANK_TOL = 1e-8


def simplex_volume(V: Any) -> float:
    """The (k − 1)-volume of the simplex with the k rows of ``V`` as vertices, ``√det(E Eᵀ) / (k − 1)!``,
    ``E`` the edges from the first vertex (0 when they are affinely dependent).

    Examples
    --------
    The standard 2-simplex e1, e2, e3 (an equilateral triangle of side √2):

    >>> round(simplex_volume(np.eye(3)), 6), round(math.sqrt(3) / 2, 6)
    (0.866025, 0.866025)
    """
    V = np.asarray(V, dtype=np.float64)
    E = V[1:] - V[0]
    s = np.linalg.svd(E, compute_uv=False)
    return float(np.prod(s)) / math.factorial(len(E))


def simplex_shape(V: Any) -> dict[str, Any]:
    """The shape of the simplex with the k rows of ``V`` as vertices: ``{"rank", "affinely_independent",
    "singular_values", "volume", "condition", "regularity", "mean_edge"}`` (see the module; ``condition`` is
    ``None`` when the vertices are affinely dependent).

    Examples
    --------
    >>> s = simplex_shape(np.eye(3))
    >>> s["affinely_independent"], s["condition"], s["regularity"]
    (True, 1.732050808, 1.0)
    >>> simplex_shape([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])["rank"]
    1
    """
    V = np.asarray(V, dtype=np.float64)
    k = len(V)
    if V.ndim != 2 or k < 2:
        raise InputError(f"a simplex needs at least 2 vertices as rows, got shape {V.shape}")
    s = np.linalg.svd(V[1:] - V[0], compute_uv=False)
    rank = int((s > RANK_TOL * s[0]).sum()) if s[0] > 0 else 0
    volume = float(np.prod(s)) / math.factorial(k - 1)
    dist = np.sqrt(((V[:, None, :] - V[None, :, :]) ** 2).sum(axis=-1))
    mean_edge = float(dist[np.triu_indices(k, 1)].mean())
    regular = mean_edge ** (k - 1) * math.sqrt(k / 2 ** (k - 1)) / math.factorial(k - 1)
    independent = rank == k - 1
    return {"rank": rank, "affinely_independent": independent, "singular_values": [round(float(v), 9) for v in s],
            "volume": volume, "condition": round(float(s[0] / s[-1]), 9) if independent else None,
            "regularity": round(volume / regular, 9) if regular > 0 else 0.0, "mean_edge": round(mean_edge, 9)}


def _nearest(P: np.ndarray, centres: np.ndarray) -> np.ndarray:
    d2 = (P ** 2).sum(axis=1)[:, None] - 2 * P @ centres.T + (centres ** 2).sum(axis=1)[None, :]
    return np.argmin(d2, axis=1)


@dataclass(frozen=True)
class CategoricalSimplex:
    """The simplex of k sibling categories' vectors and its held-out membership accuracy.

    Attributes
    ----------
    categories : tuple of str
    sizes : tuple of int
        Words per category (shared words left out).
    shared : int
        Words left out because they belong to more than one category.
    whitened : bool
    affinely_independent : bool
        Rank of the edge matrix is k − 1.
    rank : int
    singular_values : tuple of float
        Of the edge matrix, largest first.
    volume, condition, regularity, mean_edge : float
        See the module; ``condition`` is null when the simplex is flat.
    accuracy, centroid_accuracy, chance : float
        Held-out nearest-vertex and nearest-mean accuracy, and the largest category's share.
    balanced_accuracy, centroid_balanced_accuracy : float
        The same as the mean over categories of the share of their words assigned to them (chance 1/k).
    folds : int
    vertices : ndarray of shape (k, d)
        The concept vectors from every word (not in ``to_dict``).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((90, 4))
    >>> r = categorical_simplex(X, {"a": range(30), "b": range(30, 60), "c": range(60, 90)}, folds=3)
    >>> r.rank, r.to_dict()["k"]
    (2, 3)
    """

    categories: tuple[str, ...]
    sizes: tuple[int, ...]
    shared: int
    whitened: bool
    affinely_independent: bool
    rank: int
    singular_values: tuple[float, ...]
    volume: float
    condition: float | None
    regularity: float
    mean_edge: float
    accuracy: float
    centroid_accuracy: float
    chance: float
    balanced_accuracy: float
    centroid_balanced_accuracy: float
    folds: int
    vertices: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """``{"k", "categories", "sizes", "shared", "whitened", "affinely_independent", "rank",
        "singular_values", "volume", "condition", "regularity", "mean_edge", "accuracy", "centroid_accuracy",
        "chance", "balanced_accuracy", "centroid_balanced_accuracy", "folds"}``."""
        return {"k": len(self.categories), "categories": list(self.categories), "sizes": list(self.sizes),
                "shared": self.shared, "whitened": self.whitened,
                "affinely_independent": self.affinely_independent, "rank": self.rank,
                "singular_values": list(self.singular_values), "volume": self.volume, "condition": self.condition,
                "regularity": self.regularity, "mean_edge": self.mean_edge, "accuracy": self.accuracy,
                "centroid_accuracy": self.centroid_accuracy, "chance": self.chance,
                "balanced_accuracy": self.balanced_accuracy,
                "centroid_balanced_accuracy": self.centroid_balanced_accuracy, "folds": self.folds}


def _rows(X: np.ndarray, sets: Mapping[str, Sequence[int]], folds: int) -> tuple[list[str], list[np.ndarray], int]:
    names = [str(c) for c in sets]
    if len(names) < 2:
        raise InputError(f"a categorical concept needs at least 2 categories, got {len(names)}")
    raw = [np.unique(np.asarray(list(sets[c]), dtype=np.int64)) for c in sets]
    for name, r in zip(names, raw):
        if len(r) and (r[0] < 0 or r[-1] >= len(X)):
            raise InputError(f"category {name!r} names rows outside 0..{len(X) - 1}")
    counts = np.bincount(np.concatenate(raw), minlength=len(X)) if raw else np.zeros(len(X), dtype=np.int64)
    shared = int((counts > 1).sum())
    rows = [r[counts[r] == 1] for r in raw]
    need = max(2, folds)
    for name, r in zip(names, rows):
        if len(r) < need:
            raise InputError(f"category {name!r} has {len(r)} word(s) of its own; the test needs {need} (one per "
                             "fold, and 2 for a concept vector)")
    return names, rows, shared


def categorical_simplex(X: Any, sets: Mapping[str, Sequence[int]], *, whiten: bool = True,
                        folds: int = DEFAULT_FOLDS, seed: int | None = 0) -> CategoricalSimplex:
    """Park et al.'s categorical concepts as simplices (S023; see the module): the k categories' concept vectors,
    their affine independence, the simplex's volume and condition, and held-out nearest-vertex accuracy.

    Parameters
    ----------
    X : array of shape (n, d)
        Every row of the space (the whitening is estimated on all of them).
    sets : mapping of str to sequence of int
        Each category's words as rows of ``X`` (at least 2 categories).
    whiten : bool
        Centre and whiten the space first (the causal inner product), else only centre it.
    folds : int
        Folds of the held-out test (≥ 2; every category needs that many words of its own).
    seed : int or None
        The split of each category's words.

    Returns
    -------
    CategoricalSimplex

    Examples
    --------
    Three well-separated clusters: a triangle, and every held-out point goes to its own vertex.

    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(c, 0.1, (20, 3)) for c in ([4, 0, 0], [0, 4, 0], [0, 0, 4])])
    >>> X = np.concatenate([X, rng.standard_normal((200, 3))])
    >>> r = categorical_simplex(X, {"x": range(20), "y": range(20, 40), "z": range(40, 60)}, folds=4)
    >>> r.affinely_independent, r.accuracy, r.chance
    (True, 1.0, 0.333333333)
    """
    folds = check_scalar(folds, "folds", int, low=2)
    X = as_matrix(X, min_rows=2)
    names, rows, shared = _rows(X, sets, folds)
    mean, W = whitening(X) if whiten else (np.asarray(X, dtype=np.float64).mean(axis=0), None)
    idx = np.concatenate(rows)
    G = np.asarray(X[idx], dtype=np.float64) - mean
    if W is not None:
        G = G @ W
    bounds = np.cumsum([0, *(len(r) for r in rows)])
    local = [np.arange(bounds[i], bounds[i + 1]) for i in range(len(rows))]
    V = np.stack([concept_vector(G[r]) for r in local])
    k = len(names)
    shape = simplex_shape(V)
    rng = np.random.default_rng(seed)
    fold_of = [rng.permutation(len(r)) % folds for r in local]
    labels = np.concatenate([np.full(len(r), i) for i, r in enumerate(local)])
    vertex_pred, mean_pred = np.full(len(labels), -1), np.full(len(labels), -1)
    for f in range(folds):
        train = [r[fo != f] for r, fo in zip(local, fold_of)]
        test = np.concatenate([r[fo == f] for r, fo in zip(local, fold_of)])
        if len(test):
            vertex_pred[test] = _nearest(G[test], np.stack([concept_vector(G[t]) for t in train]))
            mean_pred[test] = _nearest(G[test], np.stack([G[t].mean(axis=0) for t in train]))
    sizes = tuple(len(r) for r in rows)

    def balanced(pred: np.ndarray) -> float:
        return round(float(np.mean([(pred[r] == i).mean() for i, r in enumerate(local)])), 9)

    return CategoricalSimplex(
        tuple(names), sizes, shared, bool(whiten), shape["affinely_independent"], shape["rank"],
        tuple(shape["singular_values"]), shape["volume"], shape["condition"], shape["regularity"],
        shape["mean_edge"],
        round(float((vertex_pred == labels).mean()), 9), round(float((mean_pred == labels).mean()), 9),
        round(max(sizes) / len(idx), 9), balanced(vertex_pred), balanced(mean_pred), folds, V)
