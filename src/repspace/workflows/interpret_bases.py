"""Stored spaces re-expressed: as similarities to a named concept vocabulary, and (token spaces) as position,
context and residual parts.

:func:`concept_space` embeds or looks up the concepts (ids or texts, as the
poles of an axis) and writes the chosen items as their cosines to the concepts,
optionally merged into fewer basis vectors
(:func:`repspace.engines.interpret.concept_basis`). :func:`decompose_space` reads a
space of token states whose metadata holds each token's position and context
(its text) and splits their variance into positional, context and residual shares
(:func:`repspace.engines.interpret.mean_decomposition`).

Examples
--------
>>> from repspace.store import example_store
>>> sp = example_store().create_space("t", dim=3, metric="l2")
>>> _ = sp.add(["cat", "dog", "red", "a"], [[1.0, 0, 0], [0.9, 0.1, 0], [0, 0, 1.0], [2.0, 0, 0.1]])
>>> r = concept_space(sp, ["cat", "dog", "red"], items=["a"])
>>> r.basis.names, r.basis.top(2)
(('cat', 'dog', 'red'), [('cat', 'dog')])
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.workflows.interpret import labelled, pole_vectors

if TYPE_CHECKING:
    from repspace.core.store import Space
    from repspace.engines.interpret import ConceptBasis, MeanDecomposition

__all__ = ["ConceptReport", "SpaceDecomposition", "concept_space", "decompose_space"]

_INTEGER = re.compile(r"-?[0-9]+")


@dataclass(frozen=True)
class ConceptReport:
    """Items of a stored space as similarities to concepts: the engine's basis with the items' ids.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=3, metric="l2")
    >>> _ = space.add(["cat", "dog", "red", "a"], np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 0, 1.0], [2.0, 0, 0.1]]))
    >>> r = concept_space(space, ["cat", "dog", "red"], items=["a"])
    >>> r.space, r.ids, r.basis.scores.shape, r.to_dict(top=1)["items"][0]["top"]
    ('t', ['a'], (1, 3), ['cat'])
    """

    space: str
    ids: list[str]
    basis: ConceptBasis

    def to_dict(self, top: int = 3) -> dict[str, Any]:
        """``{"space", "names", "members", "granularity", "linkage", "r2_mean", "n", "items": [{"id", "top",
        "scores", "r2"}]}``: each item's ``top`` basis vectors, most similar first, and its cosine to each."""
        b = self.basis
        top = min(max(int(top), 1), len(b.names))
        tops = b.top(top)
        return {"space": self.space, "names": list(b.names), "members": [list(m) for m in b.members],
                "granularity": int(b.granularity), "linkage": b.linkage, "r2_mean": b.r2_mean, "n": len(self.ids),
                "items": [{"id": i, "top": list(t), "scores": [round(float(v), 6) for v in row],
                           "r2": round(float(r), 6)}
                          for i, t, row, r in zip(self.ids, tops, b.scores.tolist(), b.r2.tolist(), strict=True)]}


def concept_space(space: Space, concepts: Sequence[str], *, granularity: int | None = None,
                  linkage: str = "average", items: Sequence[str] | None = None) -> ConceptReport:
    """Items of ``space`` (all, or the ids ``items``) as cosines to ``concepts`` (ids or texts, each its own
    name), merged into ``granularity`` basis vectors (:func:`repspace.engines.interpret.concept_basis`).

    Examples
    --------
    Three concepts merged into two basis vectors (``cat`` and ``dog`` point the same way):

    >>> from repspace.store import example_store
    >>> space = example_store().create_space("t", dim=3, metric="l2")
    >>> _ = space.add(["cat", "dog", "red", "a"], np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 0, 1.0], [2.0, 0, 0.1]]))
    >>> r = concept_space(space, ["cat", "dog", "red"], granularity=2)
    >>> r.ids, r.basis.names, r.basis.members
    (['cat', 'dog', 'red', 'a'], ('dog/cat', 'red'), (('dog', 'cat'), ('red',)))
    >>> [t[0] for t in r.basis.top(1)]
    ['dog/cat', 'dog/cat', 'red', 'dog/cat']
    """
    from repspace.engines.interpret import concept_basis

    space.metric.require_vector_space("a concept basis (cosines to concept vectors)")
    if isinstance(concepts, str):
        raise InputError("concepts must be a sequence of ids or texts, not one string")
    names = [c for c in concepts if c.strip()]
    if not names:
        raise InputError("a concept basis needs at least one concept")
    C = pole_vectors(space, names)
    if items is None:
        snap = space.snapshot()
        ids, X = list(snap.ids), snap.vectors
    else:
        ids = [i for i in items if i.strip()]
        missing = [i for i in ids if i not in space.existing_ids(ids)]
        if not ids or missing:
            raise InputError(f"{missing[0]!r} is not an id of space {space.name!r}" if missing
                             else "--items names no id")
        X = space.vectors_of(ids)
    return ConceptReport(space.name, ids, concept_basis(X, C, names, granularity=granularity, linkage=linkage))


