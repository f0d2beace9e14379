"""Per-input figures of a batch of token clouds: prompt entropy, curvature, TwoNN, neighbourhood overlap, cosine.

An input's *token cloud* at one layer is the ``T × d`` matrix ``Z`` of the
states of every token the tokenizer emitted for it (special tokens included,
padding never). These functions take one layer of a padded batch, ``states``
of shape ``(B, T_max, d)`` with each input's real tokens first and its
``lengths``, and return one float per input (``NaN`` where the figure is
undefined for that input): the layer profile (:mod:`repspace.workflows.layer_profile`)
averages them over inputs, batch after batch, so no ``T × d`` matrix outlives
its batch. All sums run in float64.

``prompt_entropy``
    The eigenvalues ``λ`` of ``Z Zᵀ`` normalised to sum 1 (``p``), and the
    Shannon entropy ``−Σ p log p / log T`` (Skean et al. 2025, *Layer by
    Layer*, S059). :func:`prompt_entropies` also gives the α-entropy family
    ``log(Σ p^α) / ((1 − α) log T)`` (Rényi; α = 1 is Shannon). ``T < 2``:
    undefined.
``curvature``
    With ``v_k = z_{k+1} − z_k``, the mean over ``k`` of the angle between
    ``v_k`` and ``v_{k+1}`` in radians (Hosseini & Fedorenko 2023, as Layer
    by Layer uses it). ``T < 3`` (no two steps): undefined; a zero step has no
    angle and its two angles are left out.
``intrinsic_dimension``
    TwoNN (Facco et al. 2017) over the cloud's points, as
    :func:`repspace.engines.geometry.intrinsic.twonn` fits it (Euclidean,
    10% of the largest ratios discarded). A point whose nearest neighbour is at
    distance 0 (an exact duplicate) is left out with its ratio. Fewer than 3
    usable points: undefined.
``neighbourhood_overlap``
    The share of each token's ``k`` nearest tokens (Euclidean, itself
    excluded, ties to the lower index) that are also its ``k`` nearest at the
    previous layer, averaged over the tokens (Valeriani et al. 2023; the
    geometry-of-tokens paper, S105). ``T ≤ k``: undefined.
``mean_cosine``
    The mean cosine over the distinct pairs of tokens. ``T < 2``: undefined.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> states = rng.standard_normal((2, 5, 8))  # two inputs, the second of 3 tokens
>>> lengths = np.array([5, 3])
>>> prompt_entropies(states, lengths).round(3).tolist()
[[0.807, 0.96]]
>>> curvatures(states, lengths).shape
(2,)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from repspace.core.errors import InputError
from repspace.engines.geometry.intrinsic import DEFAULT_DISCARD

__all__ = [
    "BLOCK_ENTRIES",
    "DEFAULT_OVERLAP_K",
    "CloudGeometry",
    "cloud_geometry",
    "curvatures",
    "left_aligned",
    "neighbourhood_overlaps",
    "paired_cosines",
    "prompt_entropies",
]

#: Neighbours of the neighbourhood overlap between layers: small, as token clouds are (an STS-B sentence has
#: about 13 tokens with its special tokens; an input with T <= k has no overlap).
DEFAULT_OVERLAP_K = 3
#: Largest (rows x T x T) block of float64 distances :func:`cloud_geometry` holds at once (32 MiB per array).
BLOCK_ENTRIES = 4 * 1024 * 1024
#: Relative size below which an eigenvalue of Z Zᵀ counts as 0 (float64 rounding of the Gram's eigenvalues).
_EIG_FLOOR = 1e-12


def _check(states: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.asarray(states, dtype=np.float64)
    n = np.asarray(lengths, dtype=np.int64)
    if x.ndim != 3 or n.shape != (x.shape[0],):
        raise InputError(f"token states must be (B, T, d) with B lengths, got {x.shape} and {n.shape}")
    if n.size and (n.min() < 0 or n.max() > x.shape[1]):
        raise InputError(f"lengths must lie in 0..{x.shape[1]}")
    real = np.arange(x.shape[1])[None, :] < n[:, None]
    return np.where(real[..., None], x, 0.0), n, real


def left_aligned(states: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move each row's real tokens (``mask`` true) to its front, in order; return the states and lengths.

    Right-padded batches come back as they are; left-padded ones (decoder tokenizers) are reordered.

    Examples
    --------
    >>> s = np.arange(6.0).reshape(1, 3, 2)
    >>> x, n = left_aligned(s, np.array([[0, 1, 1]]))
    >>> x[0, :2].tolist(), n.tolist()
    ([[2.0, 3.0], [4.0, 5.0]], [2])
    """
    real = np.asarray(mask) > 0
    lengths = real.sum(axis=1).astype(np.int64)
    if np.array_equal(real, np.arange(real.shape[1])[None, :] < lengths[:, None]):
        return states, lengths
    order = np.argsort(~real, axis=1, kind="stable")
    return np.take_along_axis(states, order[..., None], axis=1), lengths


