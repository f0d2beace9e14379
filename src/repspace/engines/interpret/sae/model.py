"""The top-k sparse autoencoder estimator: parameters, input checks, fitting, encoding and decoding.

Owns :class:`SparseAutoencoder` (its forward pass, its fit loop over epochs and
its blocked inference), the checks of its hyper-parameters and inputs, and the
geometric median that starts ``b_pre``. One Adam step with its gradients
written out lives in :mod:`~repspace.engines.interpret.sae.train`; what reads a
fitted model lives in the package's other modules.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from repspace.core.arrays import as_matrix, row_slices
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.estimators import NotFittedError
from repspace.core.progress import Progress, Tally
from repspace.engines.interpret.sae.train import Adam, train_step

__all__ = ["AUXK_COEF", "MEDIAN_SAMPLE", "MULTIK_COEF", "SparseAutoencoder"]

#: Weight of the AuxK loss (Gao et al. 2024, OpenAI's ``auxk_coef``).
AUXK_COEF = 1.0 / 32.0
#: Weight of the Multi-TopK term (Gao et al. 2024; CSR, Wen et al. 2025: ``L(k) + L(4k) / 8``).
MULTIK_COEF = 1.0 / 8.0
#: Rows of the data the geometric median of ``b_pre`` is computed on (OpenAI: 32,768).
MEDIAN_SAMPLE = 32_768
#: Elements of one float32 ``rows × n_latents`` block at inference (32 MiB).
_BLOCK_ELEMENTS = 1 << 23
_PRE_BIAS_INITS = ("geometric_median", "median", "mean")

def _torch() -> Any:
    import torch

    return torch


# ----------------------------------------------------------------------------- input checks


def _as_float32(X: Any, name: str, d: int | None = None, *, what: str = "SparseAutoencoder") -> np.ndarray:
    arr = as_matrix(X, name, min_rows=1)
    if d is not None and arr.shape[1] != d:
        raise InputError(f"{what} was fitted on {d} dimensions; {name} has {arr.shape[1]}")
    return np.ascontiguousarray(arr, dtype=np.float32)


def _block_rows(n_latents: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(1, n_latents))


def _geometric_median(X: np.ndarray, *, max_iter: int = 200, tol: float = 1e-7) -> np.ndarray:
    """Weiszfeld's iteration for ``argmin_y Σ‖x_i − y‖`` (float64), started at the coordinate-wise median.

    Distances are floored at a tiny multiple of the data's scale (the smoothed
    Weiszfeld step of Pillutla et al., the ``geom_median`` package OpenAI
    calls, which is not a dependency here), so a start on a data point does
    not divide by zero.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.median(X, axis=0)
    scale = float(np.sqrt(((X - X.mean(axis=0)) ** 2).sum(axis=1).mean())) or 1.0
    floor = 1e-12 * scale
    for _ in range(max_iter):
        dist = np.sqrt(((X - y) ** 2).sum(axis=1))
        w = 1.0 / np.maximum(dist, floor)
        nxt = (w @ X) / w.sum()
        step = float(np.linalg.norm(nxt - y))
        y = nxt
        if step <= tol * scale:
            break
    return y


# ----------------------------------------------------------------------------- the estimator


