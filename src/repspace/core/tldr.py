"""TLDR: a linear dimensionality reduction learnt to keep each row's nearest neighbours near.

Twin Learning for Dimensionality Reduction (Kalantidis, Lassance, Almazán & Larlus, 2021;
research ids S066, S243): every training row ``x`` is paired with one of its ``k`` nearest
neighbours ``y`` in the input space, and a *linear* encoder ``W`` (``d → D``) is trained so
that the pair's codes agree: both go through a projector MLP (used only while training) and
the Barlow Twins loss (Zbontar et al., 2021) pulls the cross-correlation matrix of the two
batch-normalised projections towards the identity:

    ``L = s · (Σ_i (1 − C_ii)² + λ Σ_{i≠j} C_ij²)``,  ``C = z₁ᵀ z₂ / batch``

(``s`` = 1/32, ``λ`` = 3.9e-3, the authors' defaults). At test time only ``W`` is kept, so the
reduction costs what PCA costs: one ``d × D`` product. Neighbours come from an exact
k-nearest-neighbour graph of the sample (:func:`repspace.core.knn.knn_graph`, ``exact=True``).

What follows the reference code (github naver/tldr), read but not copied: a projector of
linear (no bias) + batch-norm + ReLU hidden layers and a linear output layer; the LARS
optimiser (You et al., 2017: momentum 0.9, trust coefficient 0.001, weight decay 1e-6, none
of either on 1-d parameters) with a base rate ``lr · batch / 256``, linear warm-up, then a
cosine decay to 1/1000 of it; pairs drawn uniformly among the ``k`` neighbours, new ones each
batch. Where this differs, and why: the encoder has no bias (the batch norm after the
projector's first layer removes any constant offset, so the reference's bias gets no
gradient and keeps its random initial value) and is trained on centred rows (the same loss,
since the batch norm removes the mean; better conditioned); the projector is narrower
(one hidden layer of 512 against two of 2,048) and training is short (10 epochs on at most
:data:`~repspace.core.limits.TLDR_MAX_ROWS` rows, against 100 epochs) so a fit takes
seconds to a minute on a CPU, with a larger rate to make up for it (``lr`` 1.0 against 0.2:
on GloVe 10,000 rows → 16 dimensions it kept more 10-NN, 0.110 against 0.104 at 0.2);
warm-up is 10% of the steps instead of 10 epochs.

Why written here: no maintained package ships TLDR. PyPI's ``tldr`` is the tldr-pages
command-line client; the authors' library installs from its git repository only (and
pulls ``rich``), so the method is a hundred lines over the pinned torch.

Determinism: the weights' initialisation and the batches come from ``seed`` alone (torch's
global random state is saved and restored around the fit), and torch's deterministic
algorithms are on, so the same rows, seed and thread count give the same map on one machine.
Across CPUs (AVX2 against AVX-512, another BLAS) and thread counts, torch's matrix kernels
sum in another order and the map differs in its last bits, growing over training steps;
a fitted map is therefore *stored* (its state, or the index file), never refitted to
reproduce a result.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((600, 6)) @ np.diag([3.0, 3.0, 1.0, 0.3, 0.3, 0.3])
>>> fit = fit_tldr(X, 2, n_neighbors=5, epochs=2, batch_size=128, projector_width=64)
>>> fit.components.shape, fit.mean.shape
((2, 6), (6,))
>>> bool(np.array_equal(fit.components, fit_tldr(X, 2, n_neighbors=5, epochs=2, batch_size=128,
...                                              projector_width=64).components))
True
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.knn import knn_graph
from repspace.core.limits import TLDR_MAX_ROWS
from repspace.core.space import Metric

__all__ = ["DEFAULTS", "TLDRFit", "fit_tldr"]

#: The training settings (see the module docstring for where each comes from).
DEFAULTS: dict[str, Any] = {
    "n_neighbors": 5,  # the reference's default k
    "projector_width": 512,  # the reference: 2048
    "projector_layers": 1,  # hidden layers of the projector (the reference: 2, "mlp-2-2048"; its README: 1)
    "epochs": 10,
    "batch_size": 512,
    "learning_rate": 1.0,  # LARS base rate per 256 rows of a batch (the reference: 0.2 over 100 epochs)
    "warmup": 0.1,  # share of the steps with a linearly growing rate
    "lambd": 3.9e-3,
    "scale_loss": 1.0 / 32,
    "weight_decay": 1e-6,
    "momentum": 0.9,
    "eta": 1e-3,  # LARS trust coefficient
}


@dataclass(frozen=True)
class TLDRFit:
    """A fitted TLDR map: ``z = (x − mean) @ components.T``.

    Attributes
    ----------
    components : (D, d) float64
        The linear encoder's weights.
    mean : (d,) float64
        The mean of the training rows (subtracted before the encoder while training).
    rows : int
        Training rows used (a sample of at most ``max_rows``).
    seconds : dict
        ``knn`` (the neighbour graph) and ``train`` (the optimisation), wall-clock.
    losses : list of float
        Mean loss of each epoch.
    """

    components: np.ndarray = field(repr=False)
    mean: np.ndarray = field(repr=False)
    rows: int
    seconds: dict[str, float]
    losses: list[float]

    def to_dict(self) -> dict[str, Any]:
        """The figures (no arrays): rows, seconds, losses and the map's shape."""
        return {"rows": self.rows, "seconds": dict(self.seconds), "losses": list(self.losses),
                "n_components": int(self.components.shape[0]), "n_features": int(self.components.shape[1])}


