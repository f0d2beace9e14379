"""Hierarchical orthogonality on a stored word space, the hierarchy read from WordNet's nouns.

The concepts are the noun synsets under ``root`` down to ``depth`` hyponym steps; each concept's words are the
lemmas of the synset and of all its hyponyms at any depth (``Y(w)`` of Park et al.), lowercased, that are ids of
the space (a collocation's ``_`` is tried as a space too); a concept with fewer than ``min_words`` of them is left
out, and so is a pair whose child has all its parent's words (the difference would be 0). The pairs are the
direct hyponym links between the concepts kept. :func:`repspace.engines.analyze.hierarchy_orthogonality` scores
them.

Examples
--------
>>> lemmas, edges = hierarchy_tree("carnivore.n.01", 2)
>>> ("carnivore.n.01", "feline.n.01") in edges, "tiger" in lemmas["feline.n.01"]
(True, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.analyze import HierarchyOrthogonality, hierarchy_orthogonality
from repspace.engines.analyze.hierarchy import DEFAULT_SHUFFLES
from repspace.engines.learn.wordnet import read_synsets
from repspace.workflows.analyze._vocab import id_rows

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["DEFAULT_DEPTH", "DEFAULT_MIN_WORDS", "DEFAULT_ROOT_SYNSET", "SpaceHierarchy", "hierarchy_space",
           "hierarchy_tree"]

#: The hierarchy's root synset, its depth in hyponym steps, and the fewest words a concept needs in the space.
DEFAULT_ROOT_SYNSET = "entity.n.01"
DEFAULT_DEPTH = 4
DEFAULT_MIN_WORDS = 20


@lru_cache(maxsize=4)
def _children(folder: str | None) -> dict[str, tuple[str, ...]]:
    """Each noun synset's direct hyponyms (the reverse of its ``@`` pointers)."""
    out: dict[str, list[str]] = {}
    for name, s in read_synsets("n", folder).items():
        for h in s.hypernyms:
            out.setdefault(h, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def hierarchy_tree(root: str = DEFAULT_ROOT_SYNSET, depth: int = DEFAULT_DEPTH, wordnet: str | Path | None = None
                   ) -> tuple[dict[str, tuple[str, ...]], list[tuple[str, str]]]:
    """``(lemmas, edges)``: every noun synset under ``root`` within ``depth`` hyponym steps with the lowercased
    lemmas of it and all its hyponyms (at any depth), and the (parent, child) hyponym links among them.

    Examples
    --------
    >>> lemmas, edges = hierarchy_tree("feline.n.01", 1)
    >>> edges
    [('feline.n.01', 'big_cat.n.01'), ('feline.n.01', 'cat.n.01')]
    >>> "lion" in lemmas["big_cat.n.01"], "lion" in lemmas["cat.n.01"]
    (True, False)
    """
    depth = check_scalar(depth, "depth", int, low=1)
    if not isinstance(root, str) or not root.endswith(tuple(f".n.{i:02d}" for i in range(1, 100))):
        raise InputError(f"root must be a noun synset name such as 'animal.n.01', not {root!r}")
    folder = None if wordnet is None else str(wordnet)
    synsets = read_synsets("n", folder)
    if root not in synsets:
        raise InputError(f"{root!r} is not a noun synset of WordNet")
    children = _children(folder)
    level, edges, frontier = {root: 0}, [], [root]
    for step in range(depth):
        nxt = []
        for p in frontier:
            for c in sorted(children.get(p, ())):
                edges.append((p, c))
                if c not in level:
                    level[c] = step + 1
                    nxt.append(c)
        frontier = nxt
    memo: dict[str, frozenset[str]] = {}

    def below(name: str) -> frozenset[str]:
        stack = [name]
        while stack:  # post-order without recursion: WordNet's noun hierarchy is 20 levels deep
            n = stack[-1]
            pending = [c for c in children.get(n, ()) if c not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            words = {w.lower() for w in synsets[n].lemmas}
            for c in children.get(n, ()):
                words |= memo[c]
            memo[n] = frozenset(words)
        return memo[name]

    return {n: tuple(sorted(below(n))) for n in level}, edges


def _rows(words: Iterable[str], index: dict[str, int]) -> list[int]:
    out = []
    for w in words:
        r = index.get(w, index.get(w.replace("_", " ")))
        if r is not None:
            out.append(r)
    return out


@dataclass(frozen=True)
class SpaceHierarchy:
    """Hierarchical orthogonality of a stored space over a WordNet hierarchy.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_store
    >>> words = sorted(set(hierarchy_tree("feline.n.01", 1)[0]["feline.n.01"]))
    >>> sp = example_store().create_space("w", dim=6)
    >>> _ = sp.add(words, np.random.default_rng(0).standard_normal((len(words), 6)))
    >>> hierarchy_space(sp, root="feline.n.01", depth=1, min_words=5, shuffles=0).to_dict()["n_pairs"]
    2
    """

    space: str
    root: str
    depth: int
    min_words: int
    n_synsets: int
    result: HierarchyOrthogonality

    def to_dict(self) -> dict[str, Any]:
        """``{"space", "root", "depth", "min_words", "n_synsets", ...}`` and the keys of
        :meth:`HierarchyOrthogonality.to_dict`."""
        head = {"space": self.space, "root": self.root, "depth": self.depth, "min_words": self.min_words,
                "n_synsets": self.n_synsets}
        return {**head, **self.result.to_dict()}


def hierarchy_space(space: Space, *, root: str = DEFAULT_ROOT_SYNSET, depth: int = DEFAULT_DEPTH,
                    min_words: int = DEFAULT_MIN_WORDS, whiten: bool = True, shuffles: int = DEFAULT_SHUFFLES,
                    seed: int = 0, wordnet: str | Path | None = None) -> SpaceHierarchy:
    """Park et al.'s hierarchical orthogonality (S023) of a word space over WordNet's nouns under ``root`` (see
    the module for how concepts and pairs are chosen).

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.store import example_store
    >>> words = sorted(set(hierarchy_tree("feline.n.01", 1)[0]["feline.n.01"]))
    >>> sp = example_store().create_space("w", dim=6)
    >>> _ = sp.add(words, np.random.default_rng(0).standard_normal((len(words), 6)))
    >>> r = hierarchy_space(sp, root="feline.n.01", depth=1, min_words=5, shuffles=1)
    >>> r.result.n_pairs, r.n_synsets
    (2, 3)
    """
    min_words = check_scalar(min_words, "min_words", int, low=2)
    lemmas, edges = hierarchy_tree(root, depth, wordnet)
    index, vectors = id_rows(space)
    sets = {n: sorted(set(_rows(words, index))) for n, words in lemmas.items()}
    kept = {n for n, r in sets.items() if len(r) >= min_words}
    pairs = [(p, c) for p, c in edges if p in kept and c in kept and sets[p] != sets[c]]
    if not pairs:
        known = max((len(r) for r in sets.values()), default=0)
        raise InputError(f"no (parent, child) pair under {root} within depth {depth} has {min_words} words of "
                         f"space {space.name!r} in both (the most any synset has is {known}): lower --min-words, "
                         "raise --depth, or pick another --root")
    result = hierarchy_orthogonality(vectors, {n: sets[n] for n in kept}, pairs, whiten=whiten, shuffles=shuffles,
                                     seed=seed)
    return SpaceHierarchy(space.name, root, depth, min_words, len(lemmas), result)
