"""Model-update compatibility: the two inequality criteria of Shen et al. (2020) for new queries on an old index.

Shen, Xiong, Xia and Soatto, *Towards Backward-Compatible Representation Learning* (CVPR 2020; the criteria CoReS,
S055, and the d-simplex work, S261, test their models with) call a new model ``φ_new`` compatible with an old one
``φ_old`` when its queries can search the gallery the old model indexed:

strict (per-pair) criterion, their Eq. 1
    for every query ``i`` and gallery item ``j``: ``d(φ_new(x_i), φ_old(x_j)) ≤ d(φ_old(x_i), φ_old(x_j))``
    when ``j`` is relevant to ``i``, and ``≥`` when it is not. Here with cosine similarity ``s`` (the distance
    of unit vectors is a decreasing function of it): ``s(new q, old g) ≥ s(old q, old g)`` for relevant pairs,
    ``≤`` for the others. :func:`pair_criterion` counts the share of pairs that satisfy each side
    (``relevant_closer``, ``irrelevant_farther``; cosines equal to rounding, :data:`TIE_EPS`, satisfy both);
    ``strict`` holds only when both shares are 1.
empirical compatibility criterion, their Eq. 2
    ``M(φ_new^q, φ_old^g) > M(φ_old^q, φ_old^g)``: a retrieval metric ``M`` (here nDCG@10, mAP or top-1) of new
    queries against the old index beats the old model's own. With the new model re-indexed (``M_new``) they
    also report the *update gain* ``(M_cross − M_old) / (M_new − M_old)``: the share of the re-indexing gain
    that the compatible queries already deliver without re-indexing.

This engine takes the metric values from its caller (the retrieval scorer lives in another engine) and computes
the per-pair criterion itself, in blocks of queries. :func:`label_retrieval` scores same-label retrieval (mAP,
top-1) for labelled items, as BCT and CoReS evaluate.

Examples
--------
>>> import numpy as np
>>> g = np.eye(3)
>>> q_old = np.array([[1.0, 1.0, 0.0]])
>>> q_new = np.array([[1.0, 0.2, 0.0]])  # nearer to g[0], its relevant item; farther from g[1]
>>> p = pair_criterion(q_old, q_new, g, np.array([[1, 0, 0]]))
>>> p.relevant_closer, p.irrelevant_farther, p.strict
(1.0, 1.0, True)
>>> c = compatibility(0.40, 0.45, p, new=0.50)
>>> c.compatible, round(c.update_gain, 2)
(True, 0.5)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, unit_rows
from repspace.core.errors import InputError

__all__ = ["Compatibility", "LabelRetrieval", "PairCriterion", "compatibility", "label_retrieval", "pair_criterion"]

#: Query rows per block of the pair criterion and of label retrieval (a block × gallery matrix in float64).
QUERY_BLOCK = 256
#: Two cosines closer than this times √d count as equal in the per-pair criterion (both sides hold): a few
#: float64 roundings of a d-term dot product, so that the same queries computed in another order (another BLAS
#: kernel, a rotation and back) meet every inequality as the unchanged ones do.
TIE_EPS = 8 * float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class PairCriterion:
    """Shen et al.'s strict criterion counted over query–gallery pairs.

    ``relevant_closer``: share of relevant pairs with ``s(new q, old g) ≥ s(old q, old g)``;
    ``irrelevant_farther``: share of the other pairs with ``s(new q, old g) ≤ s(old q, old g)`` (1.0 where there
    is no such pair); ``strict``: both are 1.

    Examples
    --------
    >>> g = np.eye(2)
    >>> pair_criterion(g, g[::-1], g, np.eye(2)).to_dict()["relevant_closer"]
    0.0
    """

    relevant_closer: float
    irrelevant_farther: float
    n_relevant: int
    n_irrelevant: int
    strict: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON names of docs/METRICS.md (field names as keys)."""
        return asdict(self)


def _relevance(relevant: Any, shape: tuple[int, int]) -> np.ndarray:
    rel = np.asarray(relevant)
    if rel.shape != shape:
        raise InputError(f"the relevance matrix must be queries × gallery {shape}, not {rel.shape}")
    return rel > 0


def pair_criterion(queries_old: Any, queries_new: Any, gallery_old: Any, relevant: Any) -> PairCriterion:
    """Count Shen et al.'s strict (per-pair) compatibility criterion with cosine similarity.

    Parameters
    ----------
    queries_old, queries_new : (n_q, d) arrays
        The same queries embedded by the old model and by the new one, the latter already in the old index's
        space (mapped, or through a compatibility head): both are compared with ``gallery_old``.
    gallery_old : (n_g, d) array
        The old index.
    relevant : (n_q, n_g) array
        Relevance (any value above 0 is relevant: a qrels gain or a same-label indicator).

    Returns
    -------
    PairCriterion

    Examples
    --------
    >>> g = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> p = pair_criterion([[1.0, 1.0]], [[0.0, 1.0]], g, [[1, 0]])  # the new query left its relevant item
    >>> p.relevant_closer, p.irrelevant_farther, p.n_relevant, p.n_irrelevant
    (0.0, 0.0, 1, 1)
    """
    qo, qn = as_matrix(queries_old, "queries_old"), as_matrix(queries_new, "queries_new")
    g = as_matrix(gallery_old, "gallery_old")
    if qo.shape != qn.shape or qo.shape[1] != g.shape[1]:
        raise InputError(f"old queries {qo.shape}, new queries {qn.shape} and the old gallery {g.shape} must have "
                         "one dimension and the same queries")
    rel = _relevance(relevant, (len(qo), len(g)))
    gu = unit_rows(g)
    tie = TIE_EPS * np.sqrt(g.shape[1])  # cosines this close are equal: the rounding of a float64 dot product
    closer = farther = 0
    for s in range(0, len(qo), QUERY_BLOCK):
        block = slice(s, s + QUERY_BLOCK)
        s_old, s_new = unit_rows(qo[block]) @ gu.T, unit_rows(qn[block]) @ gu.T
        r = rel[block]
        closer += int(np.count_nonzero((s_new >= s_old - tie) & r))
        farther += int(np.count_nonzero((s_new <= s_old + tie) & ~r))
    n_rel = int(np.count_nonzero(rel))
    n_irr = rel.size - n_rel
    rc = closer / n_rel if n_rel else 1.0
    irf = farther / n_irr if n_irr else 1.0
    return PairCriterion(rc, irf, n_rel, n_irr, closer == n_rel and farther == n_irr)


