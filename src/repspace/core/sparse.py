"""Sparse vectors: rows of weights over a vocabulary of ``n_features``, in CSR form, and their checks.

A sparse space (learned-sparse retrieval: SPLADE, uniCOIL impact weights, BM25 term weights,
top-k SAE codes) holds for each item a few (feature, weight) pairs out of a vocabulary of
``n_features``. :class:`SparseRows` is the one in-memory form every layer passes around: the
CSR triple (``indptr`` int64, ``indices`` int32 ascending within a row, ``values`` float32),
as ``scipy.sparse.csr_array`` holds it, so a user's matrix converts without a copy of meaning.

:func:`check_sparse` is the store's door for such rows, in the style of
:mod:`repspace.core.store.validate`: the first offending item is named in one
:class:`~repspace.core.errors.InputError` line and the whole batch is refused. A weight of
zero is not stored (it is not a non-zero); a row with no non-zero weight is kept (it can never
match a query, and ``repspace info`` counts such rows).

Examples
--------
>>> rows = SparseRows.from_pairs([([3, 1], [0.5, 2.0]), ([], [])], n_features=4)
>>> rows.indptr.tolist(), rows.indices.tolist(), rows.values.tolist(), len(rows), rows.nnz
([0, 2, 2], [3, 1], [0.5, 2.0], 2, 2)
>>> check_sparse(rows, ["a", "b"]).row(0)  # checked: feature ids ascending within the row
([1, 3], [2.0, 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.printable import excerpt

__all__ = ["SparseRows", "check_sparse", "expected_flops", "MAX_FEATURES"]

#: Largest vocabulary of a sparse space: feature ids are stored as int32.
MAX_FEATURES = int(np.iinfo(np.int32).max)


@dataclass(frozen=True, eq=False)
class SparseRows:
    """``n`` sparse rows over ``n_features`` features, as CSR arrays.

    Attributes
    ----------
    indptr : int64 array (n + 1,), row ``i``'s entries are ``indptr[i]:indptr[i + 1]``.
    indices : int32 array (nnz,), feature ids, ascending within a row once checked.
    values : float32 array (nnz,), the weights.
    n_features : the vocabulary's size (every index is below it).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> m = sp.csr_array(np.array([[0, 1.5, 0], [2.0, 0, 0]], dtype=np.float32))
    >>> r = SparseRows.from_scipy(m)
    >>> r.n_features, r.take([1]).row(0), r.to_scipy().toarray().tolist()
    (3, ([0], [2.0]), [[0.0, 1.5, 0.0], [2.0, 0.0, 0.0]])
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    n_features: int

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready CSR: ``{n_features, indptr, indices, values}`` as lists."""
        return {"n_features": int(self.n_features), "indptr": self.indptr.tolist(), "indices": self.indices.tolist(),
                "values": self.values.tolist()}

    @property
    def nnz(self) -> int:
        """Stored entries (non-zero weights) of all rows."""
        return int(self.indptr[-1] - self.indptr[0])

    def row_nnz(self) -> np.ndarray:
        """Entries per row (int64)."""
        return np.diff(self.indptr)

    def row(self, i: int) -> tuple[list[int], list[float]]:
        """Row ``i`` as (feature ids, weights) lists."""
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.indices[a:b].tolist(), self.values[a:b].tolist()

    def take(self, positions: Sequence[int] | np.ndarray) -> SparseRows:
        """The rows at ``positions``, in that order (a new CSR)."""
        pos = np.asarray(positions, dtype=np.int64)
        starts, ends = self.indptr[pos], self.indptr[pos + 1]
        counts = ends - starts
        indptr = np.zeros(len(pos) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        # the entries of each chosen row, gathered in one vectorised step
        gather = np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1], dtype=np.int64)
        return SparseRows(indptr, self.indices[gather], self.values[gather], self.n_features)

    def to_scipy(self) -> Any:
        """As a ``scipy.sparse.csr_array`` of shape (n, n_features) (sharing the arrays)."""
        import scipy.sparse as sp

        return sp.csr_array((self.values, self.indices, self.indptr), shape=(len(self), self.n_features))

    @classmethod
    def from_scipy(cls, matrix: Any) -> SparseRows:
        """Rows of a scipy sparse matrix or array (any format; duplicates are left for the checks)."""
        csr = matrix.tocsr()
        return cls(np.asarray(csr.indptr, dtype=np.int64), np.asarray(csr.indices),
                   np.asarray(csr.data), int(csr.shape[1]))

    @classmethod
    def from_pairs(cls, pairs: Sequence[tuple[Sequence[int], Sequence[float]]], n_features: int) -> SparseRows:
        """Rows given as ``(indices, values)`` pairs of equal lengths (as read from a file)."""
        counts = np.fromiter((len(i) for i, _ in pairs), dtype=np.int64, count=len(pairs))
        for k, (i, v) in enumerate(pairs):
            if len(i) != len(v):
                raise InputError(f"row {k + 1} has {len(i)} indices and {len(v)} values")
        indptr = np.zeros(len(pairs) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        flat_i = [x for i, _ in pairs for x in i]
        flat_v = [x for _, v in pairs for x in v]
        return cls(indptr, _as_indices(flat_i), _as_values(flat_v), n_features)

    @classmethod
    def concat(cls, parts: Sequence[SparseRows]) -> SparseRows:
        """The rows of ``parts`` one after another (all over the same vocabulary)."""
        if not parts:
            raise InputError("no sparse rows to join")
        offsets = np.cumsum([0] + [p.nnz for p in parts[:-1]])
        indptr = np.concatenate([np.zeros(1, np.int64)] + [p.indptr[1:] - p.indptr[0] + o
                                                           for p, o in zip(parts, offsets)])
        return cls(indptr, np.concatenate([p.indices[p.indptr[0]:p.indptr[-1]] for p in parts]),
                   np.concatenate([p.values[p.indptr[0]:p.indptr[-1]] for p in parts]), parts[0].n_features)


def _as_indices(values: Any) -> np.ndarray:
    """Feature ids as int64 (checked against the vocabulary later); anything but integers is refused."""
    arr = np.asarray(values)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError("sparse indices must be integers")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
            raise InputError("sparse indices must be integers")
    if arr.dtype == np.bool_:
        raise InputError("sparse indices must be integers")
    with np.errstate(invalid="ignore"):
        return arr.astype(np.int64)


def _as_values(values: Any) -> np.ndarray:
    """Weights as float64 (finiteness checked later); anything but numbers is refused."""
    arr = np.asarray(values)
    if arr.size == 0:
        return np.zeros(0, dtype=np.float64)
    if arr.dtype == object or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise InputError("sparse values must be numbers")
    return arr.astype(np.float64)


def check_sparse(rows: SparseRows, ids: Sequence[str], *, n_features: int | None = None,
                 allow_negative: bool = False) -> SparseRows:
    """Validate sparse rows for the store; returns them canonical (ids ascending in a row, zeros dropped).

    Refused, naming the first offending item: an index below 0 or at least ``n_features``
    (the space's vocabulary), a NaN or infinite weight, a weight beyond float32's range, a
    negative weight unless ``allow_negative``, the same index twice in one row, and rows
    that do not match ``ids`` in number.

    Examples
    --------
    >>> bad = SparseRows.from_pairs([([0, 7], [1.0, 2.0])], n_features=5)
    >>> try:
    ...     check_sparse(bad, ["doc1"])
    ... except InputError as e:
    ...     print(e)
    item 'doc1' has feature index 7, beyond the vocabulary of 5 features (indices 0 to 4)
    >>> check_sparse(SparseRows.from_pairs([([2, 0], [0.5, 0.0])], 5), ["x"]).row(0)
    ([2], [0.5])
    """
    n_features = rows.n_features if n_features is None else n_features
    if not isinstance(n_features, (int, np.integer)) or isinstance(n_features, bool) or not 0 < n_features \
            <= MAX_FEATURES:
        raise InputError(f"the number of features must be an integer from 1 to {MAX_FEATURES}, "
                         f"not {excerpt(n_features)}")
    n = len(rows)
    if n != len(ids):
        raise InputError(f"got {n} sparse rows for {len(ids)} ids")
    indptr = np.asarray(rows.indptr, dtype=np.int64)
    if len(indptr) != n + 1 or indptr[0] != 0 or (np.diff(indptr) < 0).any():
        raise InputError("sparse rows: indptr must start at 0 and never decrease")
    indices, values = _as_indices(rows.indices), _as_values(rows.values)
    if len(indices) != indptr[-1] or len(values) != indptr[-1]:
        raise InputError(f"sparse rows: {len(indices)} indices and {len(values)} values for {int(indptr[-1])} "
                         "entries")
    row_of = np.repeat(np.arange(n), np.diff(indptr))

    def first(bad: np.ndarray) -> tuple[str, int]:
        j = int(np.flatnonzero(bad)[0])
        return excerpt(ids[int(row_of[j])]), j

    if len(indices):
        bad = (indices < 0) | (indices >= n_features)
        if bad.any():
            item, j = first(bad)
            raise InputError(f"item {item} has feature index {int(indices[j])}, beyond the vocabulary of "
                             f"{n_features} features (indices 0 to {n_features - 1})")
        bad = ~np.isfinite(values)
        if bad.any():
            item, j = first(bad)
            raise InputError(f"item {item} has a {values[j]} weight: sparse weights must be finite numbers")
        bad = np.abs(values) > float(np.finfo(np.float32).max)
        if bad.any():
            item, j = first(bad)
            raise InputError(f"item {item} has the weight {values[j]:g}, beyond float32's range")
        if not allow_negative:
            bad = values < 0
            if bad.any():
                item, j = first(bad)
                raise InputError(f"item {item} has the negative weight {values[j]:g} (feature {int(indices[j])}); "
                                 "sparse weights are non-negative unless allowed (--allow-negative, "
                                 "allow_negative=True)")
    order = np.lexsort((indices, row_of))
    indices, values = indices[order], values[order]
    if len(indices) > 1:
        same = (indices[1:] == indices[:-1]) & (row_of[order][1:] == row_of[order][:-1])
        if same.any():
            j = int(np.flatnonzero(same)[0])
            raise InputError(f"item {excerpt(ids[int(row_of[order][j])])} has feature index {int(indices[j])} "
                             "twice: give each feature once per row")
    stored = values.astype(np.float32)
    keep = stored != 0  # a weight that is (or rounds to) zero is not a non-zero: not stored
    if not keep.all():
        counts = np.bincount(row_of[order][keep], minlength=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices, stored = indices[keep], stored[keep]
    return SparseRows(indptr, indices.astype(np.int32), stored, int(n_features))


def expected_flops(rows: SparseRows) -> float:
    """Expected FLOPs of a sparse space: ``Σ_j p_j²``, ``p_j`` the share of rows where feature ``j`` is non-zero.

    The FLOPs regulariser of Paria et al. (2020, "Minimizing FLOPs to learn efficient sparse
    representations", S028) in its empirical form: the expected number of multiplications when
    the inner product of two rows drawn at random from the space is computed over an inverted
    index (each shared non-zero feature is one multiply-add). Lower means cheaper search;
    ``0.0`` for a space without rows.

    Examples
    --------
    >>> r = SparseRows.from_pairs([([0, 1], [1.0, 1.0]), ([0], [2.0])], n_features=3)
    >>> expected_flops(r)  # p = (1, 0.5, 0): 1 + 0.25
    1.25
    """
    n = len(rows)
    if n == 0:
        return 0.0
    a, b = int(rows.indptr[0]), int(rows.indptr[-1])
    p = np.bincount(rows.indices[a:b], minlength=rows.n_features).astype(np.float64) / n
    return float(np.dot(p, p))
