"""Multi-dimensional (circular) features: do a cyclic concept family's vectors lie on a circle, in order?

Engels, Michaud, Liao, Gurnee & Tegmark (2024, *Not All Language Model Features Are Linear*, S015) find the days
of the week and the months of the year represented on a circle: projected onto the top two principal directions
of their representations, the items sit around a circle in their calendar order. This module asks that of any
family given in its cyclic order (``x_0, …, x_{n−1}``, ``x_{n−1}`` followed by ``x_0``):

1. The items are centred on their mean and projected onto their top two principal directions (SVD);
   ``explained_variance`` is the share of the items' variance those two carry, and each item gets an angle
   ``θ_k`` and a radius ``r_k``.
2. The circular-fit statistic is the resultant length of the angles against the ideal evenly spaced cycle,
   ``R = max over s ∈ {+1, −1} of |(1/n) Σ_k exp(i (θ_k − s · 2πk/n))|``: 1 when the items are evenly spaced
   around the circle in their order (either way round, from any start), near ``1/√n`` for an arbitrary order.
   The fitted direction ``s`` and phase give each item's angular error from its ideal place.
3. The baseline is random orderings: ``R`` recomputed with the items' positions permuted (the same points, a
   shuffled cycle), and ``p_value = (1 + #{R_perm ≥ R}) / (1 + permutations)``.

``order_agreement`` is the share of items whose next item around the circle (in the fitted direction) is their
successor in the cycle, and ``radius_cv`` the coefficient of variation of the radii (0 for a perfect circle).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["DEFAULT_PERMUTATIONS", "MIN_CYCLE", "Circularity", "circular_fit", "circularity"]

#: Random orderings behind the p-value.
DEFAULT_PERMUTATIONS = 1000
#: Fewest items of a cycle (three points always lie on a circle in some order).
MIN_CYCLE = 4


def circular_fit(theta: Any) -> tuple[float, int, float]:
    """``(R, direction, phase)``: the resultant length of angles ``theta`` (radians, in cyclic order) against the
    evenly spaced cycle ``s · 2πk/n + phase``, for the direction ``s`` (+1 or −1) that fits better.

    Examples
    --------
    >>> theta = -2 * np.pi * np.arange(6) / 6 + 0.5   # evenly spaced, clockwise, from 0.5 rad
    >>> R, s, phase = circular_fit(theta)
    >>> round(R, 9), s, round(phase, 9)
    (1.0, -1, 0.5)
    """
    theta = np.asarray(theta, dtype=np.float64)
    ideal = 2.0 * np.pi * np.arange(len(theta)) / len(theta)
    best = (-1.0, 1, 0.0)
    for s in (1, -1):
        z = np.exp(1j * (theta - s * ideal)).mean()
        if abs(z) > best[0] + 1e-12:
            best = (float(abs(z)), s, float(np.angle(z)))
    return best


@dataclass(frozen=True)
class Circularity:
    """How circular, and how much in order, a cyclic family's top-two-direction projection is.

    Attributes
    ----------
    items : tuple of str
        The family in its cyclic order.
    explained_variance : float
        Share of the items' variance on their top two principal directions.
    resultant : float
        ``R``, the circular-fit statistic (1: evenly spaced in order).
    direction : int
        +1 if the order runs counter-clockwise in the plane of the top two directions, −1 if clockwise.
    p_value : float
        Share of random orderings (``permutations`` of them, plus the observed one) with ``R`` at least as large.
    baseline_mean, baseline_q95 : float or None
        Mean and 95th percentile of ``R`` over the random orderings (None without any).
    order_agreement : float
        Share of items followed around the circle by their cycle successor.
    radius_cv : float
        Coefficient of variation of the radii.
    angles, angle_errors : tuple of float
        Each item's angle (degrees, from the first item, in the fitted direction) and its difference from its
        ideal place ``360 k / n`` after the fitted phase (degrees, in (−180, 180]).
    coords : array of shape (n, 2)
        The projection.

    Examples
    --------
    >>> t = 2 * np.pi * np.arange(7) / 7
    >>> c = circularity(np.c_[np.cos(t), np.sin(t), np.zeros(7)], permutations=200)
    >>> round(c.resultant, 6), c.order_agreement, c.p_value < 0.05
    (1.0, 1.0, True)
    """

    items: tuple[str, ...]
    explained_variance: float
    resultant: float
    direction: int
    p_value: float
    permutations: int
    baseline_mean: float | None
    baseline_q95: float | None
    order_agreement: float
    radius_cv: float
    angles: tuple[float, ...]
    angle_errors: tuple[float, ...]
    coords: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "explained_variance", "resultant", "direction", "p_value", "permutations", "baseline",
        "order_agreement", "radius_cv", "items": [{"id", "angle", "angle_error", "x", "y"}]}``."""
        return {"n": len(self.items), "explained_variance": self.explained_variance, "resultant": self.resultant,
                "direction": self.direction, "p_value": self.p_value, "permutations": self.permutations,
                "baseline": {"mean": self.baseline_mean, "q95": self.baseline_q95},
                "order_agreement": self.order_agreement, "radius_cv": self.radius_cv,
                "items": [{"id": i, "angle": a, "angle_error": e, "x": round(float(x), 9), "y": round(float(y), 9)}
                          for i, a, e, (x, y) in zip(self.items, self.angles, self.angle_errors, self.coords)]}


