"""Ollivier-Ricci curvature of a stored space's kNN graph, or of two spaces' graphs over their shared items.

The store feeds :func:`repspace.engines.analyze.knn_ricci` the live vectors (in the space's own metric) and
keeps what it returns: each item's node curvature can be written into its metadata (``save``), so that
``--where "curvature < -0.5"`` finds the bridges between regions.

Examples
--------
>>> from repspace.store import example_space
>>> r = ricci_space(example_space(80, 6), k=5, save="curvature")
>>> r.curvature.n, r.saved, sorted(r.to_dict(top=1))[:3]
(80, 80, ['alpha', 'edge_curvature', 'edge_histogram'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import pearsonr, spearmanr

from repspace.core.errors import InputError
from repspace.core.progress import Progress, relabel
from repspace.engines.analyze import RicciCurvature, knn_ricci
from repspace.engines.analyze.ricci import DEFAULT_ALPHA, summarize

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["CurvatureComparison", "SpaceCurvature", "ricci_space", "ricci_spaces"]

#: Items listed at each end (most negative, most positive, largest changes) unless the caller asks otherwise.
TOP = 10


def _ends(ids: list[str], values: np.ndarray, top: int) -> tuple[list[dict], list[dict]]:
    """The ``top`` items of lowest and of highest ``values`` (ties to the lower row), with their values."""
    order = np.argsort(values, kind="stable")
    pick = lambda rows: [{"id": ids[r], "curvature": round(float(values[r]), 6)} for r in rows]  # noqa: E731
    return pick(order[:top].tolist()), pick(order[::-1][:top].tolist())


@dataclass(frozen=True)
class SpaceCurvature:
    """The curvature of one stored space's kNN graph.

    Attributes
    ----------
    space : str
    ids : list of str
        Item ids, row-aligned with ``curvature.node_curvature``.
    curvature : RicciCurvature
    saved : int
        Items whose metadata received their node curvature.
    field : str or None
        The metadata key it was saved under.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> r = ricci_space(example_space(30, 4), k=3)
    >>> r.space, len(r.ids), len(r.to_dict(top=2)["most_negative"])
    ('t', 30, 2)
    """

    space: str
    ids: list[str] = field(repr=False)
    curvature: RicciCurvature
    saved: int = 0
    field: str | None = None

    def to_dict(self, top: int = TOP) -> dict[str, Any]:
        """The curvature's JSON (:meth:`RicciCurvature.to_dict`) with ``space``, ``most_negative`` and
        ``most_positive`` (``top`` items each, ``{"id", "curvature"}``) and ``saved``."""
        low, high = _ends(self.ids, self.curvature.node_curvature, top)
        return {"space": self.space, **self.curvature.to_dict(), "most_negative": low, "most_positive": high,
                "saved": self.saved, "field": self.field}


@dataclass(frozen=True)
class CurvatureComparison:
    """Two spaces' kNN-graph curvatures over the items they share (each graph built on those items only).

    Attributes
    ----------
    a, b : str
        The spaces.
    n_a, n_b : int
        Their live items.
    ids : list of str
        The shared items, in ``a``'s order.
    first, second : RicciCurvature
        The curvature of ``a``'s and of ``b``'s graph over ``ids``.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> c = ricci_spaces(*example_pair(), k=4)
    >>> (c.a, c.b, len(c.ids)), float(abs(c.difference).max())
    (('a', 'b', 40), 0.0)
    """

    a: str
    b: str
    n_a: int
    n_b: int
    ids: list[str] = field(repr=False)
    first: RicciCurvature
    second: RicciCurvature

    @property
    def difference(self) -> np.ndarray:
        """Per shared item: node curvature in ``b`` minus that in ``a``."""
        return self.second.node_curvature - self.first.node_curvature

    def correlation(self) -> dict[str, float | None]:
        """Pearson and Spearman correlation of the two node curvatures (``None`` when one is constant)."""
        x, y = self.first.node_curvature, self.second.node_curvature
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            return {"pearson": None, "spearman": None}
        return {"pearson": round(float(pearsonr(x, y).statistic), 12),
                "spearman": round(float(spearmanr(x, y).statistic), 12)}

    def to_dict(self, top: int = TOP) -> dict[str, Any]:
        """``{"a", "b", "n_a", "n_b", "n_shared", "first", "second", "node_difference", "node_correlation",
        "largest_drops", "largest_rises"}``: both curvatures' JSON, the summary of the per-item differences
        (``b − a``), their correlation and the items whose curvature fell or rose most."""
        drop, rise = _ends(self.ids, self.difference, top)
        return {"a": self.a, "b": self.b, "n_a": self.n_a, "n_b": self.n_b, "n_shared": len(self.ids),
                "first": self.first.to_dict(), "second": self.second.to_dict(),
                "node_difference": {**summarize(self.difference).to_dict(),
                                    "mean_abs": round(float(np.abs(self.difference).mean()), 12)},
                "node_correlation": self.correlation(), "largest_drops": drop, "largest_rises": rise}


def ricci_space(space: Space, *, k: int = 10, alpha: float = DEFAULT_ALPHA, exact: bool | None = None,
                seed: int = 0, save: str | None = None, progress: Progress | None = None) -> SpaceCurvature:
    """Ollivier-Ricci curvature of a stored space's kNN graph (its own metric; see
    :func:`repspace.engines.analyze.knn_ricci`).

    Parameters
    ----------
    space : Space
    k, alpha, exact, seed, progress
        As :func:`repspace.engines.analyze.knn_ricci`.
    save : str, optional
        Write each item's node curvature (rounded to 6 decimals) into its metadata under this key (merged,
        other keys kept); refused whole, nothing written, if the space changed while it was measured.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> space = example_space(50, 4)
    >>> r = ricci_space(space, k=4, save="kappa")
    >>> list(space.get(["i0"])[0].metadata) == ["kappa"], r.saved
    (True, 50)
    """
    if save is not None and not save.strip():
        raise InputError("--save needs a metadata key")
    snap = space.snapshot()
    n = len(snap.ids)
    if n < 3:
        raise InputError(f"space {space.name!r} has {n} item(s); Ricci curvature needs at least 3")
    if k >= n:
        raise InputError(f"space {space.name!r} has {n} items; a kNN graph with k={k} needs more than {k}")
    r = knn_ricci(snap.vectors, k, alpha=alpha, metric=space.metric.value, exact=exact, seed=seed,
                  progress=progress)
    saved = 0
    if save is not None:
        patches = [{save: round(float(c), 6)} for c in r.node_curvature]
        saved = space.patch_rows_metadata(snap.rows, patches, generation=snap.generation)
    return SpaceCurvature(space.name, list(snap.ids), r, saved, save)


def ricci_spaces(a: Space, b: Space, *, k: int = 10, alpha: float = DEFAULT_ALPHA, exact: bool | None = None,
                 seed: int = 0, progress: Progress | None = None) -> CurvatureComparison:
    """The curvatures of two spaces' kNN graphs over the items they share (joined on id), compared per item.

    Each graph is built on the shared items alone, each space in its own metric.

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> c = ricci_spaces(*example_pair(), k=5)  # b: the first 40 items of a, rotated: the same graph
    >>> d = c.to_dict()
    >>> d["n_shared"], d["node_difference"]["mean_abs"], d["node_correlation"]["pearson"]
    (40, 0.0, 1.0)
    """
    from repspace.workflows.compare import joined

    j = joined(a, b)
    n = len(j.ids)
    if n < 3:
        raise InputError(f"spaces {a.name!r} and {b.name!r} share {n} item(s); comparing curvature needs at "
                         "least 3")
    if k >= n:
        raise InputError(f"spaces {a.name!r} and {b.name!r} share {n} items; a kNN graph with k={k} needs more "
                         f"than {k}")
    first = knn_ricci(j.x, k, alpha=alpha, metric=a.metric.value, exact=exact, seed=seed,
                      progress=relabel(progress, f"curvature {a.name}"))
    second = knn_ricci(j.y, k, alpha=alpha, metric=b.metric.value, exact=exact, seed=seed,
                       progress=relabel(progress, f"curvature {b.name}"))
    return CurvatureComparison(a.name, b.name, j.n_x, j.n_y, j.ids, first, second)
