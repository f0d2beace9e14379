"""Free-embedding capacity: the smallest dimension in which free vectors realise a relevance matrix.

Weller, Boratko, Naim & Lee (2025, *On the theoretical limitations of embedding-based retrieval*, LIMIT, S045)
bound the dimension a single-vector retriever needs by the sign rank of its relevance matrix ``A`` (``m`` queries
× ``n`` documents, 1 = relevant) and measure it in the best case: query and document vectors are free parameters,
optimised directly on ``A`` ("free embedding"). Their experiment, as here:

- ``A`` holds every ``k``-subset of ``n`` documents as one query (``m = C(n, k)``, :func:`topk_relevance`);
- query and document vectors start as normalised Gaussian draws and are optimised with Adam (learning rate 0.01),
  full batch, on the InfoNCE loss with temperature 0.1 over all documents (the mean over relevant pairs of
  ``−log softmax_j(q·d_j / τ)``), every vector renormalised to unit length after each step;
- the run stops when the loss has not improved by ``1e-5`` for 1,000 steps, or when every query's ``k``
  relevant documents are its top ``k`` (checked every 50 steps), or after :data:`MAX_STEPS`;
- the critical dimension of ``n`` is the smallest ``d`` reaching 100% (:func:`critical_dimension`, scanning
  ``d = 2, 3, ...``: in one dimension a query's top 2 are the two largest or the two smallest documents, so
  at most 2 of the ``C(n, 2)`` pairs).

The paper varies ``n`` per ``d`` and fits the critical ``n`` as a cubic in ``d``,
``n(d) = −10.5322 + 4.0309 d + 0.0520 d² + 0.0037 d³`` (r² = 0.999, :data:`PAPER_CRITICAL_N`);
:func:`limit_curve` reports beside each measured critical dimension the paper's (the smallest ``d`` with
``n(d) ≥ n``).

The max-margin variant (the ``margin`` loss; S156 bounds the dimension of maximal-margin embeddings by
``O(k log(n/k))``) takes any relevance matrix and maximises the smallest per-query margin
``min_{relevant} q·d − max_{irrelevant} q·d`` of unit vectors, through its smooth minimum
``τ log Σ exp(−(s_pos − s_neg)/τ)`` over every (query, relevant, irrelevant) triple; the matrix is realised in
``d`` dimensions when the margin found is positive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Sequence

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError

__all__ = ["CriticalDimension", "FreeEmbeddingFit", "LimitCurve", "LimitPoint", "PAPER_CRITICAL_N",
           "critical_dimension", "free_embedding_fit", "limit_curve", "paper_critical_n", "topk_relevance"]

#: The paper's cubic fit of the critical ``n`` on ``d``: coefficients of ``d⁰, d¹, d², d³``.
PAPER_CRITICAL_N = (-10.5322, 4.0309, 0.0520, 0.0037)
#: Adam's learning rate, InfoNCE's temperature (the reference code's).
LEARNING_RATE, TEMPERATURE = 0.01, 0.1
#: Steps without a loss improvement of more than ``MIN_DELTA`` before a run stops (the reference code's).
PATIENCE, MIN_DELTA = 1000, 1e-5
#: Steps between accuracy checks (the reference code's ``log_interval``).
CHECK_EVERY = 50
#: Steps at most per run (the reference code's 100,000 is far more than small ``n`` need).
MAX_STEPS = 20_000
#: Largest ``m × n × n`` of the margin loss's triple tensor (memory bound, 8 bytes each).
MARGIN_MAX_TRIPLES = 20_000_000
#: Largest number of queries ``C(n, k)`` :func:`topk_relevance` builds.
MAX_QUERIES = 200_000
LOSSES = ("infonce", "margin")


def paper_critical_n(d: float) -> float:
    """The paper's fitted critical ``n`` at dimension ``d``: ``−10.5322 + 4.0309 d + 0.0520 d² + 0.0037 d³``.

    Examples
    --------
    >>> round(paper_critical_n(512)), round(paper_critical_n(1024) / 1e6, 1)
    (512290, 4.0)
    """
    return float(sum(c * d ** p for p, c in enumerate(PAPER_CRITICAL_N)))


def _paper_dimension(n: int) -> int:
    """The smallest integer ``d ≥ 1`` whose fitted critical ``n`` reaches ``n``."""
    d = 1
    while paper_critical_n(d) < n:
        d += 1
    return d


def topk_relevance(n: int, k: int = 2) -> np.ndarray:
    """The relevance matrix of every ``k``-subset of ``n`` documents: ``C(n, k)`` rows, ``k`` ones each.

    Examples
    --------
    >>> topk_relevance(3, 2).astype(int).tolist()
    [[1, 1, 0], [1, 0, 1], [0, 1, 1]]
    """
    n = check_scalar(n, "n", int, low=2)
    k = check_scalar(k, "k", int, low=1)
    if k >= n:
        raise InputError(f"k must be below n (every document relevant leaves nothing to rank), got k={k}, n={n}")
    if math.comb(n, k) > MAX_QUERIES:
        raise InputError(f"C({n}, {k}) = {math.comb(n, k):,} queries is more than {MAX_QUERIES:,}: give a smaller n")
    A = np.zeros((math.comb(n, k), n), dtype=bool)
    for row, subset in enumerate(combinations(range(n), k)):
        A[row, list(subset)] = True
    return A


@dataclass(frozen=True)
class FreeEmbeddingFit:
    """One free-embedding optimisation of a relevance matrix in ``d`` dimensions.

    Attributes
    ----------
    d : int
        Dimension of the vectors.
    loss : str
        ``infonce`` (the LIMIT experiment) or ``margin`` (max-margin).
    accuracy : float
        The paper's top-k accuracy: the share of relevant documents among each query's top ``k`` (``k`` its
        number of relevant documents), over all queries.
    margin : float
        The smallest per-query margin ``min relevant score − max irrelevant score`` of the unit vectors.
    realised : bool
        ``margin > 0``: every query ranks all its relevant documents above all others.
    steps : int
        Optimisation steps run.
    final_loss : float
        The loss at the last step.

    Examples
    --------
    >>> f = free_embedding_fit(topk_relevance(4, 2), 4)
    >>> f.realised, f.accuracy
    (True, 1.0)
    """

    d: int
    loss: str
    accuracy: float
    margin: float
    realised: bool
    steps: int
    final_loss: float

    def to_dict(self) -> dict[str, Any]:
        """``{"d", "loss", "accuracy", "margin", "realised", "steps", "final_loss"}``."""
        return {"d": self.d, "loss": self.loss, "accuracy": self.accuracy, "margin": self.margin,
                "realised": self.realised, "steps": self.steps, "final_loss": self.final_loss}


def _check_relevance(relevance: Any) -> np.ndarray:
    A = np.asarray(relevance)
    if A.ndim != 2 or A.size == 0:
        raise InputError(f"the relevance matrix must be 2-d (queries × documents), got shape {A.shape}")
    if not np.isin(A, (0, 1)).all():
        raise InputError("the relevance matrix must hold only 0 and 1")
    A = A.astype(bool)
    per_query = A.sum(axis=1)
    if (per_query == 0).any() or (per_query == A.shape[1]).any():
        raise InputError("every query needs at least one relevant and one irrelevant document")
    return A


def scores_margin(A: np.ndarray, S: np.ndarray) -> tuple[float, float]:
    """``(accuracy, margin)`` of the scores ``S`` (queries × documents) against the relevance ``A``."""
    k = A.sum(axis=1)
    order = np.argsort(-S, axis=1, kind="stable")
    hits = sum(int(A[i, order[i, :k[i]]].sum()) for i in range(len(A)))
    low = np.where(A, S, np.inf).min(axis=1)
    high = np.where(A, -np.inf, S).max(axis=1)
    return hits / int(k.sum()), float((low - high).min())


def free_embedding_fit(relevance: Any, d: int, *, loss: str = "infonce", seed: int = 0,
                       max_steps: int = MAX_STEPS) -> FreeEmbeddingFit:
    """Optimise free unit query and document vectors in ``d`` dimensions on a relevance matrix (see the module).

    Parameters
    ----------
    relevance : array of shape (m, n), 0/1
        ``relevance[i, j] = 1`` when document ``j`` is relevant to query ``i``; every query needs a relevant
        and an irrelevant document.
    d : int
        Dimension.
    loss : ``infonce`` or ``margin``
        The LIMIT experiment's InfoNCE (stops at 100% accuracy), or the smooth minimum margin (runs until the
        loss stops improving, to maximise the margin).
    seed : int
        Seed of the initial vectors.
    max_steps : int
        Steps at most.

    Returns
    -------
    FreeEmbeddingFit

    Examples
    --------
    Every pair of 6 documents is out of reach in 2 dimensions, within reach in 4:

    >>> A = topk_relevance(6, 2)
    >>> free_embedding_fit(A, 2).realised, free_embedding_fit(A, 4).realised
    (False, True)
    """
    import torch

    A = _check_relevance(relevance)
    d = check_scalar(d, "d", int, low=1)
    check_choice(loss, "loss", LOSSES)
    max_steps = check_scalar(max_steps, "max_steps", int, low=1)
    m, n = A.shape
    if loss == "margin" and m * n * n > MARGIN_MAX_TRIPLES:
        raise InputError(f"the margin loss holds m·n² = {m * n * n:,} scores; at most {MARGIN_MAX_TRIPLES:,}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: one thread is faster, and free of contention on a busy machine
    try:
        return _fit(torch, A, d, loss, seed, max_steps)
    finally:
        torch.set_num_threads(threads)


def _fit(torch: Any, A: np.ndarray, d: int, loss: str, seed: int, max_steps: int) -> FreeEmbeddingFit:
    """The optimisation of :func:`free_embedding_fit`, on checked input."""
    m, n = A.shape
    gen = torch.Generator().manual_seed(int(seed))
    q = torch.randn(m, d, generator=gen, dtype=torch.float64)
    doc = torch.randn(n, d, generator=gen, dtype=torch.float64)
    q = (q / q.norm(dim=1, keepdim=True)).requires_grad_()
    doc = (doc / doc.norm(dim=1, keepdim=True)).requires_grad_()
    rel = torch.as_tensor(A)
    objective = _infonce(rel) if loss == "infonce" else _smooth_margin(rel)
    opt = torch.optim.Adam([q, doc], lr=LEARNING_RATE)
    best, since, step, value = math.inf, 0, 0, math.nan
    for step in range(1, max_steps + 1):
        opt.zero_grad()
        out = objective(q @ doc.T)
        out.backward()
        opt.step()
        with torch.no_grad():
            q /= q.norm(dim=1, keepdim=True)
            doc /= doc.norm(dim=1, keepdim=True)
        value = float(out.detach())
        if value < best - MIN_DELTA:
            best, since = value, 0
        else:
            since += 1
        if since >= PATIENCE:
            break
        if loss == "infonce" and step % CHECK_EVERY == 0:
            with torch.no_grad():
                if scores_margin(A, (q @ doc.T).numpy())[1] > 0:
                    break
    with torch.no_grad():
        accuracy, margin = scores_margin(A, (q @ doc.T).numpy())
    return FreeEmbeddingFit(d, loss, round(accuracy, 12), round(margin, 12), margin > 0, step, round(value, 9))


def _infonce(rel: Any) -> Any:
    """InfoNCE over all documents, averaged over the relevant pairs (the reference code's ``jax_loss_fn``)."""
    import torch

    mask = rel.to(torch.float64)
    count = mask.sum()

    def f(s: Any) -> Any:
        return -(torch.log_softmax(s / TEMPERATURE, dim=1) * mask).sum() / count

    return f


def _smooth_margin(rel: Any) -> Any:
    """``τ log Σ exp(−(s_pos − s_neg)/τ)`` over every (query, relevant, irrelevant) triple: a smooth ``−margin``."""
    import torch

    pair = rel[:, :, None] & ~rel[:, None, :]  # (m, pos, neg)

    def f(s: Any) -> Any:
        diff = s[:, :, None] - s[:, None, :]
        return TEMPERATURE * torch.logsumexp(-diff[pair] / TEMPERATURE, dim=0)

    return f


@dataclass(frozen=True)
class CriticalDimension:
    """The smallest dimension in which the optimisation realised a relevance matrix, and every run on the way.

    Attributes
    ----------
    d : int or None
        The critical dimension (``None`` when no ``d`` up to ``d_max`` realised it).
    fits : tuple of FreeEmbeddingFit
        One per dimension tried, ascending.

    Examples
    --------
    >>> critical_dimension(topk_relevance(5, 2)).d
    4
    """

    d: int | None
    fits: tuple[FreeEmbeddingFit, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"critical_d", "fits": [...]}``."""
        return {"critical_d": self.d, "fits": [f.to_dict() for f in self.fits]}


def critical_dimension(relevance: Any, *, loss: str = "infonce", d_min: int = 2, d_max: int = 64,
                       seed: int = 0, max_steps: int = MAX_STEPS) -> CriticalDimension:
    """The smallest ``d`` in ``d_min..d_max`` whose free-embedding fit realises ``relevance`` (scanning upward).

    Examples
    --------
    >>> r = critical_dimension(topk_relevance(4, 2), loss="margin")
    >>> r.d, [f.realised for f in r.fits]
    (3, [False, True])
    """
    A = _check_relevance(relevance)
    d_min = check_scalar(d_min, "d_min", int, low=1)
    d_max = check_scalar(d_max, "d_max", int, low=d_min)
    fits = []
    for d in range(d_min, d_max + 1):
        fit = free_embedding_fit(A, d, loss=loss, seed=seed, max_steps=max_steps)
        fits.append(fit)
        if fit.realised:
            return CriticalDimension(d, tuple(fits))
    return CriticalDimension(None, tuple(fits))


@dataclass(frozen=True)
class LimitPoint:
    """The critical dimension of every ``k``-subset of ``n`` documents, beside the paper's cubic fit.

    Attributes
    ----------
    n, k : int
        Documents, and relevant documents per query (``C(n, k)`` queries).
    critical_d : int or None
        Measured (:func:`critical_dimension`).
    paper_d : int
        The smallest ``d`` whose fitted critical ``n`` (:func:`paper_critical_n`) reaches ``n`` (the paper's
        fit is for ``k = 2``).
    paper_critical_n : float or None
        The paper's fitted critical ``n`` at the measured ``critical_d``.
    critical : CriticalDimension
        The runs.

    Examples
    --------
    >>> p = limit_curve([6]).points[0]
    >>> p.critical_d, p.paper_d, round(p.paper_critical_n, 2)
    (4, 4, 6.66)
    """

    n: int
    k: int
    critical_d: int | None
    paper_d: int
    paper_critical_n: float | None
    critical: CriticalDimension

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "k", "queries", "critical_d", "paper_d", "paper_critical_n", "fits"}``."""
        return {"n": self.n, "k": self.k, "queries": math.comb(self.n, self.k), "critical_d": self.critical_d,
                "paper_d": self.paper_d, "paper_critical_n": self.paper_critical_n,
                "fits": [f.to_dict() for f in self.critical.fits]}


@dataclass(frozen=True)
class LimitCurve:
    """Critical dimensions for several ``n`` (the LIMIT paper's free-embedding curve).

    Examples
    --------
    >>> c = limit_curve([4, 6])
    >>> [(p.n, p.critical_d, p.paper_d) for p in c.points]
    [(4, 4, 4), (6, 4, 4)]
    """

    points: tuple[LimitPoint, ...]
    loss: str

    def to_dict(self) -> dict[str, Any]:
        """``{"loss", "points": [...]}``; each point as :meth:`LimitPoint.to_dict`."""
        return {"loss": self.loss, "points": [p.to_dict() for p in self.points]}


def limit_curve(ns: Sequence[int], *, k: int = 2, loss: str = "infonce", seed: int = 0, d_max: int = 64,
                max_steps: int = MAX_STEPS) -> LimitCurve:
    """The critical dimension of every ``k``-subset of ``n`` documents, for each ``n`` in ``ns``, beside the
    paper's fitted curve (see the module).

    Each scan starts at the previous ``n``'s critical dimension (it cannot fall as ``n`` grows: the queries of
    fewer documents are a sub-problem).

    Examples
    --------
    >>> limit_curve([5], k=2).points[0].critical_d
    4
    """
    if isinstance(ns, (str, bytes)) or not len(ns):
        raise InputError("give at least one number of documents n")
    ns = sorted({check_scalar(n, "n", int, low=2) for n in ns})
    points, start = [], 2
    for n in ns:
        crit = critical_dimension(topk_relevance(n, k), loss=loss, d_min=start, d_max=d_max, seed=seed,
                                  max_steps=max_steps)
        start = crit.d or start
        points.append(LimitPoint(n, k, crit.d, _paper_dimension(n),
                                 None if crit.d is None else round(paper_critical_n(crit.d), 4), crit))
    return LimitCurve(tuple(points), loss)
