"""Approximate sparse search with blocked posting lists and summary vectors (Seismic, Bruch et al. 2024, S092).

The exact :class:`~repspace.engines.search.sparse.SparseIndex` reads posting lists whole (less
the MaxScore skips). Seismic trades a little recall for much less reading:

* **static pruning**: each feature's posting list keeps only its ``lambda`` largest weights;
* **blocking**: a kept list is cut into blocks by clustering its rows (``beta`` x its length random
  rows are centroids, each row joins the centroid with which it has the largest inner product), so
  that rows alike share a block; with ``beta=0`` the list is cut into fixed blocks of ``block`` rows
  (by weight, largest first);
* **summaries**: a block's summary is the per-feature maximum over its rows, pruned to its largest
  entries that hold a fraction ``alpha`` of its mass. Unpruned (``alpha=1``), ``summary·q`` is an
  upper bound of every row's score in the block (weights >= 0);
* **query**: the query's ``cut`` largest weights choose the posting lists, visited in order of
  weight; a list's blocks are taken by ``summary·q``, largest first, and a block is skipped when
  ``summary·q < θ / heap`` (θ: the k-th best score found so far), with the rest of that list; the rows
  of a block not skipped are scored exactly (their whole rows times the whole query).

With ``lambda=all``, ``alpha=1``, ``heap=1`` and ``cut=all`` nothing is lost and the result is the
exact one. Within a list, blocks are scored in small groups (θ rises between groups) rather than
one at a time, so that numpy, not Python, does the work per row.

Examples
--------
>>> from repspace.core.sparse import SparseRows
>>> rows = SparseRows.from_pairs([([0, 2], [1.0, 1.0]), ([1], [3.0]), ([2], [2.0])], n_features=3)
>>> index = SeismicIndex(rows, parse_seismic_spec("sparse,seismic,lambda=all,alpha=1,heap=1"))
>>> scores, found = index.search([2], [1.0], k=2)
>>> found.tolist(), scores.tolist()
([2, 0], [2.0, 1.0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.sparse import SparseRows
from repspace.engines.search.sparse import PRUNE_SLACK, SparseIndex, SparseQuery, sparse_query, top_k_by_score

__all__ = ["SeismicIndex", "SeismicParams", "parse_seismic_spec", "SEISMIC_PREFIX"]

#: How the spec begins: ``sparse,seismic[,name=value...]``.
SEISMIC_PREFIX = "sparse,seismic"
#: Rows scored in the first group of blocks of a posting list; each later group may hold twice as many.
FIRST_GROUP_ROWS = 64
#: A posting list no longer than this is one block (clustering it would cost more than it saves).
MIN_CLUSTERED = 8


@dataclass(frozen=True)
class SeismicParams:
    """The parameters of a Seismic index and its search (``None``: no limit).

    Attributes
    ----------
    lambda_ : postings kept per feature (the largest weights); None keeps all.
    beta : centroids per posting list as a fraction of its length; 0 cuts fixed blocks instead.
    block : rows per block when ``beta`` is 0.
    alpha : fraction of a summary's mass kept (1 keeps the whole per-feature maximum).
    heap : heap factor: a block is skipped when ``summary·q < θ / heap`` (1: only blocks that cannot help).
    cut : posting lists visited: the query's ``cut`` largest weights; None visits all.
    seed : the random choice of centroids.

    Examples
    --------
    >>> SeismicParams().to_dict()["lambda"]
    1000
    """

    lambda_: int | None = 1000
    beta: float = 0.1
    block: int = 32
    alpha: float = 0.4
    heap: float = 0.9
    cut: int | None = 10
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The parameters by their spec names (``lambda`` without its underscore)."""
        d = asdict(self)
        d["lambda"] = d.pop("lambda_")
        return d

    def spec(self) -> str:
        """The spec that parses back to these parameters."""
        parts = [SEISMIC_PREFIX]
        for name, value in self.to_dict().items():
            parts.append(f"{name}={'all' if value is None else value}")
        return ",".join(parts)


_INT_OR_ALL = ("lambda", "cut")
_NAMES = {"lambda": "lambda_", "beta": "beta", "block": "block", "alpha": "alpha", "heap": "heap", "cut": "cut",
          "seed": "seed"}


