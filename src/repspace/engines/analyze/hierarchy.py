"""Linear representation of hierarchy: is a child concept's vector minus its parent's orthogonal to the parent's?

Park, Choe, Jiang & Veitch (2024/2025, *The Geometry of Categorical and Hierarchical Concepts in Large Language
Models*, S023) represent a concept ``w`` (``animal``) by a vector ``ℓ̄_w`` estimated from the vectors of the words
``Y(w)`` that have it (the lemmas of a WordNet synset and of all its hyponyms), and predict that hierarchy is
orthogonality: ``ℓ̄_parent ⟂ ℓ̄_child − ℓ̄_parent`` (``mammal − animal`` carries no ``animal``). What is implemented
here is their estimator, as their paper defines it and their code computes it:

1. The *causal inner product*: the space is centred and whitened, ``g(y) = Cov(γ)^(-1/2) (γ(y) − E[γ])`` over all
   its rows (their unembedding vectors; here any space's vectors), so that the Euclidean inner product of ``g`` is
   the one their theory makes concept directions orthogonal under. ``whiten=False`` keeps the raw centred space.
2. The LDA-style concept vector: with ``E`` and ``Cov`` the mean and the Ledoit-Wolf shrunk covariance of ``g(y)``
   over ``y ∈ Y(w)``, ``g̃_w = Cov⁺ E / ‖Cov⁺ E‖`` (``⁺`` the pseudo-inverse) and ``ℓ̄_w = (g̃_wᵀ E) g̃_w``: the
   direction along which the words of ``w`` project most consistently, scaled to their mean projection. (Their
   code shrinks the covariance by Ledoit-Wolf; with fewer words than dimensions the raw covariance is singular.)
3. Per (parent, child) pair the cosine of ``ℓ̄_child − ℓ̄_parent`` with ``ℓ̄_parent`` (0: orthogonal), and beside
   it the cosine of ``ℓ̄_child`` with ``ℓ̄_parent``.

The baseline is theirs too: the rows of the space shuffled (each word gets another word's vector), which keeps
the hierarchy's nesting of word sets and its sizes but no meaning; the same statistics over ``shuffles``
shuffles. Whether real hierarchies are more orthogonal than the shuffled baseline is the question: on GloVe the
real pairs' mean cosine is near 0, and so is the shuffled baseline's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, row_blocks
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["DEFAULT_SHUFFLES", "HierarchyOrthogonality", "HierarchyPair", "concept_vector", "hierarchy_orthogonality",
           "ledoit_wolf_covariance", "whitening"]

#: Shuffles of the space's rows behind the baseline.
DEFAULT_SHUFFLES = 5
#: Eigenvalues of the space's covariance below this share of the largest are treated as 0 (not inverted).
EIGEN_FLOOR = 1e-10


def ledoit_wolf_covariance(E: Any) -> np.ndarray:
    """The Ledoit-Wolf (2004) shrunk covariance of the rows of ``E``: ``(1 − s) S + s (tr S / p) I``, with ``S``
    the maximum-likelihood covariance (divided by ``n``) and ``s`` the shrinkage that minimises the expected
    squared Frobenius error, ``s = min(b̄², d²) / d²``, ``d² = ‖S − (tr S / p) I‖²``,
    ``b̄² = (Σ_k ‖x_k‖⁴ − n ‖S‖²) / n²`` (``x_k`` the centred rows).

    Examples
    --------
    >>> E = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> ledoit_wolf_covariance(E).round(3).tolist()
    [[1.208, 0.0], [0.0, 1.292]]
    """
    E = np.asarray(E, dtype=np.float64)
    n, p = E.shape
    Xc = E - E.mean(axis=0)
    S = Xc.T @ Xc / n
    m = float(np.trace(S)) / p
    d2 = float(np.sum((S - m * np.eye(p)) ** 2))
    if d2 == 0.0:
        return S
    b2 = (float(np.sum(np.einsum("ij,ij->i", Xc, Xc) ** 2)) - n * float(np.sum(S * S))) / n ** 2
    s = min(b2, d2) / d2
    return (1.0 - s) * S + s * m * np.eye(p)


def whitening(X: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, W)`` with ``W = Cov(X)^(-1/2)`` (symmetric; directions of no variance get 0), so that
    ``(X − mean) @ W`` has identity covariance: Park et al.'s estimate of the causal inner product.

    Streams ``X`` in row blocks (float64 sums), so a memory-mapped space is read once.

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((500, 3)) @ np.diag([1.0, 2.0, 3.0])
    >>> mean, W = whitening(X)
    >>> np.cov(((X - mean) @ W).T).round(6).tolist() == np.eye(3).tolist()
    True
    """
    X = as_matrix(X, min_rows=2)
    n, d = X.shape
    total, gram = np.zeros(d), np.zeros((d, d))
    for _, block in row_blocks(X):
        b = np.asarray(block, dtype=np.float64)
        total += b.sum(axis=0)
        gram += b.T @ b
    mean = total / n
    cov = (gram - n * np.outer(mean, mean)) / (n - 1)
    values, vectors = np.linalg.eigh(cov)
    keep = values > EIGEN_FLOOR * max(float(values[-1]), 0.0)
    inv_sqrt = np.zeros_like(values)
    inv_sqrt[keep] = values[keep] ** -0.5
    return mean, (vectors * inv_sqrt) @ vectors.T


