"""Cross-domain similarity local scaling (CSLS), shared by hubness-reduced search and map scoring.

Defined once here because two engines need it: :mod:`repspace.engines.search.hubness`
(query-time hubness reduction) and :mod:`repspace.engines.align.scores` (retrieval
scores of a map, Conneau et al. 2018).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.errors import InputError

__all__ = ["broadcast_terms", "csls"]


def broadcast_terms(mat: Any, per_q: Any, per_b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``mat`` as (m, n), ``per_q`` as a column (m, 1), ``per_b`` as a row (1, n) or as given (m, n)."""
    m = np.atleast_2d(np.asarray(mat, np.float64))
    a = np.asarray(per_q, np.float64).reshape(-1, 1)
    b = np.asarray(per_b, np.float64)
    b = b[None, :] if b.ndim == 1 else b
    try:
        np.broadcast_shapes(m.shape, a.shape, b.shape)
    except ValueError:
        raise InputError(f"shapes do not fit: scores {m.shape}, per-query {np.shape(per_q)}, "
                         f"per-base {np.shape(per_b)}") from None
    return m, a, b


def csls(sim: Any, r_q: Any, r_b: Any) -> np.ndarray:
    """Cross-domain similarity local scaling: ``2·sim − r_q − r_b``.

    Parameters
    ----------
    sim : (m, n) array
        Similarities of queries to base items.
    r_q : (m,) array
        Each query's mean similarity to its ``kappa`` nearest base items.
    r_b : (n,) or (m, n) array
        Each base item's mean similarity to its ``kappa`` nearest neighbours in the
        base; (m, n) when gathered per entry (a candidate list per query).

    Examples
    --------
    A hub (base item 0, close to everything) loses against a closer-knit item:

    >>> csls([[0.9, 0.85]], r_q=[0.8], r_b=[0.9, 0.6]).round(2).tolist()
    [[0.1, 0.3]]
    """
    sim, rq, rb = broadcast_terms(sim, r_q, r_b)
    return 2.0 * sim - rq - rb
