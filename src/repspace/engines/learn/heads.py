"""Linear heads trained on a frozen space, in torch on CPU: a Matryoshka head and a pair adapter.

A head is an affine map ``z = x W + b`` (``W`` of shape ``(d_in, d_out)``)
learned from scored pairs of frozen embeddings: ``A[i]`` and ``B[i]`` are the
vectors of the two texts of pair ``i`` and ``scores[i]`` how similar they are
(STS-B: 0 to 5). Being linear, a head is stored as an ``Affine`` step of a
derived space's chain, followed by L2 normalisation when the space is compared
by cosine; :attr:`HeadResult.W` and :attr:`HeadResult.b` are float64.

=====================================  ==========================================================================
:func:`train_matryoshka_head`          ``d → d`` map whose every prefix (32, 64, 128, 256, all) is a good space:
                                       CoSENT (or cosine-MSE) summed over the prefixes (Kusupati et al. 2022);
                                       starts at the PCA rotation of the training vectors
:func:`train_pair_adapter`             ``d → d`` map started at identity, contrastive loss (graded labels) or the
                                       margin loss with distance-weighted negatives (Wu et al. 2017)
:class:`HeadResult`                    ``W``, ``b``, the recipe, the per-epoch history, the seconds
:class:`PairData`                      checked ``(A, B, scores)`` with a fingerprint
=====================================  ==========================================================================

An optional development set ``dev = (A_dev, B_dev, scores_dev)`` is used only to
choose the epoch (the Spearman correlation between the cosine of each pair
and its score, measured before training and after every epoch; training
stops after ``patience`` epochs without improvement and the best epoch's map
is returned). Without it every epoch is run and the last map is returned.

Training runs in float32 on ``threads`` CPU threads with
``torch.use_deterministic_algorithms(True)``; batches are drawn with a private
:class:`torch.Generator` seeded with ``seed`` (the global torch RNG is not
touched), and the thread count and deterministic flag are restored afterwards.
The same data, seed and thread count give bit-identical ``W`` and ``b``.

This engine imports only :mod:`repspace.core` and third-party libraries.

Examples
--------
>>> import numpy as np
>>> from repspace.engines.learn.heads import train_matryoshka_head
>>> rng = np.random.default_rng(0)
>>> A = rng.normal(size=(200, 16)).astype(np.float32)
>>> B = (A + 0.5 * rng.normal(size=(200, 16))).astype(np.float32)
>>> scores = -np.linalg.norm(A - B, axis=1)
>>> head = train_matryoshka_head(A, B, scores, dims=(4, 8, None), epochs=2)
>>> head.W.shape, head.b.shape, head.recipe["dims"]
((16, 16), (16,), [4, 8, 16])
>>> head.transform(A, dims=4).shape
(200, 4)
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.checks import positive_int
from repspace.core.errors import InputError
from repspace.core.progress import Progress, Tally
from repspace.engines.learn._gensim import check_positive_float, check_seed, frozen

__all__ = [
    "DEFAULT_DIMS",
    "HeadResult",
    "PairData",
    "distance_weights",
    "pair_data",
    "pair_spearman",
    "pca_rotation",
    "train_matryoshka_head",
    "train_pair_adapter",
]

#: The prefixes of a Matryoshka head by default (those below the space's dimension, then the whole).
DEFAULT_DIMS = (32, 64, 128, 256, None)


# ------------------------------------------------------------------------ data
@dataclass(frozen=True, eq=False, repr=False)
class PairData:
    """Scored pairs of frozen embeddings, checked: ``A[i]`` and ``B[i]`` are the two sides of pair ``i``.

    Make one with :func:`pair_data` (which checks and copies); the trainers
    accept a :class:`PairData` or a plain ``(A, B, scores)`` tuple.

    Attributes
    ----------
    A, B : ndarray of float32, shape (n, d)
        Read-only.
    scores : ndarray of float64, shape (n,)
        Read-only.
    fingerprint : str
        SHA-256 over the shapes and bytes of the three arrays (hex).
    """

    A: np.ndarray
    B: np.ndarray
    scores: np.ndarray
    fingerprint: str

    @property
    def n(self) -> int:
        """Number of pairs."""
        return int(self.A.shape[0])

    @property
    def d(self) -> int:
        """Dimension of the embeddings."""
        return int(self.A.shape[1])

    def __repr__(self) -> str:
        return f"PairData({self.n} pairs x {self.d} dims, fingerprint={self.fingerprint[:12]}…)"


def pair_data(A: Any, B: Any, scores: Any, *, name: str = "pairs", min_pairs: int = 2) -> PairData:
    """Check and copy scored pairs: ``A`` and ``B`` finite ``(n, d)``, ``scores`` finite ``(n,)``, ``n ≥ min_pairs``.

    Raises
    ------
    InputError
        One line: which array, and what is wrong (shape mismatch, too few
        pairs, NaN / inf).

    Examples
    --------
    >>> p = pair_data(np.eye(3), np.ones((3, 3)), [1.0, 2.0, 3.0])
    >>> p.n, p.d, p.A.dtype, len(p.fingerprint)
    (3, 3, dtype('float32'), 64)
    >>> pair_data(np.eye(3), np.ones((3, 2)), [1, 2, 3])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: pairs: A has shape (3, 3) and B (3, 2); both sides need the same shape ...
    """
    A = as_matrix(A, f"{name}: A", min_rows=0)
    B = as_matrix(B, f"{name}: B", min_rows=0)
    if A.shape != B.shape:
        raise InputError(f"{name}: A has shape {A.shape} and B {B.shape}; both sides need the same shape "
                         "(n pairs × d)")
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name}: scores must be numbers, one per pair") from None
    if s.ndim != 1 or s.shape[0] != A.shape[0]:
        raise InputError(f"{name}: scores must be a 1-d array of {A.shape[0]} numbers (one per pair), "
                         f"got shape {s.shape}")
    if not np.isfinite(s).all():
        raise InputError(f"{name}: scores has NaN or infinite values (pair {int(np.argmin(np.isfinite(s)))})")
    if A.shape[0] < min_pairs:
        raise InputError(f"{name}: need at least {min_pairs} pairs, got {A.shape[0]}")
    A32, B32 = frozen(A, np.float32), frozen(B, np.float32)
    if not (np.isfinite(A32).all() and np.isfinite(B32).all()):  # float64 values beyond float32's range
        raise InputError(f"{name}: A or B has values beyond the float32 range")
    s = frozen(s, np.float64)
    digest = hashlib.sha256()
    for arr in (A32, B32, s):
        digest.update(f"{arr.dtype.str}{arr.shape}".encode())
        digest.update(arr.tobytes())
    return PairData(A32, B32, s, digest.hexdigest())


def as_pairs(data: Any, name: str) -> PairData:
    """``data`` when it is a :class:`PairData`, else :func:`pair_data` of the ``(A, B, scores)`` triple."""
    if isinstance(data, PairData):
        return data
    if not isinstance(data, (tuple, list)) or len(data) != 3:
        raise InputError(f"{name} must be a PairData or a tuple (A, B, scores), not {type(data).__name__}")
    return pair_data(*data, name=name)


def pair_spearman(A: Any, B: Any, scores: Any) -> float:
    """Spearman correlation between the cosine of each pair ``(A[i], B[i])`` and ``scores[i]`` (float64).

    A zero row has cosine 0. Returns ``nan`` when the cosines or the scores
    are all equal.

    Examples
    --------
    >>> A = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> B = np.array([[1.0, 0.1], [1.0, 1.0], [0.0, 1.0]])
    >>> pair_spearman(A, B, [5.0, 3.0, 0.0])
    1.0
    """
    from scipy.stats import spearmanr

    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    na, nb = np.linalg.norm(A, axis=1), np.linalg.norm(B, axis=1)
    cos = np.einsum("ij,ij->i", A, B) / np.where(na * nb > 0, na * nb, 1.0)
    s = np.asarray(scores, dtype=np.float64)
    if np.ptp(cos) == 0 or np.ptp(s) == 0:
        return float("nan")
    return float(spearmanr(cos, s).statistic)


# ---------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False, repr=False)
class HeadResult:
    """A trained linear head ``z = x W + b``, with its recipe and training history.

    Attributes
    ----------
    W : ndarray of float64, shape (d_in, d_out)
        Read-only. For a Matryoshka head the first ``k`` columns give the
        ``k``-dimensional prefix.
    b : ndarray of float64, shape (d_out,)
        Read-only.
    recipe : dict
        ``method`` (``matryoshka`` or ``pair-adapter``), ``params`` (every
        hyper-parameter, ``seed`` included), ``threads``, ``deterministic``,
        ``n_pairs``, ``d``, ``train_fingerprint``, ``dev_fingerprint`` (or
        ``None``), ``best_epoch``, ``selected_by`` (``dev`` or ``last epoch``),
        ``epochs_run``, ``torch_version``, ``numpy_version``; a Matryoshka head
        also ``dims`` (the prefixes, resolved to integers).
    history : tuple of dict
        One entry per epoch, epoch 0 being the starting map: ``epoch``,
        ``train_loss`` (mean over the epoch's batches; ``None`` for epoch 0),
        ``dev_spearman`` (the score that chooses the epoch; ``None`` without a
        dev set) and, for a Matryoshka head, ``dev_spearman_by_dim``.
    seconds : float
        Wall seconds of the whole call (checks, initialisation, training,
        dev scoring).
    """

    W: np.ndarray
    b: np.ndarray
    recipe: dict[str, Any]
    history: tuple[dict[str, Any], ...]
    seconds: float

    @property
    def d_in(self) -> int:
        """Input dimension."""
        return int(self.W.shape[0])

    @property
    def d_out(self) -> int:
        """Output dimension."""
        return int(self.W.shape[1])

    @property
    def best_epoch(self) -> int:
        """The epoch whose map was returned (0: the starting map)."""
        return int(self.recipe["best_epoch"])

    def transform(self, X: Any, *, dims: int | None = None, normalize: bool = True) -> np.ndarray:
        """``(X W + b)[:, :dims]`` as float32, rows L2-normalised when ``normalize`` (a zero row stays zero).

        Examples
        --------
        >>> h = HeadResult(np.eye(2), np.zeros(2), {}, (), 0.0)
        >>> h.transform([[3.0, 4.0]]).tolist()
        [[0.6000000238418579, 0.800000011920929]]
        """
        arr = as_matrix(X, "X", min_rows=0)
        if arr.shape[1] != self.d_in:
            raise InputError(f"the head maps {self.d_in} dimensions; X has {arr.shape[1]}")
        k = self.d_out if dims is None else positive_int(dims, "dims")
        if k > self.d_out:
            raise InputError(f"dims must be at most {self.d_out}, not {k}")
        z = np.asarray(arr, dtype=np.float64) @ self.W[:, :k] + self.b[:k]
        if normalize:
            norms = np.linalg.norm(z, axis=1, keepdims=True)
            z = z / np.where(norms > 0, norms, 1.0)
        return z.astype(np.float32)

    def to_dict(self) -> dict[str, Any]:
        """Everything but ``W`` and ``b``, as plain JSON values."""
        return {"d_in": self.d_in, "d_out": self.d_out, "seconds": self.seconds, "recipe": self.recipe,
                "history": [dict(h) for h in self.history]}

    def __repr__(self) -> str:
        return (f"HeadResult(method={self.recipe.get('method')!r}, {self.d_in} -> {self.d_out}, "
                f"best_epoch={self.recipe.get('best_epoch')}, seconds={self.seconds:.2f})")


# ---------------------------------------------------------------------- checks
def _check_threads(threads: Any) -> int:
    return positive_int(threads, "threads")


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


def _check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}")
    return str(value)


def _check_nonneg(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or value < 0:
        raise InputError(f"{name} must be a number >= 0, not {value!r}")
    return float(value)


def _check_number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, not {value!r}")
    return float(value)


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


# ------------------------------------------------------------------ Matryoshka
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
    loss = _check_choice(loss, "loss", ("cosent", "cosine"))
    init = _check_choice(init, "init", ("pca", "identity"))
    if dim_weights is None:
        weights = [1.0] * len(ks)
    else:
        weights = [_check_nonneg(w, "each of dim_weights") for w in dim_weights]
        if len(weights) != len(ks) or not any(weights):
            raise InputError(f"dim_weights must give {len(ks)} weights >= 0 (one per prefix {ks}), "
                             "not all zero")
    params = {
        "dims": ks, "loss": loss, "dim_weights": weights, "epochs": positive_int(epochs, "epochs"),
        "lr": check_positive_float(lr, "lr"), "batch_size": positive_int(batch_size, "batch_size"),
        "weight_decay": _check_nonneg(weight_decay, "weight_decay"),
        "warmup": _check_nonneg(warmup, "warmup"), "scale": check_positive_float(scale, "scale"),
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


def _train_data(A: Any, B: Any, scores: Any) -> PairData:
    if B is None and scores is None:
        return as_pairs(A, "training pairs")
    if B is None or scores is None:
        raise InputError("give A, B and scores, or one PairData / (A, B, scores) tuple as A")
    return pair_data(A, B, scores, name="training pairs")


# ------------------------------------------------------------------ pair adapter
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
    loss = _check_choice(loss, "loss", ("contrastive", "margin"))
    thr = _check_number(positive_threshold, "positive_threshold")
    neg_thr = None if negative_threshold is None else _check_number(negative_threshold, "negative_threshold")
    params = {
        "loss": loss, "positive_threshold": thr, "negative_threshold": neg_thr if loss == "margin" else None,
        "margin": check_positive_float(margin, "margin") if loss == "contrastive" else None,
        "alpha": _check_nonneg(alpha, "alpha") if loss == "margin" else None,
        "beta": check_positive_float(beta, "beta") if loss == "margin" else None,
        "epochs": positive_int(epochs, "epochs"), "lr": check_positive_float(lr, "lr"),
        "batch_size": positive_int(batch_size, "batch_size"),
        "weight_decay": _check_nonneg(weight_decay, "weight_decay"), "warmup": _check_nonneg(warmup, "warmup"),
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
