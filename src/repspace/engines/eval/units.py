"""The per-unit data behind an evaluation figure, kept so that models can be tested against each other later.

A task's main score is a statistic of per-unit arrays: Spearman of (gold,
cosine) over sentence pairs, the mean of per-query nDCG@10 over queries, the
average precision of (label, cosine) over pairs. :class:`Units` records those
arrays with the statistic's name (a key of
:data:`~repspace.engines.eval.uncertainty.STATISTICS`), which arrays are the
task's own (gold scores, labels: equal for any two models scored on the same
data) and, where units have names (retrieval's query ids), those names, so that
two runs align by id. :func:`repspace.engines.eval.comparisons.compare_results`
compares results on them; ``TaskResult.to_dict()`` writes them under
``repspace.units`` and ``TaskResult.from_dict`` reads them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.engines.eval.uncertainty import STATISTICS, Statistic

__all__ = ["Units", "query_units"]


@dataclass(frozen=True, eq=False)
class Units:
    """The arrays a result's main score is computed from, one entry per unit (pair, query, item).

    Parameters
    ----------
    statistic : str
        The statistic of the arrays that gives the main score: a key of
        :data:`~repspace.engines.eval.uncertainty.STATISTICS` (``spearman``,
        ``mean``, ``average_precision``).
    arrays : sequence of 1-d arrays
        The statistic's arguments, in order, one value per unit.
    names : sequence of str
        A name per array (``gold``, ``cosine``, ``ndcg_at_10``...).
    shared : sequence of str, optional
        The names of the arrays that are the task's own (gold scores, labels):
        two results are scored on the same units only when these are equal.
    ids : sequence of str, optional
        A name per unit (query ids, the rows of the data file kept), by which
        two results' units are matched; ``None``: units match by position.

    Raises
    ------
    InputError
        An unknown statistic, arrays that are not 1-d, finite and of one
        length, names that do not match them, or repeated ids.

    Examples
    --------
    >>> u = Units("spearman", [[1.0, 2.0, 3.0], [0.2, 0.1, 0.9]], ("gold", "cosine"), shared=("gold",))
    >>> u.n_units, round(u.value(), 2), u.to_dict()["shared"]
    (3, 0.5, ['gold'])
    >>> Units.from_dict(u.to_dict()) == u
    True
    """

    statistic: str
    arrays: tuple[np.ndarray, ...]
    names: tuple[str, ...]
    shared: tuple[str, ...] = ()
    ids: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise InputError(f"unknown statistic {self.statistic!r}: one of {', '.join(sorted(STATISTICS))}")
        arrays = tuple(_frozen(a) for a in self.arrays)
        names, shared = tuple(str(n) for n in self.names), tuple(str(n) for n in self.shared)
        if not arrays or len(names) != len(arrays) or len(set(names)) != len(names):
            raise InputError(f"units need one distinct name per array, got names {list(names)} for "
                             f"{len(arrays)} arrays")
        if any(a.ndim != 1 for a in arrays) or len({len(a) for a in arrays}) != 1:
            raise InputError(f"units need 1-d arrays of one length, got shapes {[a.shape for a in arrays]}")
        if not set(shared) <= set(names):
            raise InputError(f"shared arrays {sorted(set(shared) - set(names))} are not among {list(names)}")
        ids = None if self.ids is None else tuple(str(i) for i in self.ids)
        if ids is not None and (len(ids) != len(arrays[0]) or len(set(ids)) != len(ids)):
            raise InputError(f"units need one distinct id each: {len(ids)} ids ({len(set(ids))} distinct) "
                             f"for {len(arrays[0])} units")
        object.__setattr__(self, "arrays", arrays)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "shared", shared)
        object.__setattr__(self, "ids", ids)

    @property
    def n_units(self) -> int:
        """The number of units."""
        return len(self.arrays[0])

    @property
    def function(self) -> Statistic:
        """The statistic itself (:data:`~repspace.engines.eval.uncertainty.STATISTICS`)."""
        return STATISTICS[self.statistic]

    def value(self) -> float:
        """The statistic of the arrays: the result's main score (to rounding)."""
        return float(self.function(*self.arrays))

    def array(self, name: str) -> np.ndarray:
        """The array called ``name``."""
        return self.arrays[self.names.index(name)]

    def to_dict(self) -> dict[str, Any]:
        """``{"statistic", "names", "shared", "ids", "arrays"}`` with JSON lists (numbers as they are, exactly)."""
        return {"statistic": self.statistic, "names": list(self.names), "shared": list(self.shared),
                "ids": None if self.ids is None else list(self.ids), "arrays": [a.tolist() for a in self.arrays]}

    @classmethod
    def from_dict(cls, data: Any) -> Units:
        """Units from :meth:`to_dict`'s dict (as read back from JSON).

        Raises
        ------
        InputError
            When ``data`` is not such a dict.
        """
        if not isinstance(data, dict) or not {"statistic", "names", "arrays"} <= data.keys():
            raise InputError("per-unit data must be a dict with statistic, names and arrays")
        arrays = data["arrays"]
        if not isinstance(arrays, list) or not all(isinstance(a, list) for a in arrays):
            raise InputError("the per-unit arrays must be lists of numbers")
        return cls(str(data["statistic"]), tuple(np.asarray(a) for a in arrays), tuple(data["names"]),
                   tuple(data.get("shared") or ()), data.get("ids"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Units):
            return NotImplemented
        return ((self.statistic, self.names, self.shared, self.ids) == (other.statistic, other.names, other.shared,
                                                                          other.ids)
                and all(np.array_equal(a, b) for a, b in zip(self.arrays, other.arrays, strict=True)))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        ids = "" if self.ids is None else ", with ids"
        return f"Units({self.statistic} of {', '.join(self.names)}: {self.n_units} units{ids})"


def _frozen(values: Sequence[Any] | np.ndarray) -> np.ndarray:
    """A read-only copy of the values: numbers, finite (the arrays are written as JSON)."""
    a = np.array(values)
    if a.dtype == bool:
        a = a.astype(np.int64)
    if a.dtype.kind not in "iuf":
        raise InputError(f"per-unit arrays hold numbers, not {a.dtype}")
    if a.dtype.kind == "f" and a.size and not np.isfinite(a).all():
        raise InputError(f"per-unit arrays must be finite, got {float(a[~np.isfinite(a)][0])}")
    a.setflags(write=False)
    return a


def query_units(per_query: dict[str, dict[str, float]], metric: str) -> Units:
    """The units of a mean over queries: each query's ``metric``, by query id.

    Parameters
    ----------
    per_query : dict
        Query id to its scores (:func:`~repspace.engines.eval.ranking.query_scores`).
    metric : str
        The score averaged (``ndcg_at_10``).

    Examples
    --------
    >>> query_units({"q1": {"ndcg_at_10": 1.0}, "q2": {"ndcg_at_10": 0.5}}, "ndcg_at_10")
    Units(mean of ndcg_at_10: 2 units, with ids)
    """
    values = np.array([scores[metric] for scores in per_query.values()], dtype=np.float64)
    return Units("mean", (values,), (metric,), ids=tuple(per_query))