def prompt_entropies(states: np.ndarray, lengths: np.ndarray, alphas: Sequence[float] = (1.0,)) -> np.ndarray:
    """The normalised matrix entropy of each input's Gram ``Z Zᵀ``, for each α; shape ``(len(alphas), B)``.

    ``p`` are the eigenvalues of ``Z Zᵀ`` (those of ``Zᵀ Z`` when ``T > d``: the
    same non-zero ones) divided by their sum; α = 1 gives ``−Σ p log p / log T``,
    any other α > 0 ``log(Σ p^α) / ((1 − α) log T)``. Eigenvalues below
    ``1e-12`` of the largest are taken as 0 (rounding). ``T < 2`` or ``Z = 0``: ``NaN``.

    Examples
    --------
    >>> z = np.eye(4)[None]  # four orthonormal tokens: a flat spectrum, entropy 1
    >>> prompt_entropies(z, np.array([4]), alphas=(1.0, 2.0)).round(6).tolist()
    [[1.0], [1.0]]
    """
    x, n, _ = _check(states, lengths)
    alphas = [float(a) for a in alphas]
    if any(not np.isfinite(a) or a <= 0 for a in alphas):
        raise InputError(f"an entropy order alpha must be a finite number above 0, got {alphas}")
    gram = x @ x.transpose(0, 2, 1) if x.shape[1] <= x.shape[2] else x.transpose(0, 2, 1) @ x
    lam = np.linalg.eigvalsh(gram) if gram.size else np.zeros(gram.shape[:2])
    top = lam.max(axis=1, keepdims=True) if lam.size else np.zeros((x.shape[0], 1))
    lam = np.where(lam > _EIG_FLOOR * np.maximum(top, 0), lam, 0.0)
    total = lam.sum(axis=1, keepdims=True)
    ok = (n >= 2) & (total[:, 0] > 0)
    p = np.divide(lam, total, out=np.zeros_like(lam), where=total > 0)
    log_t = np.log(np.maximum(n, 2)).astype(np.float64)
    out = np.full((len(alphas), x.shape[0]), np.nan)
    for i, a in enumerate(alphas):
        if a == 1.0:
            h = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=1)
        else:
            h = np.log(np.sum(np.where(p > 0, p, 0.0) ** a, axis=1)) / (1.0 - a)
        out[i] = np.where(ok, h / log_t, np.nan)
    return out


