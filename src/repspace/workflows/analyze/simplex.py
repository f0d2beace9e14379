"""Categorical concepts as simplices on a stored word space, the categories WordNet noun synsets.

Each category's words are the lowercased lemmas of its synset and of all its hyponyms (as
:func:`~repspace.workflows.analyze.hierarchy.hierarchy_tree` gathers them) that are ids of the space (a
collocation's ``_`` tried as a space too); a word under two of the synsets is left out of both.
:func:`repspace.engines.analyze.categorical_simplex` scores them.

Examples
--------
>>> w = category_words(["big_cat.n.01", "cat.n.01"])
>>> "lion" in w["big_cat.n.01"], "lion" in w["cat.n.01"]
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repspace.core.checks import check_strings
from repspace.core.errors import InputError
from repspace.engines.analyze import CategoricalSimplex, categorical_simplex
from repspace.engines.analyze.simplex import DEFAULT_FOLDS
from repspace.workflows.analyze._vocab import id_rows
from repspace.workflows.analyze.hierarchy import hierarchy_tree

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["DEFAULT_CATEGORIES", "SpaceSimplex", "category_words", "simplex_space"]

#: Park et al.'s example of a categorical concept: {mammal, bird, fish, reptile}.
DEFAULT_CATEGORIES = ("mammal.n.01", "bird.n.01", "fish.n.01", "reptile.n.01")


def category_words(synsets: Sequence[str], wordnet: str | Path | None = None) -> dict[str, tuple[str, ...]]:
    """Each synset's lowercased lemmas and those of all its hyponyms.

    Examples
    --------
    >>> "sparrow" in category_words(["bird.n.01"])["bird.n.01"]
    True
    """
    synsets = check_strings(synsets, "synsets", "synset")
    if len(set(synsets)) != len(synsets):
        raise InputError("a category synset is named twice")
    return {s: hierarchy_tree(s, 1, wordnet)[0][s] for s in synsets}


@dataclass(frozen=True)
class SpaceSimplex:
    """The simplex of WordNet sibling categories in a stored space.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_store
    >>> cats = ["big_cat.n.01", "cat.n.01"]
    >>> words = sorted({w for ws in category_words(cats).values() for w in ws})
    >>> sp = example_store().create_space("w", dim=4)
    >>> _ = sp.add(words, np.random.default_rng(0).standard_normal((len(words), 4)))
    >>> simplex_space(sp, cats, folds=2).to_dict()["k"]
    2
    """

    space: str
    result: CategoricalSimplex

    def to_dict(self) -> dict[str, Any]:
        """``{"space", ...}`` and the keys of :meth:`CategoricalSimplex.to_dict`."""
        return {"space": self.space, **self.result.to_dict()}


def simplex_space(space: Space, synsets: Sequence[str] = DEFAULT_CATEGORIES, *, whiten: bool = True,
                  folds: int = DEFAULT_FOLDS, seed: int = 0, wordnet: str | Path | None = None) -> SpaceSimplex:
    """Park et al.'s categorical simplex (S023) of the WordNet noun synsets ``synsets`` in a word space (see the
    module for how their words are chosen).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_store
    >>> cats = ["big_cat.n.01", "cat.n.01"]
    >>> words = sorted({w for ws in category_words(cats).values() for w in ws})
    >>> sp = example_store().create_space("w", dim=4)
    >>> _ = sp.add(words, np.random.default_rng(0).standard_normal((len(words), 4)))
    >>> r = simplex_space(sp, cats, folds=2).result
    >>> r.categories, r.rank
    (('big_cat.n.01', 'cat.n.01'), 1)
    """
    words = category_words(synsets, wordnet)
    index, vectors = id_rows(space)
    sets = {}
    for s, ws in words.items():
        rows = {index.get(w, index.get(w.replace("_", " "))) for w in ws}
        sets[s] = sorted(r for r in rows if r is not None)
    return SpaceSimplex(space.name, categorical_simplex(vectors, sets, whiten=whiten, folds=folds, seed=seed))
