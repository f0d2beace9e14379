"""Manifold deviation (REMA, S011): how far each query lies from a reference set of states, against the
reference's own spread.

REMA (Li et al. 2025, "A Unified Reasoning Manifold Framework for Interpreting Large Language Model") takes the
representations of inputs a model handles well as a sample of a low-dimensional manifold and scores any other
representation by its mean distance to its ``k`` nearest reference points; whether that distance is large is read
against the same statistic of the reference points themselves ("internal fluctuations"), each measured against
the other reference points (leave-one-out). Here, for a query ``q`` and reference rows ``R``:

- ``distance(q)`` = mean of the ``k`` smallest ``||q - r||`` over ``r`` in ``R`` (``metric="l2"``, the paper's
  Euclidean distance; ``cosine`` uses ``1 - cos``);
- the baseline: ``distance(r_i)`` for every reference row against ``R`` without ``r_i`` (its ``k`` nearest *other*
  rows);
- ``z(q) = (distance(q) - mean(baseline)) / std(baseline, ddof=1)`` and
  ``percentile(q)`` = share of baseline values ``< distance(q)`` (ties count half), in ``[0, 1]``.

The nearest neighbours come from the project's exact search (:func:`repspace.core.exact.exact_search` for the
queries, :func:`repspace.core.knn.knn_graph` with ``exact=True`` for the leave-one-out baseline): no new kNN.

Examples
--------
>>> import numpy as np
>>> ref = np.random.default_rng(0).standard_normal((50, 4))
>>> d = manifold_deviation(ref, np.array([[0.0, 0, 0, 0], [9.0, 9, 9, 9]]), k=5)
>>> [round(float(p), 2) for p in d.percentile]
[0.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.errors import InputError
from repspace.core.exact import exact_search
from repspace.core.knn import knn_graph

__all__ = ["DEVIATION_METRICS", "Deviation", "manifold_deviation"]

#: Distances the deviation can be measured in.
DEVIATION_METRICS = ("l2", "cosine")


@dataclass(frozen=True, eq=False)
class Deviation:
    """Each query's deviation from a reference set, raw and against the reference's leave-one-out spread.

    Attributes
    ----------
    distance : ndarray of shape (m,), float64
        Mean distance of each query to its ``k`` nearest reference rows.
    z, percentile : ndarray of shape (m,), float64
        ``distance`` as a z-score of the baseline and as the share of the baseline below it (ties half).
    baseline : ndarray of shape (n,), float64
        Each reference row's mean distance to its ``k`` nearest other reference rows.
    k : int
    metric : str

    Examples
    --------
    >>> d = manifold_deviation(np.array([[0.0], [1.0], [2.0]]), np.array([[5.0]]), k=1)
    >>> d.distance.tolist(), d.baseline.tolist(), d.to_dict()["baseline_mean"]
    ([3.0], [1.0, 1.0, 1.0], 1.0)
    """

    distance: np.ndarray = field(repr=False)
    z: np.ndarray = field(repr=False)
    percentile: np.ndarray = field(repr=False)
    baseline: np.ndarray = field(repr=False)
    k: int
    metric: str

    def to_dict(self) -> dict[str, Any]:
        """``{"k", "metric", "n_reference", "baseline_mean", "baseline_std", "distance", "z", "percentile"}``
        (the per-query lists; ``z`` is ``None`` where the baseline has no spread)."""
        def floats(a: np.ndarray) -> list[float | None]:
            return [float(x) if np.isfinite(x) else None for x in a]

        std = float(np.std(self.baseline, ddof=1)) if self.baseline.size > 1 else float("nan")
        return {"k": self.k, "metric": self.metric, "n_reference": int(self.baseline.size),
                "baseline_mean": float(np.mean(self.baseline)), "baseline_std": std if np.isfinite(std) else None,
                "distance": floats(self.distance), "z": floats(self.z), "percentile": floats(self.percentile)}


def manifold_deviation(reference: Any, queries: Any, k: int = 10, *, metric: str = "l2") -> Deviation:
    """Score ``queries`` by their mean distance to their ``k`` nearest ``reference`` rows, and against the
    reference rows' own leave-one-out distances (see the module docstring).

    Parameters
    ----------
    reference : array of shape (n, d)
        The states of inputs the model handles well; ``n > k``.
    queries : array of shape (m, d)
    k : int
        Neighbours, ``1 <= k < n`` (each reference row's baseline needs ``k`` *other* rows).
    metric : ``l2`` or ``cosine``

    Returns
    -------
    Deviation

    Raises
    ------
    InputError
        An empty reference, ``k`` outside ``[1, n)``, widths that differ, non-finite values, an unknown metric.

    Examples
    --------
    >>> ref = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> d = manifold_deviation(ref, np.array([[0.5, 0.5], [3.0, 3.0]]), k=2)
    >>> [round(float(x), 3) for x in d.distance], [round(float(x), 2) for x in d.percentile]
    ([0.707, 3.217], [0.0, 1.0])
    """
    if metric not in DEVIATION_METRICS:
        raise InputError(f"metric must be one of {', '.join(DEVIATION_METRICS)}, not {metric!r}")
    if np.asarray(reference).size == 0:
        raise InputError("the reference set is empty")
    ref = np.asarray(as_matrix(reference, "reference"), dtype=np.float64)
    q = np.asarray(as_matrix(queries, "queries", min_rows=0), dtype=np.float64)
    n = ref.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < n:
        raise InputError(f"k must be an integer from 1 to {n - 1} (the reference has {n} items), not {k!r}")
    if q.shape[1] != ref.shape[1]:
        raise InputError(f"queries have {q.shape[1]} dimensions, the reference {ref.shape[1]}")
    baseline = _mean_distances(knn_graph(ref, int(k), metric=metric, exact=True).distances, metric)
    if q.shape[0]:
        scores, _ = exact_search(q, ref, int(k), metric=metric)
        distance = _mean_distances(scores if metric == "l2" else 1.0 - scores.astype(np.float64), metric)
    else:
        distance = np.zeros(0)
    return Deviation(distance, *_normalise(distance, baseline), baseline, int(k), metric)


def _mean_distances(d: np.ndarray, metric: str) -> np.ndarray:
    d = np.asarray(d, dtype=np.float64)
    if metric == "l2":
        d = np.maximum(d, 0.0)
    return d.mean(axis=1)


def _normalise(distance: np.ndarray, baseline: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The z-score and the (mid-rank) percentile of each distance among the baseline's values."""
    mean = baseline.mean()
    std = baseline.std(ddof=1) if baseline.size > 1 else 0.0
    z = (distance - mean) / std if std > 0 else np.full(distance.shape, np.nan)
    ordered = np.sort(baseline)
    below = np.searchsorted(ordered, distance, side="left")
    at_most = np.searchsorted(ordered, distance, side="right")
    return z, (below + at_most) / (2.0 * baseline.size)
