"""The registry of comparison measures and what each declares (ReSi style).

Each :class:`Measure` records its JSON key (METRICS.md), the public function,
whether a larger value means more similar, whether it is symmetric in its two
arguments, and the transformations of one space it is invariant to. The
declarations are checked by the tests: every declared invariance leaves the
value unchanged, and every undeclared one can change it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from repspace.engines.compare.cka import cka_debiased, cka_linear
from repspace.engines.compare.neighbours import mutual_knn, neighbourhood_jaccard
from repspace.engines.compare.procrustes import procrustes
from repspace.engines.compare.rsa import rsa
from repspace.engines.compare.svcca import svcca

__all__ = ["INVARIANCES", "MEASURES", "Measure"]

#: The invariances a measure may declare. ``orthogonal``: ``Y → YQ`` for orthogonal ``Q``;
#: ``isotropic_scaling``: ``Y → cY``, ``c ≠ 0``; ``translation``: ``Y → Y + 1bᵀ``;
#: ``invertible_linear``: ``Y → YA`` for invertible ``A``; ``permutation``: the columns reordered
#: (a special case of ``orthogonal``).
INVARIANCES = ("orthogonal", "isotropic_scaling", "translation", "invertible_linear", "permutation")


@dataclass(frozen=True)
class Measure:
    """What one comparison measure is and declares.

    Attributes
    ----------
    key : str
        Its JSON key (METRICS.md, "Comparing two spaces").
    function : callable
        ``function(X, Y, ...)``: the public function computing it.
    larger_is_more_similar : bool
        False for distances (``procrustes``).
    symmetric : bool
        ``function(X, Y) == function(Y, X)``.
    invariances : frozenset of str
        A subset of :data:`INVARIANCES`.
    uses_k : bool
        Whether it depends on the neighbourhood size ``k``.
    value_range : tuple of float
        The interval its headline number lies in.
    source : str
        The reference it follows.

    Examples
    --------
    >>> MEASURES["procrustes"].larger_is_more_similar, MEASURES["procrustes"].symmetric
    (False, True)
    >>> sorted(MEASURES["mutual_knn"].invariances)
    ['isotropic_scaling', 'orthogonal', 'permutation']
    >>> MEASURES["cka_linear"].score(0.5), MEASURES["rsa"].to_dict()["source"]
    (0.5, 'Kriegeskorte et al. 2008')
    """

    key: str
    function: Callable[..., Any] = field(repr=False, compare=False)
    larger_is_more_similar: bool
    symmetric: bool
    invariances: frozenset[str]
    uses_k: bool = False
    value_range: tuple[float, float] = (0.0, 1.0)
    source: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.invariances) - set(INVARIANCES)
        if unknown:
            raise ValueError(f"unknown invariances {sorted(unknown)}; choose from {INVARIANCES}")

    def __repr__(self) -> str:
        direction = "larger is more similar" if self.larger_is_more_similar else "a distance"
        sym = "symmetric" if self.symmetric else "not symmetric"
        return f"Measure({self.key!r}: {direction}, {sym}, invariant to {', '.join(sorted(self.invariances))})"

    def score(self, result: Any) -> float:
        """The headline number of a result of this measure (the float itself, or its ``value``)."""
        return float(result if isinstance(result, (int, float)) else result.value)

    def to_dict(self) -> dict[str, Any]:
        """``{"key", "larger_is_more_similar", "symmetric", "invariances", "uses_k", "value_range", "source"}``."""
        return {"key": self.key, "larger_is_more_similar": self.larger_is_more_similar,
                "symmetric": self.symmetric, "invariances": sorted(self.invariances),
                "uses_k": self.uses_k, "value_range": list(self.value_range), "source": self.source}


_RIGID = frozenset({"orthogonal", "isotropic_scaling", "translation", "permutation"})
_ANGULAR = frozenset({"orthogonal", "isotropic_scaling", "permutation"})  # cosine: not translation
_SIGNED = (-1.0, 1.0)

#: Every measure, by JSON key, in the order of METRICS.md.
MEASURES: dict[str, Measure] = {m.key: m for m in (
    Measure("cka_linear", cka_linear, True, True, _RIGID, source="Kornblith et al. 2019"),
    Measure("cka_debiased", cka_debiased, True, True, _RIGID, value_range=_SIGNED,
            source="Nguyen et al. 2021; Song et al. 2012 eq. 5"),
    Measure("mutual_knn", mutual_knn, True, True, _ANGULAR, uses_k=True, source="Huh et al. 2024"),
    Measure("neighbourhood_jaccard", neighbourhood_jaccard, True, True, _ANGULAR, uses_k=True,
            source="Klabunde et al. 2023"),
    Measure("rsa", rsa, True, True, _ANGULAR, value_range=_SIGNED, source="Kriegeskorte et al. 2008"),
    Measure("procrustes", procrustes, False, True, _RIGID, value_range=(0.0, math.sqrt(2.0)),
            source="Williams et al. 2021"),
    Measure("svcca", svcca, True, True, _RIGID, source="Raghu et al. 2017"),
)}
