"""``repspace index prune``: drop the items of lowest query-agnostic quality, into a new space or as a list.

The scores are :func:`repspace.engines.search.pruning.quality_scores` (S179's static
pruning with classifier-free proxies); the stored space is never changed: the kept
items are copied whole (ids, vectors, texts, metadata) into a new space ``out``, or,
without ``out``, the result names the dropped ids for the caller to act on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_scalar
from repspace.core.progress import Progress
from repspace.engines.search.pruning import MAX_DROP, kept_rows, quality_scores
from repspace.workflows.new_space import refuse_existing, write_new_space

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["PruneResult", "prune_space"]


@dataclass(frozen=True)
class PruneResult:
    """What a pruning kept and dropped.

    ``space`` the pruned space, ``by`` the score, ``drop`` the share asked for, ``items`` the count
    before, ``kept`` after, ``dropped_ids`` the ids that went (lowest score first), ``out`` the new
    space's name (``None``: nothing written), ``threshold`` the lowest score kept.

    Examples
    --------
    >>> PruneResult("docs", "random", 0.5, 2, 1, ("b",), None, 0.7).to_dict()["dropped_ids"]
    ['b']
    """

    space: str
    by: str
    drop: float
    items: int
    kept: int
    dropped_ids: tuple[str, ...]
    out: str | None
    threshold: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (``dropped_ids`` as a list)."""
        d = asdict(self)
        d["dropped_ids"] = list(self.dropped_ids)
        return d


def prune_space(space: Space, drop: float, by: str = "hubness", *, out: str | None = None, k: int = 10,
                seed: int = 0, progress: Progress | None = None) -> PruneResult:
    """Score every item of ``space`` without a query and drop the ``drop`` share of lowest score.

    Parameters
    ----------
    space : the space to prune (not changed)
    drop : share of items to drop, in [0, 0.99]
    by : ``norm``, ``centroid``, ``hubness`` or ``random`` (:func:`~repspace.engines.search.pruning.quality_scores`)
    out : name of a new space that receives the kept items (refused if it exists); ``None``: write nothing
    k, seed : the neighbours of ``hubness``, the seed of ``random``

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_space
    >>> sp = example_space(vectors=np.array([[1.0, 0.0], [0.9, 0.1], [0.8, -0.1], [-1.0, 0.2]]))
    >>> res = prune_space(sp, 0.25, "centroid", out="pruned")
    >>> res.dropped_ids, res.kept, sp.store.space("pruned").info().count
    (('i3',), 3, 3)
    """
    check_scalar(drop, "--drop", float, low=0, high=MAX_DROP)
    if out is not None:
        refuse_existing(space.store, out)
    rows, vectors = space.rows_and_vectors()
    scores = quality_scores(vectors, by, metric=space.metric, k=k, seed=seed)
    keep = kept_rows(scores, drop)
    gone = np.setdiff1d(np.arange(len(rows)), keep)
    gone = gone[np.lexsort((gone, scores[gone]))]  # lowest score first
    records = space.records(rows[gone]) if len(gone) else {}
    dropped = tuple(records[int(r)][0] for r in rows[gone])
    if out is not None:
        info = space.info()
        kept = rows[keep]

        def batch(lo: int, hi: int) -> tuple[list[str], np.ndarray, list[str | None], list[dict[str, Any]]]:
            part = kept[lo:hi]
            rec = space.records(part)
            return ([rec[int(r)][0] for r in part], vectors[keep[lo:hi]], [rec[int(r)][1] for r in part],
                    [rec[int(r)][2] for r in part])

        write_new_space(space.store, out, len(kept), batch, dim=info.dim, metric=space.metric.value,
                        provenance={**dict(info.provenance or {}), "pruned_from": space.name, "pruned_by": by,
                                    "pruned_drop": float(drop)},
                        dtype=info.dtype, progress=progress)
    return PruneResult(space.name, by, float(drop), len(rows), len(keep), dropped, out,
                       float(scores[keep].min()) if len(keep) else None)
