"""Document similarity profiles of a stored space whose items are sentences of documents.

Reads each item's document (``doc_field``) and position (``position_field``) from its metadata and profiles every
document (:func:`repspace.engines.analyze.doc_profiles`): the successive-sentence similarity series and the
within-document similarity matrix, by cosine whatever the space's metric (the question is about directions).

Examples
--------
>>> from repspace.store import example_space
>>> meta = [{"doc": i // 5, "pos": i % 5} for i in range(20)]
>>> r = doc_profile_space(example_space(20, 4, metadata=meta), "doc", "pos")
>>> r.profiles.n_documents, r.profiles.documents[0].n_sentences
(4, 5)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.engines.analyze import DocProfiles, doc_profiles
from repspace.engines.analyze.doc_profile import BETWEEN_PAIRS

if TYPE_CHECKING:
    from repspace.core.store import Space

__all__ = ["SpaceDocProfiles", "doc_profile_space"]


@dataclass(frozen=True)
class SpaceDocProfiles:
    """A stored space's document profiles, with the fields they were read from.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> s = example_space(6, 3, metadata=[{"d": "a", "p": i} for i in range(6)])
    >>> doc_profile_space(s, "d", "p").to_dict(matrix=False)["documents"][0]["n_sentences"]
    6
    """

    space: str
    doc_field: str
    position_field: str
    profiles: DocProfiles

    def to_dict(self, matrix: bool = True) -> dict[str, Any]:
        """``{"space", "doc_field", "position_field"}`` and :meth:`DocProfiles.to_dict`'s keys."""
        return {"space": self.space, "doc_field": self.doc_field, "position_field": self.position_field,
                **self.profiles.to_dict(matrix)}


def doc_profile_space(space: Space, doc_field: str, position_field: str, *, documents: list[str] | None = None,
                      between_pairs: int = BETWEEN_PAIRS, seed: int = 0) -> SpaceDocProfiles:
    """Profile the documents of ``space``: items with both fields, ordered by position within each document.

    ``documents``: only these (their names as text); the between-document baseline is then over them too.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> meta = [{"doc": "a", "pos": 1}, {"doc": "a", "pos": 0}, {"doc": "b", "pos": 0}, {}]
    >>> r = doc_profile_space(example_space(vectors=np.eye(4), metadata=meta), "doc", "pos")
    >>> r.profiles.documents[0].ids, r.profiles.documents[0].successive
    (['i1', 'i0'], [0.0])
    """
    from repspace.workflows.interpret import labelled

    if doc_field == position_field:
        raise InputError(f"the document and the position field are both {doc_field!r}: give two fields")
    doc_ids, X, docs = labelled(space, doc_field)
    pos_ids, _, positions = labelled(space, position_field, numeric=True)
    pos_of = dict(zip(pos_ids, positions.tolist(), strict=True))
    keep = [k for k, i in enumerate(doc_ids) if i in pos_of]
    if documents is not None:
        wanted = {str(d) for d in documents}
        keep = [k for k in keep if str(docs[k]) in wanted]
    if not keep:
        raise InputError(f"no item of space {space.name!r} has both fields {doc_field!r} and {position_field!r}"
                         + (" in the documents named" if documents is not None else ""))
    ids = [doc_ids[k] for k in keep]
    pos = [pos_of[i] for i in ids]
    pos = [int(p) if float(p).is_integer() else p for p in pos]
    result = doc_profiles(np.asarray(X)[keep], [docs[k] for k in keep], pos, ids=ids,
                          between_pairs=between_pairs, seed=seed)
    return SpaceDocProfiles(space.name, doc_field, position_field, result)
