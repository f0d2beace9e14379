"""Subspace-restricted alignment between two stored spaces, beside the full-space map, on held-out pairs.

As :func:`repspace.workflows.align.align_spaces` (items joined on id, shuffled
with ``seed``, split into pairs to fit on and held-out pairs to score on), but
each map is a :class:`~repspace.engines.align.SubspaceMap`: both spaces projected
on their top-``r`` principal directions of the fitting pairs (one map per rank
asked for) or on directions given, a Procrustes or ridge map between the
projections, carried back into the target's full space. The full-space map of
the same kind is fitted and scored on the same split beside them.

Examples
--------
>>> from repspace.store import example_pair
>>> a, b = example_pair(300, 300, 8)
>>> r = subspace_align_spaces(a.store, "a", "b", ranks=[2, 8], test=100)
>>> [s["rank_x"] for s in r.subspaces], r.subspaces[-1]["plain"]["top1"], r.full.top1
([2, 8], 1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_choice, positive_int
from repspace.core.errors import InputError
from repspace.engines.align import SUBSPACE_MAPS, MapScores, Procrustes, RidgeMap, SubspaceMap, score_map
from repspace.workflows.align import split_pairs
from repspace.workflows.compare import joined

if TYPE_CHECKING:
    from repspace.core.store import Store

__all__ = ["SubspaceAlignment", "subspace_align_spaces"]


@dataclass(frozen=True)
class SubspaceAlignment:
    """Maps restricted to subspaces and the full-space map, scored on the same held-out pairs.

    ``subspaces`` holds one dict per restriction: ``rank_x``, ``rank_y`` (the subspaces' dimensions),
    ``variance_x``, ``variance_y`` (share of each side's fitting-pair variance inside them), ``plain`` and
    ``csls`` (:class:`~repspace.engines.align.MapScores` as dicts, in the target's full space).

    Examples
    --------
    >>> from repspace.store import example_pair
    >>> a, b = example_pair(120, 120, 4)
    >>> sorted(subspace_align_spaces(a.store, "a", "b", ranks=[1], test=20).to_dict())[:4]
    ['full', 'full_csls', 'method', 'n_shared']
    """

    source: str
    target: str
    method: str
    n_shared: int
    n_train: int
    n_test: int
    full: MapScores
    full_csls: MapScores
    subspaces: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (METRICS.md, "Subspace-restricted alignment")."""
        return {"source": self.source, "target": self.target, "method": self.method, "n_shared": self.n_shared,
                "n_train": self.n_train, "n_test": self.n_test, "full": self.full.to_dict(),
                "full_csls": self.full_csls.to_dict(), "subspaces": self.subspaces}


def subspace_align_spaces(store: Store, source: str, target: str, *, ranks: Sequence[int] = (),
                          method: str = "procrustes", basis_x: Any = None, basis_y: Any = None,
                          pairs: int | None = None, test: int | None = None, seed: int = 0) -> SubspaceAlignment:
    """Fit maps between projections of ``source`` and ``target`` on subspaces; score them beside the full map.

    Parameters
    ----------
    store : Store
    source, target : str
    ranks : sequence of int
        One restricted map per rank: the top-``r`` principal directions of each side's fitting pairs.
    method : ``procrustes`` or ``ridge``
    basis_x, basis_y : (k, d) arrays, optional
        Given directions (rows) of the source and target; both together add one more restricted map.
    pairs, test : int, optional
        As :func:`repspace.workflows.align.align_spaces`.
    seed : int
        Of the split.

    Examples
    --------
    Given directions: the first two coordinates of each side.

    >>> from repspace.store import example_pair
    >>> a, b = example_pair(200, 200, 4)
    >>> r = subspace_align_spaces(a.store, "a", "b", basis_x=np.eye(4)[:2], basis_y=np.eye(4)[:2], test=50)
    >>> r.subspaces[0]["given"], r.subspaces[0]["rank_x"]
    (True, 2)
    """
    check_choice(method, "method", SUBSPACE_MAPS)
    rank_list = [positive_int(r, "rank") for r in ranks]
    if (basis_x is None) != (basis_y is None):
        raise InputError("give directions for both spaces (basis_x and basis_y), or neither")
    if not rank_list and basis_x is None:
        raise InputError("nothing to restrict to: give at least one rank or both bases")
    src, tgt = store.space(source), store.space(target)
    for sp in (src, tgt):
        sp.metric.require_vector_space(f"aligning {sp.name!r} on subspaces")
    j = joined(src, tgt)
    n = len(j.ids)
    train, held = split_pairs(n, source, target, pairs=pairs, test=test, seed=seed, min_train=3)
    n_train, n_test = len(train), len(held)
    x, y = j.x.astype(np.float64), j.y.astype(np.float64)
    full = (Procrustes() if method == "procrustes" else RidgeMap()).fit(x[train], y[train])
    fa = full.transform(x[held])
    models = [(SubspaceMap(rank=r, method=method), False) for r in rank_list]
    if basis_x is not None:
        models.append((SubspaceMap(method=method, basis_x=basis_x, basis_y=basis_y), True))
    rows = []
    for model, given in models:
        model.fit(x[train], y[train])
        a = model.transform(x[held])
        rows.append({"given": given, "rank_x": int(model.basis_x_.shape[1]), "rank_y": int(model.basis_y_.shape[1]),
                     "variance_x": float(model.variance_x_), "variance_y": float(model.variance_y_),
                     "plain": score_map(a, y[held]).to_dict(), "csls": score_map(a, y[held], csls=True).to_dict()})
    return SubspaceAlignment(source, target, method, n, n_train, n_test, score_map(fa, y[held]),
                             score_map(fa, y[held], csls=True), rows)
