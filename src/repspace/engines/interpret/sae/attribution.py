"""The cosine of two reconstructions by a sparse autoencoder, split exactly over its latents and its bias.

Owns :func:`attribute_pair` and its result :class:`PairAttribution`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.engines.interpret.sae.model import SparseAutoencoder, _as_float32, _fitted

__all__ = ["PairAttribution", "attribute_pair"]


@dataclass(frozen=True, eq=False)
class PairAttribution:
    """The cosine of two reconstructions, split over the latents and the bias (contributions sum to it).

    Attributes
    ----------
    cosine : float
        ``cos(x̂, ŷ)``.
    latents : ndarray of int64
        Latents active in ``x̂`` or ``ŷ``, largest contribution first.
    contributions : ndarray of float64
        Each latent's share of the cosine.
    bias : float
        The share of ``b_pre``.
    codes_x, codes_y : ndarray of float64
        The latents' codes in ``x`` and ``y``.

    Examples
    --------
    >>> r = PairAttribution(0.5, np.array([2]), np.array([0.4]), 0.1, np.array([1.0]), np.array([0.5]))
    >>> r.to_dict()
    {'cosine': 0.5, 'bias': 0.1, 'latents': [{'latent': 2, 'contribution': 0.4, 'code_x': 1.0, 'code_y': 0.5}]}
    """

    cosine: float
    latents: np.ndarray
    contributions: np.ndarray
    bias: float
    codes_x: np.ndarray
    codes_y: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """``{cosine, bias, latents: [{"latent", "contribution", "code_x", "code_y"}, ...]}``."""
        return {"cosine": float(self.cosine), "bias": float(self.bias),
                "latents": [{"latent": int(j), "contribution": float(c), "code_x": float(a), "code_y": float(b)}
                            for j, c, a, b in zip(self.latents, self.contributions, self.codes_x, self.codes_y,
                                                  strict=True)]}


def _vector(v: Any, name: str, d: int) -> np.ndarray:
    arr = np.asarray(v)
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim != 1:
        raise InputError(f"{name} must be one vector of length {d}, got shape {arr.shape}")
    return _as_float32(arr[None, :], name, d)


def attribute_pair(model: SparseAutoencoder, x: Any, y: Any) -> PairAttribution:
    """Split ``cos(x̂, ŷ)`` exactly over the latents of two reconstructions and the bias.

    With ``x̂ = Σ_i a_i d_i + b`` and ``ŷ = Σ_j c_j d_j + b``, the inner
    product ``⟨x̂, ŷ⟩`` is a sum of terms ``⟨part of x̂, part of ŷ⟩``; each
    term is split equally between its two parts (a latent-latent cross term
    half to each latent, a latent-bias term half to the latent and half to the
    bias). A part ``p`` (latent ``i``: ``a_i d_i`` in ``x̂``, ``c_i d_i`` in
    ``ŷ``) therefore gets ``½(⟨p_x, ŷ⟩ + ⟨p_y, x̂⟩)``; divided by
    ``‖x̂‖‖ŷ‖`` these sum to the cosine exactly (to float64 rounding).

    Parameters
    ----------
    model : SparseAutoencoder
        Fitted.
    x, y : array of shape (d,)

    Returns
    -------
    PairAttribution

    Raises
    ------
    InputError
        Bad vectors, or a reconstruction of zero length (no cosine).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((400, 6))
    >>> sae = SparseAutoencoder(n_latents=12, k=3, epochs=3, batch_size=64).fit(X)
    >>> r = attribute_pair(sae, X[0], X[1])
    >>> bool(abs(r.contributions.sum() + r.bias - r.cosine) < 1e-12)
    True
    """
    model = _fitted(model)
    d = model.n_features_in_
    pair = np.vstack([_vector(x, "x", d), _vector(y, "y", d)])
    codes = np.asarray(model.transform(pair, dense=True), dtype=np.float64)
    D = model.components_.astype(np.float64)
    b = model.pre_bias_.astype(np.float64)
    xh, yh = codes[0] @ D + b, codes[1] @ D + b
    nx, ny = float(np.linalg.norm(xh)), float(np.linalg.norm(yh))
    if nx == 0 or ny == 0:
        raise InputError(f"the reconstruction of {'x' if nx == 0 else 'y'} is zero: its cosine is undefined")
    active = np.flatnonzero((codes[0] != 0) | (codes[1] != 0))
    a, c = codes[0, active], codes[1, active]
    Da = D[active]
    contrib = 0.5 * (a * (Da @ yh) + c * (Da @ xh)) / (nx * ny)
    bias = 0.5 * (float(b @ yh) + float(b @ xh)) / (nx * ny)
    order = np.argsort(-contrib, kind="stable")
    return PairAttribution(cosine=float(xh @ yh) / (nx * ny), latents=active[order].astype(np.int64),
                           contributions=contrib[order], bias=bias, codes_x=a[order], codes_y=c[order])
