"""TLDR as a transform: a linear map learnt to keep nearest neighbours near (Kalantidis et al., 2021).

The training is :func:`repspace.core.tldr.fit_tldr` (shared with the ``tldrD`` first stage of
a funnel index, :mod:`repspace.engines.search.specs`); see it for the loss, the settings,
why it is written here (no maintained package ships TLDR) and what varies across CPUs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.limits import TLDR_MAX_ROWS
from repspace.core.tldr import fit_tldr
from repspace.engines.transforms._base import Transform, _int_param

__all__ = ["TLDR"]


class TLDR(Transform):
    """Twin Learning for Dimensionality Reduction: ``z = (x − mean_) @ components_ᵀ``, learnt on kNN pairs.

    Each training row is paired with one of its ``n_neighbors`` nearest rows, and a
    linear encoder is trained with the Barlow Twins loss through a projector MLP that is
    thrown away afterwards (:mod:`repspace.core.tldr`). The fitted transform is a plain
    linear map, applied in float64 like :class:`~repspace.engines.transforms.PCA`; its
    state (``mean_``, ``components_``) is what reproduces a result, since refitting on
    another CPU gives a map that differs in its last bits.

    Parameters
    ----------
    n_components : int
        Output dimensions, ``1 <= n_components <= d``.
    n_neighbors : int
        Neighbours a row is paired with (the reference's default, 5).
    metric : ``ip``, ``cosine`` or ``l2``
        How neighbours are found (``ip``: inner product on the rows as given, as the reference).
    epochs : int
        Passes over the training sample.
    random_state : int
        Seeds the sample, the initial weights and the batches.
    max_rows : int
        Largest training sample (:data:`~repspace.core.limits.TLDR_MAX_ROWS`).

    Attributes
    ----------
    mean_ : (d,) float64
    components_ : (n_components, d) float64
    fit_info_ : dict
        Rows used, seconds (neighbour graph, training) and the loss of each epoch.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((400, 5))
    >>> t = TLDR(n_components=2, epochs=2).fit(X)
    >>> t.transform(X[:3]).shape, t.to_spec()
    ((3, 2), 'tldr2')
    >>> Z = t.transform(X[:2] + X[2:4])
    >>> bool(np.allclose(Z, t.transform(X[:2]) + t.transform(X[2:4]) + t.mean_ @ t.components_.T, atol=1e-5))
    True
    """

    name = "tldr"
    _state_attrs = ("mean_", "components_")
    _min_rows = 2

    def __init__(self, n_components: int | None = None, n_neighbors: int = 5, metric: str = "ip",
                 epochs: int = 10, random_state: int = 0, max_rows: int = TLDR_MAX_ROWS) -> None:
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.epochs = epochs
        self.random_state = random_state
        self.max_rows = max_rows

    def _fit(self, X: np.ndarray) -> None:
        if self.n_components is None:
            raise InputError("TLDR needs n_components (write tldr64, not tldr)")
        D = _int_param(self.n_components, "n_components", "TLDR")
        fit = fit_tldr(X, D, metric=self.metric, seed=self.random_state, max_rows=self.max_rows,
                       n_neighbors=self.n_neighbors, epochs=self.epochs)
        self.mean_ = fit.mean
        self.components_ = fit.components
        self.fit_info_ = fit.to_dict()

    def _transform(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean_) @ self.components_.T

    @property
    def n_features_out(self) -> int:
        self.check_fitted()
        return int(self.components_.shape[0])

    def to_spec(self) -> str:
        return "tldr" if self.n_components is None else f"tldr{int(self.n_components)}"

    def _restored(self) -> None:
        d = self.n_features_in_
        comps = self.components_
        if self.mean_.shape != (d,) or comps.ndim != 2 or comps.shape[1] != d or not 1 <= comps.shape[0] <= d:
            raise InputError(f"state of TLDR does not fit: mean_ {self.mean_.shape}, components_ {comps.shape} "
                             f"for d={d}")
