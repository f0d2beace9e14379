"""The training loop both heads share, the torch session it runs in, and the checks of their parameters.

Owns :func:`torch_session` (threads, deterministic algorithms, a private
generator), :func:`pca_rotation` and :func:`sign_fixed` (the PCA start of a
Matryoshka head), the loop itself (Adam, decay towards the starting map,
dev-chosen epoch, early stopping), the CoSENT loss, and the recipe a
:class:`~repspace.engines.learn.heads.HeadResult` records. The two heads
(:mod:`~repspace.engines.learn.heads.matryoshka`,
:mod:`~repspace.engines.learn.heads.adapter`) bring their losses.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from repspace.core.checks import positive_int
from repspace.core.errors import InputError
from repspace.core.progress import Progress, Tally
from repspace.engines.learn._gensim import frozen
from repspace.engines.learn.heads.data import HeadResult, PairData, as_pairs, pair_data

__all__ = ["pca_rotation", "sign_fixed", "torch_session", "versions"]


# ---------------------------------------------------------------------- checks
def _check_threads(threads: Any) -> int:
    return positive_int(threads, "threads")




def _check_dev(dev: Any, train: PairData) -> PairData | None:
    if dev is None:
        return None
    dev = as_pairs(dev, "dev")
    if dev.d != train.d:
        raise InputError(f"dev has {dev.d} dimensions; the training pairs have {train.d}")
    if np.ptp(dev.scores) == 0:
        raise InputError("dev: every score is the same, so no epoch can be preferred to another")
    return dev


def versions() -> dict[str, str]:
    """The library versions a head's recipe records."""
    import torch

    return {"torch_version": str(torch.__version__), "numpy_version": np.__version__}


# --------------------------------------------------------------------- session
@contextmanager
def torch_session(threads: int, seed: int) -> Iterator[Any]:
    """Run torch on ``threads`` threads, deterministic algorithms on; yields a :class:`torch.Generator` seeded ``seed``.

    The BLAS behind numpy is limited to ``threads`` as well. Torch's thread
    count and deterministic-algorithms flag are restored on exit; the global
    torch RNG is never used.
    """
    import torch
    from threadpoolctl import threadpool_limits

    before_threads = torch.get_num_threads()
    before_det = torch.are_deterministic_algorithms_enabled()
    before_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        with threadpool_limits(limits=threads, user_api="blas"):
            yield torch.Generator(device="cpu").manual_seed(seed)
    finally:
        torch.use_deterministic_algorithms(before_det, warn_only=before_warn)
        torch.set_num_threads(before_threads)


def pca_rotation(train: PairData) -> tuple[np.ndarray, np.ndarray]:
    """``(V, −mean·V)``: the principal directions of the stacked rows of ``A`` and ``B`` (largest variance first).

    ``V`` is the ``d × d`` eigenvector matrix of their covariance (float64,
    ``numpy.linalg.eigh``), each column's largest-magnitude entry made positive
    (the first of entries within 1e-12 relative of it), so ``(x − mean) V[:, :k]``
    is PCA-``k``. Each pair contributes both its texts; a sentence that
    occurs in several pairs counts as often as it occurs.
    """
    X = np.concatenate([train.A, train.B]).astype(np.float64)
    mean = X.mean(axis=0)
    Xc = X - mean
    cov = Xc.T @ Xc / max(1, X.shape[0] - 1)
    vals, vecs = np.linalg.eigh(cov)
    order = np.argsort(-vals, kind="stable")
    V = sign_fixed(vecs[:, order])
    return V, -mean @ V


def sign_fixed(V: np.ndarray, *others: np.ndarray, rtol: float = 1e-12) -> np.ndarray | tuple[np.ndarray, ...]:
    """``V`` with each column's largest-magnitude entry positive (the first within ``rtol`` of the largest wins).

    Columns of ``others`` are flipped with the columns of ``V``; returns
    ``V`` alone, or the tuple ``(V, *others)``.

    Examples
    --------
    >>> sign_fixed(np.array([[1.0, -2.0], [-3.0, 2.0]])).tolist()
    [[-1.0, 2.0], [3.0, -2.0]]
    """
    V = np.array(V, dtype=np.float64)
    mags = np.abs(V)
    top = mags.max(axis=0)
    # the first row whose magnitude is within rtol of the column's maximum: ties do not depend on rounding
    first = np.argmax(mags >= top * (1.0 - rtol), axis=0)
    signs = np.where(V[first, np.arange(V.shape[1])] < 0, -1.0, 1.0)
    V *= signs
    if not others:
        return V
    return (V, *(np.array(o, dtype=np.float64) * signs for o in others))


