"""The Matryoshka head: a ``d → d`` map whose every prefix is a good space (Kusupati et al. 2022).

Owns :func:`train_matryoshka_head`, its prefixes (:data:`DEFAULT_DIMS` and
their checks) and its loss (CoSENT or cosine-MSE summed over the prefixes);
the training loop is :mod:`~repspace.engines.learn.heads.fit`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
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
    _cosent,
    _cosines,
    _fit,
    _result,
    _train_data,
    pca_rotation,
    torch_session,
)

__all__ = ["DEFAULT_DIMS", "train_matryoshka_head"]

#: The prefixes of a Matryoshka head by default (those below the space's dimension, then the whole).
DEFAULT_DIMS = (32, 64, 128, 256, None)


def _resolve_dims(dims: Any, d: int) -> list[int]:
    """The prefixes as sorted distinct integers in ``[1, d]`` (``None`` = ``d``); the default drops those ``≥ d``."""
    if dims is None:
        return sorted({k for k in DEFAULT_DIMS if k is not None and k < d} | {d})
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        dims = (dims,)
    try:
        items = list(dims)
    except TypeError:
        raise InputError(f"dims must be a list of positive integers (None for all {d}), not {dims!r}") from None
    out: set[int] = set()
    for k in items:
        if k is None:
            out.add(d)
            continue
        k = positive_int(k, "each of dims")
        if k > d:
            raise InputError(f"dims: {k} is larger than the {d} dimensions of the embeddings")
        out.add(k)
    if not out:
        raise InputError("dims must name at least one prefix")
    return sorted(out)



def train_matryoshka_head(
    A: Any,
    B: Any = None,
    scores: Any = None,
    *,
    dims: Any = None,
    dev: Any = None,
    loss: str = "cosent",
    dim_weights: Sequence[float] | None = None,
    epochs: int = 30,
    lr: float = 1e-3,
    batch_size: int = 64,
    weight_decay: float = 0.0,
    warmup: float = 1.0,
    scale: float = 10.0,
    init: str = "pca",
    patience: int = 5,
    seed: int = 0,
    threads: int = 1,
    progress: Progress | None = None,
) -> HeadResult:
    """Train a linear ``d → d`` head whose every prefix is a good space (Matryoshka representation learning).

    The loss is the Matryoshka loss of Kusupati et al. (2022) as
    sentence-transformers' ``MatryoshkaLoss`` builds it: a base pair loss on
    the cosine of the first ``k`` outputs (each prefix renormalised), summed
    over the prefixes ``k`` in ``dims`` with weights ``dim_weights`` (1 each
    by default). The base loss is

    * ``"cosent"`` (default): CoSENT (Su 2022, ``CoSENTLoss``),
      ``log(1 + Σ exp(scale·(cos_j − cos_i)))`` over the pairs ``i, j`` of a
      batch with ``score_i > score_j``: only the order of the scores counts;
    * ``"cosine"``: ``CosineSimilarityLoss``, the squared error between the
      cosine and the score rescaled to ``[0, 1]`` by the training scores'
      minimum and maximum.

    The map starts at ``init``:

    * ``"pca"`` (default): ``W = V``, ``b = −mean·V``, the principal directions
      of the training vectors (both sides of every pair stacked; see
      :func:`pca_rotation`), so that before training the ``k``-prefix *is*
      PCA-``k`` (fitted on the training vectors) and the full output is the
      centred space rotated (same cosines as centring alone). Training starts
      from the best linear prefix a variance criterion gives, and only has to
      improve on it;
    * ``"identity"``: ``W = I``, ``b = 0`` (the prefixes are plain truncations).

    Optimiser: Adam with learning rate ``lr``; after each step the map decays
    towards its starting point, ``W ← W − lr·weight_decay·(W − W₀)`` (and the same
    for ``b``), an L2-SP style pull that keeps the head near the PCA rotation
    rather than shrinking it to zero. Each epoch shuffles the pairs into
    ``max(1, n // batch_size)`` batches of nearly equal size.

    Parameters
    ----------
    A, B : array_like, shape (n, d)
        Frozen embeddings of the two texts of each training pair (float32
        copies are trained on). ``A`` may instead be a :class:`PairData` or an
        ``(A, B, scores)`` tuple, with ``B`` and ``scores`` left out.
    scores : array_like, shape (n,)
        Similarity of each pair (any scale; higher = more similar).
    dims : sequence of int or None, optional
        The prefixes; ``None`` inside the list means all ``d`` dimensions.
        Default: those of ``(32, 64, 128, 256)`` below ``d``, and ``d``.
    dev : PairData or (A_dev, B_dev, scores_dev), optional
        Used only to choose the epoch: its score is the mean, over ``dims``,
        of the Spearman correlation between each prefix's cosine and the dev
        scores.
    loss : {"cosent", "cosine"}
    dim_weights : sequence of float, optional
        One weight ``≥ 0`` per prefix of ``dims`` (sorted ascending); default 1 each.
    epochs : int
        At most this many passes over the pairs (fewer when ``dev`` stops
        them early).
    lr : float
        Adam's learning rate.
    batch_size : int
        Pairs per batch (CoSENT compares every two pairs of a batch).
    weight_decay : float
        Decay towards the starting map (see above); 0 turns it off.
    warmup : float
        Epochs over which the learning rate rises linearly from ``lr/steps`` to
        ``lr`` (0: none).
    scale : float
        CoSENT's inverse temperature. sentence-transformers uses 20; with 20 the
        STS-B dev score of a MiniLM head first fell for a few epochs, with 10 it
        rose from the first epoch, hence the default.
    init : {"pca", "identity"}
    patience : int
        With ``dev``: stop after this many epochs without a better dev score
        (ignored without ``dev``).
    seed : int
        Seeds the batch shuffling.
    threads : int
        CPU threads for torch and the BLAS (1: bit-for-bit repeatable).
    progress : callable, optional
        ``progress("train", epochs_done, epochs)``.

    Returns
    -------
    HeadResult
        ``W`` is ``d × d``; the recipe also holds ``dims``.

    Raises
    ------
    InputError
        Shape mismatch, fewer than 2 pairs, NaN / inf, a prefix larger than
        ``d``, all scores equal, or a bad hyper-parameter.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> A = rng.normal(size=(300, 8)).astype(np.float32)
    >>> B = (A + rng.normal(size=(300, 8))).astype(np.float32)
    >>> s = -np.linalg.norm(A - B, axis=1)
    >>> dev = (A[:100], B[:100], s[:100])
    >>> h = train_matryoshka_head(A, B, s, dims=(2, 4, None), dev=dev, epochs=3, seed=7)
    >>> h.recipe["method"], h.recipe["selected_by"], [e["epoch"] for e in h.history][:2]
    ('matryoshka', 'dev', [0, 1])
    >>> sorted(h.history[0]["dev_spearman_by_dim"])
    [2, 4, 8]
    """
    t0 = time.perf_counter()
    train = _train_data(A, B, scores)
    if np.ptp(train.scores) == 0:
        raise InputError("every training score is the same: there is no order to learn")
    ks = _resolve_dims(dims, train.d)
    loss = check_choice(loss, "loss", ("cosent", "cosine"))
    init = check_choice(init, "init", ("pca", "identity"))
    if dim_weights is None:
        weights = [1.0] * len(ks)
    else:
        weights = [check_scalar(w, "each of dim_weights", float, low=0) for w in dim_weights]
        if len(weights) != len(ks) or not any(weights):
            raise InputError(f"dim_weights must give {len(ks)} weights >= 0 (one per prefix {ks}), "
                             "not all zero")
    params = {
        "dims": ks, "loss": loss, "dim_weights": weights, "epochs": positive_int(epochs, "epochs"),
        "lr": check_positive_float(lr, "lr"), "batch_size": positive_int(batch_size, "batch_size"),
        "weight_decay": check_scalar(weight_decay, "weight_decay", float, low=0),
        "warmup": check_scalar(warmup, "warmup", float, low=0), "scale": check_positive_float(scale, "scale"),
        "init": init, "patience": positive_int(patience, "patience"), "seed": check_seed(seed),
    }
    threads = _check_threads(threads)
    dev_data = _check_dev(dev, train)
    lo, hi = float(train.scores.min()), float(train.scores.max())

    def batch_loss(za: Any, zb: Any, s: Any, _gen: Any, _ex: Any) -> Any:
        total = 0.0
        for k, w in zip(ks, weights):
            if w == 0:
                continue
            cos = _cosines(za, zb, k)
            if loss == "cosent":
                part = _cosent(cos, s, params["scale"])
            else:
                part = ((cos - (s - lo) / (hi - lo)) ** 2).mean()
            total = total + w * part
        return total

    def dev_score(W: np.ndarray, b: np.ndarray, data: PairData) -> tuple[float, dict[str, Any]]:
        za, zb = data.A.astype(np.float64) @ W + b, data.B.astype(np.float64) @ W + b
        by = {k: pair_spearman(za[:, :k], zb[:, :k], data.scores) for k in ks}
        vals = [v for v in by.values() if math.isfinite(v)]
        return (float(np.mean(vals)) if vals else -math.inf), {"dev_spearman_by_dim": by}

    with torch_session(threads, params["seed"]) as gen:
        if init == "pca":
            W0, b0 = pca_rotation(train)
        else:
            W0, b0 = np.eye(train.d), np.zeros(train.d)
        W, b, history, best_epoch = _fit(
            batch_loss, train=train, dev=dev_data, W0=W0, b0=b0, extra={}, dev_score=dev_score,
            epochs=params["epochs"], lr=params["lr"], batch_size=params["batch_size"],
            weight_decay=params["weight_decay"], warmup=params["warmup"], patience=params["patience"], gen=gen,
            progress=progress)
    return _result("matryoshka", params, train, dev_data, threads, W, b, history, best_epoch, t0, dims=ks)