def concept_vector(G: Any) -> np.ndarray:
    """Park et al.'s vector ``ℓ̄_w = (g̃ᵀ E) g̃`` of the concept whose words have the (whitened) vectors ``G``:
    ``g̃ = Cov⁺ E / ‖Cov⁺ E‖``, ``E`` their mean, ``Cov`` their Ledoit-Wolf covariance.

    Examples
    --------
    Words spread along the second axis but agreeing on the first: the concept is the first axis, at their mean
    projection 2:

    >>> G = np.array([[2.0, 1.0], [2.0, -1.0], [2.0, 3.0], [2.0, -3.0]])
    >>> concept_vector(G).round(6).tolist()
    [2.0, 0.0]
    """
    G = np.asarray(G, dtype=np.float64)
    mean = G.mean(axis=0)
    direction = np.linalg.pinv(ledoit_wolf_covariance(G), hermitian=True) @ mean
    norm = float(np.linalg.norm(direction))
    if norm == 0.0:
        return np.zeros_like(mean)
    direction /= norm
    return float(direction @ mean) * direction


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b) / (na * nb) if na > 0 and nb > 0 else 0.0


@dataclass(frozen=True)
class HierarchyPair:
    """One (parent, child) pair: ``cosine`` of ``ℓ̄_child − ℓ̄_parent`` with ``ℓ̄_parent`` (0: orthogonal) and
    ``parent_child_cosine`` of ``ℓ̄_child`` with ``ℓ̄_parent``; ``n_parent``, ``n_child`` their words.

    Examples
    --------
    >>> HierarchyPair("animal.n.01", "dog.n.01", 300, 40, 0.01, 0.8).to_dict()["cosine"]
    0.01
    """

    parent: str
    child: str
    n_parent: int
    n_child: int
    cosine: float
    parent_child_cosine: float

    def to_dict(self) -> dict[str, Any]:
        """``{"parent", "child", "n_parent", "n_child", "cosine", "parent_child_cosine"}``."""
        return {"parent": self.parent, "child": self.child, "n_parent": self.n_parent, "n_child": self.n_child,
                "cosine": self.cosine, "parent_child_cosine": self.parent_child_cosine}


def _summary(cos: np.ndarray, pc: np.ndarray) -> dict[str, float]:
    return {"mean_cosine": round(float(cos.mean()), 9), "mean_abs_cosine": round(float(np.abs(cos).mean()), 9),
            "mean_parent_child_cosine": round(float(pc.mean()), 9)}


@dataclass(frozen=True)
class HierarchyOrthogonality:
    """The orthogonality of child − parent to parent over a hierarchy's pairs, beside the shuffled baseline.

    Attributes
    ----------
    n_concepts, n_pairs : int
        Concepts with a vector, and (parent, child) pairs scored.
    whitened : bool
        Whether the space was whitened first (the causal inner product).
    pairs : tuple of HierarchyPair
    mean_cosine, mean_abs_cosine, mean_parent_child_cosine : float
        Over the pairs.
    baseline : dict
        The same three over every pair of every shuffle, and ``shuffles``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 5))
    >>> r = hierarchy_orthogonality(X, {"a": range(100), "b": range(40)}, [("a", "b")], shuffles=2)
    >>> r.n_pairs, sorted(r.to_dict()["baseline"])
    (1, ['mean_abs_cosine', 'mean_cosine', 'mean_parent_child_cosine', 'shuffles'])
    """

    n_concepts: int
    n_pairs: int
    whitened: bool
    pairs: tuple[HierarchyPair, ...]
    mean_cosine: float
    mean_abs_cosine: float
    mean_parent_child_cosine: float
    baseline: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        """``{"n_concepts", "n_pairs", "whitened", "mean_cosine", "mean_abs_cosine", "mean_parent_child_cosine",
        "baseline", "pairs"}``."""
        return {"n_concepts": self.n_concepts, "n_pairs": self.n_pairs, "whitened": self.whitened,
                "mean_cosine": self.mean_cosine, "mean_abs_cosine": self.mean_abs_cosine,
                "mean_parent_child_cosine": self.mean_parent_child_cosine, "baseline": dict(self.baseline),
                "pairs": [p.to_dict() for p in self.pairs]}


