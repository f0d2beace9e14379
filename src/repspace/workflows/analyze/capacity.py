"""Near-orthogonality capacity of a stored space (:func:`repspace.engines.analyze.capacity` on its vectors).

Examples
--------
>>> from repspace.store import example_space
>>> r = capacity_space(example_space(100, 16))
>>> r.space, r.capacity.n, r.capacity.exact
('t', 100, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from repspace.engines.analyze import Capacity, capacity
from repspace.engines.analyze.capacity import DEFAULT_PAIRS

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceCapacity", "capacity_space"]


@dataclass(frozen=True)
class SpaceCapacity:
    """A stored space's near-orthogonality tolerance and capacity.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> capacity_space(example_space(30, 4)).to_dict()["space"]
    't'
    """

    space: str
    capacity: Capacity

    def to_dict(self) -> dict[str, Any]:
        """``{"space", ...}`` and the keys of :meth:`Capacity.to_dict`."""
        return {"space": self.space, **self.capacity.to_dict()}


def capacity_space(space: Space, *, pairs: int = DEFAULT_PAIRS, seed: int = 0) -> SpaceCapacity:
    """The tolerance ε and the capacity it implies for a stored space's live vectors (cosines, whatever the
    space's metric: the question is about directions).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> round(capacity_space(example_space(200, 8), pairs=5000).capacity.cosine_std, 1)
    0.4
    """
    return SpaceCapacity(space.name, capacity(space.snapshot().vectors, pairs=pairs, seed=seed))
