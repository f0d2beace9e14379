"""Topic geometry: are items of one topic closer (in inner product) to each other than to other topics' items?

The structure test of S043 compares the mean inner product of pairs of items within a topic with that of pairs
across topics: a space that organises its items by topic has the first above the second. Over ``n`` items both
means come from per-topic sums without any ``n × n`` matrix: with ``S_c`` the sum of topic ``c``'s vectors,
``S`` the sum of all and ``q = Σ_i ‖x_i‖²``,

    within = Σ_c (‖S_c‖² − q_c) / Σ_c n_c (n_c − 1),     across = (‖S‖² − Σ_c ‖S_c‖²) / (n² − Σ_c n_c²),

over ordered pairs of distinct items (``q_c`` the squared norms of topic ``c``). Per topic, its within mean and
its mean with every other topic's items, ``S_c · (S − S_c) / (n_c (n − n_c))``. ``normalize`` makes them cosines;
``center`` subtracts the items' mean first (the mean vector otherwise adds the same amount to every pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, unit_rows
from repspace.core.errors import InputError

__all__ = ["TopicGeometry", "topic_geometry"]


@dataclass(frozen=True)
class TopicGeometry:
    """Within- and across-topic mean inner products, overall and per topic.

    Attributes
    ----------
    n, n_topics : int
    within, across : float
        Mean inner product over pairs in one topic, and over pairs in two.
    separation : float
        ``within − across``.
    all_pairs : float
        Mean over every pair of distinct items (what both would be if topics were assigned at random).
    normalized, centered : bool
    topics : tuple of dict
        ``{"topic", "n", "within", "across"}`` (``within`` None for a topic of one item), largest first.

    Examples
    --------
    >>> g = topic_geometry([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]], ["a", "a", "b", "b"])
    >>> round(g.within, 3), round(g.across, 3), round(g.separation, 3)
    (1.0, 0.1, 0.9)
    """

    n: int
    n_topics: int
    within: float
    across: float
    separation: float
    all_pairs: float
    normalized: bool
    centered: bool
    topics: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "n_topics", "within", "across", "separation", "all_pairs", "normalized", "centered",
        "topics"}``."""
        return {"n": self.n, "n_topics": self.n_topics, "within": self.within, "across": self.across,
                "separation": self.separation, "all_pairs": self.all_pairs, "normalized": self.normalized,
                "centered": self.centered, "topics": [dict(t) for t in self.topics]}


def topic_geometry(X: Any, labels: Sequence[Any], *, normalize: bool = False,
                   center: bool = False) -> TopicGeometry:
    """Mean inner product within topics against across topics (S043; see the module for the formulas).

    Parameters
    ----------
    X : array of shape (n, d)
    labels : sequence of length n
        Each item's topic (any hashable; shown as text).
    normalize : bool
        Unit rows first (cosines; zero rows stay 0).
    center : bool
        Subtract the items' mean first (after ``normalize``).

    Returns
    -------
    TopicGeometry

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((40, 8)) + np.repeat(np.eye(8)[:2] * 3, 20, axis=0)
    >>> g = topic_geometry(X, [0] * 20 + [1] * 20, center=True)
    >>> g.n_topics, g.separation > 5
    (2, True)
    """
    X = np.asarray(as_matrix(X), dtype=np.float64)
    labels = [str(v) for v in labels]
    if len(labels) != len(X):
        raise InputError(f"{len(labels)} labels for {len(X)} items")
    if normalize:
        X = unit_rows(X)
    if center:
        X = X - X.mean(axis=0)
    names, inverse, counts = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True,
                                       return_counts=True)
    if len(names) < 2:
        raise InputError(f"topic geometry needs at least 2 topics, got {len(names)}")
    if counts.max() < 2:
        raise InputError("every topic has a single item: no pair within a topic")
    n = len(X)
    sums = np.zeros((len(names), X.shape[1]))
    np.add.at(sums, inverse, X)
    sq = np.bincount(inverse, weights=np.einsum("ij,ij->i", X, X), minlength=len(names))
    total = sums.sum(axis=0)
    sums_sq = np.einsum("ij,ij->i", sums, sums)
    within_pairs = counts * (counts - 1)
    within = float(np.sum(sums_sq - sq)) / float(within_pairs.sum())
    across = (float(total @ total) - float(sums_sq.sum())) / float(n * n - np.sum(counts ** 2))
    all_pairs = (float(total @ total) - float(sq.sum())) / float(n * (n - 1))
    per = []
    for c in np.argsort(-counts, kind="stable"):
        w = float(sums_sq[c] - sq[c]) / float(within_pairs[c]) if counts[c] > 1 else None
        a = float(sums[c] @ (total - sums[c])) / float(counts[c] * (n - counts[c]))
        per.append({"topic": str(names[c]), "n": int(counts[c]), "within": None if w is None else round(w, 9),
                    "across": round(a, 9)})
    return TopicGeometry(n, len(names), round(within, 9), round(across, 9), round(within - across, 9),
                         round(all_pairs, 9), normalize, center, tuple(per))
