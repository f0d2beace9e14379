"""Concept-crystal parallelograms: how far ``a : b :: c : d`` is from a parallelogram, before and after projecting
out distractor directions.

Li, Michaud, Baek, Engels, Sun & Tegmark (2024, *The Geometry of Concepts: Sparse Autoencoder Feature Structure*,
S042) find analogy quadruples (``man : woman :: king : queen``) forming parallelograms once *distractor*
directions (word length and the like) are projected out, the directions found by linear discriminant analysis
(LDA) over clusters of difference vectors. Here every quadruple gives two clusters of two difference vectors,
``{b − a, d − c}`` and ``{c − a, d − b}``; in both the spread within the cluster is the parallelogram error
``e = (b − a) − (d − c)``. With ``S_W`` the within-cluster scatter (``Σ e eᵀ``) and ``S_B`` the scatter of the
cluster means around their mean, the distractors are the ``k`` directions of largest ``S_W`` relative to
``S_B``: the top generalised eigenvectors of ``S_W v = λ (S_B + ρ I) v``, LDA's least discriminant directions
(``ρ = RIDGE · tr(S_B) / d`` keeps ``S_B``, of rank below ``2q``, invertible), taken as the directions the data
move along, their patterns ``(S_B + ρ I) v`` (Haufe et al. 2014: a filter ``v`` reads a component, its pattern
is where that component lies), and projected out orthogonally. They are fitted *without* the
quadruple they are applied to (leave one out), so a better parallelogram after the projection is not the
fit's own doing.

The residual of a quadruple is ``‖(b − a) − (d − c)‖ / (‖b − a‖ + ‖d − c‖)``: 0 for a parallelogram, 1 when the
two sides point opposite ways; it is scale-free, so it compares before and after a projection that shortens
every side. The baseline projects out ``k`` random directions (uniform on the sphere) instead, averaged over
``draws``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["DEFAULT_DISTRACTORS", "RIDGE", "Parallelograms", "distractor_directions", "parallelogram_residual",
           "parallelograms"]

#: Distractor directions projected out.
DEFAULT_DISTRACTORS = 2
#: The ridge on the between-cluster scatter, as a share of its mean eigenvalue.
RIDGE = 0.1
#: Draws of random directions behind the baseline.
DEFAULT_DRAWS = 20


def parallelogram_residual(Q: Any, P: np.ndarray | None = None) -> np.ndarray:
    """``‖(b − a) − (d − c)‖ / (‖b − a‖ + ‖d − c‖)`` per quadruple of ``Q`` (shape ``(q, 4, d)``: a, b, c, d),
    after the projection ``P`` (``(d, d)``) when given; 0 where both sides vanish.

    Examples
    --------
    >>> parallelogram_residual([[[0, 0], [1, 0], [0, 1], [1, 1]], [[0, 0], [1, 0], [0, 1], [0, 1]]]).tolist()
    [0.0, 1.0]
    """
    Q = np.asarray(Q, dtype=np.float64)
    if P is not None:
        Q = Q @ P
    u, v = Q[:, 1] - Q[:, 0], Q[:, 3] - Q[:, 2]
    den = np.linalg.norm(u, axis=1) + np.linalg.norm(v, axis=1)
    num = np.linalg.norm(u - v, axis=1)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def distractor_directions(Q: Any, k: int) -> np.ndarray:
    """The ``k`` LDA distractor directions of the quadruples ``Q`` (``(q, 4, d)``), orthonormal, as columns of a
    ``(d, k)`` array: the span of the patterns ``(S_B + ρ I) v`` of the top generalised eigenvectors of
    ``S_W v = λ (S_B + ρ I) v`` (see the module).

    Examples
    --------
    Parallelograms in the first two axes, spoilt along the third only:

    >>> rng = np.random.default_rng(0)
    >>> a, r1, r2 = rng.standard_normal((3, 6, 3)) * [1, 1, 0]
    >>> Q = np.stack([a, a + r1, a + r2, a + r1 + r2], axis=1) + rng.standard_normal((6, 4, 1)) * [0, 0, 1]
    >>> np.abs(distractor_directions(Q, 1)).round(6).ravel().tolist()
    [0.0, 0.0, 1.0]
    """
    Q = np.asarray(Q, dtype=np.float64)
    d = Q.shape[2]
    e = (Q[:, 1] - Q[:, 0]) - (Q[:, 3] - Q[:, 2])
    s_w = e.T @ e
    means = np.concatenate([(Q[:, 1] - Q[:, 0] + Q[:, 3] - Q[:, 2]) / 2, (Q[:, 2] - Q[:, 0] + Q[:, 3] - Q[:, 1]) / 2])
    mc = means - means.mean(axis=0)
    s_b = mc.T @ mc
    rho = RIDGE * float(np.trace(s_b)) / d
    if rho <= 0.0:
        rho = 1.0
    reg = s_b + rho * np.eye(d)
    _, filters = scipy.linalg.eigh(s_w, reg, subset_by_index=[d - k, d - 1])
    basis, _ = np.linalg.qr(reg @ filters[:, ::-1])  # the filters' patterns: where the data move
    return basis


def _complement(V: np.ndarray) -> np.ndarray:
    """The orthogonal projection onto the complement of the orthonormal columns ``V``."""
    return np.eye(V.shape[0]) - V @ V.T


@dataclass(frozen=True)
class Parallelograms:
    """Each quadruple's parallelogram residual before and after projecting out the distractor directions.

    Attributes
    ----------
    quads : tuple of tuple of str
    distractors : int
        Directions projected out (fitted on the other quadruples).
    before, after, random : tuple of float
        Residual per quadruple: raw, without the LDA distractors, and without ``k`` random directions (mean over
        ``draws``).
    mean_before, mean_after, mean_random : float

    Examples
    --------
    >>> Q = np.random.default_rng(0).standard_normal((4, 4, 6))
    >>> r = parallelograms(Q, distractors=1, draws=3)
    >>> len(r.after), sorted(r.to_dict())[:3]
    (4, ['distractors', 'draws', 'mean_after'])
    """

    quads: tuple[tuple[str, ...], ...]
    distractors: int
    draws: int
    before: tuple[float, ...]
    after: tuple[float, ...]
    random: tuple[float, ...]
    mean_before: float
    mean_after: float
    mean_random: float

    def to_dict(self) -> dict[str, Any]:
        """``{"distractors", "draws", "mean_before", "mean_after", "mean_random", "quads": [{"quad", "before",
        "after", "random"}]}``."""
        return {"distractors": self.distractors, "draws": self.draws, "mean_before": self.mean_before,
                "mean_after": self.mean_after, "mean_random": self.mean_random,
                "quads": [{"quad": list(q), "before": b, "after": a, "random": r}
                          for q, b, a, r in zip(self.quads, self.before, self.after, self.random)]}


def parallelograms(Q: Any, quads: Sequence[Sequence[str]] | None = None, *, distractors: int = DEFAULT_DISTRACTORS,
                   draws: int = DEFAULT_DRAWS, seed: int | None = 0) -> Parallelograms:
    """The parallelogram residual of each quadruple before and after projecting out ``distractors`` LDA
    distractor directions fitted on the other quadruples (Li et al. 2024, S042; see the module), beside the same
    number of random directions.

    Parameters
    ----------
    Q : array of shape (q, 4, d)
        The vectors of ``a, b, c, d`` per quadruple, ``q ≥ 2``.
    quads : sequence of 4 names each, optional
    distractors : int
        ``k``, below ``d``.
    draws : int
        Random projections averaged for the baseline.
    seed : int or None

    Returns
    -------
    Parallelograms

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> a, r1, r2 = rng.standard_normal((3, 5, 8)) * ([1.0] * 6 + [0.0, 0.0])
    >>> noise = rng.standard_normal((5, 4, 8)) * ([0.0] * 6 + [1.0, 1.0])
    >>> r = parallelograms(np.stack([a, a + r1, a + r2, a + r1 + r2], axis=1) + noise, distractors=2)
    >>> r.mean_before > 0.1, round(r.mean_after, 6)
    (True, 0.0)
    """
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 3 or Q.shape[1] != 4:
        raise InputError(f"quadruples must have shape (q, 4, d), not {Q.shape}")
    q, _, d = Q.shape
    if q < 2:
        raise InputError(f"parallelograms need at least 2 quadruples (the distractors of one are fitted on the "
                         f"others), got {q}")
    k = check_scalar(distractors, "distractors", int, low=1, high=d - 1)
    draws = check_scalar(draws, "draws", int, low=1)
    if not np.isfinite(Q).all():
        raise InputError("quadruple vectors must be finite")
    names = tuple(tuple(str(w) for w in t) for t in quads) if quads is not None else tuple(
        (f"{i}a", f"{i}b", f"{i}c", f"{i}d") for i in range(q))
    if len(names) != q:
        raise InputError(f"{len(names)} quadruple names for {q} quadruples")
    before = parallelogram_residual(Q)
    after = np.array([parallelogram_residual(Q[i:i + 1], _complement(distractor_directions(np.delete(Q, i, 0), k)))
                      [0] for i in range(q)])
    rng = np.random.default_rng(seed)
    rand = np.zeros(q)
    for _ in range(draws):
        V, _ = np.linalg.qr(rng.standard_normal((d, k)))
        rand += parallelogram_residual(Q, _complement(V))
    rand /= draws
    r9 = lambda a: tuple(round(float(v), 9) for v in a)  # noqa: E731
    return Parallelograms(names, k, draws, r9(before), r9(after), r9(rand), round(float(before.mean()), 9),
                          round(float(after.mean()), 9), round(float(rand.mean()), 9))