def parse_seismic_spec(spec: str) -> SeismicParams:
    """Parse ``sparse,seismic[,lambda=N|all][,beta=F][,block=N][,alpha=F][,heap=F][,cut=N|all][,seed=N]``.

    Raises :class:`InputError` (one line) on an unknown name, a value of the wrong kind or out of range.

    Examples
    --------
    >>> p = parse_seismic_spec("sparse,seismic,lambda=500,heap=0.8")
    >>> p.lambda_, p.heap, p.alpha
    (500, 0.8, 0.4)
    >>> try:
    ...     parse_seismic_spec("sparse,seismic,alpha=2")
    ... except InputError as e:
    ...     print(e)
    seismic alpha must be in (0, 1], not 2.0
    """
    text = str(spec).strip().replace(" ", "")
    if not text.lower().startswith(SEISMIC_PREFIX):
        raise InputError(f"a Seismic spec begins with {SEISMIC_PREFIX!r}, not {spec!r}")
    rest = [p for p in text[len(SEISMIC_PREFIX):].split(",") if p]
    values: dict[str, Any] = {}
    for part in rest:
        name, eq, raw = part.partition("=")
        name = name.lower()
        if not eq or name not in _NAMES:
            raise InputError(f"seismic parameter {part!r} is not one of " + ", ".join(f"{n}=..." for n in _NAMES))
        if name in values or _NAMES[name] in values:
            raise InputError(f"seismic parameter {name} is given twice")
        try:
            if name in _INT_OR_ALL and raw.lower() == "all":
                value: Any = None
            elif name in ("lambda", "cut", "block", "seed"):
                value = int(raw)
            else:
                value = float(raw)
        except ValueError:
            kind = "an integer or 'all'" if name in _INT_OR_ALL else ("an integer" if name in ("block", "seed")
                                                                      else "a number")
            raise InputError(f"seismic {name} must be {kind}, not {raw!r}") from None
        values[_NAMES[name]] = value
    p = SeismicParams(**values)
    if p.lambda_ is not None and p.lambda_ < 1:
        raise InputError(f"seismic lambda must be at least 1 (or 'all'), not {p.lambda_}")
    if p.cut is not None and p.cut < 1:
        raise InputError(f"seismic cut must be at least 1 (or 'all'), not {p.cut}")
    if not 0 <= p.beta <= 1 or math.isnan(p.beta):
        raise InputError(f"seismic beta must be in [0, 1], not {p.beta}")
    if p.block < 1:
        raise InputError(f"seismic block must be at least 1, not {p.block}")
    if not 0 < p.alpha <= 1:
        raise InputError(f"seismic alpha must be in (0, 1], not {p.alpha}")
    if not 0 < p.heap <= 1:
        raise InputError(f"seismic heap must be in (0, 1], not {p.heap}")
    return p


