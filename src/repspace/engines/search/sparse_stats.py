"""What a sparse space holds and what searching it costs: sizes, empty rows and the expected FLOPs.

:func:`sparse_statistics` reads sparse rows (:class:`~repspace.core.sparse.SparseRows`) and
returns a :class:`SparseStatistics`, the ``sparse`` part of ``repspace info --json`` for a
sparse space (keys in ``docs/METRICS.md``, "Sparse spaces"). The expected FLOPs (Paria et al.
2020, S028) is the number of multiply-adds an inverted index spends on average per (query,
row) pair when queries look like the rows: ``Σ_j p_j²``, ``p_j`` the share of rows holding
feature ``j``. A row with no non-zero weight can match no query; it is counted, not refused.

Examples
--------
>>> from repspace.core.sparse import SparseRows
>>> rows = SparseRows.from_pairs([([0, 1], [1.0, 2.0]), ([0], [0.5]), ([], [])], n_features=4)
>>> st = sparse_statistics(rows, feature_names=True)
>>> st.nnz, st.empty_rows, st.features_used, round(st.expected_flops, 4)
(3, 1, 2, 0.5556)
>>> sorted(st.to_dict())[:4]
['empty_rows', 'expected_flops', 'feature_names', 'features_used']
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from repspace.core.sparse import SparseRows, expected_flops

__all__ = ["SparseStatistics", "sparse_statistics"]


@dataclass(frozen=True)
class SparseStatistics:
    """Sizes and search cost of a set of sparse rows (``sparse.*`` in ``repspace info --json``).

    Attributes
    ----------
    rows : rows measured (the live items).
    n_features : the vocabulary's size.
    nnz : stored non-zero weights in all rows.
    mean_nnz, max_nnz : non-zeros per row, on average and at most.
    empty_rows : rows with no non-zero weight (they match no query).
    features_used : features non-zero in at least one row.
    expected_flops : ``Σ_j p_j²`` (Paria et al. 2020): expected multiply-adds per (query, row) pair.
    negative_weights : whether any weight is below zero (exact search then scores every row).
    feature_names : whether the space names its features (a token per feature id).

    Examples
    --------
    >>> from repspace.core.sparse import SparseRows
    >>> sparse_statistics(SparseRows.from_pairs([([1], [2.0])], n_features=3)).to_dict()["expected_flops"]
    1.0
    """

    rows: int
    n_features: int
    nnz: int
    mean_nnz: float
    max_nnz: int
    empty_rows: int
    features_used: int
    expected_flops: float
    negative_weights: bool
    feature_names: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, the keys of ``docs/METRICS.md`` ("Sparse spaces") without the ``sparse.`` prefix."""
        return asdict(self)


def sparse_statistics(rows: SparseRows, *, feature_names: bool = False) -> SparseStatistics:
    """Measure sparse rows: see :class:`SparseStatistics` (``feature_names`` says whether they are named).

    Examples
    --------
    >>> from repspace.core.sparse import SparseRows
    >>> st = sparse_statistics(SparseRows.from_pairs([([0, 1], [1.0, 1.0]), ([1], [3.0])], n_features=5))
    >>> st.mean_nnz, st.max_nnz, st.features_used, st.expected_flops  # p = (0.5, 1, 0, 0, 0)
    (1.5, 2, 2, 1.25)
    """
    per_row = rows.row_nnz()
    a, b = int(rows.indptr[0]), int(rows.indptr[-1])
    used = np.unique(rows.indices[a:b]).size
    n = len(rows)
    return SparseStatistics(
        rows=n, n_features=rows.n_features, nnz=rows.nnz, mean_nnz=float(per_row.mean()) if n else 0.0,
        max_nnz=int(per_row.max(initial=0)), empty_rows=int((per_row == 0).sum()), features_used=int(used),
        expected_flops=expected_flops(rows), negative_weights=bool((rows.values[a:b] < 0).any()),
        feature_names=feature_names,
    )
