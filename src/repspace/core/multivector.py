"""Token sets: a set of ``dim``-d token vectors per item (late interaction), held flat, and their checks.

A multi-vector space (ColBERT-style late interaction, searched by MaxSim) holds for each item
a matrix of ``n_tokens x dim`` float32 token vectors, ``n_tokens`` differing from item to item.
:class:`TokenSets` is the one in-memory form every layer passes around: every token of every
item in one ``(total tokens, dim)`` float32 array and the ``offsets`` where each item's tokens
start, as :class:`~repspace.engines.search.muvera.MultiVectorIndex` keeps them (its ``tokens_``
and ``offsets_``), so building a search index copies nothing of meaning.

:func:`check_token_sets` is the store's door for such rows, in the style of
:mod:`repspace.core.store.validate`: the first offending item is named in one
:class:`~repspace.core.errors.InputError` line and the whole batch is refused (a matrix of
another width, NaN or inf, no token at all, more than :data:`~repspace.core.limits.MAX_TOKENS_PER_ROW`).

Examples
--------
>>> import numpy as np
>>> sets = check_token_sets([np.ones((2, 3)), [[0.0, 1.0, 0.0]]], ["a", "b"], dim=3)
>>> len(sets), sets.n_tokens, sets.row_tokens().tolist(), sets.get(1).tolist()
(2, 3, [2, 1], [[0.0, 1.0, 0.0]])
>>> try:
...     check_token_sets([np.ones((2, 4))], ["a"], dim=3)
... except InputError as e:
...     print(e)
the token vectors of id 'a' (position 0) have dimension 4; this space has dimension 3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.limits import MAX_TOKENS_PER_ROW
from repspace.core.printable import excerpt

__all__ = ["TokenSets", "check_token_sets"]


@dataclass(frozen=True, eq=False)
class TokenSets:
    """``n`` items' token vectors, flat: item ``i`` is ``tokens[offsets[i]:offsets[i + 1]]``.

    Attributes
    ----------
    tokens : float32 array (total tokens, dim).
    offsets : int64 array (n + 1,), from 0, non-decreasing.

    Examples
    --------
    >>> import numpy as np
    >>> s = TokenSets.from_list([np.eye(2), np.ones((1, 2))])
    >>> s.dim, s.take([1, 0]).offsets.tolist(), [m.shape for m in s.to_list()]
    (2, [0, 1, 3], [(2, 2), (1, 2)])
    """

    tokens: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{dim, offsets, tokens}`` as lists (``tokens`` one list of ``dim`` numbers per token)."""
        return {"dim": self.dim, "offsets": self.offsets.tolist(), "tokens": self.tokens.tolist()}

    @property
    def dim(self) -> int:
        """The width of every token vector."""
        return int(self.tokens.shape[1])

    @property
    def n_tokens(self) -> int:
        """Token vectors of all items together."""
        return int(self.offsets[-1] - self.offsets[0])

    @property
    def nbytes(self) -> int:
        """Bytes the token vectors take (float32), offsets not counted."""
        return self.n_tokens * self.dim * 4

    def row_tokens(self) -> np.ndarray:
        """Token vectors per item (int64)."""
        return np.diff(self.offsets)

    def get(self, i: int) -> np.ndarray:
        """Item ``i``'s ``(n_tokens, dim)`` matrix (a view)."""
        return self.tokens[int(self.offsets[i]) : int(self.offsets[i + 1])]

    def to_list(self) -> list[np.ndarray]:
        """One ``(n_tokens_i, dim)`` view per item."""
        return [self.get(i) for i in range(len(self))]

    def take(self, positions: Sequence[int] | np.ndarray) -> TokenSets:
        """The items at ``positions``, in that order (new arrays)."""
        pos = np.asarray(positions, dtype=np.int64)
        starts, counts = self.offsets[pos], self.offsets[pos + 1] - self.offsets[pos]
        offsets = np.zeros(len(pos) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        gather = np.repeat(starts - offsets[:-1], counts) + np.arange(offsets[-1], dtype=np.int64)
        return TokenSets(self.tokens[gather], offsets)

    @classmethod
    def from_list(cls, sets: Sequence[np.ndarray], dim: int | None = None) -> TokenSets:
        """Join ``(n_i, dim)`` arrays (checked as arrays only: :func:`check_token_sets` checks values)."""
        if dim is None:
            dim = int(np.asarray(sets[0]).shape[1]) if len(sets) else 1
        counts = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
        offsets = np.zeros(len(sets) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        tokens = (np.concatenate([np.asarray(s, dtype=np.float32).reshape(-1, dim) for s in sets])
                  if len(sets) else np.zeros((0, dim), np.float32))
        return cls(np.ascontiguousarray(tokens, dtype=np.float32), offsets)

    @classmethod
    def concat(cls, parts: Sequence[TokenSets]) -> TokenSets:
        """The items of ``parts`` one after another (all of one width)."""
        if not parts:
            raise InputError("no token sets to join")
        shifts = np.cumsum([0] + [p.n_tokens for p in parts[:-1]])
        offsets = np.concatenate([np.zeros(1, np.int64)] + [p.offsets[1:] - p.offsets[0] + s
                                                            for p, s in zip(parts, shifts)])
        tokens = np.concatenate([p.tokens[p.offsets[0] : p.offsets[-1]] for p in parts])
        return cls(tokens, offsets)


def _one(value: Any, item: str, i: int, dim: int) -> np.ndarray:
    """One item's token matrix as C-contiguous float32 ``(n, dim)``, or one error line naming the item."""
    where = f"id {excerpt(item)} (position {i})"
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):  # ragged nested lists
        raise InputError(f"the token vectors of {where} are not a matrix: every token needs {dim} numbers") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"the token vectors of {where} are not a matrix of numbers (dtype {arr.dtype})")
    if arr.ndim != 2:
        if arr.size == 0:
            raise InputError(f"{where} has no token vector: a multi-vector item needs at least one")
        raise InputError(f"the token vectors of {where} must be a 2-d (n_tokens, {dim}) matrix, not shape {arr.shape}")
    if arr.shape[1] != dim:
        raise InputError(f"the token vectors of {where} have dimension {arr.shape[1]}; this space has dimension {dim}")
    if arr.shape[0] == 0:
        raise InputError(f"{where} has no token vector: a multi-vector item needs at least one")
    if arr.shape[0] > MAX_TOKENS_PER_ROW:
        raise InputError(f"{where} has {arr.shape[0]:,} token vectors; an item may hold at most "
                         f"{MAX_TOKENS_PER_ROW:,} (MAX_TOKENS_PER_ROW)")
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(out).all():
        what = "NaN or inf" if not np.isfinite(arr).all() else "values beyond float32 range"
        raise InputError(f"the token vectors of {where} have {what}")
    return out