def _wrap_degrees(radians: np.ndarray) -> np.ndarray:
    """Angles in degrees in (−180, 180]."""
    deg = np.degrees(np.angle(np.exp(1j * radians)))
    return np.where(deg <= -180.0, deg + 360.0, deg)


def circularity(X: Any, items: Sequence[str] | None = None, *, permutations: int = DEFAULT_PERMUTATIONS,
                seed: int | None = 0) -> Circularity:
    """Project a cyclic family (rows of ``X`` in their cyclic order) onto its top two principal directions and
    test whether it lies on a circle in that order, against random orderings (Engels et al. 2024, S015; see the
    module for the statistics).

    Parameters
    ----------
    X : array of shape (n, d)
        The family's vectors in cyclic order, ``n ≥ 4``.
    items : sequence of str, optional
        Their names (default ``"0"``, ``"1"``, …).
    permutations : int
        Random orderings behind the p-value (0: none; the p-value is then 1).
    seed : int or None

    Returns
    -------
    Circularity

    Examples
    --------
    The same points in a scrambled cycle fit the circle worse:

    >>> t = 2 * np.pi * np.arange(8) / 8
    >>> ring = np.c_[np.cos(t), np.sin(t)]
    >>> round(circularity(ring[[0, 3, 6, 1, 4, 7, 2, 5]], permutations=0).resultant, 3)
    0.0
    """
    permutations = check_scalar(permutations, "permutations", int, low=0)
    X = np.asarray(as_matrix(X), dtype=np.float64)
    n = len(X)
    if n < MIN_CYCLE:
        raise InputError(f"a cycle needs at least {MIN_CYCLE} items with vectors, got {n}")
    names = tuple(str(i) for i in range(n)) if items is None else tuple(str(i) for i in items)
    if len(names) != n:
        raise InputError(f"{len(names)} item names for {n} vectors")
    Xc = X - X.mean(axis=0)
    U, S, _ = np.linalg.svd(Xc, full_matrices=False)
    total = float(np.sum(S ** 2))
    if total == 0.0 or len(S) < 2 or S[1] == 0.0:
        raise InputError("the items' vectors do not span two dimensions: no plane to find a circle in")
    coords = U[:, :2] * S[:2]
    theta = np.arctan2(coords[:, 1], coords[:, 0])
    R, s, phase = circular_fit(theta)
    rng = np.random.default_rng(seed)
    perm_R = np.array([circular_fit(theta[rng.permutation(n)])[0] for _ in range(permutations)])
    p = (1 + int(np.sum(perm_R >= R - 1e-12))) / (1 + permutations)
    ideal = s * 2.0 * np.pi * np.arange(n) / n
    errors = _wrap_degrees(theta - ideal - phase)
    around = np.mod(s * (theta - theta[0]), 2.0 * np.pi)
    nxt = np.argsort(around, kind="stable")
    successor = {int(nxt[j]): int(nxt[(j + 1) % n]) for j in range(n)}
    agree = sum(successor[k] == (k + 1) % n for k in range(n)) / n
    radii = np.hypot(coords[:, 0], coords[:, 1])
    return Circularity(
        items=names, explained_variance=round(float(np.sum(S[:2] ** 2)) / total, 9), resultant=round(R, 9),
        direction=s, p_value=round(p, 9), permutations=permutations,
        baseline_mean=round(float(perm_R.mean()), 9) if permutations else None,
        baseline_q95=round(float(np.quantile(perm_R, 0.95)), 9) if permutations else None,
        order_agreement=round(agree, 9), radius_cv=round(float(radii.std() / radii.mean()), 9),
        angles=tuple(round(float(a), 6) for a in np.degrees(around)),
        angle_errors=tuple(round(float(e), 6) for e in errors), coords=coords)
