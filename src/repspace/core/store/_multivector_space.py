"""What a multi-vector space adds to a space: its checked batches of token matrices and its rows read back.

A multi-vector space (``layout="multivector"``) has the items, ids, metadata, generation and
append-only rows of any space; only its rows are kept differently: each row is a matrix of
``n_tokens x dim`` float32 token vectors (:class:`~repspace.core.multivector.TokenSets`),
stored as blocks of consecutive rows (:mod:`._token_blocks`). Its metric is ``ip``: two items
compare by MaxSim, the sum over the query's tokens of the largest inner product with any of
the item's tokens (ColBERT's late interaction; tokens L2-normalised make each product a cosine).

Examples
--------
>>> import tempfile, os
>>> import numpy as np
>>> from repspace.core.store import Store
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("tok", dim=2, metric="ip",
...                                                                   layout="multivector")
>>> _ = sp.add(["a", "b"], [np.eye(2), [[0.5, 0.25]]])
>>> [m.shape for m in sp.token_sets([1, 0])], sp.tokens_of(["b"])[0].tolist() == [[0.5, 0.25]]
([(1, 2), (2, 2)], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError, NotFoundError
from repspace.core.multivector import TokenSets, check_token_sets
from repspace.core.printable import excerpt
from repspace.core.space import Metric, SpaceInfo
from repspace.core.store._base import SpaceBase
from repspace.core.store._block_rows import LiveRowsCache
from repspace.core.store._rows import as_ids, rows_by_id
from repspace.core.store._token_blocks import read_token_range, read_token_rows, write_token_blocks

if TYPE_CHECKING:
    from repspace.core.store._store import Store

__all__ = ["MultiVectorReader", "check_multivector_space", "multivector_payload"]


def check_multivector_space(metric: Metric, dtype: str) -> None:
    """The checks of a new multi-vector space: MaxSim over inner products, float32 tokens."""
    if metric is not Metric.IP:
        raise InputError(f"a multi-vector space is searched by MaxSim over inner products (metric ip), not "
                         f"{metric.value}: L2-normalise the token vectors for cosines")
    if dtype != "float32":
        raise InputError("a multi-vector space stores float32 token vectors (dtype float32)")


@dataclass(frozen=True)
class _TokenPayload:
    space: SpaceBase
    sets: TokenSets

    def same_as_stored(self, c: Any, sid: int, pairs: list[tuple[int, int]]) -> set[int]:
        old = read_token_rows(c, sid, self.space.name, self.space.dim, [row for _, row in pairs])
        return {i for j, (i, _) in enumerate(pairs) if self.sets.get(i).tobytes() == old.get(j).tobytes()}

    def write(self, c: Any, sid: int, first_row: int, positions: list[int] | None) -> None:
        write_token_blocks(c, sid, first_row, self.sets if positions is None else self.sets.take(positions))


def multivector_payload(space: SpaceBase, sets: Any, ids: list[str], allow_negative: bool) -> _TokenPayload:
    """A batch for a multi-vector space: one ``(n_tokens, dim)`` matrix per id, checked whole."""
    if allow_negative:
        raise InputError("allow_negative applies to sparse spaces only")
    return _TokenPayload(space, check_token_sets(sets, ids, space.dim))


class MultiVectorReader(SpaceBase):
    """Read a multi-vector space's token matrices (other layouts refuse these reads with one line)."""

    def __init__(self, store: Store, info: SpaceInfo) -> None:
        super().__init__(store, info)
        self._token_cache: LiveRowsCache[TokenSets] = LiveRowsCache()

    def _require_multivector(self, what: str) -> None:
        if self.layout != "multivector":
            raise InputError(f"space {self.name!r} holds {self.layout} vectors: {what} reads token vectors "
                             "(a multi-vector space)")

    def multivector_rows(self) -> tuple[np.ndarray, TokenSets]:
        """Live rows (ascending) and their token sets, from one read; cached per generation (read-only arrays)."""
        self._require_multivector("multivector_rows")
        return self._token_cache.get(self, lambda c, sid, next_row: read_token_range(c, sid, self.dim, 0, next_row),
                                     lambda sets: (sets.tokens, sets.offsets))

    def token_sets(self, rows: Sequence[int] | np.ndarray) -> list[np.ndarray]:
        """The ``(n_tokens, dim)`` float32 token matrices at ``rows`` (live or dead), in that order."""
        self._require_multivector("token_sets")
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            return read_token_rows(c, sid, self.name, self.dim, rows).to_list()

    def tokens_of(self, ids: Sequence[str]) -> list[np.ndarray]:
        """The token matrices of the given ids, in the order asked (unknown ids: :class:`NotFoundError`)."""
        self._require_multivector("tokens_of")
        ids = as_ids(ids)
        with self.store.db.read() as c:
            sid, *_ = self.header(c)
            found = rows_by_id(c, sid, list(ids))
            missing = [i for i in ids if i not in found]
            if missing:
                raise NotFoundError(f"id {excerpt(missing[0])} is not in space {self.name!r}")
            return read_token_rows(c, sid, self.name, self.dim, [found[i][0] for i in ids]).to_list()
