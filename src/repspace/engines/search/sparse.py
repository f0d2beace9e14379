"""Exact top-k search over sparse vectors by inner product (or cosine), from an inverted index.

:class:`SparseIndex` holds the rows as they are (CSR) and an inverted index of them (the CSC
copy: for each feature, the rows holding it, ascending, with their weights). A query's score
for a row is ``Σ_j q_j x_j`` over the features they share, the same number as
``scipy.sparse``'s ``X @ q``; the top ``k`` is returned by score, equal scores by row, as the
dense exact search does.

Exact, yet not every posting is read: with non-negative weights the search is MaxScore's
(Turtle & Flood 1995) in term-at-a-time form. The query's features are taken by their largest
possible contribution ``u_j = q_j · max_r x_rj``. The first features' postings (the rarest,
heaviest ones, up to ``SEED_POSTINGS``) are summed into one score per row; the rows with the best
of these partial scores, scored exactly, give a first lower bound θ of the k-th score. Features
are then summed whole (``np.add.at`` over their concatenated postings) until the bounds of those
left fall below θ: a row none of them has touched scores less than θ. While reading a feature's
list whole costs less than following the rows still in the race through it (their number
estimated on a sample of rows), more features are summed whole; then only the rows whose partial
score plus the bounds left can reach θ go on, each later feature looked up for them by binary
search in its posting list, θ rising as the partial scores do. The few survivors are scored
exactly (their CSR rows times the query, in float64, summed in the order ``scipy.sparse`` sums
in). Partial scores are float32 sums; every pruning test allows for their rounding. With a
negative weight in the rows or the query no such bound holds, and every row is scored (``X @ q``).

A filter (``allowed``) small enough is scored row by row; a larger one is searched over the
inverted index with the other rows masked out: postings of rows outside it are summed but never
become candidates, and θ is taken over allowed rows only.

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
#: Every this many rows are looked at to estimate how many rows a bound keeps as candidates.
ESTIMATE_STRIDE = 64
#: A feature's posting list is read whole (before candidates are listed) while it holds at most this many
#: postings per row estimated to stay a candidate without it.
DENSE_RATIO = 16.0
#: Postings read first (the features with the largest bounds) to find the rows that seed θ.
SEED_POSTINGS = 50_000
#: Rows (times k) with the best partial scores after those postings, scored exactly for the first θ.
SEED_ROWS_PER_K = 10
#: A filter whose rows hold at most this many entries is scored row by row (one scipy product); a larger
#: one is searched over the inverted index with the other rows masked out.
FILTER_DIRECT_ENTRIES = 1_000_000


@dataclass(frozen=True)
class SparseQuery:
    """A sparse query: feature ids (int64, distinct, ascending) and their weights (float64, non-zero).

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
        # Zeroed score accumulators (n float32 each), kept between searches: a fresh one costs its page
        # faults on every query. One per search running at once (list pop/append hold under threads).
        self._buffers: list[np.ndarray] = []
        self._slots: list[np.ndarray] = []  # n int64 each, for _seed_theta (contents never read before written)

    @property
    def nbytes(self) -> int:
        """Memory held: the rows, the inverted index, the per-feature bounds and the kept score accumulators."""
        return int(self.csr.data.nbytes + self.csr.indices.nbytes + self.csr.indptr.nbytes + self.post_ptr.nbytes
                   + self.post_rows.nbytes + self.post_vals.nbytes + self.col_max.nbytes
                   + sum(b.nbytes for b in list(self._buffers)) + sum(b.nbytes for b in list(self._slots)))

    def plan(self, q: SparseQuery, n_allowed: int | None = None) -> str:
        """How :meth:`search` answers ``q`` (over ``n_allowed`` allowed rows, None: all), in words for a plan.

        Examples
        --------
        >>> from repspace.core.sparse import SparseRows
        >>> index = SparseIndex(SparseRows.from_pairs([([0], [1.0]), ([1], [2.0])], n_features=2))
        >>> index.plan(sparse_query([0], [1.0], 2)), index.plan(sparse_query([0], [1.0], 2), n_allowed=1)
        ('inverted index, MaxScore pruning', "the filter's 1 matches scored")
        """
        if n_allowed is not None and (not self._prunable(q) or n_allowed * self.avg_row_nnz <= FILTER_DIRECT_ENTRIES):
            return f"the filter's {n_allowed} matches scored"
        if not self._prunable(q):
            return "every row scored (negative weights)"
        return "inverted index, MaxScore pruning" + ("" if n_allowed is None else f", over the filter's {n_allowed} "
                                                                                  "matches")

    def _prunable(self, q: SparseQuery) -> bool:
        return self.nonnegative and not (q.values < 0).any()

    def exact_scores(self, positions: np.ndarray | None, q: SparseQuery) -> np.ndarray:
        """Scores of the rows at ``positions`` (None: every row): their CSR rows times the query, in float64."""
        dense = np.zeros(self.n_features)
        dense[q.indices] = q.values
        if positions is None:
            scores = self.csr @ dense
        else:  # the rows' entries gathered flat; bincount sums each row in its order, as scipy's matvec does
            start = self.csr.indptr[positions]
            lens = self.csr.indptr[positions + 1] - start
            flat = np.arange(int(lens.sum())) + np.repeat(start - (np.cumsum(lens) - lens), lens)
            prod = self.csr.data[flat].astype(np.float64) * dense[self.csr.indices[flat]]
            scores = np.bincount(np.repeat(np.arange(len(positions)), lens), weights=prod,
                                 minlength=len(positions))
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
        k : how many (fewer when the index has fewer rows, or the filter fewer matches).
        allowed : ascending positions the search may return (a filter's matches); None: all. A filter
            whose rows hold at most :data:`FILTER_DIRECT_ENTRIES` entries has them scored directly;
            a larger one is searched over the inverted index, postings of other rows left unscored.
        """
        q = (indices if isinstance(indices, SparseQuery)
             else sparse_query(indices, [] if values is None else values, self.n_features))
        pool = None if allowed is None else np.asarray(allowed, dtype=np.int64)
        k = min(k, self.n if pool is None else len(pool))
        if k == 0:
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        prunable = self._prunable(q)
        if pool is not None and (not prunable or len(pool) * self.avg_row_nnz <= FILTER_DIRECT_ENTRIES):
            scores = self.exact_scores(pool, q)
            top = top_k_by_score(scores, k)
            return scores[top].astype(np.float32), pool[top]
        if not prunable:
            scores = self.exact_scores(None, q)
            top = top_k_by_score(scores, k)
            return scores[top].astype(np.float32), top.astype(np.int64)
        mask = None
        if pool is not None:
            mask = np.zeros(self.n, bool)
            mask[pool] = True
        cand = self._candidates(q, k, mask)
        scores = self.exact_scores(cand, q)
        top = top_k_by_score(scores, min(k, len(cand)))
        found, best = cand[top], scores[top]
        if len(found) < k:  # fewer than k rows share a feature with the query: the rest score 0, by row
            first = np.arange(min(self.n, k + len(cand))) if pool is None else pool[: k + len(cand)]
            rest = np.setdiff1d(first, cand, assume_unique=True)[: k - len(found)]
            found, best = np.concatenate([found, rest]), np.concatenate([best, np.zeros(len(rest))])
        return best.astype(np.float32), found.astype(np.int64)

    def _postings(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.post_ptr[j], self.post_ptr[j + 1]
        return self.post_rows[a:b], self.post_vals[a:b]

    def _gather(self, t: np.ndarray, w: np.ndarray, df: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The postings of features ``t`` concatenated: their rows and their weights times ``w`` (float32)."""
        starts, ends = self.post_ptr[t].tolist(), self.post_ptr[t + 1].tolist()
        rows = np.concatenate([self.post_rows[s:e] for s, e in zip(starts, ends)])
        vals = np.concatenate([self.post_vals[s:e] for s, e in zip(starts, ends)])
        vals *= np.repeat(w.astype(np.float32), df)
        return rows, vals

    def _seed_theta(self, seen: np.ndarray, acc: np.ndarray, q: SparseQuery, k: int,
                    mask: np.ndarray | None) -> float:
        """A lower bound of the k-th best score: the k-th exact score among the rows with the best partial
        scores after the first features (those rows scored whole; 0 when fewer than k rows were found)."""
        if mask is not None:
            seen = seen[mask[seen]]
        m = SEED_ROWS_PER_K * k
        # The m best distinct rows. A row is in ``seen`` once per first feature it holds: the m best
        # entries of ``seen`` can be one row (a stored row as the query holds every feature), θ then 0.
        # Distinct in O(len(seen)): each row keeps one of its entries' positions (whichever write lands),
        # and the entries that kept theirs are one per row (np.unique hashes: 100x slower on 50,000 rows;
        # a mark over all n rows costs a pass over n).
        slots = self._slots.pop() if self._slots else np.empty(self.n, np.int64)
        try:
            at = np.arange(len(seen))
            slots[seen] = at
            sample = seen[slots[seen] == at]
        finally:
            self._slots.append(slots)
        if len(sample) > m:
            sample = sample[np.argpartition(-acc[sample], m - 1)[:m]]
        if len(sample) < k:
            return 0.0
        scores = self.exact_scores(sample, q)
        return float(np.partition(scores, len(scores) - k)[len(scores) - k])

    def _candidates(self, q: SparseQuery, k: int, mask: np.ndarray | None = None) -> np.ndarray:
        """Positions (ascending) that may be in the top k; every other row scores below the k-th (MaxScore).

        ``mask``: the rows that may be returned (a filter); the others are never candidates, and the
        bound θ is taken over allowed rows only.
        """
        w = q.values / np.sqrt(np.dot(q.values, q.values)) if self.norms is not None else q.values
        df = self.post_ptr[q.indices + 1] - self.post_ptr[q.indices]
        keep = df > 0
        t, w, df = q.indices[keep], w[keep], df[keep]
        u = w * self.col_max[t]
        order = np.argsort(-u, kind="stable")
        t, w, u, df = t[order], w[order], u[order], df[order]
        m = len(t)
        left = np.concatenate([np.cumsum(u[::-1])[::-1], [0.0]])  # left[j]: the most features j.. can add
        # Partial scores are float32 sums of at most m products: each within (m + 1) float32 roundings of
        # the exact one, on top of the weights' own rounding (PRUNE_SLACK).
        slack = PRUNE_SLACK + (m + 1) * 2.0**-24
        lo, hi = 1 - slack, 1 + slack
        acc = self._buffers.pop() if self._buffers else np.zeros(self.n, np.float32)
        try:
            # Seed: the first features up to SEED_POSTINGS postings (scaled up by a filter's selectivity, so
            # that as many allowed rows are seen); their best rows scored exactly give θ.
            budget = SEED_POSTINGS if mask is None else SEED_POSTINGS * self.n / max(int(mask.sum()), 1)
            j0 = min(m, max(1, int(np.searchsorted(np.cumsum(df), budget, side="right"))))
            seen, vals = self._gather(t[:j0], w[:j0], df[:j0])
            np.add.at(acc, seen, vals)
            theta = self._seed_theta(seen, acc, q, k, mask)
            # Phase 1: every row the first features touch is a candidate, up to the first feature from which
            # what is left cannot reach θ (a row none of the first ones holds scores below θ).
            below = np.flatnonzero(left * hi < theta * lo)
            j = max(j0, int(below[0]) if len(below) else m)
            if j > j0:
                np.add.at(acc, *self._gather(t[j0:j], w[j0:j], df[j0:j]))
            # Phase 1b: more features read whole while that costs less than following the candidates through
            # them (their number at each step estimated from every ESTIMATE_STRIDE-th row).
            while j < m:
                floor = theta * lo - left[j] * hi
                probe = acc[::ESTIMATE_STRIDE] >= floor if floor > 0 else acc[::ESTIMATE_STRIDE] > 0
                if mask is not None:
                    probe &= mask[::ESTIMATE_STRIDE]
                if df[j] > DENSE_RATIO * ESTIMATE_STRIDE * int(np.count_nonzero(probe)):
                    break
                rows, vals = self._postings(int(t[j]))
                acc[rows] += np.float32(w[j]) * vals
                j += 1
            floor = theta * lo - left[j] * hi
            hit = acc >= floor if floor > 0 else acc > 0  # weights are positive: a touched row scores above 0
            cand = np.flatnonzero(hit if mask is None else hit & mask)
            # Phase 2: the other features only for the candidates, dropping those that cannot reach θ.
            part = acc[cand].astype(np.float64)
        finally:
            acc.fill(0)
            self._buffers.append(acc)
        while j < m and len(cand) * self.avg_row_nnz > EXACT_RESCORE_ENTRIES:
            rows, vals = self._postings(int(t[j]))
            pos = np.minimum(np.searchsorted(rows, cand), len(rows) - 1)
            hit = rows[pos] == cand
            part[hit] += w[j] * vals[pos[hit]]
            j += 1
            above = part[part >= theta]  # the k-th partial score, if at least k reach θ, is among these
            if len(above) >= k:
                theta = max(theta, float(np.partition(above, len(above) - k)[len(above) - k]))
            keep = part * hi + left[j] * hi >= theta * lo
            cand, part = cand[keep], part[keep]
        return cand.astype(np.int64)  # ascending: equal scores then go to the lower row
