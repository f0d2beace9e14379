"""The checks of a search's query vectors: refused with one clear line, or shown sound by one number.

:func:`check_queries` checks any array-like (shape, numbers float32 holds, finiteness);
:func:`plain_query` lets the loop of one float32 query per call through after one dot product.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.space import Metric
from repspace.core.store.validate import lossy_in_float32


def check_queries(queries: Any, dim: int) -> np.ndarray:
    """Query vectors as a C-contiguous float32 ``(m, dim)`` array, or one :class:`InputError` line saying
    what is wrong (not numeric, another dimension, NaN or inf, integers float32 cannot hold)."""
    if isinstance(queries, np.ndarray) and queries.dtype == np.float32 and queries.ndim in (1, 2):
        # Already float32 (a search loop's query): only the shape and finiteness can be wrong.
        q = queries[None, :] if queries.ndim == 1 else queries
        if q.shape[1] != dim:
            raise InputError(f"query vectors have shape {q.shape}; this space has dimension {dim}")
        if not np.isfinite(q).all():
            raise InputError("query vector has NaN or inf")
        return np.ascontiguousarray(q)
    try:
        raw = np.asarray(queries)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow becomes inf, refused below
            q = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError):
        raise InputError("query vectors are not numeric") from None
    if raw.dtype != np.float32 and np.issubdtype(raw.dtype, np.integer) and lossy_in_float32(raw).any():
        raise InputError("query vector has integers float32 cannot hold exactly (beyond 2**24): "
                         "convert them to floats first")
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != dim:
        raise InputError(f"query vectors have shape {q.shape}; this space has dimension {dim}")
    if not np.isfinite(q).all():
        raise InputError("query vector has NaN or inf" if not np.isfinite(raw.astype(np.float64)).all()
                         else "query vector has values beyond float32 range")
    return np.ascontiguousarray(q)


#: A float32 query whose squared length lies in this range is checked by that one number (finite, with a
#: direction, normalisable): far from float32's underflow and overflow, where a sum order could matter.
PLAIN_LENGTH2 = (1e-30, 1e30)


def plain_query(vec: Any, dim: int, metric: Metric) -> np.ndarray | None:
    """The query as a (1, dim) float32 array when one dot product shows it sound, else None (then the
    full checks run and name what is wrong).

    A NaN or an infinity makes the squared length NaN or infinite, so a length in
    :data:`PLAIN_LENGTH2` proves the query finite, and for cosine not zero and normalisable
    (what :func:`check_query_direction` and the query checks refuse).
    """
    if type(vec) is not np.ndarray or vec.dtype != np.float32 or vec.shape[-1] != dim or vec.size != dim:
        return None
    q = vec.reshape(1, dim)
    s = float(np.dot(q[0], q[0]))
    lo, hi = PLAIN_LENGTH2
    if s < hi and (s > lo or (s == 0.0 and metric is not Metric.COSINE)):
        return q
    return None
