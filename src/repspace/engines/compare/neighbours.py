"""Neighbourhood agreement of two spaces: ``mutual_knn``, per-item ``neighbourhood_jaccard``, changed items.

Each space's cosine k-nearest-neighbour graph (self excluded, ties to the lower
row) comes from :func:`repspace.engines.geometry.knn_graph`: exact blocked BLAS up to
50,000 items, an HNSW graph above with its recall@k measured on a sample and
reported next to every value built on it. Then, per item ``i`` with
neighbour sets ``N_X(i)``, ``N_Y(i)`` of size ``k``:

* ``mutual_knn`` = mean over items of ``|N_X(i) ∩ N_Y(i)| / k`` (Huh et al.
  2024; the same quantity as ``mutual_knn`` in ``minyoungg/platonic-rep``,
  which L2-normalises the features, excludes each item from its own list and
  divides the overlap by ``k``; that code also clips outlier values at the 95th
  percentile before normalising, a preprocessing step not done here);
* ``neighbourhood_jaccard(i)`` = ``|N_X(i) ∩ N_Y(i)| / |N_X(i) ∪ N_Y(i)|``
  = ``c / (2k − c)`` with ``c`` the overlap (Klabunde et al. 2023);
* :func:`changed_items` lists the items whose neighbourhoods changed most.

Degenerate input: ``n ≤ k`` raises :class:`~repspace.core.errors.InputError`
(an item needs ``k`` other items). Zero rows have cosine 0 with everything;
duplicate or constant rows tie, and ties go to the lower row in both spaces,
so identical spaces always score 1. A rotated copy scores 1 up to the order of
neighbours whose cosines differ by less than float32 rounding.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import check_pair
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.backend import Backend
from repspace.core.knn import KnnGraph, knn_graph

__all__ = [
    "ChangedItem",
    "ChangedItems",
    "MutualKnn",
    "NeighbourhoodJaccard",
    "changed_items",
    "mutual_knn",
    "neighbourhood_jaccard",
]

#: Default neighbourhood size (METRICS.md: k = 10 unless the user says otherwise).
DEFAULT_K = 10
#: Entries of the boolean ``rows × k × k`` comparison block.
_BLOCK_ENTRIES = 1 << 22


def knn_info(gx: KnnGraph, gy: KnnGraph) -> dict[str, Any]:
    """``{"method", "metric", "recall", "recall_x", "recall_y", "recall_sample"}`` of the two graphs.

    ``recall`` is the lower of the two measured recalls (``None`` when both
    graphs are exact); ``method`` is ``hnsw`` when either graph is.
    """
    recalls = [g.recall for g in (gx, gy) if g.recall is not None]
    return {"method": "hnsw" if recalls else "exact", "metric": gx.metric,
            "recall": min(recalls) if recalls else None,
            "recall_x": gx.recall, "recall_y": gy.recall,
            "recall_sample": max(gx.recall_sample, gy.recall_sample)}


def overlap_counts(ix: np.ndarray, iy: np.ndarray) -> np.ndarray:
    """``|N_X(i) ∩ N_Y(i)|`` per row of two ``(n, k)`` neighbour-index arrays (rows without repeats).

    Examples
    --------
    >>> overlap_counts(np.array([[1, 2], [0, 2]]), np.array([[2, 3], [3, 1]])).tolist()
    [1, 0]
    """
    n, k = ix.shape
    out = np.empty(n, np.int64)
    step = max(1, _BLOCK_ENTRIES // (k * k))
    for lo in range(0, n, step):
        a, b = ix[lo:lo + step], iy[lo:lo + step]
        out[lo:lo + step] = (a[:, :, None] == b[:, None, :]).any(axis=2).sum(axis=1)
    return out


def graphs(X: Any, Y: Any, k: int, *, exact: bool | None = None, seed: int | None = 0,
           metrics: tuple[str, str] = ("cosine", "cosine"),
           backend: Backend | None = None) -> tuple[KnnGraph, KnnGraph]:
    """The kNN graphs of ``X`` and ``Y`` (same ``n`` checked first): cosine, or each side's own
    ``metrics`` (a ``poincare`` side is searched by hyperbolic distance), built by ``backend``
    (``None``: this process)."""
    X, Y = check_pair(X, Y, scan=False)
    return (knn_graph(X, k, metric=metrics[0], exact=exact, seed=seed, backend=backend),
            knn_graph(Y, k, metric=metrics[1], exact=exact, seed=seed, backend=backend))


@dataclass(frozen=True, eq=False)
class MutualKnn:
    """Mutual k-NN agreement of two spaces.

    Attributes
    ----------
    value : float
        Mean over items of ``|N_X(i) ∩ N_Y(i)| / k``, in ``[0, 1]``.
    k : int
        Neighbours per item.
    overlap : ndarray of shape (n,), int64
        ``|N_X(i) ∩ N_Y(i)|`` per item.
    knn : dict
        The graphs' method and measured recall (:func:`knn_info`).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((30, 3))
    >>> mutual_knn(X, X, k=5)
    MutualKnn(1.0000, k=5, exact)
    """

    value: float
    k: int
    overlap: np.ndarray = field(repr=False)
    knn: dict[str, Any] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "k", "knn": {"method", "metric", "recall", "recall_x", "recall_y", "recall_sample"}}``."""
        return {"value": float(self.value), "k": int(self.k), "knn": dict(self.knn)}

    def __repr__(self) -> str:
        rec = "" if self.knn["recall"] is None else f", recall={self.knn['recall']:.4f}"
        return f"MutualKnn({self.value:.4f}, k={self.k}, {self.knn['method']}{rec})"


