"""Set-operation queries (SetCSE): rank items by their cosine to examples that must be near, minus their cosine to
examples that must not.

SetCSE (Liu 2024, "SetCSE: Set Operations using Contrastive Learning of Sentence Embeddings", ICLR) measures an
item ``x`` against a *set* of examples ``S`` by the mean cosine similarity ``Sim(x, S) = mean_{s ∈ S} cos(x, s)``
and defines its operations by it: the intersection ``A ∩ B`` ranks the items of ``A`` by ``Sim(x, B)``
(descending), the difference ``A \\ C`` by ``Sim(x, C)`` (ascending), and an operation series
``A ∩ B1 ∩ ... ∩ Bm \\ C1 \\ ... \\ Cn`` by ``Σ_i Sim(x, Bi) - Σ_j Sim(x, Cj)``. Here ``A`` is the space
(the examples themselves left out) and every example is a set of its own (``Sim(x, {b}) = cos(x, b)``):

    ``score(x) = Σ_{b ∈ all_of} cos(x, b) - Σ_{c ∈ none_of} cos(x, c)``

With ``all_of = [king, woman]`` and ``none_of = [man]`` this is the 3CosAdd analogy score, and GloVe ranks
``queen`` first; on Google's analogies over 30,000 GloVe words it answers 0.4969 of 14,877 questions, as gensim's
3CosAdd does (EVALUATION.md, "Set queries"). A mean over all-of examples minus a mean over none-of examples (one
set per side) weights the one none-of example twice as much as each all-of one: it answers 0.0369 of them, and
ranks ``queen`` 26,124th of 400,000 words. The paper's series of single-example sets is what is meant.

Where this differs from the paper: the paper first fine-tunes the encoder with its inter-set contrastive loss on
the given sets, then ranks; here the vectors are searched as they are (the operations, not the training). A set
of several examples standing for one meaning (averaged inside, ``Sim(x, B)``) is not offered: each example is
its own set.

Because a sum of cosines is one inner product, ``score(x) = <x / |x|, w>`` with
``w = Σ_b b/|b| - Σ_c c/|c|`` (:func:`set_query_vector`), a set query is one vector query: a cosine space
searches it with any index (exact, HNSW, funnels, filters) and scales the cosine by ``|w|``
(:func:`repspace.workflows.search.set_search.set_search`).

Examples
--------
>>> import numpy as np
>>> x = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
>>> set_scores(x, all_of=np.array([[1.0, 0.0]]), none_of=np.array([[0.0, 1.0]])).round(3).tolist()
[1.0, -1.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from repspace.core.arrays import unit_rows
from repspace.core.errors import InputError

__all__ = ["set_query_vector", "set_scores"]

#: A query vector this short means the all-of and none-of examples cancel out: every item would score
#: (about) 0 and the ranking would be float rounding.
CANCEL_TOLERANCE = 1e-6


def _examples(vectors: object, what: str, dim: int | None) -> np.ndarray:
    """``vectors`` as a float64 ``(n, dim)`` array of unit rows; an example without a direction is refused."""
    try:
        arr = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{what} examples must be numeric vectors") from None
    if arr.ndim == 1 and arr.size and dim is not None and arr.size == dim:
        arr = arr[None, :]
    if arr.size == 0:
        return np.zeros((0, dim or (arr.shape[-1] if arr.ndim == 2 else 0)))
    if arr.ndim != 2 or (dim is not None and arr.shape[1] != dim):
        raise InputError(f"{what} examples have shape {arr.shape}; the vectors have dimension {dim}")
    if not np.isfinite(arr).all():
        raise InputError(f"{what} examples hold NaN or inf")
    unit = unit_rows(arr, np.float64)
    directed = unit.any(axis=1)
    if not directed.all():
        raise InputError(f"{what} example {int(np.argmin(directed))} is all zeros: its cosine similarity to "
                         "anything is undefined")
    return unit


def set_query_vector(all_of: np.ndarray, none_of: np.ndarray | None = None, dim: int | None = None) -> np.ndarray:
    """The vector ``w`` with ``score(x) = <x / |x|, w>``: the sum of the unit all-of examples minus that of the
    unit none-of examples.

    Parameters
    ----------
    all_of, none_of : (n, dim) arrays
        The examples the items should be near, and those they should not (either may be empty, not both).
    dim : int, optional
        The dimension the examples must have.

    Returns
    -------
    numpy.ndarray
        ``(dim,)`` float64.

    Raises
    ------
    InputError
        No example; an example of another dimension, not finite or all zeros; or examples that cancel out
        (``|w|`` below :data:`CANCEL_TOLERANCE`: every item would score 0).

    Examples
    --------
    >>> set_query_vector(np.array([[2.0, 0.0], [0.0, 3.0]]), np.array([[0.0, 1.0]])).tolist()
    [1.0, 0.0]
    """
    pos = _examples(all_of, "all-of", dim)
    neg = _examples(np.zeros((0, pos.shape[1])) if none_of is None else none_of, "none-of", dim or pos.shape[1])
    if not len(pos) and not len(neg):
        raise InputError("a set query needs at least one example (all-of or none-of)")
    if len(pos) and len(neg) and pos.shape[1] != neg.shape[1]:
        raise InputError(f"all-of examples have dimension {pos.shape[1]}, none-of examples {neg.shape[1]}")
    d = pos.shape[1] if len(pos) else neg.shape[1]
    w = pos.sum(axis=0) - neg.sum(axis=0) if len(pos) else -neg.sum(axis=0)
    if np.linalg.norm(w) < CANCEL_TOLERANCE:
        raise InputError("the all-of and none-of examples cancel out (their unit vectors sum to the same): every "
                         "item would score 0")
    return w


def set_scores(vectors: np.ndarray, all_of: np.ndarray, none_of: np.ndarray | None = None) -> np.ndarray:
    """SetCSE scores of every row of ``vectors``: summed cosine to ``all_of`` minus summed cosine to ``none_of``.

    Parameters
    ----------
    vectors : (n, dim) array
        The items (a zero row scores 0: it has no direction).
    all_of, none_of : (n_i, dim) arrays
        The examples (see :func:`set_query_vector`).

    Returns
    -------
    numpy.ndarray
        ``(n,)`` float64 scores, at most the number of examples in magnitude; higher is a better match.

    Examples
    --------
    >>> x = np.array([[3.0, 4.0], [0.0, 1.0]])
    >>> set_scores(x, all_of=np.array([[1.0, 0.0], [0.0, 1.0]])).round(2).tolist()  # the two cosines summed
    [1.4, 1.0]
    """
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2:
        raise InputError(f"vectors must be a 2-d array, not of shape {x.shape}")
    w = set_query_vector(all_of, none_of, dim=x.shape[1])
    return unit_rows(x, np.float64) @ w
