"""Exact top-k search over sparse vectors by inner product (or cosine), from an inverted index.

:class:`SparseIndex` holds the rows as they are (CSR) and an inverted index of them (the CSC
copy: for each feature, the rows holding it, ascending, with their weights). A query's score
for a row is ``Σ_j q_j x_j`` over the features they share, the same number as
``scipy.sparse``'s ``X @ q``; the top ``k`` is returned by score, equal scores by row, as the
dense exact search does.

Exact, yet not every posting is read: with non-negative weights the search is MaxScore's
(Turtle & Flood 1995) in term-at-a-time form. The query's features are taken by their largest
possible contribution ``u_j = q_j · max_r x_rj``. A first lower bound θ of the k-th score comes
from scoring exactly the rows with the largest weights in the first features' posting lists.
Features are then accumulated in that order until the bounds of those left, summed, fall below
θ: a row none of them has touched scores less than θ and cannot be in the top k, so the rest of
the features only update the rows already touched (looked up by binary search in their posting
lists, or scanned when that is cheaper), and the rows whose partial score plus what is left
cannot reach θ are dropped as θ rises. The survivors are scored exactly (their CSR rows times
the query, in float64, the order ``scipy.sparse`` sums in). With a negative weight in the rows
or the query no such bound holds, and every row is scored (``X @ q``).

Cosine: rows are normalised when the index is built (a row with no non-zero weight scores 0),
not in the store; the query is normalised when it is searched.

Examples
--------
>>> from repspace.core.sparse import SparseRows
>>> rows = SparseRows.from_pairs([([0, 2], [1.0, 1.0]), ([1], [3.0]), ([2], [2.0])], n_features=3)
>>> index = SparseIndex(rows)
>>> scores, found = index.search([2], [1.0], k=2)
>>> found.tolist(), scores.tolist()
([2, 0], [2.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.sparse import SparseRows

__all__ = ["SparseIndex", "SparseQuery", "sparse_query", "top_k_by_score"]

#: Relative slack on every pruning test: a row is dropped only when its bound is below θ by more than
#: the rounding of the float32 weights of the inverted index (normalised for cosine) could explain, so
#: pruning never loses a row that ties the k-th score.
PRUNE_SLACK = 1e-5
#: Phase 2 stops once the survivors hold at most this many entries: scoring their rows whole (one
#: scipy product) then costs less than the per-feature lookups left (each a few numpy calls).
EXACT_RESCORE_ENTRIES = 20_000
#: Rows sampled per feature (times k) for the first lower bound of the k-th score.
SAMPLE_PER_K = 2
#: Features whose postings seed that sample, at most.
SAMPLE_FEATURES = 8


@dataclass(frozen=True)
class SparseQuery:
    """A sparse query: feature ids (int64, distinct) and their weights (float64, non-zero).

    Examples
    --------
    >>> q = sparse_query([5, 2], [0.5, 1.0], n_features=8)
    >>> q.indices.tolist(), q.values.tolist()
    ([2, 5], [1.0, 0.5])
    """

    indices: np.ndarray
    values: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """``{"indices": [...], "values": [...]}``."""
        return {"indices": self.indices.tolist(), "values": self.values.tolist()}


def sparse_query(indices: Sequence[int] | np.ndarray, values: Sequence[float] | np.ndarray,
                 n_features: int) -> SparseQuery:
    """A checked query: ids within the vocabulary, each once, finite weights; zeros dropped.

    Raises :class:`InputError` on a bad id or weight, and when no weight is non-zero (such a query
    matches nothing).

    Examples
    --------
    >>> sparse_query([3, 1], [0.5, 0.0], n_features=4).indices.tolist()
    [3]
    >>> try:
    ...     sparse_query([9], [1.0], n_features=4)
    ... except InputError as e:
    ...     print(e)
    sparse query feature 9 is beyond the vocabulary of 4 features (0 to 3)
    """
    idx = np.asarray(indices)
    val = np.asarray(values, dtype=np.float64).reshape(-1) if len(values) else np.zeros(0)
    if idx.size and not np.issubdtype(idx.dtype, np.integer):
        raise InputError("sparse query feature ids must be integers")
    idx = idx.astype(np.int64)
    if idx.shape != val.shape or idx.ndim != 1:
        raise InputError(f"the sparse query has {idx.size} feature ids and {val.size} weights")
    if ((idx < 0) | (idx >= n_features)).any():
        bad = int(idx[(idx < 0) | (idx >= n_features)][0])
        raise InputError(f"sparse query feature {bad} is beyond the vocabulary of {n_features} features "
                         f"(0 to {n_features - 1})")
    if not np.isfinite(val).all():
        raise InputError("the sparse query has a NaN or infinite weight")
    order = np.argsort(idx, kind="stable")
    idx, val = idx[order], val[order]
    if (idx[1:] == idx[:-1]).any():
        raise InputError(f"sparse query feature {int(idx[1:][idx[1:] == idx[:-1]][0])} is given twice")
    keep = val != 0
    if not keep.any():
        raise InputError("the sparse query has no non-zero weight: it would match nothing")
    return SparseQuery(idx[keep], val[keep])


def top_k_by_score(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest scores, by score then position (ties to the lower position).

    Examples
    --------
    >>> top_k_by_score(np.array([0.5, 2.0, 0.5, 1.0, 0.5]), 3).tolist()
    [1, 3, 0]
    """
    n = len(scores)
    if k >= n:
        return np.lexsort((np.arange(n), -scores))
    kth = np.partition(scores, n - k)[n - k]
    above = np.flatnonzero(scores > kth)
    sel = np.concatenate([above, np.flatnonzero(scores == kth)[: k - len(above)]])
    return sel[np.lexsort((sel, -scores[sel]))]


