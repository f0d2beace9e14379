"""What a sparse space adds to a space: its vocabulary, its checked batches and its rows read back.

A sparse space (``layout="sparse"``) has the items, ids, metadata, generation and
append-only rows of any space; only its rows are kept differently: as CSR blocks
(:mod:`._sparse_blocks`) over a vocabulary of ``dim`` features, whose names (optional) are
kept in the space's state under :data:`FEATURES_STATE`, one per line.

Examples
--------
>>> import tempfile, os
>>> from repspace.core.store import Store
>>> from repspace.core.sparse import SparseRows
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space(
...     "terms", dim=3, metric="ip", layout="sparse", features=["cat", "dog", "fish"])
>>> _ = sp.add(["a", "b"], SparseRows.from_pairs([([2], [1.5]), ([0, 1], [1.0, 0.5])], 3))
>>> rows, data = sp.sparse_rows()
>>> rows.tolist(), data.row(1), sp.feature_names()
([0, 1], ([0, 1], [1.0, 0.5]), ['cat', 'dog', 'fish'])
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.printable import CONTROL, escape_controls, excerpt
from repspace.core.space import Metric, SpaceInfo
from repspace.core.sparse import SparseRows, check_sparse
from repspace.core.store._base import SpaceBase
from repspace.core.store._block_rows import LiveRowsCache
from repspace.core.store._rows import as_ids, rows_by_id
from repspace.core.store._sparse_blocks import read_sparse_range, read_sparse_rows, write_sparse_blocks

if TYPE_CHECKING:
    from repspace.core.store._store import Store

__all__ = ["FEATURES_STATE", "SparseReader", "check_feature_names", "sparse_payload", "sparse_state"]

#: The space-state key of a sparse space's feature names (UTF-8, one per line).
FEATURES_STATE = "sparse.features"
#: Metrics of a sparse space: inner product, or cosine (rows normalised when searched, not when stored).
SPARSE_METRICS = (Metric.IP, Metric.COSINE)


def check_feature_names(names: Sequence[Any], n_features: int | None = None) -> list[str]:
    """Feature names: printable, non-empty strings, each once, ``n_features`` of them when given.

    Examples
    --------
    >>> check_feature_names(["cat", "dog"])
    ['cat', 'dog']
    >>> try:
    ...     check_feature_names(["cat", "d\\nog"])
    ... except InputError as e:
    ...     print(e)
    feature 1 ('d\\nog') has a control character: feature names (tokens) cannot hold control characters
    """
    out = list(names)
    if n_features is not None and len(out) != n_features:
        raise InputError(f"{len(out)} feature names for a vocabulary of {n_features} features")
    seen: dict[str, int] = {}
    for i, name in enumerate(out):
        if not isinstance(name, str) or not name:
            raise InputError(f"feature {i} is {excerpt(name)}: feature names must be non-empty strings")
        if CONTROL.search(name):
            raise InputError(f"feature {i} ({escape_controls(excerpt(name))}) has a control character: feature "
                             "names (tokens) cannot hold control characters")
        if name in seen:
            raise InputError(f"feature name {excerpt(name)} is given twice (features {seen[name]} and {i})")
        seen[name] = i
    return out


def sparse_state(dim: int, metric: Metric, dtype: str, features: Sequence[str] | None) -> dict[str, bytes]:
    """The checks of a new sparse space and the state it is created with (its feature names)."""
    if metric not in SPARSE_METRICS:
        raise InputError(f"a sparse space is searched by inner product or cosine, not {metric.value}")
    if dtype != "float32":
        raise InputError("a sparse space stores float32 weights (dtype float32)")
    if features is None:
        return {}
    return {FEATURES_STATE: "\n".join(check_feature_names(features, dim)).encode("utf-8")}


@dataclass(frozen=True)
class _SparsePayload:
    space: SpaceBase
    rows: SparseRows

    def same_as_stored(self, c: Any, sid: int, pairs: list[tuple[int, int]]) -> set[int]:
        old = read_sparse_rows(c, sid, self.space.name, self.space.dim, [row for _, row in pairs])
        new = self.rows
        same = set()
        for j, (i, _) in enumerate(pairs):
            a, b, oa, ob = new.indptr[i], new.indptr[i + 1], old.indptr[j], old.indptr[j + 1]
            if (new.indices[a:b].tobytes() == old.indices[oa:ob].tobytes()
                    and new.values[a:b].tobytes() == old.values[oa:ob].tobytes()):
                same.add(i)
        return same

    def write(self, c: Any, sid: int, first_row: int, positions: list[int] | None) -> None:
        write_sparse_blocks(c, sid, first_row, self.rows if positions is None else self.rows.take(positions))


def sparse_payload(space: SpaceBase, rows: Any, ids: list[str], allow_negative: bool) -> _SparsePayload:
    """A batch for a sparse space: :class:`SparseRows` or a scipy sparse matrix, checked whole."""
    if not isinstance(rows, SparseRows):
        if not hasattr(rows, "tocsr"):
            raise InputError(f"space {space.name!r} is sparse: give its rows as SparseRows or a scipy sparse "
                             f"matrix, not {type(rows).__name__}")
        if rows.shape[1] != space.dim:
            raise InputError(f"the sparse rows have {rows.shape[1]} columns; space {space.name!r} has a vocabulary "
                             f"of {space.dim} features")
        rows = SparseRows.from_scipy(rows)
    return _SparsePayload(space, check_sparse(rows, ids, n_features=space.dim, allow_negative=allow_negative))


#: Sparse spaces whose feature names (and name -> id map) a process keeps (the oldest go first).
FEATURE_SPACES = 8
#: Space uid -> its feature names and their ids; names are fixed when a space is made, so never stale.
_FEATURES: dict[str, tuple[tuple[str, ...] | None, Mapping[str, int] | None]] = {}
_FEATURES_LOCK = threading.Lock()


class SparseReader(SpaceBase):
    """Read a sparse space's rows (dense spaces refuse these reads with one line)."""

    def __init__(self, store: Store, info: SpaceInfo) -> None:
        super().__init__(store, info)
        self._sparse_cache: LiveRowsCache[SparseRows] = LiveRowsCache()

    def _require_sparse(self, what: str) -> None:
        if self.layout != "sparse":
            raise InputError(f"space {self.name!r} holds dense vectors: {what} reads sparse rows")

    def feature_names(self) -> list[str] | None:
        """The names of a sparse space's features (tokens), or None when it was given none."""
        names = self._features()[0]
        return None if names is None else list(names)

    def feature_ids(self) -> Mapping[str, int] | None:
        """``{feature name: feature id}`` of a sparse space with names (None without): what a query by
        names is translated through, read once per space (the names are fixed when the space is made).

        Examples
        --------
        >>> import tempfile, os
        >>> from repspace.core.store import Store
        >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space(
        ...     "terms", dim=2, layout="sparse", features=["cat", "dog"])
        >>> sp.feature_ids()["dog"]
        1
        """
        return self._features()[1]

    def _features(self) -> tuple[tuple[str, ...] | None, Mapping[str, int] | None]:
        self._require_sparse("feature names")
        held = _FEATURES.get(self.uid)
        if held is None:
            data = self.state(FEATURES_STATE)  # type: ignore[attr-defined]
            names = None if data is None else tuple(data.decode("utf-8").split("\n"))
            ids = None if names is None else MappingProxyType({t: j for j, t in enumerate(names)})
            held = (names, ids)
            with _FEATURES_LOCK:
                if len(_FEATURES) >= FEATURE_SPACES:
                    _FEATURES.pop(next(iter(_FEATURES)))
                _FEATURES[self.uid] = held
        return held

    def sparse_rows(self) -> tuple[np.ndarray, SparseRows]:
        """Live rows (ascending) and their sparse rows, from one read; cached per generation (read-only arrays)."""
        self._require_sparse("sparse_rows")
        return self._sparse_cache.get(self, lambda c, sid, next_row: read_sparse_range(c, sid, self.dim, 0, next_row),
                                      lambda data: (data.indptr, data.indices, data.values))

    def read_sparse(self, rows: Sequence[int] | np.ndarray) -> SparseRows:
        """The sparse rows at ``rows`` (live or dead), in that order."""
        self._require_sparse("read_sparse")
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            return read_sparse_rows(c, sid, self.name, self.dim, rows)

    def sparse_of(self, ids: Sequence[str]) -> SparseRows:
        """The sparse rows of the given ids, in the order asked (unknown ids: :class:`NotFoundError`)."""
        self._require_sparse("sparse_of")
        ids = as_ids(ids)
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            found = rows_by_id(c, sid, list(ids))
            missing = [i for i in ids if i not in found]
            if missing:
                from repspace.core.errors import NotFoundError

                raise NotFoundError(f"id {excerpt(missing[0])} is not in space {self.name!r}")
            return read_sparse_rows(c, sid, self.name, self.dim, [found[i][0] for i in ids])
