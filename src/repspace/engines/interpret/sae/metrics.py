"""What a fitted sparse autoencoder does on a set of vectors: reconstruction error, firing, top rows per latent.

Owns :func:`sae_metrics` (FVU, OpenAI's NMSE, L0, dead latents, the
firing-density histogram) with :class:`SaeMetrics`, and :func:`top_items`
(the rows that activate a latent most) with :class:`TopItems`. Both read the
model block by block through :meth:`~repspace.engines.interpret.sae.SparseAutoencoder.encode_blocks`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from repspace.core.checks import check_scalar
from repspace.engines.interpret.sae.model import SparseAutoencoder, _fitted

__all__ = ["DENSITY_BIN", "SaeMetrics", "TopItems", "sae_metrics", "top_items"]

#: Width of one bin of the firing-density histogram, in decades.
DENSITY_BIN = 0.5


@dataclass(frozen=True, eq=False)
class SaeMetrics:
    """How well a sparse autoencoder reconstructs a set of vectors, and how its latents fire there.

    Attributes
    ----------
    n, n_latents, k : int
        Rows measured, dictionary size, active latents per row.
    fvu : float
        Fraction of variance unexplained ``‖X − X̂‖²_F / ‖X − mean(X)‖²_F``
        (centred on the rows' own mean); NaN when the rows have no variance.
    nmse : float
        OpenAI's ``normalized_mean_squared_error`` (``sparse_autoencoder/loss.py``):
        the mean over rows of ``‖x − x̂‖² / ‖x‖²`` (uncentred; zero rows are
        left out, NaN if every row is zero).
    l0 : float
        Mean number of non-zero codes per row (``≤ k``).
    dead_fraction : float
        Share of latents that fired on none of the rows.
    dead_fraction_train : float
        Share dead in the training window (``model.dead_latents_``).
    density : ndarray of shape (n_latents,)
        Each latent's firing frequency on the rows.
    density_edges : ndarray
        ``log10`` frequency bin edges, :data:`DENSITY_BIN` decades wide, from
        below ``log10(1/n)`` up to 0.
    density_counts : ndarray of int64
        Latents per bin (those that never fired are in ``dead_fraction``, not here).

    Examples
    --------
    >>> m = SaeMetrics(n=10, n_latents=4, k=1, fvu=0.5, nmse=0.25, l0=1.0, dead_fraction=0.25,
    ...                dead_fraction_train=0.0, density=np.array([0.5, 0.3, 0.2, 0.0]),
    ...                density_edges=np.array([-1.0, -0.5, 0.0]), density_counts=np.array([1, 2]))
    >>> m.to_dict()["density_histogram"]
    {'log10_edges': [-1.0, -0.5, 0.0], 'counts': [1, 2], 'never_fired': 1}
    """

    n: int
    n_latents: int
    k: int
    fvu: float
    nmse: float
    l0: float
    dead_fraction: float
    dead_fraction_train: float
    density: np.ndarray = field(repr=False)
    density_edges: np.ndarray = field(repr=False)
    density_counts: np.ndarray = field(repr=False)

    def to_dict(self, per_latent: bool = False) -> dict[str, Any]:
        """``{n, n_latents, k, fvu, nmse, l0, dead_fraction, dead_fraction_train, density_histogram}``;
        with ``per_latent`` also ``density`` (a list of length ``n_latents``). NaN becomes ``None``."""
        def num(v: float) -> float | None:
            return None if not math.isfinite(v) else float(v)

        out: dict[str, Any] = {
            "n": int(self.n), "n_latents": int(self.n_latents), "k": int(self.k),
            "fvu": num(self.fvu), "nmse": num(self.nmse), "l0": float(self.l0),
            "dead_fraction": float(self.dead_fraction), "dead_fraction_train": float(self.dead_fraction_train),
            "density_histogram": {"log10_edges": [float(e) for e in self.density_edges],
                                  "counts": [int(c) for c in self.density_counts],
                                  "never_fired": int((self.density == 0).sum())},
        }
        if per_latent:
            out["density"] = [float(v) for v in self.density]
        return out


def sae_metrics(model: SparseAutoencoder, X: Any) -> SaeMetrics:
    """FVU, NMSE, L0, dead latents and the firing-density histogram of ``model`` on the rows of ``X``.

    Parameters
    ----------
    model : SparseAutoencoder
        Fitted.
    X : array of shape (n, d)

    Returns
    -------
    SaeMetrics

    Raises
    ------
    InputError
        Not fitted, NaN, or another dimension.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 8))
    >>> sae = SparseAutoencoder(n_latents=32, k=8, epochs=10, batch_size=64).fit(X)
    >>> m = sae_metrics(sae, X)
    >>> m.l0 <= 8, 0 <= m.fvu < 1
    (True, True)
    """
    model = _fitted(model)
    data = model.check_rows(X)
    n, m = len(data), len(model.latent_bias_)
    mean = data.mean(axis=0, dtype=np.float64)
    err = total = 0.0
    ratios: list[np.ndarray] = []
    fired = np.zeros(m, np.int64)
    active = 0
    for rows, vals, idx, rec32 in model.reconstruct_blocks(data):
        rec = rec32.astype(np.float64)
        block = data[rows].astype(np.float64)
        row_err = ((block - rec) ** 2).sum(axis=1)
        row_sq = (block ** 2).sum(axis=1)
        err += float(row_err.sum())
        total += float(((block - mean) ** 2).sum())
        nz = row_sq > 0
        ratios.append(row_err[nz] / row_sq[nz])
        on = vals > 0
        active += int(on.sum())
        fired += np.bincount(idx[on], minlength=m)
    allr = np.concatenate(ratios)
    density = fired / n
    lowest = math.floor(math.log10(1.0 / n) / DENSITY_BIN) * DENSITY_BIN
    edges = np.arange(lowest, DENSITY_BIN / 2, DENSITY_BIN)
    if len(edges) < 2:
        edges = np.array([lowest, 0.0])
    counts, _ = np.histogram(np.log10(density[density > 0]), bins=edges)
    return SaeMetrics(
        n=n, n_latents=m, k=int(model.k),
        fvu=err / total if total > 0 else math.nan,
        nmse=float(allr.mean()) if allr.size else math.nan,
        l0=active / n,
        dead_fraction=float((fired == 0).mean()),
        dead_fraction_train=float(np.mean(model.dead_latents_)),
        density=density, density_edges=edges, density_counts=counts.astype(np.int64),
    )


# ----------------------------------------------------------------------------- top items


@dataclass(frozen=True, eq=False)
class TopItems:
    """The rows on which one latent is largest.

    Attributes
    ----------
    latent : int
    rows : ndarray of int64
        Row numbers, highest activation first (only rows where it fired: at most ``n``).
    activations : ndarray of float32
        The latent's code on those rows.

    Examples
    --------
    >>> TopItems(3, np.array([7, 2]), np.array([1.5, 0.5], np.float32)).to_dict()
    {'latent': 3, 'rows': [7, 2], 'activations': [1.5, 0.5]}
    """

    latent: int
    rows: np.ndarray
    activations: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """``{latent, rows, activations}``."""
        return {"latent": int(self.latent), "rows": [int(r) for r in self.rows],
                "activations": [float(a) for a in self.activations]}


@overload
def top_items(model: SparseAutoencoder, X: Any, latent: int, n: int = ...) -> TopItems: ...
@overload
def top_items(model: SparseAutoencoder, X: Any, latent: Sequence[int], n: int = ...) -> list[TopItems]: ...


def top_items(model: SparseAutoencoder, X: Any, latent: int | Sequence[int], n: int = 10
              ) -> TopItems | list[TopItems]:
    """The ``n`` rows of ``X`` with the largest code for ``latent`` (one pass for a list of latents).

    Ties keep the earlier row first. Rows where the latent is 0 are never
    listed, so fewer than ``n`` come back for a rare latent.

    Returns
    -------
    TopItems, or a list of them (one per latent) when ``latent`` is a sequence.

    Raises
    ------
    InputError
        A latent outside ``[0, n_latents)``, ``n < 1``, or bad ``X``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 6))
    >>> sae = SparseAutoencoder(n_latents=12, k=3, epochs=2, batch_size=64).fit(X)
    >>> t = top_items(sae, X, 0, n=3)
    >>> len(t.rows) <= 3, bool(np.all(np.diff(t.activations) <= 0))
    (True, True)
    """
    model = _fitted(model)
    data = model.check_rows(X)
    n = check_scalar(n, "n", int, low=1)
    m = len(model.latent_bias_)
    single = isinstance(latent, (int, np.integer)) and not isinstance(latent, bool)
    wanted = [latent] if single else list(latent)  # type: ignore[list-item]
    cols = np.asarray([check_scalar(j, "latent", int, low=0, high=m - 1) for j in wanted], dtype=np.int64)
    best_rows = [np.empty(0, np.int64) for _ in cols]
    best_vals = [np.empty(0, np.float32) for _ in cols]
    for rows, vals, idx in model.encode_blocks(data):
        for c, j in enumerate(cols):
            hit = (idx == j) & (vals > 0)
            r = np.flatnonzero(hit.any(axis=1))
            v = vals[hit]  # one hit per row at most (top-k indices are distinct)
            rr = np.concatenate([best_rows[c], r + rows.start])
            vv = np.concatenate([best_vals[c], v])
            order = np.lexsort((rr, -vv.astype(np.float64)))[:n]
            best_rows[c], best_vals[c] = rr[order], vv[order]
    out = [TopItems(int(j), best_rows[c], best_vals[c]) for c, j in enumerate(cols)]
    return out[0] if single else out