class SparseAutoencoder(TransformerMixin, BaseEstimator):
    """Top-k sparse autoencoder (Gao et al. 2024) trained on an array of vectors with torch on the CPU.

    ``codes = ReLU(TopK_k((x − b_pre) W_encᵀ + b_lat))`` and
    ``x̂ = codes W_dec + b_pre``, exactly the forward pass of OpenAI's
    ``sparse_autoencoder`` and of sentence-transformers' ``SparseAutoEncoder``
    module (which ties ``W_dec = W_enc``; this one does not). Training is Adam
    on ``‖x − x̂‖² / Var(X) + auxk_coef · AuxK``; see the module docstring for
    why no library does this for us.

    Parameters
    ----------
    n_latents : int, default 4096
        Dictionary size (latents).
    k : int, default 32
        Active latents per vector (``1 ≤ k ≤ n_latents``; ``k`` larger than
        the dimension is allowed).
    epochs : int, default 8
        Passes over the training rows. The defaults (8 epochs of 1,024 rows
        at ``lr`` 4e-3) were tuned on 90,000 MiniLM vectors with 4,096 latents
        and k = 32: longer training lowers the training FVU faster than the
        held-out one (the gap passes 0.05 near 12 epochs).
    batch_size : int, default 1024
        Rows per Adam step (the last, smaller batch of an epoch is used too).
    lr : float, default 4e-3
        Adam's learning rate; constant, then decayed linearly to 0 over the
        last ``lr_decay`` share of the steps.
    lr_decay : float, default 0.3
        Share of the steps (``0 ≤ lr_decay ≤ 1``) over which the rate decays.
    auxk : int or None, default None
        Dead latents used by the AuxK loss; ``None`` means ``2·k`` (capped at
        ``n_latents``), 0 turns AuxK off.
    auxk_coef : float, default 1/32
        Weight of the AuxK loss (OpenAI's).
    multik : int, default 0
        Multi-TopK (Gao et al. 2024, the ``L(4k) / 8`` term of CSR, Wen et al. 2025): the top
        ``multik`` latents (``k ≤ multik ≤ n_latents``; CSR: ``4·k``) must reconstruct the input too,
        weighted by ``multik_coef``, so that codes with more than ``k`` latents (``transform(X, k=...)``,
        e.g. a search query's) still decode to the input; 0 turns it off.
    multik_coef : float, default 1/8
        Weight of the Multi-TopK term.
    dead_window : int, default 20000
        A latent is dead when it has not fired on any of the last
        ``dead_window`` training rows (OpenAI: 10 million tokens, for far
        larger data sets).
    pre_bias_init : {"geometric_median", "median", "mean"}
        Where ``b_pre`` starts: the geometric median (OpenAI's choice; on at
        most 32,768 rows), the coordinate-wise median or the mean.
    seed : int, default 0
        Seeds the initial dictionary and the batch order: the same seed, data
        and thread count give the same model.
    progress : callable, optional
        ``progress("sae", rows_done, epochs · n)`` (see :mod:`repspace.core.progress`).

    Attributes
    ----------
    components_ : ndarray of shape (n_latents, n_features_in_), float32
        The decoder ``W_dec``: one unit-norm atom per latent.
    encoder_ : ndarray of shape (n_latents, n_features_in_), float32
        ``W_enc``.
    latent_bias_ : ndarray of shape (n_latents,), float32
    pre_bias_ : ndarray of shape (n_features_in_,), float32
    n_features_in_ : int
    samples_since_fired_ : ndarray of shape (n_latents,), int64
        Training rows seen since each latent last fired (at the end of training).
    dead_latents_ : ndarray of shape (n_latents,), bool
        ``samples_since_fired_ ≥ dead_window``: dead in the training window.
    history_ : list of dict
        One record per epoch: ``epoch``, ``loss``, ``fvu`` (the batches'
        mean normalised MSE, as trained), ``auxk_loss``, ``dead_fraction``,
        ``val_fvu`` (with ``X_val``; else ``None``) and ``seconds``.
    n_steps_ : int
    fit_seconds_ : float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> atoms = rng.standard_normal((8, 16))
    >>> X = rng.exponential(size=(2000, 8)) * (rng.random((2000, 8)) < 0.25) @ atoms
    >>> sae = SparseAutoencoder(n_latents=16, k=2, epochs=5, batch_size=128).fit(X)
    >>> codes = sae.transform(X[:5])
    >>> codes.shape, int(codes.getnnz(axis=1).max()) <= 2
    ((5, 16), True)
    >>> sae.reconstruct(X[:5]).shape
    (5, 16)
    """

    def __init__(self, n_latents: int = 4096, k: int = 32, *, epochs: int = 8, batch_size: int = 1024,
                 lr: float = 4e-3, lr_decay: float = 0.3, auxk: int | None = None,
                 auxk_coef: float = AUXK_COEF, multik: int = 0, multik_coef: float = MULTIK_COEF,
                 dead_window: int = 20_000,
                 pre_bias_init: str = "geometric_median", seed: int = 0,
                 progress: Progress | None = None) -> None:
        self.n_latents = n_latents
        self.k = k
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.lr_decay = lr_decay
        self.auxk = auxk
        self.auxk_coef = auxk_coef
        self.multik = multik
        self.multik_coef = multik_coef
        self.dead_window = dead_window
        self.pre_bias_init = pre_bias_init
        self.seed = seed
        self.progress = progress

    # -- parameters --------------------------------------------------------------------------

    def _checked_params(self) -> dict[str, Any]:
        n_latents = check_scalar(self.n_latents, "n_latents", int, low=1)
        k = check_scalar(self.k, "k", int, low=1)
        if k > n_latents:
            raise InputError(f"k must be at most n_latents ({n_latents}), got {k}")
        auxk = min(2 * k, n_latents) if self.auxk is None else check_scalar(self.auxk, "auxk", int, low=0)
        if auxk > n_latents:
            raise InputError(f"auxk must be at most n_latents ({n_latents}), got {auxk}")
        check_choice(self.pre_bias_init, "pre_bias_init", _PRE_BIAS_INITS)
        multik = check_scalar(self.multik, "multik", int, low=0)
        if multik and not k <= multik <= n_latents:
            raise InputError(f"multik must be 0 (off) or between k ({k}) and n_latents ({n_latents}), got {multik}")
        return {
            "n_latents": n_latents, "k": k, "auxk": auxk,
            "lr_decay": check_scalar(self.lr_decay, "lr_decay", float, low=0, high=1),
            "epochs": check_scalar(self.epochs, "epochs", int, low=1),
            "batch_size": check_scalar(self.batch_size, "batch_size", int, low=1),
            "lr": check_scalar(self.lr, "lr", float, low=0, include="neither"),
            "auxk_coef": check_scalar(self.auxk_coef, "auxk_coef", float, low=0),
            "multik": multik, "multik_coef": check_scalar(self.multik_coef, "multik_coef", float, low=0),
            "dead_window": check_scalar(self.dead_window, "dead_window", int, low=1),
            "seed": check_scalar(self.seed, "seed", int, low=0),
        }

    # -- fitting -----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any = None, *, X_val: Any = None) -> Self:
        """Train on the rows of ``X``; returns ``self``.

        Parameters
        ----------
        X : array of shape (n, d)
            Training vectors (any float or integer dtype; copied once to float32).
        y : ignored
        X_val : array of shape (m, d), optional
            Held-out vectors: their FVU is computed after every epoch (``history_``).

        Raises
        ------
        InputError
            A bad hyper-parameter (``k > n_latents``, ...), NaN or infinite
            values, or ``X_val`` of another dimension.
        """
        p = self._checked_params()
        data = _as_float32(X, "X")
        n, d = data.shape
        val = None if X_val is None else _as_float32(X_val, "X_val", d, what="X")
        torch = _torch()
        F = torch.nn.functional
        gen = torch.Generator().manual_seed(p["seed"])
        started = time.perf_counter()

        pre_bias = self._initial_pre_bias(data, p["seed"])
        w_dec = torch.randn(p["n_latents"], d, generator=gen, dtype=torch.float32)
        w_dec /= w_dec.norm(dim=1, keepdim=True)
        w_enc = w_dec.clone()  # OpenAI's "tied" initialisation
        params = {"w_enc": w_enc, "w_dec": w_dec, "b_lat": torch.zeros(p["n_latents"]),
                  "b_pre": torch.from_numpy(pre_bias.astype(np.float32))}
        opt = Adam(list(params.values()), p["lr"])
        xt = torch.from_numpy(data)
        variance = float(((data - data.mean(axis=0, dtype=np.float64)) ** 2).sum(axis=1).mean())
        mse_scale = 1.0 / variance if variance > 0 else 1.0
        since = torch.zeros(p["n_latents"], dtype=torch.int64)
        steps_per_epoch = -(-n // p["batch_size"])
        total_steps = p["epochs"] * steps_per_epoch
        decay_from = total_steps - int(round(p["lr_decay"] * total_steps))
        tally = Tally(self.progress, "sae", p["epochs"] * n)
        history: list[dict[str, Any]] = []
        step = 0
        for epoch in range(p["epochs"]):
            t0 = time.perf_counter()
            order = torch.randperm(n, generator=gen)
            sums = np.zeros(3)
            for lo in range(0, n, p["batch_size"]):
                batch = xt[order[lo:lo + p["batch_size"]]]
                if step >= decay_from:
                    opt.lr = p["lr"] * (total_steps - step) / max(1, total_steps - decay_from)
                with torch.no_grad():
                    mse, aux = train_step(torch, F, params, opt, batch, since, p, mse_scale)
                sums += (mse * len(batch), aux * len(batch), len(batch))
                step += 1
                tally(len(batch))
            dead = float((since >= p["dead_window"]).float().mean())
            rec: dict[str, Any] = {
                "epoch": epoch + 1, "loss": float((sums[0] + p["auxk_coef"] * sums[1]) / sums[2]),
                "fvu": float(sums[0] / sums[2]), "auxk_loss": float(sums[1] / sums[2]),
                "dead_fraction": dead, "val_fvu": None,
            }
            self._store(params, since, p["dead_window"], d)
            if val is not None:
                rec["val_fvu"] = _fvu(self, val)
            rec["seconds"] = time.perf_counter() - t0
            history.append(rec)
        self.history_ = history
        self.n_steps_ = step
        self.fit_seconds_ = time.perf_counter() - started
        return self

    def _initial_pre_bias(self, data: np.ndarray, seed: int) -> np.ndarray:
        if self.pre_bias_init == "mean":
            return data.mean(axis=0, dtype=np.float64)
        sample = data
        if len(data) > MEDIAN_SAMPLE:
            rows = np.sort(np.random.default_rng(seed).choice(len(data), MEDIAN_SAMPLE, replace=False))
            sample = data[rows]
        if self.pre_bias_init == "median":
            return np.median(sample.astype(np.float64), axis=0)
        return _geometric_median(sample)

    def _store(self, params: dict[str, Any], since: Any, dead_window: int, d: int) -> None:
        self.components_ = params["w_dec"].numpy().copy()
        self.encoder_ = params["w_enc"].numpy().copy()
        self.latent_bias_ = params["b_lat"].numpy().copy()
        self.pre_bias_ = params["b_pre"].numpy().copy()
        self.samples_since_fired_ = since.numpy().copy()
        self.dead_latents_ = self.samples_since_fired_ >= dead_window
        self.n_features_in_ = int(d)

    # -- using it ----------------------------------------------------------------------------

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "components_")

    def check_rows(self, X: Any, name: str = "X") -> np.ndarray:
        """``X`` as a C-contiguous float32 array, checked against the fitted model.

        The one input check of every reader of a fitted model (:meth:`transform`,
        :meth:`reconstruct`, :func:`~repspace.engines.interpret.sae.sae_metrics`, ...);
        its result is what :meth:`encode_blocks` and :meth:`reconstruct_blocks` take.

        Raises
        ------
        NotFittedError
            The model is not fitted.
        InputError
            NaN / infinite values, or another dimension than the fitted one.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> sae = SparseAutoencoder(n_latents=8, k=2, epochs=1, batch_size=64).fit(rng.standard_normal((100, 4)))
        >>> sae.check_rows([[1, 2, 3, 4]]).dtype
        dtype('float32')
        """
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("SparseAutoencoder is not fitted; call fit(X) first")
        return _as_float32(X, name, self.n_features_in_)

    def encode_blocks(self, X: np.ndarray, k: int | None = None) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
        """``(rows, values, latents)`` per block of rows: the top-k values after ReLU (float32) and their latents.

        ``X`` is an array returned by :meth:`check_rows`. Blocks hold at most
        32 MiB of ``rows × n_latents`` pre-activations, so a reader of many rows
        (metrics, top items) never holds all their codes at once. ``k`` picks
        that many latents per row (``1 ≤ k ≤ n_latents``; ``n_latents``: every
        latent, the ReLU then keeps the positive ones); ``None`` the current
        ``k`` (``set_params(k=...)`` changes it at inference).

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> sae = SparseAutoencoder(n_latents=8, k=2, epochs=1, batch_size=64).fit(rng.standard_normal((100, 4)))
        >>> [(rows, vals.shape, idx.shape) for rows, vals, idx in sae.encode_blocks(sae.check_rows(np.ones((3, 4))))]
        [(slice(0, 3, None), (3, 2), (3, 2))]
        """
        torch = _torch()
        F = torch.nn.functional
        w_enc, b_lat = torch.from_numpy(self.encoder_), torch.from_numpy(self.latent_bias_)
        b_pre = torch.from_numpy(self.pre_bias_)
        k = check_scalar(self.k if k is None else k, "k", int, low=1)  # the current k unless one is given
        if k > len(b_lat):
            raise InputError(f"k must be at most n_latents ({len(b_lat)}), got {k}")
        with torch.inference_mode():
            for rows in row_slices(len(X), 1, _block_rows(len(b_lat))):
                pre = F.linear(torch.from_numpy(X[rows]) - b_pre, w_enc, b_lat)
                top = torch.topk(pre, k=k, dim=-1)
                yield rows, torch.relu(top.values).numpy(), top.indices.numpy()

    def reconstruct_blocks(self, X: np.ndarray) -> Iterator[tuple[slice, np.ndarray, np.ndarray, np.ndarray]]:
        """``(rows, values, latents, reconstruction)`` per block of :meth:`encode_blocks`.

        ``reconstruction`` is ``codes @ components_ + pre_bias_`` of the block's
        rows (float32, shape ``(rows, d)``), summed over the ``k`` picked atoms
        only; :meth:`reconstruct` and the metrics read it.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> sae = SparseAutoencoder(n_latents=8, k=2, epochs=1, batch_size=64).fit(rng.standard_normal((100, 4)))
        >>> [rec.shape for *_, rec in sae.reconstruct_blocks(sae.check_rows(np.ones((3, 4))))]
        [(3, 4)]
        """
        torch = _torch()
        w_dec, b_pre = torch.from_numpy(self.components_), torch.from_numpy(self.pre_bias_)
        for rows, vals, idx in self.encode_blocks(X):
            with torch.inference_mode():
                rec = torch.nn.functional.embedding_bag(torch.from_numpy(idx), w_dec,
                                                        per_sample_weights=torch.from_numpy(vals), mode="sum")
                rec = (rec + b_pre).numpy()
            yield rows, vals, idx, rec

    def transform(self, X: Any, *, dense: bool = False, k: int | None = None) -> sp.csr_matrix | np.ndarray:
        """Sparse codes: at most ``k`` positive values per row.

        Parameters
        ----------
        X : array of shape (n, n_features_in_)
        dense : bool, default False
            Return a dense float32 array instead of a CSR matrix.
        k : int, optional
            Latents kept per row, instead of the model's ``k`` (``1 ≤ k ≤ n_latents``): e.g. a
            search query coded with more latents than the documents it is compared with;
            ``n_latents`` keeps every positive pre-activation.

        Returns
        -------
        scipy.sparse.csr_matrix or ndarray of shape (n, n_latents), float32
            Latents the top-k picked but the ReLU zeroed are not stored.

        Raises
        ------
        InputError
            Not fitted, NaN / infinite values, another dimension, or ``k`` outside ``[1, n_latents]``.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> sae = SparseAutoencoder(n_latents=16, k=2, epochs=1, batch_size=64).fit(rng.standard_normal((100, 4)))
        >>> x = rng.standard_normal((3, 4))
        >>> int(sae.transform(x).getnnz(axis=1).max()), int(sae.transform(x, k=6).getnnz(axis=1).max()) <= 6
        (2, True)
        """
        data = self.check_rows(X)
        n, m = len(data), len(self.latent_bias_)
        if dense:
            out = np.zeros((n, m), np.float32)
            for rows, vals, idx in self.encode_blocks(data, k):
                np.put_along_axis(out[rows], idx, vals, axis=1)
            return out
        values, latents, counts = [], [], []
        for _, vals, idx in self.encode_blocks(data, k):
            order = np.argsort(idx, axis=1, kind="stable")
            vals, idx = np.take_along_axis(vals, order, 1), np.take_along_axis(idx, order, 1)
            keep = vals > 0
            values.append(vals[keep])
            latents.append(idx[keep])
            counts.append(keep.sum(axis=1))
        indptr = np.concatenate([[0], np.cumsum(np.concatenate(counts))]).astype(np.int64)
        return sp.csr_matrix((np.concatenate(values).astype(np.float32), np.concatenate(latents).astype(np.int64),
                              indptr), shape=(n, m))

    def inverse_transform(self, codes: Any) -> np.ndarray:
        """``codes @ components_ + pre_bias_`` as float32, for sparse or dense codes of shape (n, n_latents)."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError("SparseAutoencoder is not fitted; call fit(X) first")
        m = len(self.latent_bias_)
        if sp.issparse(codes):
            if codes.ndim != 2 or codes.shape[1] != m:
                raise InputError(f"codes must have {m} columns (one per latent), got shape {codes.shape}")
            c = sp.csr_matrix(codes, dtype=np.float32)
            if not np.isfinite(c.data).all():
                raise InputError("codes have NaN or infinite values")
            out = np.asarray(c @ self.components_, dtype=np.float32)
        else:
            arr = as_matrix(codes, "codes", min_rows=0)
            if arr.shape[1] != m:
                raise InputError(f"codes must have {m} columns (one per latent), got shape {arr.shape}")
            out = np.asarray(arr, dtype=np.float32) @ self.components_
        return (out + self.pre_bias_).astype(np.float32, copy=False)

    def atom_scores(self, X: Any, *, k: int | None = None) -> sp.csr_matrix:
        """Each row's inner products with the atoms, ``X @ components_ᵀ``, its ``k`` largest positive ones kept.

        The asymmetric query of a space of codes: ``Σ_j (x · atom_j) z_j = x · (x̂ − b_pre)`` for an item's
        codes ``z`` and decoding ``x̂``, so ranking items by it ranks them by ``x · x̂`` (``x · b_pre`` is the
        same for every item); keeping the positive weights only keeps the search over non-negative
        weights. ``k``: at most that many per row (``1 ≤ k ≤ n_latents``); ``None``: every positive one.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> sae = SparseAutoencoder(n_latents=16, k=2, epochs=1, batch_size=64).fit(rng.standard_normal((100, 4)))
        >>> x = rng.standard_normal((2, 4))
        >>> s = sae.atom_scores(x, k=3)
        >>> s.shape, int(s.getnnz(axis=1).max()) <= 3, bool((s.data > 0).all())
        ((2, 16), True, True)
        >>> j = s[0].indices[0]
        >>> bool(abs(s[0, j] - float(x[0] @ sae.components_[j])) < 1e-5)
        True
        """
        data = self.check_rows(X)
        m = len(self.latent_bias_)
        k = m if k is None else check_scalar(k, "k", int, low=1)
        if k > m:
            raise InputError(f"k must be at most n_latents ({m}), got {k}")
        scores = data @ self.components_.T
        if k < m:
            drop = np.argpartition(-scores, k - 1, axis=1)[:, k:]
            np.put_along_axis(scores, drop, 0.0, axis=1)
        return sp.csr_matrix(np.maximum(scores, 0.0), dtype=np.float32)

    def reconstruct(self, X: Any) -> np.ndarray:
        """``inverse_transform(transform(X))`` in one blocked pass; float32 of shape (n, d)."""
        return _reconstruct(self, self.check_rows(X))


def _reconstruct(model: SparseAutoencoder, data: np.ndarray) -> np.ndarray:
    """The reconstruction of rows already checked by :meth:`SparseAutoencoder.check_rows`."""
    out = np.empty(data.shape, np.float32)
    for rows, _, _, rec in model.reconstruct_blocks(data):
        out[rows] = rec
    return out


def _fitted(model: Any) -> SparseAutoencoder:
    if not isinstance(model, SparseAutoencoder):
        raise InputError(f"model must be a SparseAutoencoder, got {type(model).__name__}")
    if not model.__sklearn_is_fitted__():
        raise NotFittedError("SparseAutoencoder is not fitted; call fit(X) first")
    return model


def _fvu(model: SparseAutoencoder, data: np.ndarray) -> float:
    recon = _reconstruct(model, data)
    mean = data.mean(axis=0, dtype=np.float64)
    err = float(((data.astype(np.float64) - recon) ** 2).sum())
    total = float(((data - mean) ** 2).sum())
    return err / total if total > 0 else math.nan
