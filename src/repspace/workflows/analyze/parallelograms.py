"""Concept-crystal parallelograms of a stored space's words: residuals before and after projecting out the LDA
distractor directions.

Examples
--------
>>> from repspace.store import example_space
>>> r = parallelograms_space(example_space(12, 6), [["i0", "i1", "i2", "i3"], ["i4", "i5", "i6", "i7"]],
...                          distractors=1)
>>> r.space, len(r.parallelograms.before)
('t', 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.checks import check_strings
from repspace.core.errors import InputError
from repspace.engines.analyze import Parallelograms, parallelograms
from repspace.engines.analyze.parallelograms import DEFAULT_DISTRACTORS, DEFAULT_DRAWS
from repspace.workflows.analyze._vocab import id_rows, rows_of

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceParallelograms", "parallelograms_space"]


@dataclass(frozen=True)
class SpaceParallelograms:
    """A stored space's analogy quadruples scored as parallelograms.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> q = [["i0", "i1", "i2", "i3"], ["i4", "i5", "i6", "i7"]]
    >>> parallelograms_space(example_space(8, 4), q, distractors=1).to_dict()["distractors"]
    1
    """

    space: str
    parallelograms: Parallelograms

    def to_dict(self) -> dict[str, Any]:
        """``{"space", ...}`` and the keys of :meth:`Parallelograms.to_dict`."""
        return {"space": self.space, **self.parallelograms.to_dict()}


def parallelograms_space(space: Space, quads: Sequence[Sequence[str]], *, distractors: int = DEFAULT_DISTRACTORS,
                         draws: int = DEFAULT_DRAWS, seed: int = 0) -> SpaceParallelograms:
    """:func:`repspace.engines.analyze.parallelograms` of quadruples ``a : b :: c : d`` of item ids.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> q = [["i0", "i1", "i2", "i3"], ["i4", "i5", "i6", "i7"], ["i8", "i9", "i0", "i1"]]
    >>> r = parallelograms_space(example_space(10, 5), q, distractors=2).parallelograms
    >>> 0 <= r.mean_after <= 1
    True
    """
    if isinstance(quads, str):
        raise InputError("quads must be a list of 4-word quadruples, not one string")
    quads = [check_strings(q, "a quadruple", "word") for q in quads]
    bad = [q for q in quads if len(q) != 4]
    if bad:
        raise InputError(f"a quadruple has 4 words a, b, c, d; got {len(bad[0])}: {','.join(bad[0])}")
    index, vectors = id_rows(space)
    rows = rows_of(index, [w for q in quads for w in q], space.name, "quadruple words")
    Q = np.asarray(vectors[rows], dtype=np.float64).reshape(len(quads), 4, -1)
    return SpaceParallelograms(space.name, parallelograms(Q, quads, distractors=distractors, draws=draws, seed=seed))
