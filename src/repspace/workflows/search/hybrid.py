"""Lexical (BM25) and hybrid (BM25 fused with dense) candidates of a text query over a stored space."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.hits import SearchPlan
from repspace.engines.search.fusion import rrf, weighted_sum
from repspace.workflows.search.dense import knn
from repspace.workflows.search.lexical import ensure_lexical

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["HYBRID_POOL", "lexical_or_hybrid"]


#: Candidates each list contributes to a hybrid fusion.
HYBRID_POOL = 100


def lexical_or_hybrid(space: Space, text: str, vec: np.ndarray | None, k: int, *, where: Any, fusion: str,
                      lexical_weight: float, progress: Any, **dense: Any) -> tuple[np.ndarray, np.ndarray, SearchPlan]:
    """BM25's top ``k`` rows for ``text`` (``vec`` None), or BM25's and the dense search's top
    :data:`HYBRID_POOL` fused by RRF or a weighted sum (``fusion``); returns rows, scores and the plan.

    ``dense`` are the search's ``method``, ``ef``, ``hnsw`` and ``index`` for the dense side; ``where``
    restricts both sides. ``fusion`` and ``lexical_weight`` are checked by the caller.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from repspace import Store
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("t", dim=2)
    >>> _ = sp.add(["a", "b", "c"], [[1, 0], [0, 1], [1, 1]], texts=["red apple", "blue sky", "red sky"])
    >>> rows, scores, plan = lexical_or_hybrid(sp, "red", None, 2, where=None, fusion="rrf",
    ...                                        lexical_weight=1.0, progress=None)
    >>> sorted(rows.tolist()), plan.method
    ([0, 2], 'bm25')
    >>> rows, scores, plan = lexical_or_hybrid(sp, "red", np.array([[0.0, 1.0]]), 2, where=None, fusion="rrf",
    ...                                        lexical_weight=1.0, progress=None)
    >>> plan.method
    'hybrid (rrf: exact + bm25)'
    """

    # fusion and lexical_weight were checked by search_space before the query was embedded
    info = space.info()
    allowed = None
    n_cand = info.count
    if where is not None and (not isinstance(where, str) or where.strip()):
        matches = space.filter_rows(where)
        n_cand = len(matches)
        allowed = np.zeros(info.next_row, dtype=bool)
        allowed[matches] = True
    lex = ensure_lexical(space)
    k = min(k, max(n_cand, 1))  # never more results than items (k = 10**9 allocated 10**9 rows)
    pool = k if vec is None else max(k, HYBRID_POOL)
    l_scores, l_rows = lex.search([text], pool, allowed=allowed)
    if vec is None:
        return l_rows[0], l_scores[0], SearchPlan("bm25", n_cand, info.count, reason="BM25 over the stored texts")
    d = knn(space, vec, max(k, HYBRID_POOL), where=where, progress=progress, **dense)
    if fusion == "rrf":
        f_scores, f_rows = rrf([d.rows[0], l_rows[0]], k, weights=[1.0, lexical_weight])
    else:
        dense_scores = d.scores[0] if space.metric.higher_is_better else -d.scores[0]  # larger = nearer for the sum
        f_scores, f_rows = weighted_sum([(dense_scores, d.rows[0]), (l_scores[0], l_rows[0])], k,
                                        weights=[1.0, lexical_weight])
    plan = SearchPlan(f"hybrid ({fusion}: {d.plan.method} + bm25)", d.plan.candidates, d.plan.total, ef=d.plan.ef,
                      reason=f"{d.plan.reason}; fused with BM25, lexical weight {lexical_weight:g}",
                      index_action=d.plan.index_action)
    return f_rows, f_scores.astype(np.float32), plan