@dataclass(frozen=True, eq=False)
class NeighbourhoodJaccard:
    """Per-item Jaccard similarity of the two spaces' neighbour sets.

    Attributes
    ----------
    per_item : ndarray of shape (n,), float64
        ``|N_X(i) ∩ N_Y(i)| / |N_X(i) ∪ N_Y(i)|``, in ``[0, 1]``.
    k : int
        Neighbours per item.
    knn : dict
        The graphs' method and measured recall (:func:`knn_info`).

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((30, 3))
    >>> r = neighbourhood_jaccard(X, X, k=5)
    >>> r.value, r.per_item.shape
    (1.0, (30,))
    """

    per_item: np.ndarray = field(repr=False)
    k: int
    knn: dict[str, Any] = field(repr=False)

    @property
    def value(self) -> float:
        """The mean over items (the headline number)."""
        return float(self.per_item.mean())

    def to_dict(self, per_item: bool = False) -> dict[str, Any]:
        """``{"mean", "median", "min", "k", "knn"}``; with ``per_item`` also ``"per_item"`` (a list of n)."""
        out: dict[str, Any] = {"mean": self.value, "median": float(np.median(self.per_item)),
                               "min": float(self.per_item.min()), "k": int(self.k), "knn": dict(self.knn)}
        if per_item:
            out["per_item"] = [float(v) for v in self.per_item]
        return out

    def __repr__(self) -> str:
        return f"NeighbourhoodJaccard(mean={self.value:.4f}, k={self.k}, n={len(self.per_item)}, {self.knn['method']})"


