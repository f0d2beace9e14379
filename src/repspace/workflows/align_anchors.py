"""Anchor discovery between two stored spaces: grow a seed set of parallel anchors, scored on held-out items.

The two spaces are joined on item id; the shared items are shuffled (seeded)
and split into the seed anchors (or the ids given), the candidates that may
become anchors, the fitting items whose relative agreement the growth raises
(:func:`repspace.engines.align.grow_anchors`), and held-out items on which the
anchors are judged: relative agreement (the mean cosine between an item's two
relative vectors) and retrieval of each held-out item's partner among all
held-out targets in the shared relative space (``top1``, ``mean_rank``,
:func:`repspace.engines.align.score_map`), with the seed alone, the grown
set, and, as a control, the seed plus as many *random* candidates.

Examples
--------
>>> from repspace.store import example_pair
>>> a, b = example_pair(400, 400, 8)  # b: a rotated
>>> r = grow_space_anchors(a.store, "a", "b", seed_anchors=4, grow=6, candidates=100, fit=100, test=100)
>>> r.n_anchors, round(r.test["agreement"]["after"], 4)
(10, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_strings, positive_int
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.align import (
    MapScores,
    Relative,
    discover_anchors,
    grow_anchors,
    relative_agreement,
    score_map,
)
from repspace.workflows.align import held_out_size
from repspace.workflows.compare import joined

if TYPE_CHECKING:
    from repspace.core.store import Store

__all__ = ["AnchorBootstrap", "AnchorDiscovery", "discover_space_anchors", "grow_space_anchors"]


@dataclass(frozen=True)
class AnchorDiscovery:
    """Anchors grown between two spaces and how the relative representation fares before and after.

    ``fit`` holds the objective on the fitting items (``before``: the seed anchors; ``after``: the grown set);
    ``test["agreement"]`` and ``test["gap"]`` both measures on the held-out items with the seed (``before``),
    the grown set (``after``) and the seed plus as many random candidates as were grown (``random``);
    ``retrieval`` holds :class:`~repspace.engines.align.MapScores` of the held-out items' relative vectors
    under the same three anchor sets.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair(300, 300, 4)
    >>> r = grow_space_anchors(a.store, "a", "b", seed_anchors=2, grow=2, candidates=50, fit=50, test=50)
    >>> sorted(r.to_dict())[:5]
    ['added', 'anchors', 'center', 'fit', 'n_added']
    """

    source: str
    target: str
    n_shared: int
    n_seed: int
    n_candidates: int
    n_fit: int
    n_test: int
    center: bool
    objective: str
    seed_ids: list[str]
    added_ids: list[str]
    trace: list[float]
    stopped_early: bool
    fit: dict[str, float]
    test: dict[str, dict[str, float]]
    retrieval: dict[str, MapScores] = field(default_factory=dict)

    @property
    def n_anchors(self) -> int:
        """Seed plus grown anchors."""
        return self.n_seed + len(self.added_ids)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (METRICS.md, "Anchor discovery")."""
        return {"source": self.source, "target": self.target, "n_shared": self.n_shared, "n_seed": self.n_seed,
                "n_added": len(self.added_ids), "n_candidates": self.n_candidates, "n_fit": self.n_fit,
                "n_test": self.n_test, "center": self.center, "objective": self.objective,
                "stopped_early": self.stopped_early,
                "anchors": self.seed_ids + self.added_ids, "added": self.added_ids, "trace": self.trace,
                "fit": self.fit, "test": self.test,
                "retrieval": {k: v.to_dict() for k, v in self.retrieval.items()}}


def _default(value: int | None, fallback: int, name: str) -> int:
    return fallback if value is None else positive_int(value, name)


