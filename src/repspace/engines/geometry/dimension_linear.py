"""Linear beside nonlinear intrinsic dimension of a space: how far its data is from a flat subspace.

A compositional representation spreads over many linear directions while its points may lie on a manifold of
few nonlinear degrees of freedom; Lee et al. (S039, *Geometric signatures of compositionality across a language
model's lifetime*) read compositionality off the two side by side. Here:

- linear ID: the number of principal components that explain 90%, 95% and 99% of the variance (eigenvalues of
  the centred covariance, :func:`repspace.engines.geometry.covariance_eigenvalues`, descending: the smallest
  ``j`` with ``λ_1 + … + λ_j ≥ p · Σλ``);
- nonlinear ID: TwoNN (Facco et al. 2017) and the Levina–Bickel MLE, from the project's estimators
  (:func:`repspace.engines.geometry.intrinsic_dimension`, duplicates removed, exact kNN graph up to 50,000 items).

``linear_to_nonlinear`` is ``PCA-99% / TwoNN``: near 1 when the data fills a flat subspace, large when a
low-dimensional manifold curves through many directions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.errors import InputError
from repspace.engines.geometry.intrinsic import DEFAULT_K, intrinsic_dimension
from repspace.engines.geometry.spectrum import covariance_eigenvalues

__all__ = ["VARIANCE_SHARES", "LinearNonlinearID", "linear_nonlinear_id", "pca_dimension"]

#: Shares of the variance whose number of principal components is reported.
VARIANCE_SHARES = (0.9, 0.95, 0.99)
#: Relative slack on the cumulative share, for sums that land on ``p`` up to rounding.
_SLACK = 1e-12


def pca_dimension(X: Any, share: float) -> int:
    """The number of principal components that explain ``share`` of the variance of ``X``'s rows.

    Examples
    --------
    >>> X = np.random.default_rng(0).standard_normal((500, 3)) * [10.0, 3.0, 0.1]
    >>> pca_dimension(X, 0.9), pca_dimension(X, 0.99)
    (1, 2)
    """
    if not 0 < share <= 1:
        raise InputError(f"share must be in (0, 1], got {share}")
    return _components(covariance_eigenvalues(as_matrix(X)), (share,))[0]


def _components(lam: np.ndarray, shares: tuple[float, ...]) -> list[int]:
    """Per share ``p``, the smallest ``j`` with ``λ_1 + … + λ_j ≥ p · Σλ`` (``lam`` descending)."""
    total = float(lam.sum())
    if total <= 0:
        raise InputError("the rows do not vary: no principal components")
    cum = np.cumsum(lam)
    return [int(np.searchsorted(cum, p * total * (1 - _SLACK)) + 1) for p in shares]


@dataclass(frozen=True)
class LinearNonlinearID:
    """Linear (PCA) and nonlinear (TwoNN, MLE) intrinsic dimension of one space.

    Attributes
    ----------
    n, d : int
        Items and ambient dimension.
    pca : dict
        ``{"p90", "p95", "p99"}``: principal components for 90/95/99% of the variance.
    twonn, mle : float
        Nonlinear estimates (``intrinsic_dimension.twonn``, ``intrinsic_dimension.mle``).
    k : int
        Neighbours of the MLE.
    duplicates_removed : int
        Exact duplicate rows left out of the nonlinear estimates.
    linear_to_nonlinear : float
        ``pca["p99"] / twonn``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> plane = rng.standard_normal((800, 2)) @ rng.standard_normal((2, 12))
    >>> r = linear_nonlinear_id(plane)
    >>> r.pca["p99"], round(r.twonn)
    (2, 2)
    """

    n: int
    d: int
    pca: dict[str, int]
    twonn: float
    mle: float
    k: int
    duplicates_removed: int
    linear_to_nonlinear: float

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "d", "pca", "twonn", "mle", "k", "duplicates_removed", "linear_to_nonlinear"}``."""
        return {"n": self.n, "d": self.d, "pca": dict(self.pca), "twonn": self.twonn, "mle": self.mle,
                "k": self.k, "duplicates_removed": self.duplicates_removed,
                "linear_to_nonlinear": self.linear_to_nonlinear}


def linear_nonlinear_id(X: Any, *, k: int = DEFAULT_K, exact: bool | None = None,
                        seed: int | None = 0) -> LinearNonlinearID:
    """PCA dimension at 90/95/99% of the variance beside TwoNN and MLE (see the module).

    Parameters
    ----------
    X : array of shape (n, d)
        One item per row; more than ``k`` distinct rows.
    k : int
        Neighbours of the MLE (20).
    exact, seed
        The kNN graph's (:func:`repspace.core.knn.knn_graph`).

    Examples
    --------
    >>> X = np.random.default_rng(1).standard_normal((600, 5))
    >>> r = linear_nonlinear_id(X)
    >>> r.pca, round(r.mle)
    ({'p90': 5, 'p95': 5, 'p99': 5}, 5)
    """
    X = as_matrix(X)
    counts = _components(covariance_eigenvalues(X), VARIANCE_SHARES)
    pca = {f"p{round(p * 100)}": c for p, c in zip(VARIANCE_SHARES, counts)}
    nl = intrinsic_dimension(X, k=k, exact=exact, seed=seed)
    return LinearNonlinearID(int(X.shape[0]), int(X.shape[1]), pca, round(float(nl.twonn), 9),
                             round(float(nl.mle), 9), nl.k, nl.duplicates_removed,
                             round(pca["p99"] / float(nl.twonn), 9))