class SeismicIndex:
    """Sparse rows searched approximately by inner product or cosine through blocked, summarised posting lists.

    Parameters
    ----------
    rows : SparseRows
        The rows (positions ``0..n-1`` are what :meth:`search` returns); weights must be >= 0.
    params : SeismicParams (see :func:`parse_seismic_spec`)
    metric : ``ip`` (default) or ``cosine``.

    Examples
    --------
    >>> from repspace.core.sparse import SparseRows
    >>> rows = SparseRows.from_pairs([([0], [3.0]), ([0, 1], [1.0, 1.0])], n_features=2)
    >>> index = SeismicIndex(rows, SeismicParams(), metric="cosine")
    >>> s, found = index.search([0], [2.0], k=2)
    >>> found.tolist(), [round(x, 4) for x in s.tolist()]
    ([0, 1], [1.0, 0.7071])
    """

    def __init__(self, rows: SparseRows, params: SeismicParams | None = None, metric: str = "ip") -> None:
        import scipy.sparse as sps

        self.params = params or SeismicParams()
        self.exact = SparseIndex(rows, metric=metric)
        if not self.exact.nonnegative:
            raise InputError("a Seismic index needs non-negative weights (its summaries bound scores from above); "
                             "search this space exactly")
        self.n, self.n_features, self.metric = self.exact.n, self.exact.n_features, metric
        ex = self.exact
        searched = ex.csr
        if ex.norms is not None:
            with np.errstate(divide="ignore"):
                scale = np.where(ex.norms > 0, 1.0 / ex.norms, 0.0)
            searched = sps.csr_array(sps.diags_array(scale) @ ex.csr).astype(np.float32)
        self._rows = searched  # the rows as searched (normalised for cosine): what summaries are taken of
        rng = np.random.default_rng(self.params.seed)
        feat_blocks = np.zeros(self.n_features + 1, np.int64)
        block_rows: list[np.ndarray] = []
        sum_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (block-local ptr, cols, vals)
        n_blocks = 0
        for j in range(self.n_features):
            a, b = ex.post_ptr[j], ex.post_ptr[j + 1]
            if b > a:
                blocks = self._blocks(ex.post_rows[a:b], ex.post_vals[a:b], rng)
                block_rows.extend(blocks)
                sum_parts.append(self._summaries(blocks))
                n_blocks += len(blocks)
            feat_blocks[j + 1] = n_blocks
        self.feat_blocks = feat_blocks
        sizes = np.array([len(r) for r in block_rows], np.int64)
        self.block_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.block_sizes = sizes
        self.block_rows = (np.concatenate(block_rows) if block_rows else np.zeros(0, np.int64)).astype(np.int32)
        ptrs, cols, vals = [np.zeros(1, np.int64)], [], []
        off = 0
        for p, c, v in sum_parts:
            ptrs.append(p[1:] + off)
            off += int(p[-1])
            cols.append(c)
            vals.append(v)
        indptr = np.concatenate(ptrs)
        self.summaries = sps.csr_array(
            (np.concatenate(vals) if vals else np.zeros(0, np.float32),
             np.concatenate(cols) if cols else np.zeros(0, np.int32), indptr), shape=(n_blocks, self.n_features))

    @property
    def n_blocks(self) -> int:
        """Blocks over all posting lists."""
        return len(self.block_ptr) - 1

    @property
    def nbytes(self) -> int:
        """Memory held: the rows, the blocks and their summaries (the exact index's posting lists included)."""
        s = self.summaries
        return int(self.exact.nbytes + self.feat_blocks.nbytes + self.block_ptr.nbytes + self.block_rows.nbytes
                   + s.data.nbytes + s.indices.nbytes + s.indptr.nbytes)

    def _blocks(self, rows: np.ndarray, vals: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
        """A posting list pruned to its ``lambda`` largest weights and cut into blocks of rows."""
        p = self.params
        if p.lambda_ is not None and len(rows) > p.lambda_:
            keep = np.argpartition(-vals, p.lambda_ - 1)[: p.lambda_]
            rows, vals = rows[keep], vals[keep]
        m = len(rows)
        if p.beta == 0:
            order = rows[np.lexsort((rows, -vals))]
            return [order[i:i + p.block] for i in range(0, m, p.block)]
        n_c = int(p.beta * m)
        if m <= MIN_CLUSTERED or n_c <= 1:
            return [np.sort(rows)]
        sub = self._rows[rows]
        cent = rng.choice(m, n_c, replace=False)
        sims = (sub @ sub[cent].T).toarray()
        assign = np.argmax(sims, axis=1)
        order = np.lexsort((rows, assign))
        rows, assign = rows[order], assign[order]
        cuts = np.flatnonzero(np.diff(assign)) + 1
        return np.split(rows, cuts)

    def _summaries(self, blocks: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each block's per-feature maximum, pruned to a fraction alpha of its mass: (ptr, cols, vals)."""
        rows = np.concatenate(blocks)
        block_of = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])
        sub = self._rows[rows]
        counts = np.diff(sub.indptr)
        bl = np.repeat(block_of, counts)
        cols = sub.indices.astype(np.int64)
        order = np.lexsort((-sub.data, cols, bl))  # by block, feature, then the largest weight first
        bl, cols, vals = bl[order], cols[order], sub.data[order]
        first = np.ones(len(bl), bool)
        first[1:] = (bl[1:] != bl[:-1]) | (cols[1:] != cols[:-1])
        bl, cols, vals = bl[first], cols[first], vals[first]
        if self.params.alpha < 1:
            order = np.lexsort((cols, -vals, bl))  # each block's entries, largest first
            bl, cols, vals = bl[order], cols[order], vals[order]
            cum = np.cumsum(vals, dtype=np.float64)
            starts = np.searchsorted(bl, np.arange(len(blocks)))
            base = np.concatenate([[0.0], cum])[starts][bl]
            total = np.bincount(bl, weights=vals.astype(np.float64), minlength=len(blocks))[bl]
            before = cum - vals - base  # the mass of the larger entries of the block
            keep = before < self.params.alpha * total
            bl, cols, vals = bl[keep], cols[keep], vals[keep]
            order = np.lexsort((cols, bl))
            bl, cols, vals = bl[order], cols[order], vals[order]
        ptr = np.concatenate([[0], np.cumsum(np.bincount(bl, minlength=len(blocks)))]).astype(np.int64)
        return ptr, cols.astype(np.int32), vals.astype(np.float32)

    def search(self, indices: Sequence[int] | np.ndarray | SparseQuery, values: Sequence[float] | None = None,
               k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best rows found for one query: ``(scores float32, positions int64)``, best first.

        Scores are exact; which rows are found is approximate (see the module).
        """
        q = (indices if isinstance(indices, SparseQuery)
             else sparse_query(indices, [] if values is None else values, self.n_features))
        k = min(k, self.n)
        if k == 0:
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        if (q.values < 0).any():
            raise InputError("a Seismic index is searched with non-negative query weights; search exactly instead")
        w = q.values / np.sqrt(np.dot(q.values, q.values)) if self.exact.norms is not None else q.values
        dense = np.zeros(self.n_features)
        dense[q.indices] = w
        order = np.argsort(-w, kind="stable")
        if self.params.cut is not None:
            order = order[: self.params.cut]
        seen = np.zeros(self.n, bool)
        found_pos: list[np.ndarray] = []
        found_sc: list[np.ndarray] = []
        theta, best = 0.0, np.zeros(0)
        full = False
        limit_factor = (1 - PRUNE_SLACK) / self.params.heap
        for j in q.indices[order].tolist():
            b0, b1 = int(self.feat_blocks[j]), int(self.feat_blocks[j + 1])
            if b1 == b0:
                continue
            dots = self.summaries[b0:b1] @ dense
            blk = np.argsort(-dots, kind="stable")
            dots = dots[blk]
            start, group = 0, FIRST_GROUP_ROWS
            while start < len(blk):
                if full:
                    stop = int(np.searchsorted(-dots, -theta * limit_factor, side="right"))
                    if stop <= start:
                        break
                else:
                    stop = len(blk)
                sizes = self.block_sizes[b0 + blk[start:stop]]
                end = start + max(1, int(np.searchsorted(np.cumsum(sizes), group, side="right")))
                end = min(end, stop)
                ids = b0 + blk[start:end]
                rows = np.concatenate([self.block_rows[self.block_ptr[i]:self.block_ptr[i + 1]] for i in ids])
                rows = np.unique(rows[~seen[rows]])
                start, group = end, group * 2
                if not len(rows):
                    continue
                seen[rows] = True
                scores = self.exact.exact_scores(rows, q)
                found_pos.append(rows)
                found_sc.append(scores)
                got = sum(len(r) for r in found_pos)
                if got >= k:
                    full = True
                    all_sc = np.concatenate(found_sc) if len(found_sc) > 1 else found_sc[0]
                    best = np.partition(all_sc, len(all_sc) - k)[len(all_sc) - k:]
                    theta = float(best.min())
        cand = np.concatenate(found_pos) if found_pos else np.zeros(0, np.int64)
        scores = np.concatenate(found_sc) if found_sc else np.zeros(0)
        srt = np.argsort(cand, kind="stable")  # ascending rows: equal scores go to the lower row
        cand, scores = cand[srt].astype(np.int64), scores[srt]
        top = top_k_by_score(scores, min(k, len(cand)))
        found, best_sc = cand[top], scores[top]
        if len(found) < k:  # fewer than k rows reached: the first others by row, with their exact scores
            rest = np.setdiff1d(np.arange(min(self.n, k + len(cand))), cand, assume_unique=True)[: k - len(found)]
            found, best_sc = np.concatenate([found, rest]), np.concatenate([best_sc, self.exact.exact_scores(rest, q)])
            top = np.lexsort((found, -best_sc))
            found, best_sc = found[top], best_sc[top]
        return best_sc.astype(np.float32), found.astype(np.int64)