class SparseIndex:
    """Sparse rows and their inverted index, searched exactly by inner product or cosine.

    Parameters
    ----------
    rows : SparseRows
        The rows (positions ``0..n-1`` are what :meth:`search` returns).
    metric : ``ip`` (default) or ``cosine`` (rows normalised here, the query when searched).

    Attributes
    ----------
    nonnegative : bool, whether every weight is >= 0 (then searches skip work; see the module).

    Examples
    --------
    >>> from repspace.core.sparse import SparseRows
    >>> rows = SparseRows.from_pairs([([0], [3.0]), ([0, 1], [1.0, 1.0])], n_features=2)
    >>> s, found = SparseIndex(rows, metric="cosine").search([0], [2.0], k=2)
    >>> found.tolist(), [round(x, 4) for x in s.tolist()]
    ([0, 1], [1.0, 0.7071])
    """

    def __init__(self, rows: SparseRows, metric: str = "ip") -> None:
        import scipy.sparse as sps

        if metric not in ("ip", "cosine"):
            raise InputError(f"sparse search is by inner product or cosine, not {metric}")
        self.metric = metric
        self.n, self.n_features = len(rows), rows.n_features
        a = int(rows.indptr[0])
        indptr = rows.indptr - a
        self.csr = sps.csr_array((np.asarray(rows.values, dtype=np.float32), rows.indices, indptr),
                                 shape=(self.n, self.n_features))
        values = self.csr.data
        row_of = np.repeat(np.arange(self.n), np.diff(indptr))
        self.norms: np.ndarray | None = None
        if metric == "cosine":  # the rows as searched are normalised here; the exact scores divide by the norms
            sq = np.bincount(row_of, weights=values.astype(np.float64) ** 2, minlength=self.n)
            self.norms = np.sqrt(sq)
            with np.errstate(divide="ignore", invalid="ignore"):
                scale = np.where(self.norms > 0, 1.0 / self.norms, 0.0)
            values = (values * scale[row_of]).astype(np.float32)
        # The inverted index: the CSC form of the rows as searched (row ids ascending in each posting list).
        csc = sps.csr_array((values, self.csr.indices, indptr), shape=self.csr.shape).tocsc()
        csc.sort_indices()
        del row_of
        self.post_ptr = csc.indptr.astype(np.int64)
        self.post_rows = csc.indices.astype(np.int32 if self.n < 2**31 else np.int64)
        self.post_vals = csc.data.astype(np.float32)  # the weights as searched (normalised for cosine)
        self.nonnegative = bool(len(values) == 0 or values.min() >= 0)
        self.col_max = np.zeros(self.n_features)
        has = np.diff(self.post_ptr) > 0
        if has.any():
            self.col_max[has] = np.maximum.reduceat(self.post_vals, self.post_ptr[:-1][has]).astype(np.float64)
        self.avg_row_nnz = self.csr.nnz / max(self.n, 1)

    @property
    def nbytes(self) -> int:
        """Memory held: the rows, the inverted index and the per-feature bounds."""
        return int(self.csr.data.nbytes + self.csr.indices.nbytes + self.csr.indptr.nbytes + self.post_ptr.nbytes
                   + self.post_rows.nbytes + self.post_vals.nbytes + self.col_max.nbytes)

    def exact_scores(self, positions: np.ndarray | None, q: SparseQuery) -> np.ndarray:
        """Scores of the rows at ``positions`` (None: every row): their CSR rows times the query, in float64."""
        dense = np.zeros(self.n_features)
        dense[q.indices] = q.values
        if positions is None:
            scores = self.csr @ dense
        else:
            scores = self.csr[positions] @ dense if len(positions) else np.zeros(0)
        if self.norms is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                norms = (self.norms if positions is None else self.norms[positions]) * np.sqrt(np.dot(q.values,
                                                                                                      q.values))
                scores = np.where(norms > 0, scores / norms, 0.0)
        return np.asarray(scores, dtype=np.float64)

    def search(self, indices: Sequence[int] | np.ndarray | SparseQuery, values: Sequence[float] | None = None,
               k: int = 10, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows for one query: ``(scores float32, positions int64)``, best first.

        Parameters
        ----------
        indices, values : the query's feature ids and weights (or a :class:`SparseQuery` and no values).
        k : how many (fewer when the index has fewer rows).
        allowed : ascending positions the search may return (a filter's matches); None: all.
        """
        q = (indices if isinstance(indices, SparseQuery)
             else sparse_query(indices, [] if values is None else values, self.n_features))
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=np.int64)
            scores = self.exact_scores(allowed, q)
            top = top_k_by_score(scores, min(k, len(allowed)))
            return scores[top].astype(np.float32), allowed[top]
        k = min(k, self.n)
        if k == 0:
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        if not self.nonnegative or (q.values < 0).any():
            scores = self.exact_scores(None, q)
            top = top_k_by_score(scores, k)
            return scores[top].astype(np.float32), top.astype(np.int64)
        cand = self._candidates(q, k)
        scores = self.exact_scores(cand, q)
        top = top_k_by_score(scores, min(k, len(cand)))
        found, best = cand[top], scores[top]
        if len(found) < k:  # fewer than k rows share a feature with the query: the rest score 0, by row
            rest = np.setdiff1d(np.arange(min(self.n, k + len(cand))), cand, assume_unique=True)[: k - len(found)]
            found, best = np.concatenate([found, rest]), np.concatenate([best, np.zeros(len(rest))])
        return best.astype(np.float32), found.astype(np.int64)

    def _postings(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.post_ptr[j], self.post_ptr[j + 1]
        return self.post_rows[a:b], self.post_vals[a:b]

    def _theta0(self, t: np.ndarray, w: np.ndarray, q: SparseQuery, k: int) -> float:
        """A lower bound of the k-th best score: the k-th exact score among the rows with the largest
        weights in the first features' posting lists (0 when fewer than k rows were found)."""
        picked: list[np.ndarray] = []
        got = 0
        for j in t[:SAMPLE_FEATURES]:
            rows, vals = self._postings(int(j))
            m = min(SAMPLE_PER_K * k, len(rows))
            if m == 0:
                continue
            picked.append(rows[np.argpartition(-vals, m - 1)[:m]] if m < len(rows) else rows)
            got += m
            if got >= SAMPLE_PER_K * k:
                break
        sample = np.unique(np.concatenate(picked)) if picked else np.zeros(0, np.int64)
        if len(sample) < k:
            return 0.0
        scores = self.exact_scores(sample, q)
        return float(np.partition(scores, len(scores) - k)[len(scores) - k])

    def _candidates(self, q: SparseQuery, k: int) -> np.ndarray:
        """Positions (ascending) that may be in the top k; every other row scores below the k-th (MaxScore)."""
        w = q.values / np.sqrt(np.dot(q.values, q.values)) if self.norms is not None else q.values
        df = self.post_ptr[q.indices + 1] - self.post_ptr[q.indices]
        keep = df > 0
        t, w, df = q.indices[keep], w[keep], df[keep]
        u = w * self.col_max[t]
        order = np.argsort(-u, kind="stable")
        t, w, u, df = t[order], w[order], u[order], df[order]
        left = np.concatenate([np.cumsum(u[::-1])[::-1], [0.0]])  # left[j]: the most terms j.. can add
        theta = self._theta0(t, w, q, k)
        # Phase 1: every row the first features touch is a candidate, up to the first feature from which
        # what is left cannot reach θ (a row none of the first ones holds scores below θ).
        below = np.flatnonzero(left < theta * (1 - PRUNE_SLACK))
        j, m = (int(below[0]) if len(below) else len(t)), len(t)
        starts, ends = self.post_ptr[t[:j]], self.post_ptr[t[:j] + 1]
        if j:
            rows = np.concatenate([self.post_rows[s:e] for s, e in zip(starts.tolist(), ends.tolist())])
            vals = np.concatenate([self.post_vals[s:e] for s, e in zip(starts.tolist(), ends.tolist())])
            acc = np.bincount(rows, weights=vals * np.repeat(w[:j], df[:j]), minlength=self.n)
        else:
            acc = np.zeros(self.n)
        cand = np.flatnonzero(acc)  # weights are positive: a touched row has a positive partial score
        # Phase 2: the other features only for the candidates, dropping those that cannot reach θ.
        while True:
            part = acc[cand]
            above = part[part >= theta]  # the k-th partial score, if at least k reach θ, is among these
            if len(above) >= k:
                theta = max(theta, float(np.partition(above, len(above) - k)[len(above) - k]))
            cand = cand[part + left[j] * (1 + PRUNE_SLACK) >= theta * (1 - PRUNE_SLACK)]
            if j >= m or len(cand) * self.avg_row_nnz <= EXACT_RESCORE_ENTRIES:
                break  # few enough survivors: scoring their rows whole costs less than more lookups
            rows, vals = self._postings(int(t[j]))
            if df[j] <= 4 * len(cand):  # the whole list (rows that are no candidates are never read again)
                acc[rows] += w[j] * vals
            else:  # the candidates' entries, found by binary search
                pos = np.minimum(np.searchsorted(rows, cand), len(rows) - 1)
                hit = rows[pos] == cand
                acc[cand[hit]] += w[j] * vals[pos[hit]]
            j += 1
        return np.sort(cand).astype(np.int64)  # ascending: equal scores then go to the lower row
