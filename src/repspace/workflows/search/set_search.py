"""Set queries over a stored space (SetCSE): items near every ``all_of`` example and far from the ``none_of`` ones.

:func:`set_search` reads the examples' vectors, makes the one query vector ``w`` whose inner product with a unit
item is the SetCSE score (:func:`repspace.engines.search.setquery.set_query_vector`), and searches it:

* a cosine space searches ``w`` as any vector (:func:`~repspace.workflows.search.knn`: exact, HNSW, an index
  spec, a filter) and scales each cosine by ``|w|``, which gives the score itself;
* another vector metric (ip, l2) scores every live item exactly by the cosine the definition names (the space's
  indexes measure another similarity); a hyperbolic space is refused.

The examples are left out of the hits. The answer is the search's own :class:`~repspace.core.hits.SearchResult`
(hits and plan), so the CLI's ``--json`` and the HTTP answer have the shape of a search's.

Examples
--------
>>> from repspace.store import example_space
>>> sp = example_space(vectors=[[1.0, 0.0], [0.0, 1.0], [0.7, 0.7], [0.9, -0.4], [-1.0, 0.1]])
>>> res = set_search(sp, all_of=["i0"], none_of=["i1"], k=2)
>>> [(h.id, round(h.score, 3)) for h in res], res.plan.method
([('i3', 1.32), ('i2', 0.0)], 'exact')
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.arrays import unit_rows
from repspace.core.errors import InputError
from repspace.core.hits import SearchPlan, SearchResult
from repspace.core.progress import Progress
from repspace.core.space import Metric
from repspace.engines.search.setquery import set_query_vector
from repspace.workflows.search.hits import hits_for
from repspace.workflows.search.dense import knn
from repspace.workflows.search.set_request import SetQuery

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["set_search"]


def _describe(query: SetQuery) -> str:
    def n(count: int, side: str) -> str:
        return f"{count} {side} example{'s' if count != 1 else ''}"

    return (f"SetCSE: summed cosine to {n(len(query.all_of), 'all-of')} minus summed cosine to "
            f"{n(len(query.none_of), 'none-of')}")


def _cosine_search(space: Space, w: np.ndarray, query: SetQuery, k_ask: int,
                   progress: Progress | None) -> tuple[np.ndarray, np.ndarray, SearchPlan]:
    """``w`` searched as a vector of a cosine space, each cosine scaled by ``|w|`` (the SetCSE score)."""
    result = knn(space, w[None, :].astype(np.float32), k_ask, where=query.where, method=query.method, ef=query.ef,
                 index=query.index, progress=progress)
    scores = result.scores[0].astype(np.float64) * float(np.linalg.norm(w))
    return result.rows[0], scores, result.plan


def _exact_cosine(space: Space, w: np.ndarray, query: SetQuery, k_ask: int) -> tuple[np.ndarray, np.ndarray,
                                                                                     SearchPlan]:
    """Every live item (of the filter's matches) scored by ``<x / |x|, w>``, the best ``k_ask`` first."""
    if query.method != "auto" and query.method != "exact" or query.index is not None:
        how = query.index if query.index is not None else query.method
        raise InputError(f"a set query scores cosine similarity; this {space.metric.value} space's indexes measure "
                         f"another, so it is scored exactly: {how!s} needs a cosine space")
    rows, vectors = space.rows_and_vectors()
    total = len(rows)
    if query.where is not None and (not isinstance(query.where, str) or query.where.strip()):
        keep = np.isin(rows, space.filter_rows(query.where))
        rows, vectors = rows[keep], vectors[keep]
    scores = unit_rows(vectors, np.float64) @ w
    order = np.lexsort((rows, -scores))[:k_ask]
    plan = SearchPlan("exact", len(rows), total,
                      reason=f"{space.metric.value} space: cosine scored exactly over every item")
    return rows[order], scores[order], plan


def set_search(
    space: Space,
    query: SetQuery | None = None,
    *,
    all_of: Any = (),
    none_of: Any = (),
    k: int = 10,
    progress: Progress | None = None,
    **options: Any,
) -> SearchResult:
    """Rank a space's items by summed cosine to the ``all_of`` examples minus that to the ``none_of`` ones.

    SetCSE's operation series ``space ∩ all_of \\ none_of`` (Liu 2024; see
    :mod:`repspace.engines.search.setquery` for the definition and where it differs from the paper).

    Parameters
    ----------
    space : Space
    query : SetQuery, optional
        The whole query (then no other keyword).
    all_of, none_of : sequences of stored ids
        The examples items should be near, and those they should not (either may be empty, not both).
    k : int
        How many results; the examples themselves are never among them.
    **options
        The other fields of :class:`~repspace.workflows.search.set_request.SetQuery`: ``where``, ``method``,
        ``index``, ``ef``.

    Returns
    -------
    SearchResult
        The hits, best first, with their SetCSE scores (at most the number of examples in magnitude), and the plan (its reason names the
        examples).

    Raises
    ------
    InputError
        A rule of :class:`SetQuery`; an example that is all zeros; examples that cancel out; a hyperbolic space.
    NotFoundError
        An example id that is not in the space.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sp = example_space(vectors=[[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6]])
    >>> [h.id for h in set_search(sp, all_of=["i0", "i1"], k=2)]  # nearest to both: the two between them
    ['i2', 'i3']
    """
    if query is not None:
        if all_of or none_of or options or k != 10:
            raise InputError("give a SetQuery or set-query options, not both")
    else:
        query = SetQuery.of(all_of, none_of, k, **options)
    space.metric.require_vector_space("a set query")
    examples = space.vectors_of(query.examples)
    n_pos = len(query.all_of)
    w = set_query_vector(examples[:n_pos], examples[n_pos:], dim=space.dim)
    k_ask = query.k + len(query.examples)  # the examples may be among the best: asked for, then left out
    if space.metric is Metric.COSINE:
        rows, scores, plan = _cosine_search(space, w, query, k_ask, progress)
    else:
        rows, scores, plan = _exact_cosine(space, w, query, k_ask)
    ids = set(query.examples)
    hits = [h for h in hits_for(space, rows, scores) if h.id not in ids][: query.k]
    plan = dataclasses.replace(plan, reason=f"{_describe(query)}; {plan.reason}" if plan.reason else _describe(query))
    return SearchResult(tuple(hits), plan)