@dataclass(frozen=True)
class SpaceDecomposition:
    """The variance shares of a stored space of token states: position, context, residual (and cross).

    Examples
    --------
    Random token states of 6 texts of 4 tokens:

    >>> from repspace.store import example_space
    >>> tokens = [{"pos": j % 4, "text": j // 4} for j in range(24)]
    >>> d = decompose_space(example_space(24, 5, name="tok", metric="l2", metadata=tokens), "pos", "text")
    >>> out = d.to_dict()
    >>> out["space"], out["position_field"], out["context_field"], out["n_positions"], out["n_contexts"]
    ('tok', 'pos', 'text', 4, 6)
    """

    space: str
    position_field: str
    context_field: str
    result: MeanDecomposition

    def to_dict(self) -> dict[str, Any]:
        """``{"space", "position_field", "context_field"}`` and the engine's scalar fields."""
        return {"space": self.space, "position_field": self.position_field, "context_field": self.context_field,
                **self.result.to_dict()}


def _labels(values: np.ndarray) -> np.ndarray:
    """Integer labels back as integers (so that positions sort as numbers), others as they are."""
    if all(_INTEGER.fullmatch(str(v)) for v in values.tolist()):
        return values.astype(np.int64)
    return values


def decompose_space(space: Space, position_field: str, context_field: str, *,
                    method: str = "means") -> SpaceDecomposition:
    """Split the token states of ``space`` (items with both metadata fields: each token's position and its
    context, e.g. the index of its text) into positional, context and residual shares
    (:func:`repspace.engines.interpret.mean_decomposition`).

    Examples
    --------
    Token states made mostly of a per-position vector, less of a per-text one:

    >>> from repspace.store import example_space
    >>> rng = np.random.default_rng(0)
    >>> pos, ctx = np.tile(np.arange(4), 6), np.repeat(np.arange(6), 4)  # 6 texts of 4 tokens
    >>> X = 3 * rng.standard_normal((4, 5))[pos] + rng.standard_normal((6, 5))[ctx] + 0.1 * rng.standard_normal((24, 5))
    >>> space = example_space(vectors=X, name="tok", metric="l2",
    ...                       metadata=[{"pos": int(p), "text": int(c)} for p, c in zip(pos, ctx)])
    >>> r = decompose_space(space, "pos", "text").result
    >>> round(r.positional_share, 2), round(r.context_share, 2), round(r.residual_share, 3), r.n_tokens
    (0.91, 0.09, 0.001, 24)
    """
    from repspace.engines.interpret import mean_decomposition

    space.metric.require_vector_space("a decomposition of token states (means of vectors)")
    if position_field == context_field:
        raise InputError(f"the position and the context field are both {position_field!r}: give two fields")
    pos_ids, X, positions = labelled(space, position_field)
    ctx_ids, _, contexts = labelled(space, context_field)
    context_of = dict(zip(ctx_ids, contexts.tolist(), strict=True))
    keep = np.array([i in context_of for i in pos_ids], dtype=bool)
    if not keep.any():
        raise InputError(f"no item of space {space.name!r} has both fields {position_field!r} and "
                         f"{context_field!r}")
    ctx = np.array([context_of[i] for i, k in zip(pos_ids, keep.tolist(), strict=True) if k], dtype=object)
    result = mean_decomposition(X[keep], _labels(positions[keep]), _labels(ctx), method=method)
    return SpaceDecomposition(space.name, position_field, context_field, result)
