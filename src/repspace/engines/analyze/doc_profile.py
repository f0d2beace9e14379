"""Document similarity profiles: how a document's sentences relate to each other in a space.

For items that are the sentences of documents (each with its document and its position in it), the profile of a
document is its *successive-sentence similarity series* (the cosine of sentence ``t`` and ``t + 1``, in position
order: dips mark topic shifts, as in TextTiling-style segmentation) and its *within-document similarity matrix*
(every pair of its sentences). Comparing such profiles across models is the per-document view of a space that
S090 correlates between models. Summaries: each document's mean successive and mean within-document cosine
(distinct pairs), and over all documents their means beside the mean cosine between sentences of *different*
documents (sampled pairs), the baseline a document's cohesion is read against.

Examples
--------
>>> import numpy as np
>>> X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
>>> r = doc_profiles(X, ["a", "a", "a", "b"], [0, 1, 2, 0])
>>> [round(v, 3) for v in r.documents[0].successive]
[0.707, 0.707]
>>> r.documents[1].n_sentences, r.documents[1].successive
(1, [])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix, unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError

__all__ = ["DocProfile", "DocProfiles", "doc_profiles"]

#: Pairs of sentences from different documents sampled for the between-document baseline.
BETWEEN_PAIRS = 100_000
#: Largest document whose within-document matrix is kept (sentences); larger ones keep only their summaries.
MATRIX_LIMIT = 512


@dataclass(frozen=True)
class DocProfile:
    """One document's profile: its items in position order, the successive series and the similarity matrix.

    ``matrix`` is None for documents over :data:`MATRIX_LIMIT` sentences; ``mean_within`` is over distinct
    pairs (None for a single sentence), ``mean_successive`` and ``min_successive`` None likewise.

    Examples
    --------
    >>> r = doc_profiles(np.eye(3), ["d"] * 3, [2, 0, 1])
    >>> r.documents[0].ids, r.documents[0].positions
    (['1', '2', '0'], [0, 1, 2])
    """

    document: str
    ids: list[str]
    positions: list[Any]
    successive: list[float]
    matrix: list[list[float]] | None = field(repr=False)
    mean_successive: float | None
    min_successive: float | None
    mean_within: float | None

    @property
    def n_sentences(self) -> int:
        """Sentences (items) in the document."""
        return len(self.ids)

    def to_dict(self, matrix: bool = True) -> dict[str, Any]:
        """``{"document", "n_sentences", "ids", "positions", "successive", "mean_successive",
        "min_successive", "mean_within"}`` and ``"matrix"`` when asked for."""
        out = {"document": self.document, "n_sentences": self.n_sentences, "ids": self.ids,
               "positions": self.positions, "successive": self.successive,
               "mean_successive": self.mean_successive, "min_successive": self.min_successive,
               "mean_within": self.mean_within}
        if matrix:
            out["matrix"] = self.matrix
        return out


@dataclass(frozen=True)
class DocProfiles:
    """Every document's profile and the means over documents.

    ``mean_successive`` and ``mean_within``: means over the documents with at least two sentences of their own
    means; ``mean_between``: mean cosine of sampled pairs of sentences from different documents (None for one
    document).

    Examples
    --------
    >>> r = doc_profiles(np.eye(4), ["a", "a", "b", "b"], [0, 1, 0, 1])
    >>> r.n_documents, r.mean_successive, r.mean_between
    (2, 0.0, 0.0)
    """

    documents: list[DocProfile]
    mean_successive: float | None
    mean_within: float | None
    mean_between: float | None
    n_between_pairs: int

    @property
    def n_documents(self) -> int:
        """Documents profiled."""
        return len(self.documents)

    def to_dict(self, matrix: bool = True) -> dict[str, Any]:
        """``{"n_documents", "n_sentences", "mean_successive", "mean_within", "mean_between", "n_between_pairs",
        "documents": [...]}``."""
        return {"n_documents": self.n_documents, "n_sentences": sum(d.n_sentences for d in self.documents),
                "mean_successive": self.mean_successive, "mean_within": self.mean_within,
                "mean_between": self.mean_between, "n_between_pairs": self.n_between_pairs,
                "documents": [d.to_dict(matrix) for d in self.documents]}


def _mean(values: list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def doc_profiles(X: Any, documents: Sequence[Any], positions: Sequence[Any], *, ids: Sequence[str] | None = None,
                 between_pairs: int = BETWEEN_PAIRS, seed: int = 0) -> DocProfiles:
    """Profile every document: sentences ordered by position, cosines of successive ones and of every pair.

    Parameters
    ----------
    X : (n, d) array
        One row per sentence.
    documents : sequence
        The document of each row (any hashable; shown as text).
    positions : sequence
        Each row's position in its document (numbers or anything that sorts); two rows of one document may not
        share a position.
    ids : sequence of str, optional
        Row names (default ``"0"``, ``"1"``, ...).
    between_pairs : int
        Pairs of rows from different documents sampled for ``mean_between`` (0: none).
    seed : int

    Returns
    -------
    DocProfiles
        Documents in order of first appearance.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    >>> p = doc_profiles(X, [7, 7, 7], [1, 2, 3]).documents[0]
    >>> [round(v, 4) for v in p.successive], [round(v, 2) for v in p.matrix[0]], round(p.mean_within, 4)
    ([0.6, 0.8], [1.0, 0.6, 0.0], 0.4667)
    """
    X = as_matrix(X, "X")
    check_scalar(between_pairs, "between_pairs", int, low=0)
    n = len(X)
    if len(documents) != n or len(positions) != n:
        raise InputError(f"{len(documents)} documents and {len(positions)} positions for {n} vectors")
    names = [str(i) for i in range(n)] if ids is None else [str(i) for i in ids]
    if len(names) != n:
        raise InputError(f"{len(names)} ids for {n} vectors")
    U = unit_rows(X)
    groups: dict[Any, list[int]] = {}
    for row, doc in enumerate(documents):
        groups.setdefault(doc, []).append(row)
    profiles: list[DocProfile] = []
    doc_code = np.empty(n, dtype=np.int64)
    for code, (doc, rows) in enumerate(groups.items()):
        doc_code[rows] = code
        try:
            rows = sorted(rows, key=lambda r: positions[r])
        except TypeError as e:
            raise InputError(f"the positions of document {doc!s} do not sort: {e}") from None
        pos = [positions[r] for r in rows]
        if len(set(map(str, pos))) != len(pos):
            raise InputError(f"document {doc!s} has two sentences at one position")
        V = U[rows]
        succ = np.einsum("ij,ij->i", V[:-1], V[1:]).tolist()
        m = len(rows)
        mean_within = None
        matrix = None
        if m > 1:
            S = V @ V.T if m <= MATRIX_LIMIT else None
            total = float(S.sum() - np.trace(S)) if S is not None else float(V.sum(0) @ V.sum(0) - (V * V).sum())
            mean_within = total / (m * (m - 1))
            matrix = S.tolist() if S is not None else None
        elif m == 1:
            matrix = [[float(V[0] @ V[0])]]
        profiles.append(DocProfile(str(doc), [names[r] for r in rows], [p.item() if hasattr(p, "item") else p
                                                                       for p in pos],
                                   succ, matrix, _mean(succ), min(succ) if succ else None, mean_within))
    mean_between, n_pairs = None, 0
    if len(groups) > 1 and between_pairs:
        rng = np.random.default_rng(seed)
        a, b = rng.integers(0, n, between_pairs), rng.integers(0, n, between_pairs)
        keep = doc_code[a] != doc_code[b]
        a, b = a[keep], b[keep]
        n_pairs = int(len(a))
        mean_between = float(np.einsum("ij,ij->i", U[a], U[b]).mean()) if n_pairs else None
    multi = [p for p in profiles if p.n_sentences > 1]
    return DocProfiles(profiles, _mean([p.mean_successive for p in multi]),  # type: ignore[misc]
                       _mean([p.mean_within for p in multi]), mean_between, n_pairs)  # type: ignore[misc]