# -------------------------------------------------------------------- training
def _batches(n: int, batch_size: int, gen: Any) -> list[Any]:
    """A random partition of ``range(n)`` into ``max(1, n // batch_size)`` batches whose sizes differ by at most 1."""
    import torch

    perm = torch.randperm(n, generator=gen)
    return list(torch.tensor_split(perm, max(1, n // batch_size)))


def _fit(
    loss_fn: Callable[..., Any],
    *,
    train: PairData,
    dev: PairData | None,
    W0: np.ndarray,
    b0: np.ndarray,
    extra: dict[str, float],
    dev_score: Callable[[np.ndarray, np.ndarray, PairData], tuple[float, dict[str, Any]]],
    epochs: int,
    lr: float,
    batch_size: int,
    weight_decay: float,
    warmup: float,
    patience: int,
    gen: Any,
    progress: Progress | None,
) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]], int]:
    """The loop both heads share: Adam, decay towards the starting map, dev-chosen epoch, early stopping.

    ``loss_fn(za, zb, scores, gen, extra_params)`` returns the batch loss;
    ``extra`` names further scalar parameters learned with the map (the
    margin loss's boundary ``beta``).
    """
    import torch

    W = torch.tensor(W0, dtype=torch.float32, requires_grad=True)
    b = torch.tensor(b0, dtype=torch.float32, requires_grad=True)
    W_init, b_init = W.detach().clone(), b.detach().clone()
    ex = {k: torch.tensor(v, dtype=torch.float32, requires_grad=True) for k, v in extra.items()}
    opt = torch.optim.Adam([W, b, *ex.values()], lr=lr)
    n_batches = max(1, train.n // batch_size)
    warmup_steps = int(round(warmup * n_batches))
    step = 0
    A = torch.from_numpy(np.array(train.A))
    B = torch.from_numpy(np.array(train.B))
    S = torch.from_numpy(np.array(train.scores, dtype=np.float32))

    def snapshot() -> tuple[np.ndarray, np.ndarray]:
        return W.detach().numpy().astype(np.float64), b.detach().numpy().astype(np.float64)

    history: list[dict[str, Any]] = []
    best = (-math.inf, 0, *snapshot())
    tally = Tally(progress, "train", epochs)

    def record(epoch: int, loss: float | None) -> bool:
        nonlocal best
        entry: dict[str, Any] = {"epoch": epoch, "train_loss": loss, "dev_spearman": None,
                                 **{k: float(v.detach()) for k, v in ex.items()}}
        improved = False
        if dev is not None:
            Wn, bn = snapshot()
            score, more = dev_score(Wn, bn, dev)
            entry.update({"dev_spearman": score, **more})
            if score > best[0]:
                best = (score, epoch, Wn, bn)
                improved = True
        history.append(entry)
        return improved

    record(0, None)
    since = 0
    for epoch in range(1, epochs + 1):
        total, count = 0.0, 0
        for idx in _batches(train.n, batch_size, gen):
            step += 1
            step_lr = lr * min(1.0, step / warmup_steps) if warmup_steps else lr
            for group in opt.param_groups:
                group["lr"] = step_lr
            za = A[idx] @ W + b
            zb = B[idx] @ W + b
            loss = loss_fn(za, zb, S[idx], gen, ex)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if weight_decay > 0:  # decoupled (AdamW-style) decay towards the starting map, not towards 0
                with torch.no_grad():
                    W.sub_(step_lr * weight_decay * (W - W_init))
                    b.sub_(step_lr * weight_decay * (b - b_init))
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        mean_loss = total / count
        if not math.isfinite(mean_loss):
            raise InputError(f"training diverged at epoch {epoch} (loss {mean_loss}); lower lr")
        improved = record(epoch, mean_loss)
        tally(1)
        since = 0 if improved else since + 1
        if dev is not None and since >= patience:
            tally(epochs - epoch)  # stopped early: the phase is done
            break
    if dev is None:
        Wn, bn = snapshot()
        return Wn, bn, history, history[-1]["epoch"]
    return best[2], best[3], history, best[1]


def _cosent(cos: Any, scores: Any, scale: float) -> Any:
    """CoSENT (Su 2022): ``log(1 + Σ_{s_i > s_j} exp(scale·(cos_j − cos_i)))`` over the pairs of the batch."""
    import torch

    diff = scale * (cos[None, :] - cos[:, None])  # [i, j] = scale (cos_j − cos_i)
    terms = diff[scores[:, None] > scores[None, :]]
    return torch.logsumexp(torch.cat([terms.new_zeros(1), terms]), dim=0)


def _cosines(za: Any, zb: Any, k: int) -> Any:
    import torch.nn.functional as F

    return (F.normalize(za[:, :k], dim=1, eps=1e-12) * F.normalize(zb[:, :k], dim=1, eps=1e-12)).sum(dim=1)


def _result(method: str, params: dict[str, Any], train: PairData, dev: PairData | None, threads: int,
            W: np.ndarray, b: np.ndarray, history: list[dict[str, Any]], best_epoch: int, t0: float,
            **more: Any) -> HeadResult:
    recipe = {
        "method": method,
        "params": params,
        **more,
        "threads": threads,
        "deterministic": threads == 1,
        "n_pairs": train.n,
        "d": train.d,
        "train_fingerprint": train.fingerprint,
        "dev_fingerprint": None if dev is None else dev.fingerprint,
        "n_dev_pairs": None if dev is None else dev.n,
        "best_epoch": best_epoch,
        "selected_by": "last epoch" if dev is None else "dev",
        "epochs_run": history[-1]["epoch"],
        **versions(),
    }
    return HeadResult(frozen(W, np.float64), frozen(b, np.float64), recipe, tuple(history),
                      time.perf_counter() - t0)


def _train_data(A: Any, B: Any, scores: Any) -> PairData:
    if B is None and scores is None:
        return as_pairs(A, "training pairs")
    if B is None or scores is None:
        raise InputError("give A, B and scores, or one PairData / (A, B, scores) tuple as A")
    return pair_data(A, B, scores, name="training pairs")