def curvatures(states: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each input's mean angle (radians) between consecutive steps ``v_k = z_{k+1} − z_k``; shape ``(B,)``.

    ``NaN`` for ``T < 3`` or when every angle has a zero step.

    Examples
    --------
    >>> z = np.array([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0]]])  # right, up, right: two right angles
    >>> round(float(curvatures(z, np.array([4]))[0]), 6)
    1.570796
    """
    x, n, _ = _check(states, lengths)
    if x.shape[1] < 3:
        return np.full(x.shape[0], np.nan)
    v = np.diff(x, axis=1)  # (B, T-1, d)
    a, b = v[:, :-1], v[:, 1:]
    na, nb = np.linalg.norm(a, axis=2), np.linalg.norm(b, axis=2)
    valid = (np.arange(a.shape[1])[None, :] < (n - 2)[:, None]) & (na > 0) & (nb > 0)
    cos = np.divide(np.einsum("btd,btd->bt", a, b), na * nb, out=np.zeros_like(na), where=valid)
    angles = np.arccos(np.clip(cos, -1.0, 1.0))
    count = valid.sum(axis=1)
    total = np.where(valid, angles, 0.0).sum(axis=1)
    return np.divide(total, count, out=np.full(x.shape[0], np.nan), where=count > 0)


@dataclass(frozen=True, eq=False)
class CloudGeometry:
    """The geometry of one layer's token clouds of a batch: per-input figures and each token's neighbours.

    Attributes
    ----------
    intrinsic_dimension, mean_cosine : ndarray of shape (B,)
        Per input (``NaN`` where undefined, see the module docstring).
    neighbours : ndarray of shape (B, T_max, k)
        Each token's ``k`` nearest tokens of its input (``-1`` where it has fewer
        than ``k`` others), for :func:`neighbourhood_overlaps` with the next layer.
    lengths : ndarray of shape (B,)

    Examples
    --------
    >>> g = cloud_geometry(np.random.default_rng(0).standard_normal((1, 6, 4)), np.array([6]), k=2)
    >>> g.neighbours.shape, bool(np.isfinite(g.intrinsic_dimension[0])), bool(-1 < g.mean_cosine[0] < 1)
    ((1, 6, 2), True, True)
    """

    intrinsic_dimension: np.ndarray
    mean_cosine: np.ndarray
    neighbours: np.ndarray
    lengths: np.ndarray


def cloud_geometry(states: np.ndarray, lengths: np.ndarray, k: int = DEFAULT_OVERLAP_K,
                   discard: float = DEFAULT_DISCARD) -> CloudGeometry:
    """TwoNN, mean pairwise cosine and the ``k`` nearest tokens of each input's token cloud.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> plane = rng.standard_normal((1, 400, 2)) @ rng.standard_normal((2, 10))  # a plane in 10-d
    >>> from repspace.engines.geometry import twonn
    >>> ours = float(cloud_geometry(plane, np.array([400])).intrinsic_dimension[0])
    >>> round(ours, 2), abs(ours - twonn(plane[0])) < 1e-5  # the same fit as twonn on one cloud
    (2.14, True)
    """
    x, n, real = _check(states, lengths)
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise InputError(f"k must be an integer >= 1, got {k!r}")
    step = max(1, BLOCK_ENTRIES // max(1, x.shape[1] ** 2))
    if x.shape[0] > step:  # bound the (rows, T, T) float64 arrays
        parts = [cloud_geometry(x[i:i + step], n[i:i + step], k, discard) for i in range(0, x.shape[0], step)]
        return CloudGeometry(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                               ("intrinsic_dimension", "mean_cosine", "neighbours", "lengths")))
    b, t, _ = x.shape
    gram = x @ x.transpose(0, 2, 1)
    sq = np.einsum("btt->bt", gram)
    dist = np.sqrt(np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * gram, 0.0))
    pair = real[:, :, None] & real[:, None, :] & ~np.eye(t, dtype=bool)[None]
    dist = np.where(pair, dist, np.inf)
    order = np.argsort(dist, axis=2, kind="stable")
    kk = min(int(k), max(t - 1, 0))
    neighbours = np.full((b, t, int(k)), -1, dtype=np.int64)
    if kk:
        near = order[:, :, :kk]
        found = np.isfinite(np.take_along_axis(dist, near, axis=2))
        neighbours[:, :, :kk] = np.where(found, near, -1)
    twonn = _twonn_rows(np.take_along_axis(dist, order[:, :, :2], axis=2) if t >= 3 else None, real, discard, b)
    norms = np.sqrt(np.maximum(sq, 0.0))
    denom = norms[:, :, None] * norms[:, None, :]
    cos = np.divide(gram, denom, out=np.zeros_like(gram), where=pair & (denom > 0))
    n_pairs = n * (n - 1)
    mean_cos = np.divide(cos.sum(axis=(1, 2)), n_pairs, out=np.full(b, np.nan), where=n_pairs > 0)
    return CloudGeometry(twonn, mean_cos, neighbours, n)


def _twonn_rows(first_two: np.ndarray | None, real: np.ndarray, discard: float, b: int) -> np.ndarray:
    """TwoNN of each input from its points' two nearest distances (``NaN`` where it is undefined)."""
    out = np.full(b, np.nan)
    if first_two is None:
        return out
    r1, r2 = first_two[:, :, 0], first_two[:, :, 1]
    ok = real & np.isfinite(r2) & (r1 > 0)
    mu = np.sort(np.where(ok, r2 / np.where(ok, r1, 1.0), np.inf), axis=1)  # usable ratios first, ascending
    count = ok.sum(axis=1)
    keep = np.minimum((count * (1 - discard)).astype(np.int64), count - 1)
    rank = np.arange(1, mu.shape[1] + 1)[None, :]
    used = rank <= keep[:, None]
    xs = np.log(np.where(used, mu, 1.0))
    ys = -np.log1p(-np.where(used, rank / np.maximum(count, 1)[:, None], 0.0))
    sxx = (xs * xs).sum(axis=1)
    good = (keep >= 2) & (sxx > 0)
    return np.divide((xs * ys).sum(axis=1), sxx, out=out, where=good)


def neighbourhood_overlaps(previous: CloudGeometry, current: CloudGeometry) -> np.ndarray:
    """The mean over tokens of the share of each token's ``k`` nearest that were its ``k`` nearest a layer before.

    ``NaN`` for an input with ``T ≤ k``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.standard_normal((1, 8, 4))
    >>> n = np.array([8])
    >>> float(neighbourhood_overlaps(cloud_geometry(a, n), cloud_geometry(3 * a + 1, n))[0])  # same neighbours
    1.0
    """
    a, b = previous.neighbours, current.neighbours
    if a.shape != b.shape or not np.array_equal(previous.lengths, current.lengths):
        raise InputError("neighbourhood overlap compares two layers of the same batch")
    k = a.shape[2]
    shared = ((a[:, :, :, None] == b[:, :, None, :]) & (a[:, :, :, None] >= 0)).any(axis=3).sum(axis=2)
    n = current.lengths
    real = np.arange(a.shape[1])[None, :] < n[:, None]
    total = np.where(real, shared / k, 0.0).sum(axis=1)
    return np.divide(total, n, out=np.full(n.shape, np.nan), where=n > k)


def paired_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b`` (``NaN`` where a row is zero).

    Examples
    --------
    >>> paired_cosines(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])).round(4).tolist()
    [0.7071]
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    denom = np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1)
    dots = np.einsum("...d,...d->...", x, y)
    return np.divide(dots, denom, out=np.full(dots.shape, np.nan), where=denom > 0)
