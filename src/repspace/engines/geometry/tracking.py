"""Label-free quality of one space, the figures tracked over checkpoints or layers: LiDAR, alignment,
uniformity and local intrinsic dimension.

``lidar``
    LiDAR (Thilak et al. 2024, *LiDAR: Sensing linear probing performance in joint embedding SSL
    architectures*, S279): items are grouped into samples, each group the views (augmentations) of one sample;
    with ``μ_x`` a sample's mean view and ``μ`` the mean of the ``μ_x``,
    ``Σ_b = 1/(N−1) Σ_x (μ_x − μ)(μ_x − μ)ᵀ`` over the ``N`` samples,
    ``Σ_w = 1/V Σ_x Σ_i (e_i − μ_x)(e_i − μ_x)ᵀ + δ I`` over the ``V`` views (``δ = 1e-4``), the LDA matrix
    ``Σ_w^{-1/2} Σ_b Σ_w^{-1/2}`` with eigenvalues ``λ``, and ``p = λ/‖λ‖₁ + ε`` (``ε = 1e-7``, RankMe's):
    ``LiDAR = exp(−Σ p log p)``, the effective rank of the LDA matrix. Samples with one view are left out.
``alignment``
    Wang & Isola (2020): the mean ``‖x̂_i − x̂_j‖²`` of unit rows over every pair of views of one sample
    (:func:`repspace.engines.geometry.alignment`).
``uniformity``
    Wang & Isola (2020), ``t = 2``, over every item (:func:`repspace.engines.geometry.uniformity`).
``local_id``
    The per-item Levina–Bickel estimate (:func:`repspace.engines.geometry.local_id`, 20 neighbours), its mean
    and median (S083 tracks it across checkpoints).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.errors import InputError
from repspace.engines.geometry.intrinsic import DEFAULT_K, local_id
from repspace.engines.geometry.uniformity import alignment, uniformity

__all__ = ["LIDAR_DELTA", "LIDAR_EPS", "SpaceQuality", "lidar_views", "space_quality", "view_alignment"]

#: Ridge on the within-sample covariance (the project's LiDAR ridge, engines.geometry.invariance).
LIDAR_DELTA = 1e-4
#: Constant added to each normalised eigenvalue (RankMe's, Garrido et al. 2023).
LIDAR_EPS = 1e-7


def _groups(groups: Sequence[Any], n: int) -> list[np.ndarray]:
    """Row indices of each sample with at least 2 views, in first-seen order."""
    if len(groups) != n:
        raise InputError(f"{len(groups)} view groups for {n} items: give one per item")
    members: dict[Any, list[int]] = {}
    for i, g in enumerate(groups):
        if g is not None:
            members.setdefault(g, []).append(i)
    kept = [np.asarray(v) for v in members.values() if len(v) >= 2]
    if len(kept) < 2:
        raise InputError(f"LiDAR and alignment need at least 2 samples with 2 or more views each, got {len(kept)}")
    return kept


def lidar_views(X: Any, groups: Sequence[Any], *, delta: float = LIDAR_DELTA, eps: float = LIDAR_EPS) -> float:
    """LiDAR of ``X``'s rows, ``groups[i]`` naming the sample row ``i`` is a view of (see the module).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> centres = rng.standard_normal((60, 8)) * [1, 1, 1, 1, 0.01, 0.01, 0.01, 0.01]  # 4 directions vary
    >>> X = np.repeat(centres, 3, axis=0) + 0.01 * rng.standard_normal((180, 8))
    >>> round(lidar_views(X, np.repeat(np.arange(60), 3)), 1)
    3.8
    """
    X = np.asarray(as_matrix(X), dtype=np.float64)
    members = _groups(list(groups), X.shape[0])
    d = X.shape[1]
    means = np.stack([X[g].mean(axis=0) for g in members])
    between = means - means.mean(axis=0)
    sb = between.T @ between / (len(members) - 1)
    within = np.concatenate([X[g] - m for g, m in zip(members, means)])
    sw = within.T @ within / len(within) + delta * np.eye(d)
    lam, vec = np.linalg.eigh(sw)
    root = (vec / np.sqrt(lam)) @ vec.T
    lda = root @ sb @ root
    ev = np.clip(np.linalg.eigvalsh((lda + lda.T) / 2), 0.0, None)
    total = float(ev.sum())
    if total <= 0:
        raise InputError("the samples' mean views do not differ: LiDAR is undefined")
    p = ev / total + eps
    return float(np.exp(-np.sum(p * np.log(p))))


def view_alignment(X: Any, groups: Sequence[Any]) -> float:
    """Wang & Isola's alignment over every pair of views of one sample (unit rows, ``α = 2``).

    Examples
    --------
    >>> view_alignment([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [2.0, 0.0]], ["a", "a", "b", "b"])  # (2 + 0) / 2
    1.0
    """
    X = as_matrix(X)
    members = _groups(list(groups), X.shape[0])
    pairs = [(g[i], g[j]) for g in members for i in range(len(g)) for j in range(i + 1, len(g))]
    a, b = np.array(pairs).T
    return float(alignment(X[a], X[b]))


@dataclass(frozen=True)
class SpaceQuality:
    """Label-free quality figures of one space.

    Attributes
    ----------
    n, d : int
        Items and dimension.
    samples, views : int or None
        Samples with 2 or more views, and their views (``None`` without view groups).
    lidar, alignment : float or None
        Over the views (``None`` without view groups).
    uniformity : float
        Over every item.
    local_id_mean, local_id_median : float
        Of the per-item local intrinsic dimension.

    Examples
    --------
    >>> q = space_quality(np.random.default_rng(0).standard_normal((100, 4)))
    >>> q.lidar is None, round(q.local_id_median)
    (True, 4)
    """

    n: int
    d: int
    samples: int | None
    views: int | None
    lidar: float | None
    alignment: float | None
    uniformity: float
    local_id_mean: float
    local_id_median: float

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "d", "samples", "views", "lidar", "alignment", "uniformity", "local_id_mean",
        "local_id_median"}``."""
        return {"n": self.n, "d": self.d, "samples": self.samples, "views": self.views, "lidar": self.lidar,
                "alignment": self.alignment, "uniformity": self.uniformity, "local_id_mean": self.local_id_mean,
                "local_id_median": self.local_id_median}


def space_quality(X: Any, groups: Sequence[Any] | None = None, *, k: int = DEFAULT_K,
                  seed: int | None = 0) -> SpaceQuality:
    """LiDAR and alignment over the view groups (when given; ``None`` entries are items of no group),
    uniformity and local intrinsic dimension over every item (see the module).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.repeat(rng.standard_normal((30, 6)), 2, axis=0) + 0.05 * rng.standard_normal((60, 6))
    >>> q = space_quality(X, np.repeat(np.arange(30), 2), k=5)
    >>> q.samples, q.views, round(q.alignment, 3) < 0.01
    (30, 60, True)
    """
    X = as_matrix(X)
    lid = local_id(X, k, seed=seed)
    uni = uniformity(X, seed=seed).value
    samples = views = lidar = align = None
    if groups is not None:
        members = _groups(list(groups), X.shape[0])
        samples, views = len(members), int(sum(len(g) for g in members))
        lidar, align = round(lidar_views(X, groups), 9), round(view_alignment(X, groups), 12)
    return SpaceQuality(int(X.shape[0]), int(X.shape[1]), samples, views, lidar, align, round(float(uni), 12),
                        round(float(lid.mean()), 9), round(float(np.median(lid)), 9))