def _pair_cosines(G: np.ndarray, sets: dict[str, np.ndarray], edges: list[tuple[str, str]],
                  perm: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    names = sorted({n for e in edges for n in e})
    vec = {n: concept_vector(G[sets[n] if perm is None else perm[sets[n]]]) for n in names}
    cos = np.array([_cosine(vec[p], vec[c] - vec[p]) for p, c in edges])
    pc = np.array([_cosine(vec[p], vec[c]) for p, c in edges])
    return cos, pc


def hierarchy_orthogonality(X: Any, sets: Mapping[str, Sequence[int]], edges: Sequence[tuple[str, str]], *,
                            whiten: bool = True, shuffles: int = DEFAULT_SHUFFLES,
                            seed: int | None = 0) -> HierarchyOrthogonality:
    """Park et al.'s test of hierarchical orthogonality (S023; see the module): for each (parent, child) edge the
    cosine of ``ℓ̄_child − ℓ̄_parent`` with ``ℓ̄_parent``, beside the same over shuffled rows.

    Parameters
    ----------
    X : array of shape (n, d)
        Every row of the space (the whitening is estimated on all of them).
    sets : mapping of str to sequence of int
        Each concept's words, as rows of ``X`` (at least 2 each).
    edges : sequence of (parent, child)
        The pairs scored; both must be in ``sets``, with word sets that differ.
    whiten : bool
        Centre and whiten the space first (Park et al.'s causal inner product); else only centre it.
    shuffles : int
        Shuffles of the rows behind the baseline (0: none).
    seed : int or None

    Returns
    -------
    HierarchyOrthogonality

    Examples
    --------
    >>> X = np.random.default_rng(1).standard_normal((300, 4))
    >>> r = hierarchy_orthogonality(X, {"p": range(150), "c": range(50)}, [("p", "c")], shuffles=0)
    >>> -1 <= r.pairs[0].cosine <= 1, r.baseline["shuffles"]
    (True, 0)
    """
    shuffles = check_scalar(shuffles, "shuffles", int, low=0)
    X = as_matrix(X, min_rows=2)
    edges = [(str(p), str(c)) for p, c in edges]
    if not edges:
        raise InputError("the hierarchy has no (parent, child) pair to score")
    rows: dict[str, np.ndarray] = {}
    for name in {n for e in edges for n in e}:
        if name not in sets:
            raise InputError(f"concept {name!r} of a pair has no word set")
        r = np.unique(np.asarray(list(sets[name]), dtype=np.int64))
        if len(r) < 2:
            raise InputError(f"concept {name!r} has {len(r)} word(s) in the space; a concept vector needs 2")
        if r[0] < 0 or r[-1] >= len(X):
            raise InputError(f"concept {name!r} names rows outside 0..{len(X) - 1}")
        rows[name] = r
    same = next(((p, c) for p, c in edges if np.array_equal(rows[p], rows[c])), None)
    if same is not None:
        raise InputError(f"concepts {same[0]!r} and {same[1]!r} have the same words: child − parent is 0")
    mean, W = whitening(X) if whiten else (np.asarray(X, dtype=np.float64).mean(axis=0), None)
    G = np.asarray(X, dtype=np.float64) - mean
    if W is not None:
        G = G @ W
    cos, pc = _pair_cosines(G, rows, edges, None)
    sizes = {n: len(r) for n, r in rows.items()}
    pairs = tuple(HierarchyPair(p, c, sizes[p], sizes[c], round(float(a), 9), round(float(b), 9))
                  for (p, c), a, b in zip(edges, cos, pc))
    rng = np.random.default_rng(seed)
    base_cos, base_pc = [np.empty(0)], [np.empty(0)]
    for _ in range(shuffles):
        bc, bp = _pair_cosines(G, rows, edges, rng.permutation(len(G)))
        base_cos.append(bc)
        base_pc.append(bp)
    baseline: dict[str, Any] = {"shuffles": shuffles}
    if shuffles:
        baseline.update(_summary(np.concatenate(base_cos), np.concatenate(base_pc)))
    return HierarchyOrthogonality(len(rows), len(edges), whiten, pairs, **_summary(cos, pc), baseline=baseline)
