"""The pair adapter: a ``d → d`` map started at identity, trained with a contrastive or a margin loss.

Owns :func:`train_pair_adapter`, its two losses (graded contrastive, Hadsell
et al. 2006; margin with distance-weighted negatives, Wu et al. 2017) and
:func:`distance_weights` (how the negatives are drawn); the training loop is
:mod:`~repspace.engines.learn.heads.fit`'s.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar, positive_int
from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.learn._gensim import check_positive_float, check_seed
from repspace.engines.learn.heads.data import HeadResult, PairData, pair_spearman
from repspace.engines.learn.heads.fit import (
    _check_dev,
    _check_threads,
    _cosines,
    _fit,
    _result,
    _train_data,
    torch_session,
)

__all__ = ["WU_CUTOFF", "WU_NONZERO_LOSS_CUTOFF", "distance_weights", "train_pair_adapter"]

#: Wu et al. (2017): distances below this are treated as this when weighting negatives.
WU_CUTOFF = 0.5
#: Wu et al. (2017): negatives at least this far from the anchor are never drawn (their margin loss is 0).
WU_NONZERO_LOSS_CUTOFF = 1.4


def distance_weights(dist: Any, dim: int, mask: Any) -> Any:
    """Wu et al.'s sampling weights of candidate negatives at unit-sphere distances ``dist`` (rows: anchors).

    For points uniform on the unit sphere of ``R^n`` the distance between two
    of them has density ``q(d) ∝ d^(n−2) · (1 − d²/4)^((n−3)/2)``. A negative at
    distance ``d`` is drawn with weight ``∝ q(d̃)⁻¹``, ``d̃ = clip(d, 0.5, 1.99)``
    (the lower clip bounds the weight of very near candidates, as in the
    paper), weight 0 where ``d ≥ 1.4`` (a negative that far has no margin loss)
    or ``mask`` is false; rows whose weights are all 0 draw uniformly among
    their ``mask``. Computed in logs, shifted by each row's maximum.

    In hundreds of dimensions ``q(d)⁻¹`` falls so steeply with ``d`` that the
    draw almost always picks among the nearest candidates (those within the
    0.5 clip, else the nearest): close to hardest-negative mining, softened
    only by the clip.
    """
    import torch

    n = float(dim)
    d = dist.clamp(WU_CUTOFF, 1.99)
    logw = -(n - 2.0) * torch.log(d) - ((n - 3.0) / 2.0) * torch.log(1.0 - 0.25 * d * d)
    logw = logw.masked_fill(~mask, -math.inf)
    logw = logw - logw.max(dim=1, keepdim=True).values.clamp_min(-1e30)
    w = torch.exp(logw) * (dist < WU_NONZERO_LOSS_CUTOFF)
    empty = w.sum(dim=1) <= 0
    if bool(empty.any()):
        w[empty] = mask[empty].to(w.dtype)
    return w


def train_pair_adapter(
    A: Any,
    B: Any = None,
    scores: Any = None,
    *,
    loss: str = "contrastive",
    positive_threshold: float = 4.0,
    negative_threshold: float | None = 1.0,
    margin: float = 1.4,
    alpha: float = 0.2,
    beta: float = 1.2,
    dev: Any = None,
    epochs: int = 10,
    lr: float = 1e-4,
    batch_size: int = 64,
    weight_decay: float = 0.0,
    warmup: float = 1.0,
    patience: int = 3,
    seed: int = 0,
    threads: int = 1,
    progress: Progress | None = None,
) -> HeadResult:
    """Train a linear adapter ``z = x W + b``, started at identity, on labelled pairs.

    Distances are Euclidean between L2-normalised outputs, ``D = ‖u − v‖`` in
    ``[0, 2]`` (``D² = 2 − 2·cos``).

    ``loss="contrastive"``: the contrastive loss of Hadsell, Chopra & LeCun
    (2006) with *graded* labels ``y = clip((s − s_min)/(positive_threshold −
    s_min), 0, 1)`` (``s_min`` the lowest training score; pairs at or above the
    threshold are full positives):
    ``y·D² + (1 − y)·max(0, margin − D)²``, averaged over the batch. Its minimum
    for one pair is at ``D = (1 − y)·margin``, so the graded score sets how far
    apart the pair should be, not only which side of a threshold it is on.

    ``loss="margin"``: the margin loss of Wu, Manmatha, Smola & Krähenbühl
    (2017, "Sampling Matters in Deep Embedding Learning"),
    ``max(0, alpha + y·(D − beta))`` with ``y = +1`` for a positive and ``−1``
    for a negative, ``beta`` a boundary learned with the map (started at
    ``beta``). Summed over

    * the positive pairs (``score ≥ positive_threshold``),
    * the labelled negatives (``score ≤ negative_threshold``; ``None``: none),
    * for each positive pair, in both directions (``A[i]`` against the ``B``
      side of the batch, ``B[i]`` against its ``A`` side), one negative drawn
      among the other pairs of the batch with distance-weighted sampling
      (:func:`distance_weights`: weight ``∝ q(D)⁻¹`` on the unit sphere of the
      output dimension, ``D`` clipped below at 0.5, none beyond 1.4), from the
      batch generator seeded with ``seed``,

    and divided by the number of terms that are not zero (as Wu et al.). A
    sentence that occurs in another pair of the same batch can be drawn as a
    negative for a pair holding the same sentence (STS-B repeats some); such draws
    are rare and are not filtered.

    Parameters
    ----------
    A, B : array_like, shape (n, d)
        Frozen embeddings of the two sides of each training pair (or a
        :class:`PairData` / ``(A, B, scores)`` tuple as ``A``).
    scores : array_like, shape (n,)
    loss : {"contrastive", "margin"}
    positive_threshold : float
        Pairs scoring at least this are positives (4.0 for STS-B's 0–5 scale:
        "mostly equivalent" and above).
    negative_threshold : float or None
        ``loss="margin"`` only: pairs scoring at most this are labelled
        negatives (1.0 on STS-B: "not equivalent, same topic" or below).
    margin : float
        ``loss="contrastive"``: the distance beyond which a negative costs
        nothing (1.4 ≈ √2, the distance of orthogonal unit vectors).
    alpha, beta : float
        ``loss="margin"``: the margin and the starting boundary (Wu et al.: 0.2, 1.2).
    dev : PairData or (A_dev, B_dev, scores_dev), optional
        Only to choose the epoch (Spearman of the cosine against the scores).
    epochs, lr, batch_size, weight_decay, warmup, patience, seed, threads, progress
        As in :func:`train_matryoshka_head` (weight decay pulls towards identity).

    Returns
    -------
    HeadResult

    Raises
    ------
    InputError
        Bad shapes, fewer than 2 pairs, NaN / inf, a bad hyper-parameter, or
        (``loss="margin"``) no positive pair.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(128, 8)).astype(np.float32)
    >>> B = (A + rng.normal(size=(128, 8))).astype(np.float32)
    >>> s = 5.0 * np.exp(-0.2 * np.linalg.norm(A - B, axis=1) ** 2)
    >>> h = train_pair_adapter(A, B, s, loss="margin", positive_threshold=2.0, epochs=2)
    >>> h.recipe["params"]["loss"], h.W.shape, h.history[-1]["train_loss"] > 0
    ('margin', (8, 8), True)
    """
    t0 = time.perf_counter()
    train = _train_data(A, B, scores)
    loss = check_choice(loss, "loss", ("contrastive", "margin"))
    thr = check_scalar(positive_threshold, "positive_threshold", float)
    neg_thr = check_scalar(negative_threshold, "negative_threshold", float, none=True)
    params = {
        "loss": loss, "positive_threshold": thr, "negative_threshold": neg_thr if loss == "margin" else None,
        "margin": check_positive_float(margin, "margin") if loss == "contrastive" else None,
        "alpha": check_scalar(alpha, "alpha", float, low=0) if loss == "margin" else None,
        "beta": check_positive_float(beta, "beta") if loss == "margin" else None,
        "epochs": positive_int(epochs, "epochs"), "lr": check_positive_float(lr, "lr"),
        "batch_size": positive_int(batch_size, "batch_size"),
        "weight_decay": check_scalar(weight_decay, "weight_decay", float, low=0),
        "warmup": check_scalar(warmup, "warmup", float, low=0),
        "patience": positive_int(patience, "patience"),
        "seed": check_seed(seed),
    }
    threads = _check_threads(threads)
    dev_data = _check_dev(dev, train)
    s_min = float(train.scores.min())
    n_pos = int((train.scores >= thr).sum())
    if loss == "contrastive" and not thr > s_min:
        raise InputError(f"positive_threshold ({thr:g}) must be above the lowest training score ({s_min:g})")
    if loss == "margin" and n_pos == 0:
        raise InputError(f"no training pair scores >= positive_threshold ({thr:g}): the margin loss needs positives")
    if loss == "margin" and neg_thr is not None and neg_thr >= thr:
        raise InputError(f"negative_threshold ({neg_thr:g}) must be below positive_threshold ({thr:g})")

    def contrastive(za: Any, zb: Any, s: Any, _gen: Any, _ex: Any) -> Any:
        import torch

        y = ((s - s_min) / (thr - s_min)).clamp(0.0, 1.0)
        dist = torch.sqrt((2.0 - 2.0 * _cosines(za, zb, za.shape[1])).clamp_min(1e-12))
        return (y * dist ** 2 + (1.0 - y) * torch.relu(params["margin"] - dist) ** 2).mean()

    def margin_loss(za: Any, zb: Any, s: Any, gen: Any, ex: Any) -> Any:
        import torch
        import torch.nn.functional as F

        a, bb = F.normalize(za, dim=1, eps=1e-12), F.normalize(zb, dim=1, eps=1e-12)
        b_ = ex["beta"]
        pos = s >= thr
        terms = []
        own = torch.sqrt((2.0 - 2.0 * (a * bb).sum(dim=1)).clamp_min(1e-12))
        terms.append(torch.relu(params["alpha"] + own[pos] - b_))
        if neg_thr is not None:
            terms.append(torch.relu(params["alpha"] - (own[s <= neg_thr] - b_)))
        m = a.shape[0]
        if bool(pos.any()) and m > 1:
            anchors = torch.nonzero(pos).flatten()
            mask = torch.ones(len(anchors), m, dtype=torch.bool)
            mask[torch.arange(len(anchors)), anchors] = False
            for left, right in ((a, bb), (bb, a)):
                cross = left[anchors] @ right.T
                dist = torch.sqrt((2.0 - 2.0 * cross).clamp_min(1e-12))
                w = distance_weights(dist.detach(), a.shape[1], mask)
                pick = torch.multinomial(w, 1, generator=gen).flatten()
                terms.append(torch.relu(params["alpha"] - (dist[torch.arange(len(anchors)), pick] - b_)))
        allt = torch.cat(terms)
        nonzero = (allt.detach() > 0).sum().clamp_min(1)
        return allt.sum() / nonzero

    def dev_score(W: np.ndarray, b: np.ndarray, data: PairData) -> tuple[float, dict[str, Any]]:
        za, zb = data.A.astype(np.float64) @ W + b, data.B.astype(np.float64) @ W + b
        v = pair_spearman(za, zb, data.scores)
        return (v if math.isfinite(v) else -math.inf), {}

    extra = {"beta": params["beta"]} if loss == "margin" else {}
    with torch_session(threads, params["seed"]) as gen:
        W, b, history, best_epoch = _fit(
            contrastive if loss == "contrastive" else margin_loss, train=train, dev=dev_data,
            W0=np.eye(train.d), b0=np.zeros(train.d), extra=extra, dev_score=dev_score,
            epochs=params["epochs"], lr=params["lr"], batch_size=params["batch_size"],
            weight_decay=params["weight_decay"], warmup=params["warmup"], patience=params["patience"], gen=gen,
            progress=progress)
    return _result("pair-adapter", params, train, dev_data, threads, W, b, history, best_epoch, t0,
                   n_positive=n_pos)
