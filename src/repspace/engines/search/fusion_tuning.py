"""Sparse + dense fusion tuned on held-out queries: a dev/test split and a convex weight chosen on dev.

Convex combination (Bruch, Gai & Ingber, TOIS 2023): each list's scores are min-max normalised
per query, then ``α · sparse + (1 − α) · dense`` (:func:`convex`, by
:func:`~repspace.engines.search.fusion.weighted_sum`). ``α`` is the grid value with the best mean
metric on the dev queries (:func:`tune_convex`, ties to the smaller ``α``); the test queries are
scored with it, never seen while tuning. Reciprocal-rank fusion needs no tuning (``c = 60``, the
paper's), :func:`~repspace.engines.search.fusion.rrf`.

Examples
--------
>>> dev, test = dev_test_split(10, 0.3, seed=0)
>>> len(dev), len(test), sorted(set(dev) | set(test)) == list(range(10))
(3, 7, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.search.fusion import weighted_sum

__all__ = ["ALPHAS", "convex", "dev_test_split", "tune_convex"]

#: The convex weights tried on the dev queries (weight of the sparse list).
ALPHAS = tuple(round(0.1 * i, 1) for i in range(11))


def dev_test_split(n: int, dev_fraction: float = 0.3, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Query positions split at random into dev (tuning) and test (scoring), each ascending.

    Examples
    --------
    >>> dev, test = dev_test_split(5, 0.4, seed=1)
    >>> len(dev), len(test)
    (2, 3)
    """
    check_scalar(n, "the number of queries", int, low=2)
    check_scalar(dev_fraction, "the dev fraction", float, low=0, high=1)
    n_dev = int(round(n * dev_fraction))
    if not 0 < n_dev < n:
        raise InputError(f"a dev fraction of {dev_fraction} leaves no dev or no test query of {n}")
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[:n_dev]), np.sort(perm[n_dev:])


def convex(sparse: tuple[Any, Any], dense: tuple[Any, Any], alpha: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``α · minmax(sparse) + (1 − α) · minmax(dense)`` per query; ``(scores, rows)`` as the fusers return them.

    Examples
    --------
    >>> sparse = (np.array([[4.0, 2.0]]), np.array([[7, 3]]))
    >>> dense = (np.array([[0.9, 0.5]]), np.array([[3, 5]]))
    >>> s, r = convex(sparse, dense, 0.5, k=3)
    >>> r.tolist(), s.round(3).tolist()
    ([[3, 7, 5]], [[0.5, 0.5, 0.0]])
    """
    check_scalar(alpha, "the convex weight alpha", float, low=0, high=1)
    return weighted_sum([sparse, dense], k, weights=[alpha, 1.0 - alpha])


def tune_convex(evaluate: Callable[[float], float],
                alphas: Sequence[float] = ALPHAS) -> tuple[float, dict[float, float]]:
    """The ``α`` of ``alphas`` with the highest ``evaluate(α)`` (the dev queries' mean metric), ties to the smaller.

    Returns ``(best α, {α: dev value})``.

    Examples
    --------
    >>> best, seen = tune_convex(lambda a: 1 - (a - 0.3) ** 2)
    >>> best, round(seen[best], 4)
    (0.3, 1.0)
    """
    if not len(alphas):
        raise InputError("no convex weight to try")
    seen = {float(a): float(evaluate(float(a))) for a in sorted(alphas)}
    best = max(seen, key=lambda a: (seen[a], -a))
    return best, seen
