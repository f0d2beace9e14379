"""Query-agnostic index pruning: score each item's "quality" without a query, drop the lowest.

Chang et al., "Neural Passage Quality Estimation for Static Pruning" (SIGIR 2024,
S179) score every passage once, before any query, and drop the bottom share of
the corpus; their best estimator (QualT5) is a fine-tuned T5 classifier, and
with it ">25% of passages" go with statistically equivalent effectiveness.
Their unsupervised estimators need only the corpus; the one computed from the
vectors themselves is the magnitude of a dense retriever's vector (TAS-B),
which is ``norm`` here. The others below are classifier-free proxies of the
same idea ("will any query ever retrieve this item?") computed on the space:

* ``norm``: the vector's Euclidean length (larger kept; under an inner-product
  metric a longer vector scores higher for every query). Meaningless for a
  model that normalises its output (all norms 1): the order is then the rows'.
* ``centroid``: cosine to the mean direction of the corpus (typical items kept).
* ``hubness``: how many other items have it among their ``k`` nearest (its
  k-occurrence; an item in nobody's neighbourhood is rarely anybody's answer).
* ``random``: a seeded random score, the baseline a quality score must beat.

The supervised QualT5 and the text statistics (perplexity, the share of unique
terms, CDD) are not here: the first needs the trained model, the others the text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.exact import exact_search, normalize_rows
from repspace.core.space import Metric

#: The quality scores :func:`quality_scores` computes.
SCORES = ("norm", "centroid", "hubness", "random")
#: Largest share of a corpus a pruning may drop (keeping nothing is not a pruning).
MAX_DROP = 0.99

__all__ = ["SCORES", "quality_scores", "kept_rows"]


def quality_scores(vectors: Any, by: str, *, metric: Metric | str = "cosine", k: int = 10,
                   seed: int = 0) -> np.ndarray:
    """One query-agnostic quality score per item (larger = keep): see the module's list for ``by``.

    Parameters
    ----------
    vectors : (n, d) array
    by : ``norm``, ``centroid``, ``hubness`` or ``random``
    metric : the space's metric (``hubness`` finds each item's neighbours with it)
    k : neighbours per item for ``hubness``
    seed : seed of ``random``

    Examples
    --------
    >>> x = np.array([[1.0, 0.0], [0.9, 0.1], [0.8, -0.1], [-1.0, 0.2]])
    >>> quality_scores(x, "centroid").round(2).tolist()
    [1.0, 1.0, 0.98, -0.96]
    >>> quality_scores(x, "hubness", k=1).tolist()  # rows 0 and 1 are each other's nearest; 2 -> 0, 3 -> 1
    [2.0, 2.0, 0.0, 0.0]
    """
    by = check_choice(by, "--by", SCORES)
    check_scalar(k, "k", int, low=1)
    metric = Metric.parse(metric)
    try:
        x = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("the vectors must be a numeric array") from None
    if x.ndim != 2 or not len(x):
        raise InputError(f"vectors of shape {x.shape}: expected (n, d) with n ≥ 1")
    if not np.isfinite(x).all():
        raise InputError("a vector has NaN or inf")
    if by == "random":
        return np.random.default_rng(seed).random(len(x))
    if by == "norm":
        return np.sqrt(np.einsum("ij,ij->i", x, x))
    if by == "centroid":
        unit = normalize_rows(x).astype(np.float64)
        centre = normalize_rows(unit.mean(axis=0, keepdims=True)).astype(np.float64)[0]
        return np.einsum("ij,j->i", unit, centre)
    kk = min(int(k), len(x) - 1)
    if kk < 1:
        return np.zeros(len(x))
    _, rows = exact_search(x.astype(np.float32), x.astype(np.float32), k=kk + 1, metric=metric)
    counts = np.zeros(len(x))
    for i, r in enumerate(rows):
        others = r[(r >= 0) & (r != i)][:kk]
        np.add.at(counts, others, 1.0)
    return counts


def kept_rows(scores: Any, drop: float) -> np.ndarray:
    """The positions kept when the ``drop`` share with the lowest scores goes (equal scores: the later row goes).

    ``round(drop · n)`` items are dropped; the kept positions come back in order.

    Examples
    --------
    >>> kept_rows([0.5, 0.1, 0.9, 0.1], 0.5).tolist()
    [0, 2]
    """
    check_scalar(drop, "--drop", float, low=0, high=MAX_DROP)
    s = np.asarray(scores, dtype=np.float64)
    n_drop = int(round(float(drop) * len(s)))
    order = np.lexsort((np.arange(len(s)), -s))  # best first, ties to the earlier row
    return np.sort(order[: len(s) - n_drop])
