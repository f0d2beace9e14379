"""Growing a seed set of parallel anchors for relative representations, greedily, by an objective.

Relative representations (Moschella et al. 2023, S051) put two spaces into one
space of cosines to ``K`` paired anchors. Which items serve as anchors matters
(Cannistraci et al. 2023, "Bootstrapping parallel anchors", S095: from a small
seed set, optimise for more). Here the candidates are items known in both
spaces, and the optimisation is a greedy forward selection: starting from the
seed anchors, add the candidate pair that most raises an objective on a set of
fitting pairs (:func:`relative_agreement`): the mean cosine between an item's
two relative vectors (``agreement``), or that minus the mean cosine over all
(source, target) pairs (``gap``, the default: the agreement alone is raised
most by anchors that make every profile alike, which helps no retrieval); stop
after ``grow`` additions or when no candidate raises it. The objective on the
fitting pairs therefore never falls; what it does on held-out pairs is the
real test (the workflow reports it).

Each step scores every candidate at once: adding anchor ``c`` appends one
coordinate ``(a_c, b_c)`` (its cosines in each space) to every fitting pair's
two relative vectors, so the new cosines follow from running sums
(``Σ r_x r_y``, ``Σ r_x²``, ``Σ r_y²``, ``Σ r_x``, ``Σ r_y``) and, for ``gap``,
one product of the current relative vectors with the new inverse norms,
without recomputing any vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, unit_rows
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.align._base import check_pairs
from repspace.engines.align.relative import Relative

__all__ = ["ANCHOR_OBJECTIVES", "AnchorGrowth", "AnchorMatches", "discover_anchors", "grow_anchors",
           "relative_agreement"]

#: What :func:`grow_anchors` may raise (:func:`relative_agreement`).
ANCHOR_OBJECTIVES = ("gap", "agreement")

#: Fitting pairs × candidates held as float64 per space (2 × 128 MiB at most).
MAX_SCORE_ENTRIES = 16 * 1024 * 1024
#: Candidates scored at once in one step (bounds the temporaries).
_COLUMNS = 1024


def relative_agreement(X: Any, Y: Any, anchors_X: Any, anchors_Y: Any, *, center: bool = False,
                       objective: str = "agreement") -> float:
    """How well paired rows agree in the relative space of paired anchors: the objective :func:`grow_anchors` raises.

    With ``û_i``, ``v̂_i`` the unit relative vectors of row ``i`` in the two spaces (cosines to the ``K``
    anchors, :func:`~repspace.engines.align.relative_representation`; with ``center`` each first loses its
    own mean, so the cosine is Pearson's r between the two profiles; a zero vector stays zero):

    - ``agreement``: ``(1/n) Σ_i û_i·v̂_i``, the mean cosine between each row's two relative vectors;
    - ``gap``: the agreement minus ``(1/n²) Σ_i Σ_j û_i·v̂_j``, the mean cosine over all ``n²`` (source,
      target) pairs: how much nearer each row is to its own partner than to the average target, which an
      anchor set that makes every profile alike cannot raise.

    Examples
    --------
    A rotation of the target leaves every relative vector unchanged, so the agreement is 1:

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 4))
    >>> R, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    >>> round(relative_agreement(X, X @ R, X[:6], X[:6] @ R), 6)
    1.0
    >>> 0 < relative_agreement(X, X @ R, X[:6], X[:6] @ R, objective="gap") < 1
    True
    """
    check_choice(objective, "objective", ANCHOR_OBJECTIVES)
    rel = Relative().fit(anchors_X, anchors_Y)
    x, y = check_pairs(X, Y, min_rows=1, owner="relative_agreement")
    rx = rel.transform_source(x).astype(np.float64)
    ry = rel.transform_target(y).astype(np.float64)
    return _objective(rx, ry, objective, center)


def _objective(RX: np.ndarray, RY: np.ndarray, objective: str, center: bool) -> float:
    """:func:`relative_agreement` from the relative vectors (uncentred cosines), directly."""
    if center:
        RX, RY = RX - RX.mean(1, keepdims=True), RY - RY.mean(1, keepdims=True)
    ux, uy = unit_rows(RX), unit_rows(RY)
    value = float(np.mean(np.sum(ux * uy, axis=1)))
    if objective == "gap":
        value -= float(ux.sum(0) @ uy.sum(0)) / RX.shape[0] ** 2
    return value


@dataclass(frozen=True)
class AnchorGrowth:
    """The anchors :func:`grow_anchors` chose, and the agreement on the fitting pairs after each.

    Attributes
    ----------
    seed : (s,) int64
        The seed anchors (row indices of ``X`` / ``Y``), as given.
    added : (m,) int64
        The candidates added, in the order they were chosen (``m ≤ grow``).
    trace : (m + 1,) float64
        Relative agreement on the fitting pairs with the seed alone, then after each addition; never falls.
    stopped_early : bool
        No candidate raised the agreement before ``grow`` were added.

    Examples
    --------
    >>> g = AnchorGrowth(np.array([0, 1]), np.array([5]), np.array([0.5, 0.6]), False)
    >>> g.anchors.tolist(), g.n_anchors, g.to_dict()["trace"]
    ([0, 1, 5], 3, [0.5, 0.6])
    """

    seed: np.ndarray
    added: np.ndarray
    trace: np.ndarray
    stopped_early: bool

    @property
    def anchors(self) -> np.ndarray:
        """Seed then added anchors, row indices."""
        return np.concatenate([self.seed, self.added])

    @property
    def n_anchors(self) -> int:
        """Seed plus added anchors."""
        return int(self.seed.size + self.added.size)

    def to_dict(self) -> dict[str, Any]:
        """``{"seed", "added", "trace", "stopped_early"}`` as lists and a bool."""
        return {"seed": self.seed.tolist(), "added": self.added.tolist(), "trace": self.trace.tolist(),
                "stopped_early": self.stopped_early}


def _indices(idx: Any, n: int, name: str) -> np.ndarray:
    arr = np.asarray(idx)
    if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"{name} must be a 1-d list of row indices")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise InputError(f"{name} holds a row index outside 0..{n - 1}")
    if np.unique(arr).size != arr.size:
        raise InputError(f"{name} holds a row twice")
    return arr


def _cosines(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.clip(unit_rows(np.asarray(A, np.float64)) @ unit_rows(np.asarray(B, np.float64)).T, -1.0, 1.0)


def _inverse(v: np.ndarray) -> np.ndarray:
    return np.divide(1.0, v, out=np.zeros_like(v), where=v > 0)


def _candidate_scores(RX: np.ndarray, RY: np.ndarray, a: np.ndarray, b: np.ndarray, objective: str,
                      center: bool) -> np.ndarray:
    """:func:`_objective` after appending each candidate's column (``a[:, c]``, ``b[:, c]``), from running sums.

    ``RX``, ``RY``: the fit rows' current (uncentred) relative vectors, ``(n, K)``; ``a``, ``b``: their
    cosines to the candidates in each space, ``(n, C)``. Returns ``(C,)``.
    """
    n, k1 = RX.shape[0], RX.shape[1] + 1
    D, Qx, Qy = (RX * RY).sum(1)[:, None], (RX * RX).sum(1)[:, None], (RY * RY).sum(1)[:, None]
    if center:
        mx, my = (RX.sum(1)[:, None] + a) / k1, (RY.sum(1)[:, None] + b) / k1
        dot = D + a * b - k1 * mx * my
        wx = _inverse(np.sqrt(np.maximum(Qx + a * a - k1 * mx * mx, 0.0)))
        wy = _inverse(np.sqrt(np.maximum(Qy + b * b - k1 * my * my, 0.0)))
    else:
        dot = D + a * b
        wx, wy = _inverse(np.sqrt(Qx + a * a)), _inverse(np.sqrt(Qy + b * b))
    score = (dot * wx * wy).mean(axis=0)
    if objective == "gap":  # Σ_i û_i per candidate: (K, C) for the old coordinates, (C,) for the new one
        px, py = RX.T @ wx, RY.T @ wy
        if center:
            px, py = px - (mx * wx).sum(0), py - (my * wy).sum(0)
            nx, ny = ((a - mx) * wx).sum(0), ((b - my) * wy).sum(0)
        else:
            nx, ny = (a * wx).sum(0), (b * wy).sum(0)
        score -= ((px * py).sum(0) + nx * ny) / n ** 2
    return score


def grow_anchors(X: Any, Y: Any, seed: Any, candidates: Any, fit: Any, *, grow: int, center: bool = False,
                 objective: str = "gap", progress: Progress | None = None) -> AnchorGrowth:
    """Add, one at a time, the candidate anchor pair that most raises the objective on the ``fit`` rows.

    Parameters
    ----------
    X, Y : (n, d_x), (n, d_y) arrays
        The same ``n`` items in the two spaces, row for row.
    seed : sequence of int
        Rows known to be good anchors to start from (at least 1; 2 with ``center``).
    candidates : sequence of int
        Rows that may be added (none of ``seed``).
    fit : sequence of int
        Rows whose relative agreement (:func:`relative_agreement`) is raised (none of ``seed`` or
        ``candidates``: an anchor agrees with itself trivially).
    grow : int
        Anchors to add at most (``≥ 1``, at most ``len(candidates)``).
    center : bool
        Centre each relative vector (as :class:`~repspace.engines.align.Relative`).
    objective : ``gap`` or ``agreement``
        What is raised (:func:`relative_agreement`): the agreement of each row with its partner beyond its
        mean agreement with every target (default), or that agreement alone.
    progress : callable, optional
        ``progress("grow anchors", added, grow)`` after each step.

    Raises
    ------
    InputError
        The seed plus ``grow`` is fewer anchors than the smaller space's dimensions (relative vectors
        over fewer anchors than dimensions cannot tell apart items that differ only outside the
        anchors' span); rows out of range or in two roles; too large ``fit × candidates``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> Y = X @ np.linalg.qr(rng.normal(size=(3, 3)))[0] + 0.3 * rng.normal(size=(200, 3))
    >>> g = grow_anchors(X, Y, seed=[0, 1], candidates=range(2, 100), fit=range(100, 200), grow=4)
    >>> g.n_anchors, bool(np.all(np.diff(g.trace) > 0))
    (6, True)
    """
    x, y = check_pairs(X, Y, min_rows=2, owner="grow_anchors")
    n = x.shape[0]
    for name, arr in (("X", x), ("Y", y)):
        if not np.isfinite(arr).all():
            raise InputError(f"grow_anchors: {name} holds NaN or infinite values")
    s = _indices(seed, n, "seed")
    c, f = _indices(candidates, n, "candidates"), _indices(fit, n, "fit")
    check_scalar(grow, "grow", int, low=1)
    check_choice(objective, "objective", ANCHOR_OBJECTIVES)
    if s.size < (2 if center else 1):
        raise InputError(f"grow_anchors needs at least {2 if center else 1} seed anchor(s)"
                         f"{' with center (one centred cosine is always 0)' if center else ''}, got {s.size}")
    if np.intersect1d(s, c).size or np.intersect1d(f, np.concatenate([s, c])).size:
        raise InputError("seed, candidates and fit rows must be different rows (an anchor agrees with itself)")
    if f.size < 1:
        raise InputError("grow_anchors needs at least one fit row to measure the agreement on")
    if grow > c.size:
        raise InputError(f"cannot grow {grow} anchors from {c.size} candidate(s)")
    dims = min(x.shape[1], y.shape[1])
    if s.size + grow < dims:
        raise InputError(f"{s.size} seed + {grow} grown = {s.size + grow} anchors: fewer anchors than the "
                         f"{dims} dimensions of the smaller space (grow at least {dims - s.size})")
    if f.size * c.size > MAX_SCORE_ENTRIES:
        raise InputError(f"{f.size:,} fit rows × {c.size:,} candidates is over {MAX_SCORE_ENTRIES:,} scores; "
                         "use fewer of either")
    RX, RY = np.empty((f.size, s.size + grow)), np.empty((f.size, s.size + grow))
    RX[:, :s.size], RY[:, :s.size] = _cosines(x[f], x[s]), _cosines(y[f], y[s])
    CX, CY = _cosines(x[f], x[c]), _cosines(y[f], y[c])
    k = s.size
    trace = [_objective(RX[:, :k], RY[:, :k], objective, center)]
    used = np.zeros(c.size, bool)
    added: list[int] = []
    for _ in range(grow):
        best, best_j = -np.inf, -1
        for lo in range(0, c.size, _COLUMNS):
            col = _candidate_scores(RX[:, :k], RY[:, :k], CX[:, lo:lo + _COLUMNS], CY[:, lo:lo + _COLUMNS],
                                    objective, center)
            col[used[lo:lo + _COLUMNS]] = -np.inf
            j = int(np.argmax(col))
            if col[j] > best:
                best, best_j = float(col[j]), lo + j
        if not best > trace[-1]:
            break
        RX[:, k], RY[:, k] = CX[:, best_j], CY[:, best_j]
        k += 1
        used[best_j] = True
        added.append(int(c[best_j]))
        trace.append(best)
        if progress is not None:
            progress("grow anchors", len(added), grow)
    return AnchorGrowth(s, np.asarray(added, np.int64), np.asarray(trace), len(added) < grow)


#: Source × target candidates compared at once by :func:`discover_anchors` (float64, 128 MiB).
MAX_MATCH_ENTRIES = 16 * 1024 * 1024


@dataclass(frozen=True)
class AnchorMatches:
    """Pairs :func:`discover_anchors` found between unpaired candidates, in the order it adopted them.

    Attributes
    ----------
    pairs : (m, 2) int64
        ``(row of X, row of Y)`` per discovered anchor pair.
    scores : (m,) float64
        The cosine of the two rows' relative vectors when the pair was adopted.
    rounds : (m,) int64
        The round (from 1) that adopted each pair.

    Examples
    --------
    >>> m = AnchorMatches(np.array([[0, 2]]), np.array([0.9]), np.array([1]))
    >>> m.to_dict()
    {'pairs': [[0, 2]], 'scores': [0.9], 'rounds': [1]}
    """

    pairs: np.ndarray
    scores: np.ndarray
    rounds: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """``{"pairs", "scores", "rounds"}`` as lists."""
        return {"pairs": self.pairs.tolist(), "scores": self.scores.tolist(), "rounds": self.rounds.tolist()}


def discover_anchors(X: Any, Y: Any, seed_X: Any, seed_Y: Any, *, rounds: int = 3, per_round: int = 50,
                     center: bool = True) -> AnchorMatches:
    """New parallel anchors among *unpaired* items: mutual nearest neighbours of their relative vectors.

    A simple form of bootstrapping parallel anchors (Cannistraci et al. 2023, S095): each round puts every
    candidate of ``X`` and of ``Y`` into the relative space of the anchors known so far (the seed pairs,
    then the pairs adopted in earlier rounds; centred profiles by default), pairs each row with its nearest
    row of the other side by cosine, and adopts the ``per_round`` mutual nearest pairs of highest cosine whose
    rows are not yet used. The paper optimises the matching; this takes its greedy, mutual-neighbour form.

    Parameters
    ----------
    X, Y : (n_x, d_x), (n_y, d_y) arrays
        Candidates of each space, in no corresponding order.
    seed_X, seed_Y : (s, d_x), (s, d_y) arrays
        The seed anchors, row ``k`` of each the same item.
    rounds, per_round : int
    center : bool
        Centre each relative vector (needs 2 seed anchors or more).

    Examples
    --------
    A rotated, shuffled copy: every discovered pair is right.

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 8))
    >>> R, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    >>> perm = rng.permutation(300)
    >>> m = discover_anchors(X[20:], (X[20:] @ R)[perm[perm < 280]], X[:20], X[:20] @ R, rounds=2, per_round=40)
    >>> bool(np.all(perm[perm < 280][m.pairs[:, 1]] == m.pairs[:, 0])), len(m.pairs)
    (True, 80)
    """
    x, y = as_matrix(X, "X"), as_matrix(Y, "Y")
    sx, sy = check_pairs(seed_X, seed_Y, min_rows=2 if center else 1, owner="discover_anchors")
    if sx.shape[1] != x.shape[1] or sy.shape[1] != y.shape[1]:
        raise InputError("the seed anchors must live in the spaces of X and Y (same dimensions)")
    check_scalar(rounds, "rounds", int, low=1)
    check_scalar(per_round, "per_round", int, low=1)
    if x.shape[0] * y.shape[0] > MAX_MATCH_ENTRIES:
        raise InputError(f"{x.shape[0]:,} × {y.shape[0]:,} candidates is over {MAX_MATCH_ENTRIES:,} comparisons; "
                         "use fewer candidates")
    ux, uy = unit_rows(np.asarray(x, np.float64)), unit_rows(np.asarray(y, np.float64))
    ax, ay = unit_rows(np.asarray(sx, np.float64)), unit_rows(np.asarray(sy, np.float64))
    used_x, used_y = np.zeros(x.shape[0], bool), np.zeros(y.shape[0], bool)
    pairs: list[tuple[int, int]] = []
    scores: list[float] = []
    when: list[int] = []
    for r in range(1, rounds + 1):
        rx, ry = np.clip(ux @ ax.T, -1, 1), np.clip(uy @ ay.T, -1, 1)
        if center:
            rx, ry = rx - rx.mean(1, keepdims=True), ry - ry.mean(1, keepdims=True)
        sim = unit_rows(rx) @ unit_rows(ry).T
        sim[used_x, :], sim[:, used_y] = -np.inf, -np.inf
        if not np.isfinite(sim).any():
            break
        best_y, best_x = np.argmax(sim, axis=1), np.argmax(sim, axis=0)
        rows = np.flatnonzero((best_x[best_y] == np.arange(x.shape[0])) & ~used_x)
        rows = rows[np.argsort(-sim[rows, best_y[rows]], kind="stable")][:per_round]
        if rows.size == 0:
            break
        for i in rows.tolist():
            j = int(best_y[i])
            pairs.append((i, j))
            scores.append(float(sim[i, j]))
            when.append(r)
        used_x[rows], used_y[best_y[rows]] = True, True
        ax, ay = np.vstack([ax, ux[rows]]), np.vstack([ay, uy[best_y[rows]]])
    return AnchorMatches(np.asarray(pairs, np.int64).reshape(-1, 2), np.asarray(scores), np.asarray(when, np.int64))
