"""Describe a stored space: its description, and for a sparse space what its rows hold and cost to search.

:func:`describe_space` is what ``repspace info`` prints: the space's
:class:`~repspace.core.space.SpaceInfo`, and for a sparse space its
:class:`~repspace.engines.search.sparse_stats.SparseStatistics` (non-zeros, empty rows, the
expected FLOPs of Paria et al. 2020), measured on the live rows.

Examples
--------
>>> import tempfile, os
>>> from repspace import Store
>>> from repspace.core.sparse import SparseRows
>>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("bow", dim=3, metric="ip", layout="sparse")
>>> _ = sp.add(["a", "b"], SparseRows.from_pairs([([0, 2], [1.0, 1.0]), ([], [])], 3))
>>> d = describe_space(sp).to_dict()
>>> d["layout"], d["sparse"]["empty_rows"], d["sparse"]["expected_flops"]
('sparse', 1, 0.5)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from repspace.core.space import SpaceInfo
from repspace.engines.search.sparse_stats import SparseStatistics, sparse_statistics

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceDescription", "TokenStatistics", "describe_space"]


@dataclass(frozen=True)
class TokenStatistics:
    """What a multi-vector space's live rows hold (``multivector.*`` in ``repspace info --json``).

    ``tokens`` token vectors in all, per row ``tokens_mean`` / ``tokens_max`` / ``tokens_min``, and
    ``bytes``: what the rows' token vectors and offsets take as stored (float32 tokens, int64 offsets).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.core.multivector import TokenSets
    >>> TokenStatistics.of(TokenSets.from_list([np.ones((2, 4)), np.ones((4, 4))])).to_dict()
    {'tokens': 6, 'tokens_mean': 3.0, 'tokens_max': 4, 'tokens_min': 2, 'bytes': 120}
    """

    tokens: int
    tokens_mean: float
    tokens_max: int
    tokens_min: int
    bytes: int

    @classmethod
    def of(cls, sets: Any) -> TokenStatistics:
        """The statistics of :class:`~repspace.core.multivector.TokenSets`."""
        per_row = sets.row_tokens()
        n = len(per_row)
        return cls(int(sets.n_tokens), float(per_row.mean()) if n else 0.0, int(per_row.max()) if n else 0,
                   int(per_row.min()) if n else 0, int(sets.nbytes + 8 * (n + 1)) if n else 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, the keys without the ``multivector.`` prefix."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class SpaceDescription:
    """A space's description (``info``) and, for a sparse space, the statistics of its rows (``sparse``).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> d = describe_space(example_space(3, 2))
    >>> d.sparse is None, d.to_dict()["count"]
    (True, 3)
    """

    info: SpaceInfo
    sparse: SparseStatistics | None = None
    multivector: TokenStatistics | None = None

    def to_dict(self) -> dict[str, Any]:
        """``repspace info --json``: the description's keys, plus ``sparse`` for a sparse space."""
        out = self.info.to_dict()
        if self.sparse is not None:
            out["sparse"] = self.sparse.to_dict()
        if self.multivector is not None:
            out["multivector"] = self.multivector.to_dict()
        return out


def describe_space(space: Space) -> SpaceDescription:
    """The space's description; for a sparse space with the statistics of its live rows (read once).

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace import Store
    >>> from repspace.core.sparse import SparseRows
    >>> sp = Store(os.path.join(tempfile.mkdtemp(), "s.db")).create_space("s", dim=4, layout="sparse")
    >>> _ = sp.add(["a"], SparseRows.from_pairs([([1, 3], [0.5, 0.5])], 4))
    >>> st = describe_space(sp).sparse
    >>> st.nnz, st.features_used, st.expected_flops
    (2, 2, 2.0)
    """
    info = space.info()
    if info.layout == "multivector":
        return SpaceDescription(info, multivector=TokenStatistics.of(space.multivector_rows()[1]))
    if not info.sparse:
        return SpaceDescription(info)
    _, rows = space.sparse_rows()
    return SpaceDescription(info, sparse_statistics(rows, feature_names=space.feature_names() is not None))