def _joined_seeds(store: Store, source: str, target: str, doing: str, seed_anchors: int, seed_ids: list[str] | None,
                  seed: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """The two spaces' shared items (:func:`~repspace.workflows.compare.joined`), the seed rows and the other
    rows in a random order (``seed``): what growing and discovering anchors both start from."""
    src, tgt = store.space(source), store.space(target)
    for sp in (src, tgt):
        sp.metric.require_vector_space(f"{doing} anchors between {source!r} and {target!r}")
    j = joined(src, tgt)
    s_rows, rest = _seed_rows(j.ids, seed_anchors, seed_ids, np.random.default_rng(seed).permutation(len(j.ids)),
                              source, target)
    return j, s_rows, rest


def _seed_rows(ids: list[str], seed_anchors: int, seed_ids: list[str] | None, order: np.ndarray, source: str,
               target: str) -> tuple[np.ndarray, np.ndarray]:
    """The seed rows (by id, or the first ``seed_anchors`` of ``order``) and the other rows in ``order``."""
    if seed_ids is None:
        k = positive_int(seed_anchors, "seed_anchors")
        return order[:k], order[k:]
    wanted = check_strings(seed_ids, "seed_ids", "an item id")
    where = {item: i for i, item in enumerate(ids)}
    missing = [s for s in wanted if s not in where]
    if missing:
        raise InputError(f"seed anchor {missing[0]!r} is not held by both {source!r} and {target!r}"
                         f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}")
    rows = np.array([where[s] for s in dict.fromkeys(wanted)], np.int64)
    return rows, order[~np.isin(order, rows)]


def grow_space_anchors(store: Store, source: str, target: str, *, seed_anchors: int = 10,
                       seed_ids: list[str] | None = None, grow: int = 50, candidates: int | None = None,
                       fit: int | None = None, test: int | None = None, center: bool = True,
                       objective: str = "gap", seed: int = 0, progress: Progress | None = None) -> AnchorDiscovery:
    """Grow ``seed_anchors`` (or ``seed_ids``) by up to ``grow`` anchors chosen greedily among shared items.

    Parameters
    ----------
    store : Store
    source, target : str
        Space names; items are paired by id.
    seed_anchors : int
        Shared items drawn at random as the seed (ignored with ``seed_ids``).
    seed_ids : list of str, optional
        The seed anchors by id (each held by both spaces).
    grow : int
        Anchors to add at most; seed plus ``grow`` must reach the smaller space's dimension.
    candidates, fit, test : int, optional
        Sizes of the candidate pool (default: up to 2,000 of what is left), of the items whose
        agreement is raised and of the held-out ones (default each: a fifth of the shared items, at most 1,000).
    center : bool
        Centre relative vectors (:class:`~repspace.engines.align.Relative`). On by default here: GloVe
        against MiniLM words, the centred ``gap`` growth is the one that beats random anchors by most on
        held-out retrieval (benchmarks/eval_align_more.py).
    objective : ``gap`` or ``agreement``
        What the growth raises on the fitting items (:func:`~repspace.engines.align.relative_agreement`).
    seed : int
        Of the shuffle (and of the random control).
    progress : callable, optional
        ``progress("grow anchors", added, grow)`` after each added anchor.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair(300, 300, 4)
    >>> r = grow_space_anchors(a.store, "a", "b", seed_ids=["i0", "i1"], grow=3, test=50)
    >>> r.seed_ids, len(r.added_ids) <= 3, r.fit["after"] >= r.fit["before"]
    (['i0', 'i1'], True, True)
    """
    grow = positive_int(grow, "grow")
    j, s_rows, rest = _joined_seeds(store, source, target, "growing", seed_anchors, seed_ids, seed)
    n = len(j.ids)
    n_test = _default(test, held_out_size(n), "test")
    n_fit = _default(fit, held_out_size(n), "fit")
    n_cand = _default(candidates, min(2000, max(0, rest.size - n_test - n_fit)), "candidates")
    if n_test + n_fit + n_cand > rest.size or n_cand < grow:
        raise InputError(f"{source!r} and {target!r} share {n} item(s): not enough for {s_rows.size} seed anchors, "
                         f"{max(n_cand, grow)} candidates, {n_fit} fitting and {n_test} held-out items")
    held, fit_rows, cand = rest[:n_test], rest[n_test:n_test + n_fit], rest[n_test + n_fit:n_test + n_fit + n_cand]
    x, y = j.x, j.y
    g = grow_anchors(x, y, s_rows, cand, fit_rows, grow=grow, center=center, objective=objective,
                     progress=progress)
    random_rows = np.random.default_rng(seed + 1).choice(cand, size=g.added.size, replace=False)
    sets = {"before": g.seed, "after": g.anchors, "random": np.concatenate([g.seed, random_rows])}
    test_agreement, test_gap, retrieval = {}, {}, {}
    for name, rows in sets.items():
        test_agreement[name] = relative_agreement(x[held], y[held], x[rows], y[rows], center=center)
        test_gap[name] = relative_agreement(x[held], y[held], x[rows], y[rows], center=center, objective="gap")
        rel = Relative(center=center).fit(x[rows], y[rows])
        retrieval[name] = score_map(rel.transform_source(x[held]), rel.transform_target(y[held]))
    return AnchorDiscovery(
        source, target, n, int(s_rows.size), int(n_cand), int(n_fit), int(n_test), bool(center), objective,
        [j.ids[i] for i in g.seed.tolist()], [j.ids[i] for i in g.added.tolist()],
        [float(v) for v in g.trace], g.stopped_early,
        {"before": float(g.trace[0]), "after": float(g.trace[-1])}, {"agreement": test_agreement, "gap": test_gap},
        retrieval)


@dataclass(frozen=True)
class AnchorBootstrap:
    """Anchors discovered among unpaired shared items (their pairing withheld), and what they are worth.

    ``precision`` is the share of discovered pairs that are one item (known here from the ids); ``test`` and
    ``retrieval`` are as in :class:`AnchorDiscovery`, for the seed alone (``before``), the seed plus the
    discovered pairs (``after``) and the seed plus the true partners of the discovered source items
    (``oracle``: what a perfect matching of the same items would give).

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair(300, 300, 4)
    >>> r = discover_space_anchors(a.store, "a", "b", seed_anchors=4, rounds=1, per_round=20, test=50)
    >>> r.n_found, r.precision
    (20, 1.0)
    """

    source: str
    target: str
    n_shared: int
    n_seed: int
    n_candidates: int
    n_test: int
    center: bool
    seed_ids: list[str]
    found: list[tuple[str, str]]
    rounds: list[int]
    precision: float
    test: dict[str, dict[str, float]]
    retrieval: dict[str, MapScores] = field(default_factory=dict)

    @property
    def n_found(self) -> int:
        """Pairs discovered."""
        return len(self.found)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (METRICS.md, "Anchor discovery")."""
        per_round = {}
        for r, (a, b) in zip(self.rounds, self.found, strict=True):
            n, right = per_round.get(r, (0, 0))
            per_round[r] = (n + 1, right + (a == b))
        return {"source": self.source, "target": self.target, "n_shared": self.n_shared, "n_seed": self.n_seed,
                "n_candidates": self.n_candidates, "n_test": self.n_test, "center": self.center,
                "seed_ids": self.seed_ids, "n_found": self.n_found, "precision": self.precision,
                "round_precision": [{"round": r, "n_found": n, "precision": right / n}
                                    for r, (n, right) in sorted(per_round.items())],
                "found": [list(p) for p in self.found], "test": self.test,
                "retrieval": {k: v.to_dict() for k, v in self.retrieval.items()}}


def discover_space_anchors(store: Store, source: str, target: str, *, seed_anchors: int = 10,
                           seed_ids: list[str] | None = None, rounds: int = 3, per_round: int = 50,
                           candidates: int | None = None, test: int | None = None, center: bool = True,
                           seed: int = 0) -> AnchorBootstrap:
    """Discover anchor pairs among shared items given *unpaired*, from a seed (S095), and judge them held out.

    The candidates of the target are shuffled apart from the source's, so their pairing is withheld from
    :func:`~repspace.engines.align.discover_anchors`; the ids then say which discovered pairs are right.

    Parameters
    ----------
    store : Store
    source, target : str
    seed_anchors, seed_ids : as :func:`grow_space_anchors`
    rounds, per_round : int
        Rounds of discovery, and pairs adopted per round at most.
    candidates, test : int, optional
        Candidate items (default: up to 2,000 of what is not held out) and held-out items (default: a
        fifth of the shared items, at most 1,000).
    center : bool
    seed : int
        Of the shuffles.

    Examples
    --------
    ``b`` is ``a`` rotated: from 4 seed pairs, two rounds find 30 pairs, every one right.

    >>> from repspace.store import example_pair
    >>> a, b = example_pair(300, 300, 4)
    >>> r = discover_space_anchors(a.store, "a", "b", seed_anchors=4, rounds=2, per_round=15, test=50)
    >>> r.n_found, r.precision, r.retrieval["after"].top1 >= r.retrieval["before"].top1
    (30, 1.0, True)
    """
    j, s_rows, rest = _joined_seeds(store, source, target, "discovering", seed_anchors, seed_ids, seed)
    n = len(j.ids)
    n_test = _default(test, held_out_size(n), "test")
    n_cand = _default(candidates, min(2000, max(0, rest.size - n_test)), "candidates")
    if n_test + n_cand > rest.size or n_cand < 1:
        raise InputError(f"{source!r} and {target!r} share {n} item(s): not enough for {s_rows.size} seed anchors, "
                         f"{max(n_cand, 1)} candidates and {n_test} held-out items")
    held, cand = rest[:n_test], rest[n_test:n_test + n_cand]
    shuffled = np.random.default_rng(seed + 1).permutation(cand)  # the target's candidates, pairing withheld
    x, y = j.x, j.y
    m = discover_anchors(x[cand], y[shuffled], x[s_rows], y[s_rows], rounds=rounds, per_round=per_round,
                         center=center)
    fx, fy = cand[m.pairs[:, 0]], shuffled[m.pairs[:, 1]]
    sets = {"before": (s_rows, s_rows), "after": (np.concatenate([s_rows, fx]), np.concatenate([s_rows, fy])),
            "oracle": (np.concatenate([s_rows, fx]), np.concatenate([s_rows, fx]))}
    test_scores: dict[str, dict[str, float]] = {"agreement": {}, "gap": {}}
    retrieval = {}
    for name, (rx, ry) in sets.items():
        for objective in ("agreement", "gap"):
            test_scores[objective][name] = relative_agreement(x[held], y[held], x[rx], y[ry], center=center,
                                                              objective=objective)
        rel = Relative(center=center).fit(x[rx], y[ry])
        retrieval[name] = score_map(rel.transform_source(x[held]), rel.transform_target(y[held]))
    found = [(j.ids[a], j.ids[b]) for a, b in zip(fx.tolist(), fy.tolist(), strict=True)]
    precision = float(np.mean(fx == fy)) if fx.size else 0.0
    return AnchorBootstrap(source, target, n, int(s_rows.size), int(n_cand), int(n_test), bool(center),
                           [j.ids[i] for i in s_rows.tolist()], found, m.rounds.tolist(), precision, test_scores,
                           retrieval)