@dataclass(frozen=True)
class ChangedItem:
    """One item whose neighbourhood changed between the spaces.

    Attributes
    ----------
    row : int
        The item's row number.
    jaccard : float
        Jaccard similarity of its two neighbour sets.
    neighbours_x, neighbours_y : tuple of int
        Its ``k`` nearest other items in ``X`` (old) and ``Y`` (new), nearest first.
    lost, gained : tuple of int
        Neighbours in ``X`` but not in ``Y`` (in ``X``'s order), and in ``Y`` but
        not in ``X`` (in ``Y``'s order).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0], [-1.0, 0.0], [-1.0, -0.1]])
    >>> Y = X.copy(); Y[4] = [0.05, 1.0]               # item 4 moves next to items 2 and 3
    >>> c = changed_items(X, Y, k=2, top=1)[0]
    >>> c.row, round(c.jaccard, 3), c.neighbours_x, c.neighbours_y, c.lost, c.gained
    (2, 0.333, (3, 1), (4, 3), (1,), (4,))
    """

    row: int
    jaccard: float
    neighbours_x: tuple[int, ...]
    neighbours_y: tuple[int, ...]
    lost: tuple[int, ...]
    gained: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"row", "jaccard", "neighbours_x", "neighbours_y", "lost", "gained"}``."""
        return {"row": self.row, "jaccard": self.jaccard, "neighbours_x": list(self.neighbours_x),
                "neighbours_y": list(self.neighbours_y), "lost": list(self.lost), "gained": list(self.gained)}


@dataclass(frozen=True, eq=False)
class ChangedItems:
    """The items whose neighbourhoods changed most, lowest Jaccard first (ties: lower row first).

    Iterable and indexable like a tuple of :class:`ChangedItem`.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0], [-1.0, 0.0], [-1.0, -0.1]])
    >>> Y = X.copy(); Y[4] = [0.05, 1.0]               # item 4 moves next to items 2 and 3
    >>> changed = changed_items(X, Y, k=2, top=3)
    >>> len(changed), changed.k, [c.row for c in changed], changed[2].lost, changed.knn["method"]
    (3, 2, [2, 3, 4], (5,), 'exact')
    """

    items: tuple[ChangedItem, ...]
    k: int
    knn: dict[str, Any] = field(repr=False)

    def __iter__(self) -> Iterator[ChangedItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> ChangedItem:
        return self.items[i]

    def to_dict(self) -> dict[str, Any]:
        """``{"k", "knn", "items": [ChangedItem.to_dict(), ...]}``."""
        return {"k": int(self.k), "knn": dict(self.knn), "items": [c.to_dict() for c in self.items]}


def mutual_knn_from_graphs(gx: KnnGraph, gy: KnnGraph) -> MutualKnn:
    """:func:`mutual_knn` of two kNN graphs already built (:func:`graphs`), so that measures can share them.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((30, 4))
    >>> mutual_knn_from_graphs(*graphs(X, 2 * X, 5)).value
    1.0
    """
    c = overlap_counts(gx.indices, gy.indices)
    return MutualKnn(float(c.mean()) / gx.k, gx.k, c, knn_info(gx, gy))


def _jaccard_values(gx: KnnGraph, gy: KnnGraph) -> np.ndarray:
    c = overlap_counts(gx.indices, gy.indices).astype(np.float64)
    return c / (2.0 * gx.k - c)


def jaccard_from_graphs(gx: KnnGraph, gy: KnnGraph) -> NeighbourhoodJaccard:
    """:func:`neighbourhood_jaccard` of two kNN graphs already built (:func:`graphs`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((30, 4))
    >>> gx, gy = graphs(X, 2 * X, 5)  # built once, read by both measures
    >>> jaccard_from_graphs(gx, gy).value, mutual_knn_from_graphs(gx, gy).value
    (1.0, 1.0)
    """
    return NeighbourhoodJaccard(_jaccard_values(gx, gy), gx.k, knn_info(gx, gy))


def changed_items_from_graphs(gx: KnnGraph, gy: KnnGraph, top: int) -> ChangedItems:
    """:func:`changed_items` of two kNN graphs already built (:func:`graphs`): the ``top`` items that moved most.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((30, 4))
    >>> len(changed_items_from_graphs(*graphs(X, 2 * X, 5), 3))
    3
    """
    jac = _jaccard_values(gx, gy)
    order = np.lexsort((np.arange(len(jac)), jac))[:top]
    items = []
    for i in order.tolist():
        nx, ny = gx.indices[i].tolist(), gy.indices[i].tolist()
        sx, sy = set(nx), set(ny)
        items.append(ChangedItem(int(i), float(jac[i]), tuple(nx), tuple(ny),
                                 tuple(j for j in nx if j not in sy), tuple(j for j in ny if j not in sx)))
    return ChangedItems(tuple(items), gx.k, knn_info(gx, gy))


def mutual_knn(X: Any, Y: Any, k: int = DEFAULT_K, *, exact: bool | None = None,
               seed: int | None = 0, backend: Backend | None = None) -> MutualKnn:
    """Mutual k-NN (Huh et al. 2024): the mean share of each item's ``k`` cosine neighbours found in both spaces.

    Parameters
    ----------
    X : array of shape (n, d₁)
    Y : array of shape (n, d₂)
        The same ``n > k`` items, row for row.
    k : int, default 10
        Neighbours per item, the item itself excluded.
    exact : bool or None
        ``None``: exact search up to 50,000 items, HNSW above (recall
        measured and reported); ``True`` / ``False`` force one or the other.
    seed : int or None
        Seed of the HNSW recall sample.
    backend : Backend, optional
        Where the kNN graphs are built (:class:`repspace.core.backend.Backend`;
        ``None``: this process).

    Returns
    -------
    MutualKnn
        ``value`` in ``[0, 1]`` (1 for identical spaces), the per-item overlap
        and the graphs' method and recall.

    Raises
    ------
    InputError
        Different numbers of rows, ``n ≤ k``, a bad ``k``, a NaN / inf.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 8))
    >>> Q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    >>> mutual_knn(X, 2.0 * X @ Q).value
    1.0
    >>> round(mutual_knn(X, rng.standard_normal((100, 8))).value, 2)   # ≈ k/(n−1) by chance
    0.1
    """
    return mutual_knn_from_graphs(*graphs(X, Y, k, exact=exact, seed=seed, backend=backend))


def neighbourhood_jaccard(X: Any, Y: Any, k: int = DEFAULT_K, *, exact: bool | None = None,
                          seed: int | None = 0, backend: Backend | None = None) -> NeighbourhoodJaccard:
    """Per-item Jaccard similarity ``|N_X ∩ N_Y| / |N_X ∪ N_Y|`` of the ``k`` cosine neighbours in each space.

    Parameters are those of :func:`mutual_knn`.

    Returns
    -------
    NeighbourhoodJaccard
        ``per_item`` (n,) in ``[0, 1]``, its mean as ``value``, and the graphs'
        method and recall.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    >>> Y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.1, 1.0]])   # rows 1 and 2 swapped places
    >>> neighbourhood_jaccard(X, Y, k=1).per_item.tolist()
    [0.0, 0.0, 0.0, 0.0]
    >>> neighbourhood_jaccard(X, Y, k=2).per_item.round(3).tolist()
    [0.333, 0.333, 0.333, 1.0]
    """
    return jaccard_from_graphs(*graphs(X, Y, k, exact=exact, seed=seed, backend=backend))


def changed_items(X: Any, Y: Any, k: int = DEFAULT_K, top: int = 20, *, exact: bool | None = None,
                  seed: int | None = 0, backend: Backend | None = None) -> ChangedItems:
    """The ``top`` items whose cosine neighbourhoods differ most between ``X`` (old) and ``Y`` (new).

    Parameters
    ----------
    X, Y, k, exact, seed, backend
        As in :func:`mutual_knn`.
    top : int, default 20
        How many items to return (at most ``n``).

    Returns
    -------
    ChangedItems
        Items sorted by neighbourhood Jaccard, lowest first (equal values: lower
        row first), each with its old and new neighbour lists and what it lost
        and gained. Rows are row numbers; map them to item ids outside.

    Raises
    ------
    InputError
        As :func:`mutual_knn`, or ``top < 1``.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0], [-1.0, 0.0]])
    >>> Y = X.copy(); Y[4] = [0.05, 1.0]               # item 4 moved next to items 2 and 3
    >>> c = changed_items(X, Y, k=1, top=2)
    >>> [(i.row, i.jaccard, i.neighbours_x, i.neighbours_y) for i in c]
    [(2, 0.0, (3,), (4,)), (3, 0.0, (2,), (4,))]
    """
    top = check_scalar(top, "top", int, low=1)
    return changed_items_from_graphs(*graphs(X, Y, k, exact=exact, seed=seed, backend=backend), int(top))