def fit_tldr(X: Any, n_components: int, *, metric: Metric | str = "ip", seed: int = 0,
             max_rows: int = TLDR_MAX_ROWS, threads: int | None = None, **settings: Any) -> TLDRFit:
    """Train a TLDR linear map ``d → n_components`` on the rows of ``X``.

    Parameters
    ----------
    X : array (n, d)
        Training rows, finite; a random sample of ``max_rows`` (seeded) when there are more.
    n_components : int
        ``D``, at most ``d``.
    metric : ``ip``, ``cosine`` or ``l2``
        How the neighbour pairs are found (the reference: inner product on the rows as given).
    seed : int
        Seeds the sample, the initial weights and the batches.
    max_rows : int
        Largest training sample.
    threads : int or None
        Torch threads while fitting (None: torch's current count); restored afterwards.
    **settings
        Overrides of :data:`DEFAULTS` (``n_neighbors``, ``projector_width``, ``epochs``, ...).
    """
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise InputError(f"TLDR: unknown setting(s) {', '.join(unknown)}; known: {', '.join(DEFAULTS)}")
    cfg = {**DEFAULTS, **settings}
    X = as_matrix(X, min_rows=2)
    n, d = X.shape
    D = check_scalar(n_components, "TLDR: n_components", int, low=1)
    if D > d:
        raise InputError(f"TLDR: n_components={D} is more than the {d} dimensions of the data")
    k = check_scalar(cfg["n_neighbors"], "TLDR: n_neighbors", int, low=1)
    batch = check_scalar(cfg["batch_size"], "TLDR: batch_size", int, low=2)
    epochs = check_scalar(cfg["epochs"], "TLDR: epochs", int, low=1)
    max_rows = check_scalar(max_rows, "TLDR: max_rows", int, low=2)
    rng = np.random.default_rng(seed)
    if n > max_rows:
        X = X[np.sort(rng.choice(n, max_rows, replace=False))]
        n = max_rows
    if n <= k:
        raise InputError(f"TLDR: {k} neighbours per row need at least {k + 1} training rows, got {n}")
    batch = min(batch, n)
    t0 = time.perf_counter()
    neighbours = knn_graph(X, k, metric=metric, exact=True).indices
    t_knn = time.perf_counter() - t0
    mean = X.astype(np.float64).mean(axis=0)
    centred = (X.astype(np.float64) - mean).astype(np.float32)
    t0 = time.perf_counter()
    W, losses = _train(centred, neighbours, D, cfg, batch, epochs, seed, threads)
    return TLDRFit(W, mean, n, {"knn": round(t_knn, 3), "train": round(time.perf_counter() - t0, 3)}, losses)


