"""Augmentation invariance of a group of (input, augmented input) pairs, as *Layer by Layer* scores it.

Skean et al. 2025 (*Layer by Layer*, S059) score how invariant a layer is to
perturbations of its inputs with three figures over a set of ``N`` pairs of
views (their reference code, ``OFSkean/information_flow``, computes each over
the whole set of pairs at once). ``A`` and ``B`` below are the ``N × d``
representations of the inputs and of their augmented copies, row ``i`` of each
from the same input, each row scaled to unit length here (SimCLR's loss is on
cosines; the Grams of DiME then have a unit diagonal, as that paper's kernels).

``infonce``
    The InfoNCE (NT-Xent, SimCLR) loss over the ``2N`` views: each view's
    positive is its pair, its negatives the other ``2N − 2`` views; with the
    cosines ``s`` over the temperature ``τ = 0.1``,
    ``mean_i [log Σ_{j≠i} exp(s_ij) − s_{i,pair(i)}]``. Lower is more
    invariant; ``log(2N − 1)`` when every cosine is the same.
``lidar``
    LiDAR (Thilak et al. 2024, as S059 uses it): the Shannon entropy of the
    eigenvalues of the LDA matrix ``Σ_w^{-1/2} Σ_b Σ_w^{-1/2}`` normalised to
    sum 1, with each input a class of its two views: ``Σ_b`` the covariance of
    the class means ``m_i = (a_i + b_i) / 2`` (over ``N``), ``Σ_w`` the mean of
    ``(v − m_i)(v − m_i)ᵀ`` over the ``2N`` views plus ``δ I`` (``δ = 1e-4``).
    A rank figure: higher when the inputs stand apart from their views' spread
    along many directions evenly, lower when few directions carry the inputs'
    differences.
``dime``
    DiME (Skean et al. 2023): with the Grams ``K_A = A Aᵀ`` and ``K_B = B Bᵀ``
    and ``H`` the Shannon entropy of a Gram's eigenvalues normalised to sum 1,
    ``E_P[H(K_A ∘ P K_B Pᵀ)] − H(K_A ∘ K_B)``, the expectation over random
    permutations ``P`` of the pairs (``∘``: elementwise product). Higher: the
    two views' similarity structures agree more than chance.

``lidar`` and ``dime`` are divided by ``min(log N, log d)``, the reference
code's ``maxEntropy`` normalisation. Entropies are α = 1 (Shannon, natural
log; the reference code's default order); eigenvalues below ``1e-12`` of the
largest count as 0. Every sum runs in float64.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> a = rng.standard_normal((64, 16))
>>> b = a + 0.1 * rng.standard_normal((64, 16))   # views that barely differ
>>> noise = rng.standard_normal((64, 16))         # views that share nothing
>>> bool(infonce(a, b) < infonce(a, noise)), bool(dime(a, b) > dime(a, noise))
(True, True)
"""

from __future__ import annotations

import math

import numpy as np

from repspace.core.errors import InputError

__all__ = [
    "DIME_PERMUTATIONS",
    "INFONCE_TEMPERATURE",
    "LIDAR_DELTA",
    "dime",
    "infonce",
    "lidar",
]

