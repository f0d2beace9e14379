"""Bootstrap intervals on a stored space's cosine comparisons, with the spread of its non-matching pairs beside
them (:func:`repspace.engines.analyze.similarity_ci` and :func:`~repspace.engines.analyze.spread_out`).

Each compared vector is the mean of a set of the space's items: a word set given by ids (``king,queen,prince``),
or, with ``by``, every item whose metadata field ``by`` has a value (one word's encodings in several contexts:
``by="word"``, ``a="bank"``).

Examples
--------
>>> from repspace.store import example_space
>>> r = similarity_ci_space(example_space(60, 8), ["i0", "i1", "i2"], ["i3", "i4"], ["i5", "nope"], resamples=50)
>>> r.sizes, r.missing
((3, 2, 1), {'a': [], 'b': [], 'c': ['nope']})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from repspace.core.errors import InputError
from repspace.engines.analyze import SimilarityCI, SpreadOut, similarity_ci, spread_out
from repspace.engines.analyze.similarity_ci import DEFAULT_RESAMPLES, DEFAULT_SPREAD_PAIRS
from repspace.workflows.interpret import labelled

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceSimilarityCI", "similarity_ci_space"]


@dataclass(frozen=True)
class SpaceSimilarityCI:
    """Intervals on one comparison in a stored space, and the space's spread-out statistics.

    Attributes
    ----------
    space : str
    by : str or None
        The metadata field the sets were selected by (``None``: by id).
    sets : dict
        ``{"a", "b", "c"}``: the ids (or field values) asked for each set.
    missing : dict
        The asked ids not in the space (values that select no item), per set.
    ci : SimilarityCI
    spread : SpreadOut or None
        Over the space's distinct pairs (``None`` when not asked).

    Examples
    --------
    >>> from repspace.store import example_space
    >>> sorted(similarity_ci_space(example_space(20, 4), ["i0"], ["i1"], resamples=20).to_dict())[:4]
    ['by', 'ci', 'missing', 'sets']
    """

    space: str
    by: str | None
    sets: dict[str, list[str]] = field(repr=False)
    missing: dict[str, list[str]]
    ci: SimilarityCI
    spread: SpreadOut | None

    @property
    def sizes(self) -> tuple[int, ...]:
        """Items behind each set."""
        return self.ci.sizes

    def to_dict(self) -> dict[str, Any]:
        """``{"space", "by", "sets", "missing", "ci": SimilarityCI.to_dict(), "spread": SpreadOut.to_dict()}``."""
        return {"space": self.space, "by": self.by, "sets": self.sets, "missing": self.missing,
                "ci": self.ci.to_dict(), "spread": None if self.spread is None else self.spread.to_dict()}


def _rows_by_id(space: Space, names: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    snap = space.snapshot()
    where = {i: r for r, i in enumerate(snap.ids)}
    hit = [where[n] for n in names if n in where]
    return np.asarray(snap.vectors[hit], np.float64), [n for n in names if n not in where]


def similarity_ci_space(space: Space, a: Sequence[str], b: Sequence[str], c: Sequence[str] | None = None, *,
                        by: str | None = None, over: str = "items", resamples: int = DEFAULT_RESAMPLES,
                        level: float = 0.95, seed: int | None = 0, normalize: bool = True,
                        spread_pairs: int | None = DEFAULT_SPREAD_PAIRS) -> SpaceSimilarityCI:
    """Bootstrap intervals on ``cos(a, b)`` (and ``cos(a, c)``, their difference and the share of resamples whose
    order flips) between the mean vectors of sets of a stored space's items.

    Parameters
    ----------
    space : Space
    a, b, c : sequence of str
        Item ids (or, with ``by``, values of that metadata field) whose vectors' mean is each compared vector;
        ids not in the space are left out and listed in ``missing``; ``c`` is optional.
    by : str, optional
        Select each set as the items whose metadata ``by`` equals one of its values (compared as text).
    over, resamples, level, seed, normalize
        As :func:`repspace.engines.analyze.similarity_ci`.
    spread_pairs : int or None
        Distinct pairs behind the spread-out statistics (:func:`repspace.engines.analyze.spread_out`); ``None``
        leaves them out.

    Raises
    ------
    InputError
        A set with none of its ids in the space (or no item with its values), an unknown ``by`` field, or bad
        options.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> similarity_ci_space(example_space(20, 4), ["x", "y"], ["i1"])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: set a: none of 'x', 'y' is in space 't'
    """
    asked = {"a": list(a), "b": list(b)} | ({} if c is None else {"c": list(c)})
    for name, names in asked.items():
        if not names:
            raise InputError(f"set {name} is empty: give at least one {'value' if by else 'id'}")
    if by is not None:
        ids, X, labels = labelled(space, by)
        text = np.asarray([str(v) for v in labels.tolist()], dtype=object)
        pick = lambda names: (np.asarray(X[np.isin(text, names)], np.float64),  # noqa: E731
                              [n for n in names if not (text == n).any()])
    else:
        pick = lambda names: _rows_by_id(space, names)  # noqa: E731
    vecs: dict[str, np.ndarray] = {}
    missing: dict[str, list[str]] = {}
    for name, names in asked.items():
        vecs[name], missing[name] = pick(names)
        if len(vecs[name]) == 0:
            shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
            where = f"no item has {by} = {shown}" if by else f"none of {shown} is in space {space.name!r}"
            raise InputError(f"set {name}: {where}")
    ci = similarity_ci(vecs["a"], vecs["b"], vecs.get("c"), over=over, resamples=resamples, level=level,
                       seed=seed, normalize=normalize)
    spread = None if spread_pairs is None else spread_out(space.vectors(), pairs=spread_pairs, seed=seed)
    return SpaceSimilarityCI(space.name, by, asked, missing, ci, spread)