@dataclass(frozen=True)
class Compatibility:
    """Both criteria for one new model (or one map of it) against the old index.

    ``old``: M of old queries on the old index; ``cross``: M of new queries on the old index; ``new``: M of the
    new model re-indexed (None when not measured); ``compatible``: the empirical criterion ``cross > old``;
    ``update_gain``: ``(cross − old) / (new − old)`` (None without ``new`` or when ``new == old``); ``pairs``: the
    strict criterion's counts.

    Examples
    --------
    >>> p = PairCriterion(0.5, 0.9, 4, 10, False)
    >>> sorted(compatibility(0.3, 0.2, p).to_dict())[:4]
    ['compatible', 'cross', 'irrelevant_farther', 'metric']
    """

    metric: str
    old: float
    cross: float
    new: float | None
    compatible: bool
    update_gain: float | None
    pairs: PairCriterion

    def to_dict(self) -> dict[str, Any]:
        """``{"metric", "old", "cross", "new", "compatible", "update_gain"}`` and the pair criterion's keys."""
        return {"metric": self.metric, "old": self.old, "cross": self.cross, "new": self.new,
                "compatible": self.compatible, "update_gain": self.update_gain, **self.pairs.to_dict()}


def compatibility(old: float, cross: float, pairs: PairCriterion, *, new: float | None = None,
                  metric: str = "ndcg_at_10") -> Compatibility:
    """Shen et al.'s empirical criterion ``cross > old`` and the update gain, beside the per-pair criterion.

    Parameters
    ----------
    old, cross : float
        The retrieval metric of old queries and of new queries, both on the old index.
    pairs : PairCriterion
        From :func:`pair_criterion` on the same queries.
    new : float, optional
        The metric of the new model re-indexed.
    metric : str
        The metric's name (reported).

    Examples
    --------
    >>> p = PairCriterion(1.0, 1.0, 1, 1, True)
    >>> c = compatibility(0.5, 0.4, p, new=0.7)
    >>> c.compatible, round(c.update_gain, 2)
    (False, -0.5)
    """
    gain = None if new is None or new == old else (cross - old) / (new - old)
    return Compatibility(metric, float(old), float(cross), None if new is None else float(new), bool(cross > old),
                         None if gain is None else float(gain), pairs)


@dataclass(frozen=True)
class LabelRetrieval:
    """Same-label retrieval of queries in a gallery: mean average precision and top-1 accuracy (cosine).

    Queries with no same-label gallery item are left out of both means (``n_scored`` counts the rest).

    Examples
    --------
    >>> label_retrieval(np.eye(2), np.eye(2), ["a", "b"], ["a", "b"]).to_dict()
    {'map': 1.0, 'top1': 1.0, 'n_scored': 2}
    """

    map: float
    top1: float
    n_scored: int

    def to_dict(self) -> dict[str, Any]:
        """``{"map", "top1", "n_scored"}``."""
        return asdict(self)


def label_retrieval(queries: Any, gallery: Any, query_labels: Any, gallery_labels: Any) -> LabelRetrieval:
    """Rank the gallery for each query by cosine and score it with same-label relevance (mAP and top-1).

    Ties are broken by gallery row (the lower row first), as a stable sort does.

    Examples
    --------
    >>> g = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    >>> r = label_retrieval([[1.0, 0.05]], g, ["x"], ["y", "x", "x"])
    >>> round(r.map, 4), r.top1  # the two x items at ranks 2 and 3: (1/2 + 2/3) / 2
    (0.5833, 0.0)
    """
    q, g = as_matrix(queries, "queries"), as_matrix(gallery, "gallery")
    if q.shape[1] != g.shape[1]:
        raise InputError(f"queries {q.shape} and gallery {g.shape} must have one dimension")
    ql, gl = np.asarray(query_labels, dtype=object), np.asarray(gallery_labels, dtype=object)
    if len(ql) != len(q) or len(gl) != len(g):
        raise InputError(f"{len(ql)} query labels for {len(q)} queries, {len(gl)} gallery labels for {len(g)} items")
    gu = unit_rows(g)
    aps: list[float] = []
    tops: list[float] = []
    for s in range(0, len(q), QUERY_BLOCK):
        scores = unit_rows(q[s:s + QUERY_BLOCK]) @ gu.T
        order = np.argsort(-scores, axis=1, kind="stable")
        for row, lab in zip(order, ql[s:s + QUERY_BLOCK].tolist(), strict=True):
            hit = gl[row] == lab
            n_rel = int(hit.sum())
            if not n_rel:
                continue
            ranks = np.flatnonzero(hit) + 1
            aps.append(float(np.mean(np.arange(1, n_rel + 1) / ranks)))
            tops.append(float(hit[0]))
    if not aps:
        raise InputError("no query has an item of its label in the gallery")
    return LabelRetrieval(float(np.mean(aps)), float(np.mean(tops)), len(aps))