#: Temperature of the InfoNCE loss (the reference code's).
INFONCE_TEMPERATURE = 0.1
#: Ridge added to the within-class scatter of LiDAR (the reference code's).
LIDAR_DELTA = 1e-4
#: Random permutations behind DiME's expectation (the reference code's).
DIME_PERMUTATIONS = 10
#: Relative size below which an eigenvalue counts as 0 (float64 rounding).
_EIG_FLOOR = 1e-12


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two views as float64 rows of unit length (a zero row stays zero)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 2 or x.shape != y.shape or x.shape[0] < 2:
        raise InputError(f"the two views must be (N, d) arrays of the same shape with N >= 2, "
                         f"got {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("the views hold NaN or infinite values")
    return _unit(x), _unit(y)


def _unit(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    return np.divide(v, norm, out=np.zeros_like(v), where=norm > 0)


def infonce(a: np.ndarray, b: np.ndarray, temperature: float = INFONCE_TEMPERATURE) -> float:
    """The InfoNCE (NT-Xent) loss of the paired views ``a[i]``, ``b[i]`` (see the module notes).

    Examples
    --------
    >>> a = np.eye(3)
    >>> round(infonce(a, a), 4)  # each view's pair is itself: far above its 4 negatives
    0.0002
    """
    x, y = _pairs(a, b)
    if not (temperature > 0 and math.isfinite(temperature)):
        raise InputError(f"temperature must be a finite number above 0, got {temperature}")
    n = x.shape[0]
    z = np.concatenate([x, y])
    s = (z @ z.T) / temperature
    np.fill_diagonal(s, -np.inf)
    top = s.max(axis=1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(s - top).sum(axis=1))
    pair = np.concatenate([np.arange(n, 2 * n), np.arange(n)])
    return float(np.mean(lse - s[np.arange(2 * n), pair]))


def _entropy(eigenvalues: np.ndarray) -> float:
    """Shannon entropy of the eigenvalues above the floor, normalised to sum 1."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    top = lam.max() if lam.size else 0.0
    lam = lam[lam > _EIG_FLOOR * top] if top > 0 else lam[:0]
    if lam.size == 0:
        return float("nan")
    p = lam / lam.sum()
    return float(-np.sum(p * np.log(p)))


def _max_entropy(n: int, d: int) -> float:
    return min(math.log(n), math.log(d)) if min(n, d) >= 2 else float("nan")


def lidar(a: np.ndarray, b: np.ndarray, delta: float = LIDAR_DELTA) -> float:
    """LiDAR of the paired views: the normalised entropy of their LDA matrix (see the module notes).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> a, noise = rng.standard_normal((50, 8)), 0.01 * rng.standard_normal((50, 8))
    >>> flat = a * [1, 1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01]  # the inputs differ along 2 of 8 directions
    >>> round(lidar(a, a + noise), 2), round(lidar(flat, flat + noise), 2)
    (0.96, 0.33)
    """
    x, y = _pairs(a, b)
    n, d = x.shape
    m = (x + y) / 2
    between = m - m.mean(axis=0)
    sb = between.T @ between / n
    w = x - m  # y - m is its negative: both views add the same outer product
    sw = 2 * (w.T @ w) / (2 * n) + delta * np.eye(d)
    lam, vec = np.linalg.eigh(sw)
    root = (vec / np.sqrt(lam)) @ vec.T  # Σ_w^{-1/2}
    lda = root @ sb @ root
    return _entropy(np.linalg.eigvalsh((lda + lda.T) / 2)) / _max_entropy(n, d)


def dime(a: np.ndarray, b: np.ndarray, *, permutations: int = DIME_PERMUTATIONS,
         rng: np.random.Generator | None = None) -> float:
    """DiME of the paired views: permuted minus paired joint entropy of their Grams (see the module notes).

    ``rng`` draws the permutations (``numpy.random.default_rng(0)`` when ``None``).

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> a = rng.standard_normal((40, 8))
    >>> bool(dime(a, a) > dime(a, rng.standard_normal((40, 8))))
    True
    """
    x, y = _pairs(a, b)
    if not (isinstance(permutations, (int, np.integer)) and permutations >= 1):
        raise InputError(f"permutations must be an integer >= 1, got {permutations!r}")
    gen = np.random.default_rng(0) if rng is None else rng
    ka, kb = x @ x.T, y @ y.T
    joint = _entropy(np.linalg.eigvalsh(ka * kb))
    shuffled = 0.0
    for _ in range(int(permutations)):
        p = gen.permutation(x.shape[0])
        shuffled += _entropy(np.linalg.eigvalsh(ka * kb[np.ix_(p, p)]))
    return (shuffled / permutations - joint) / _max_entropy(*x.shape)