def check_token_sets(sets: Any, ids: Sequence[str], dim: int) -> TokenSets:
    """A batch of token matrices, one per id, checked whole: the first bad item is one :class:`InputError` line.

    ``sets`` is a sequence of ``(n_tokens_i, dim)`` array-likes (or a :class:`TokenSets`); each
    needs at least one token, at most :data:`~repspace.core.limits.MAX_TOKENS_PER_ROW`, and
    finite numbers. Returns them as :class:`TokenSets` (float32).

    Examples
    --------
    >>> import numpy as np
    >>> try:
    ...     check_token_sets([np.ones((1, 2)), np.zeros((0, 2))], ["a", "b"], dim=2)
    ... except InputError as e:
    ...     print(e)
    id 'b' (position 1) has no token vector: a multi-vector item needs at least one
    """
    if isinstance(sets, TokenSets):
        sets = sets.to_list()
    if isinstance(sets, np.ndarray) and sets.ndim == 2 and len(ids) == 1:
        sets = [sets]  # one item's matrix
    if isinstance(sets, (str, bytes)) or not hasattr(sets, "__len__"):
        raise InputError(f"token sets must be a list of (n_tokens, {dim}) matrices, one per id, "
                         f"not {type(sets).__name__}")
    if len(sets) != len(ids):
        raise InputError(f"got {len(sets)} token sets for {len(ids)} ids")
    return TokenSets.from_list([_one(s, item, i, dim) for i, (s, item) in enumerate(zip(sets, ids))], dim)
