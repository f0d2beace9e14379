"""First and second moments of each input's token states: the features of the moment probe (S237).

Moment probing (S237) reads a frozen model's token states through their first *and* second moments rather than the
mean alone. For one input's token states ``Z`` (``T x d``, every token the tokenizer emits, no padding):

- ``mean`` = ``(1/T) sum_t z_t`` (d features: the mean-pooled vector);
- ``var`` = ``(1/T) sum_t (z_t - mean)**2`` per dimension (d features: the covariance's diagonal);
- ``lowrank`` = the upper triangle (diagonal included) of ``U^T C U``, ``C`` the token covariance
  ``(1/T) sum_t (z_t - mean)(z_t - mean)^T`` and ``U`` (``d x r``) a fixed orthonormal basis shared by every input:
  the covariance seen in ``r`` fixed directions, ``r (r + 1) / 2`` features.

The basis is the top-``r`` principal directions of the pooled token states of the inputs themselves at that layer
(:func:`covariance_basis` of the :class:`TokenMoments` sums; no labels are used, so fitting it on every input
leaks nothing about the labels into the probe's folds); each direction's sign makes its largest-magnitude
component positive, so the features are the same on every CPU. Population moments (``1/T``) are used; a
one-token input has zero variance.

Examples
--------
>>> import numpy as np
>>> h = np.array([[[1.0, 0.0], [3.0, 2.0], [9.0, 9.0]]])  # one input, 3 slots, the last one padding
>>> m = moment_features(h, np.array([[1, 1, 0]]), np.eye(2)[:, :1])
>>> m.mean.tolist(), m.var.tolist(), m.lowrank.tolist()
([[2.0, 1.0]], [[1.0, 1.0]], [[1.0]])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.errors import InputError

__all__ = ["MomentFeatures", "TokenMoments", "covariance_basis", "moment_features"]


@dataclass(frozen=True, eq=False)
class MomentFeatures:
    """One batch's moment features, a row per input.

    Attributes
    ----------
    mean, var : ndarray of shape (B, d), float64
    lowrank : ndarray of shape (B, r (r + 1) / 2), float64
        Upper triangle of ``U^T C U``, row by row (``numpy.triu_indices(r)`` order).

    Examples
    --------
    >>> f = MomentFeatures(np.zeros((2, 3)), np.ones((2, 3)), np.zeros((2, 1)))
    >>> f.stack("mean+var").shape
    (2, 6)
    """

    mean: np.ndarray = field(repr=False)
    var: np.ndarray = field(repr=False)
    lowrank: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """``{"mean", "var", "lowrank"}`` as nested lists, a row per input."""
        return {"mean": self.mean.tolist(), "var": self.var.tolist(), "lowrank": self.lowrank.tolist()}

    def stack(self, which: str) -> np.ndarray:
        """The features named by ``which`` (``mean``, ``mean+var`` or ``mean+var+lowrank``) side by side."""
        parts = {"mean": self.mean, "var": self.var, "lowrank": self.lowrank}
        names = which.split("+")
        if not names or any(n not in parts for n in names):
            raise InputError(f"features must join mean, var and lowrank with '+', not {which!r}")
        return np.hstack([parts[n] for n in names])


@dataclass
class TokenMoments:
    """Running sums of token states over many inputs (every non-padding token), for :func:`covariance_basis`.

    Examples
    --------
    >>> t = TokenMoments(2)
    >>> t.add(np.array([[[1.0, 0.0], [-1.0, 0.0]]]), np.array([[1, 1]]))
    >>> t.count, covariance_basis(t, 1).ravel().tolist()
    (2, [1.0, 0.0])
    """

    dim: int
    count: int = 0
    total: np.ndarray = field(init=False, repr=False)
    outer: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.total = np.zeros(self.dim)
        self.outer = np.zeros((self.dim, self.dim))

    def add(self, hidden: Any, mask: Any) -> None:
        """Add one batch's ``(B, T, d)`` states where ``mask`` (``B x T``) is non-zero."""
        z = np.asarray(hidden, dtype=np.float64)[np.asarray(mask) > 0]
        self.count += z.shape[0]
        self.total += z.sum(axis=0)
        self.outer += z.T @ z


def covariance_basis(moments: TokenMoments, rank: int) -> np.ndarray:
    """The top-``rank`` eigenvectors (``d x rank``, orthonormal columns) of the pooled token covariance, each
    signed so that its largest-magnitude component is positive.

    Examples
    --------
    >>> t = TokenMoments(3)
    >>> t.add(np.array([[[2.0, 0, 0], [-2.0, 0, 0], [0, 1.0, 0], [0, -1.0, 0]]]), np.ones((1, 4)))
    >>> np.abs(covariance_basis(t, 2)).round(3).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 1 <= rank <= moments.dim:
        raise InputError(f"rank must be an integer from 1 to {moments.dim}, not {rank!r}")
    if moments.count < 2:
        raise InputError("the covariance basis needs at least two token states")
    mean = moments.total / moments.count
    cov = moments.outer / moments.count - np.outer(mean, mean)
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    top = vectors[:, np.argsort(values)[::-1][:rank]]
    signs = np.sign(top[np.abs(top).argmax(axis=0), np.arange(rank)])
    return top * np.where(signs == 0, 1.0, signs)


def moment_features(hidden: Any, mask: Any, basis: np.ndarray) -> MomentFeatures:
    """Mean, diagonal variance and the covariance in ``basis`` of each input's token states.

    Parameters
    ----------
    hidden : array of shape (B, T, d)
        One layer's states of a batch (padded).
    mask : array of shape (B, T)
        Non-zero on real tokens; every input has at least one.
    basis : array of shape (d, r)
        Orthonormal columns (:func:`covariance_basis`).

    Returns
    -------
    MomentFeatures

    Examples
    --------
    >>> h = np.array([[[1.0, 2.0], [3.0, 2.0]], [[5.0, 5.0], [0.0, 0.0]]])  # the second input: one token
    >>> f = moment_features(h, np.array([[1, 1], [1, 0]]), np.eye(2))
    >>> f.var.tolist(), f.lowrank.tolist()
    ([[1.0, 0.0], [0.0, 0.0]], [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    """
    h = np.asarray(hidden, dtype=np.float64)
    w = (np.asarray(mask) > 0).astype(np.float64)
    n = w.sum(axis=1)
    if (n == 0).any():
        raise InputError("every input needs at least one token")
    mean = np.einsum("bt,btd->bd", w, h) / n[:, None]
    centred = (h - mean[:, None, :]) * w[:, :, None]
    var = np.einsum("btd,btd->bd", centred, centred) / n[:, None]
    projected = centred @ np.asarray(basis, dtype=np.float64)  # (B, T, r)
    cov = np.einsum("btr,bts->brs", projected, projected) / n[:, None, None]
    upper = np.triu_indices(cov.shape[1])
    return MomentFeatures(mean, var, cov[:, upper[0], upper[1]])