@contextmanager
def _torch_state(seed: int, threads: int | None) -> Iterator[Any]:
    """Torch seeded by ``seed`` (global state restored after), deterministic algorithms, ``threads`` threads."""
    import torch

    before_threads = torch.get_num_threads()
    before_det = torch.are_deterministic_algorithms_enabled()
    before_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True)
        if threads is not None:
            torch.set_num_threads(check_scalar(threads, "TLDR: threads", int, low=1))
        try:
            yield torch
        finally:
            torch.use_deterministic_algorithms(before_det, warn_only=before_warn)
            torch.set_num_threads(before_threads)


def _train(X: np.ndarray, neighbours: np.ndarray, D: int, cfg: dict[str, Any], batch: int, epochs: int,
           seed: int, threads: int | None) -> tuple[np.ndarray, list[float]]:
    with _torch_state(seed, threads) as torch:
        nn = torch.nn
        n, d = X.shape
        width, hidden = int(cfg["projector_width"]), int(cfg["projector_layers"])
        encoder = nn.Linear(d, D, bias=False)
        layers: list[Any] = []
        sizes = [D] + [width] * (hidden + 1)
        for a, b in zip(sizes[:-2], sizes[1:-1]):
            layers += [nn.Linear(a, b, bias=False), nn.BatchNorm1d(b), nn.ReLU()]
        projector = nn.Sequential(*layers, nn.Linear(sizes[-2], sizes[-1], bias=False))
        norm = nn.BatchNorm1d(width, affine=False)
        params = [*encoder.parameters(), *projector.parameters()]
        momenta = [torch.zeros_like(p) for p in params]
        x = torch.from_numpy(np.ascontiguousarray(X))
        nb = torch.from_numpy(np.ascontiguousarray(neighbours, dtype=np.int64))
        gen = torch.Generator().manual_seed(seed)
        per_epoch = n // batch
        total = per_epoch * epochs
        warm = max(1, int(round(cfg["warmup"] * total)))
        base = float(cfg["learning_rate"]) * batch / 256
        eye_mask = ~torch.eye(width, dtype=torch.bool)
        losses: list[float] = []
        step = 0
        for _ in range(epochs):
            order = torch.randperm(n, generator=gen)
            pick = torch.randint(neighbours.shape[1], (n,), generator=gen)
            running = 0.0
            for i in range(per_epoch):
                rows = order[i * batch:(i + 1) * batch]
                z1 = norm(projector(encoder(x[rows])))
                z2 = norm(projector(encoder(x[nb[rows, pick[rows]]])))
                c = z1.T @ z2 / batch
                loss = cfg["scale_loss"] * ((torch.diagonal(c) - 1).pow(2).sum()
                                            + cfg["lambd"] * c[eye_mask].pow(2).sum())
                for p in params:
                    p.grad = None
                loss.backward()
                _lars_step(torch, params, momenta, _rate(step, total, warm, base), cfg)
                running += float(loss.detach())
                step += 1
            losses.append(round(running / max(1, per_epoch), 6))
        W = encoder.weight.detach().to(torch.float64).numpy().copy()
    return W, losses


def _rate(step: int, total: int, warm: int, base: float) -> float:
    """Linear warm-up over ``warm`` steps, then a cosine decay from ``base`` to ``base / 1000``."""
    if step < warm:
        return base * (step + 1) / warm
    q = 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))
    return base * q + base * 1e-3 * (1 - q)


def _lars_step(torch: Any, params: list[Any], momenta: list[Any], lr: float, cfg: dict[str, Any]) -> None:
    """One LARS update: weight decay and the trust ratio ``eta·‖w‖/‖g‖`` on matrices, neither on 1-d parameters."""
    with torch.no_grad():
        for p, mu in zip(params, momenta):
            g = p.grad
            if g is None:
                continue
            if p.ndim > 1:
                g = g + cfg["weight_decay"] * p
                w_norm, g_norm = torch.linalg.vector_norm(p), torch.linalg.vector_norm(g)
                if w_norm > 0 and g_norm > 0:
                    g = g * (cfg["eta"] * w_norm / g_norm)
            mu.mul_(cfg["momentum"]).add_(g)
            p.add_(mu, alpha=-lr)
