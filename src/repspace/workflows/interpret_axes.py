"""Axes through stored spaces beyond SemAxis: POLAR coordinates on several named axes, and an axis from ranked items.

:func:`polar_space` builds each named axis from two poles (ids or texts, as
:func:`~repspace.workflows.interpret.axis_space`) and writes every item in the
POLAR basis (:func:`repspace.engines.interpret.polar`), whose coordinates account
for the overlap between the axes. :func:`rank_axis_space` builds an axis from a few
items given in increasing order (:func:`repspace.engines.interpret.rank_axis`) and
scores every item on it, with the rank correlation of the given items and,
optionally, the significance against a numeric metadata field.

Examples
--------
>>> import numpy as np
>>> from repspace.store import example_store
>>> sp = example_store().create_space("t", dim=3, metric="l2")
>>> _ = sp.add(["x", "y", "z", "o"], np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0, 0]]))
>>> r = polar_space(sp, ["ex=x:o", "why=y:o"])
>>> r.result.names, (r.result.coordinates.round(6) + 0.0).tolist()[:2]
(('ex', 'why'), [[1.0, 0.0], [0.0, 1.0]])
>>> a = rank_axis_space(sp, ["o", "x"])
>>> round(a.rho_ranked, 6), a.to_dict(top=1)["top"]
(1.0, [{'id': 'x', 'score': 1.0}])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.printable import excerpt
from repspace.workflows.interpret import pole_vectors, score_axis

if TYPE_CHECKING:
    from repspace.core.store import Space
    from repspace.engines.interpret import Axis, AxisSignificance, PolarResult

__all__ = ["PolarReport", "RankAxisReport", "parse_axis", "polar_space", "rank_axis_space"]


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def parse_axis(spec: str) -> tuple[str, list[str], list[str]]:
    """``"name=pos1,pos2:neg1,neg2"`` as ``(name, positive poles, negative poles)``.

    Examples
    --------
    >>> parse_axis("size=big,huge:small")
    ('size', ['big', 'huge'], ['small'])
    >>> parse_axis("size")
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: an axis is NAME=POS1,POS2:NEG1,NEG2, not 'size'
    """
    name, eq, poles = str(spec).partition("=")
    pos, colon, neg = poles.partition(":")
    if not (eq and colon and name.strip() and _split(pos) and _split(neg)):
        raise InputError(f"an axis is NAME=POS1,POS2:NEG1,NEG2, not {excerpt(str(spec))}")
    return name.strip(), _split(pos), _split(neg)


def _ends(ids: list[str], values: np.ndarray, top: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    order = np.argsort(-values, kind="stable")
    high = [{"id": ids[i], "score": round(float(values[i]), 6)} for i in order[:top].tolist()]
    low = [{"id": ids[i], "score": round(float(values[i]), 6)} for i in order[::-1][:top].tolist()]
    return high, low


@dataclass(frozen=True)
class PolarReport:
    """Every item of a stored space in a POLAR basis: the engine's result with the items' ids.

    ``result.coordinates[i, j]`` is item ``ids[i]`` on the axis ``result.names[j]``.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=3, metric="l2")
    >>> _ = space.add(["x", "y", "z", "o"], np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0, 0]]))
    >>> r = polar_space(space, {"ex": (["x"], ["o"]), "zed": (["z"], ["o"])})
    >>> r.space, r.ids, r.result.names, (r.result.coordinates.round(6) + 0.0).tolist()[2]
    ('t', ['x', 'y', 'z', 'o'], ('ex', 'zed'), [0.0, 1.0])
    """

    space: str
    ids: list[str]
    result: PolarResult

    def to_dict(self, top: int = 10, per_item: bool = False) -> dict[str, Any]:
        """``{"space", "names", "n", "m", "d", "condition", "axes": [{"name", "top", "bottom"}]}``; with
        ``per_item`` also ``"coordinates"``: ``[{"id", "coordinates": [...]}]``."""
        out: dict[str, Any] = {"space": self.space, **self.result.to_dict()}
        axes = []
        for j, name in enumerate(self.result.names):
            high, low = _ends(self.ids, self.result.coordinates[:, j], top)
            axes.append({"name": name, "top": high, "bottom": low})
        out["axes"] = axes
        if per_item:
            out["coordinates"] = [{"id": i, "coordinates": [float(v) for v in row]}
                                  for i, row in zip(self.ids, self.result.coordinates.tolist(), strict=True)]
        return out


def polar_space(space: Space, axes: Mapping[str, tuple[Sequence[str], Sequence[str]]] | Sequence[str]) -> PolarReport:
    """POLAR coordinates of every item of ``space`` on named axes (Mathew et al. 2020).

    ``axes``: name → (positive poles, negative poles), or :func:`parse_axis` specs; a pole is a stored id
    or a text embedded with the space's recipe.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=3, metric="l2")
    >>> _ = space.add(["x", "y", "z", "o"], np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0, 0]]))
    >>> r = polar_space(space, ["ex=x:o", "why=y:o"])  # each axis from a pole to the origin
    >>> r.result.names, (r.result.coordinates.round(6) + 0.0).tolist()
    (('ex', 'why'), [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    >>> polar_space(space, ["ex=x:o", "ex=y:o"])
    Traceback (most recent call last):
    repspace.core.errors.InputError: axis 'ex' is given twice
    """
    from repspace.engines.interpret import axis, polar

    space.metric.require_vector_space("POLAR coordinates (a change of basis of the vectors)")
    if isinstance(axes, str):
        raise InputError("axes must be a mapping or a list of NAME=POS:NEG specs, not one string")
    pairs = dict(axes) if isinstance(axes, Mapping) else {}
    if not isinstance(axes, Mapping):
        for spec in axes:
            name, pos, neg = parse_axis(spec)
            if name in pairs:
                raise InputError(f"axis {name!r} is given twice")
            pairs[name] = (pos, neg)
    if not pairs:
        raise InputError("POLAR needs at least one axis (NAME=POS1,POS2:NEG1,NEG2)")
    built = {name: axis(pole_vectors(space, pos), pole_vectors(space, neg)) for name, (pos, neg) in pairs.items()}
    snap = space.snapshot()
    return PolarReport(space.name, list(snap.ids), polar(snap.vectors, built))


@dataclass(frozen=True)
class RankAxisReport:
    """An axis from ranked items of a stored space, every item's score, and how well it orders the given items.

    ``scores[i]`` is the cosine of item ``ids[i]`` with the axis; ``rho_ranked`` is 1 when the axis orders
    the ranked items as they were given.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["tiny", "small", "big", "huge", "odd"], [[-2, 0], [-1, 0.5], [1, 0.5], [2, 0], [0, 3]])
    >>> a = rank_axis_space(space, ["tiny", "small", "big"])
    >>> a.ranked, a.ids, round(a.rho_ranked, 6), a.significance, a.saved
    (('tiny', 'small', 'big'), ['tiny', 'small', 'big', 'huge', 'odd'], 1.0, None, 0)
    """

    space: str
    ranked: tuple[str, ...]
    ids: list[str]
    scores: np.ndarray
    axis: Axis
    rho_ranked: float
    significance: AxisSignificance | None
    saved: int

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        """``{"space", "ranked", "rho_ranked", "n", "top", "bottom", "significance"?, "saved"}``."""
        high, low = _ends(self.ids, self.scores, top)
        out: dict[str, Any] = {"space": self.space, "ranked": list(self.ranked), "rho_ranked": self.rho_ranked,
                               "n": len(self.ids), "top": high, "bottom": low, "saved": self.saved}
        if self.significance is not None:
            out["significance"] = self.significance.to_dict()
        return out


def rank_axis_space(space: Space, ranked: Sequence[str], *, against: str | None = None, save: str | None = None,
                    n_random: int = 1000, seed: int = 0) -> RankAxisReport:
    """An axis from items given lowest first (ids or texts; :func:`repspace.engines.interpret.rank_axis`),
    every item scored by its cosine with it.

    ``rho_ranked`` is Spearman's ρ between the given items' scores and their order. ``against``: a numeric
    metadata field the scores are tested against random directions. ``save``: each item's score into its
    metadata under that key.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=2, metric="l2")
    >>> _ = space.add(["tiny", "small", "big", "huge", "odd"], [[-2, 0], [-1, 0.5], [1, 0.5], [2, 0], [0, 3]])
    >>> a = rank_axis_space(space, ["small", "big"], save="size")
    >>> round(a.rho_ranked, 6), a.to_dict(top=1)["top"], a.saved
    (1.0, [{'id': 'huge', 'score': 1.0}], 5)
    """
    from repspace.engines.interpret import rank_axis, rank_correlation

    space.metric.require_vector_space("a rank axis (a direction between ranked items)")
    if isinstance(ranked, str):
        raise InputError("ranked must be a sequence of ids or texts, not one string")
    ranked = [r for r in ranked if r.strip()]
    if len(ranked) < 2:
        raise InputError(f"a rank axis needs at least 2 ranked items, got {len(ranked)}")
    if save is not None and not save.strip():
        raise InputError("--save needs a metadata key")
    X_ranked = pole_vectors(space, ranked)
    order = np.arange(1, len(ranked) + 1, dtype=np.float64)
    ax = rank_axis(X_ranked, order)
    rho = rank_correlation(ax, X_ranked, order)
    generation = space.info().generation
    snap = space.snapshot()
    scores, significance, saved = score_axis(space, ax, snap, generation, against=against, save=save,
                                             n_random=n_random, seed=seed)
    return RankAxisReport(space.name, tuple(ranked), list(snap.ids), scores, ax, float(rho), significance, saved)
