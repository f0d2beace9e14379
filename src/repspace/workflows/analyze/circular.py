"""Circular features of a stored space: a cyclic family of its items (days, months) on a circle, in order?

Examples
--------
>>> from repspace.store import example_space
>>> r = circular_space(example_space(10, 4), ["i0", "i1", "i2", "i3", "i4"], permutations=50)
>>> r.space, r.circularity.items[:2]
('t', ('i0', 'i1'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_strings
from repspace.core.errors import InputError
from repspace.engines.analyze import Circularity, circularity
from repspace.engines.analyze.circular import DEFAULT_PERMUTATIONS
from repspace.workflows.analyze._vocab import id_rows, rows_of

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceCircularity", "circular_space"]


@dataclass(frozen=True)
class SpaceCircularity:
    """A cyclic family of a stored space's items, tested for circularity.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> circular_space(example_space(8, 3), ["i0", "i1", "i2", "i3"], permutations=10).to_dict()["n"]
    4
    """

    space: str
    circularity: Circularity

    def to_dict(self) -> dict[str, Any]:
        """``{"space", ...}`` and the keys of :meth:`Circularity.to_dict`."""
        return {"space": self.space, **self.circularity.to_dict()}


def circular_space(space: Space, items: Sequence[str], *, permutations: int = DEFAULT_PERMUTATIONS,
                   seed: int = 0) -> SpaceCircularity:
    """:func:`repspace.engines.analyze.circularity` of the items ``items`` (ids of the space, in their cyclic
    order; every one must be in the space, since a missing one would break the cycle).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> round(circular_space(example_space(12, 2), [f"i{j}" for j in range(6)], permutations=0)
    ...       .circularity.explained_variance, 6)
    1.0
    """
    items = check_strings(items, "items", "an item id")
    repeated = sorted({i for i in items if items.count(i) > 1})
    if repeated:
        raise InputError(f"cycle items must be distinct: {', '.join(map(repr, repeated))} named twice")
    index, vectors = id_rows(space)
    rows = rows_of(index, items, space.name, "cycle items")
    return SpaceCircularity(space.name, circularity(np.asarray(vectors[rows]), items, permutations=permutations,
                                                    seed=seed))

