"""Feature-norm prediction: word vectors mapped to human feature norms, partial least squares beside ridge.

Human feature norms rate or count, per word, properties such as *is_round*, *has_wings* or *vision* (McRae et al.
2005, Binder et al. 2016). The question is how much of each norm a linear map of the word's vector recovers for
words it was not fitted on. Both maps are fitted per fold of a K-fold split of the words (shuffled with
``seed``) and predict the held-out fold:

* PLSR: scikit-learn's ``PLSRegression`` with ``components`` latent components, all norms at once (X and Y
  standardised, its default);
* ridge: scikit-learn's ``RidgeCV`` on the standardised vectors, its penalty chosen per norm by efficient
  leave-one-out over ``alphas`` within the training fold.

Per norm the cross-validated R² is ``1 − Σ (y − ŷ)² / Σ (y − ȳ)²`` over the out-of-fold predictions
(scikit-learn's ``r2_score``); below 0 a norm is predicted worse than by its mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.checks import check_scalar, check_strings
from repspace.core.errors import InputError

__all__ = ["DEFAULT_ALPHAS", "DEFAULT_COMPONENTS", "DEFAULT_FOLDS", "FeatureNormPrediction", "NormScore",
           "feature_norm_prediction"]

#: PLS latent components, cross-validation folds, and the ridge penalties searched.
DEFAULT_COMPONENTS = 10
DEFAULT_FOLDS = 5
DEFAULT_ALPHAS = tuple(float(a) for a in np.logspace(-2, 5, 15))


def _r2(y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    ss = ((y - y.mean(axis=0)) ** 2).sum(axis=0)
    res = ((y - pred) ** 2).sum(axis=0)
    return 1.0 - res / np.where(ss > 0, ss, 1.0)


@dataclass(frozen=True)
class NormScore:
    """Cross-validated R² of one norm by PLSR and by ridge.

    Examples
    --------
    >>> NormScore("is_round", 0.31, 0.35).to_dict()["ridge_r2"]
    0.35
    """

    norm: str
    pls_r2: float
    ridge_r2: float

    def to_dict(self) -> dict[str, Any]:
        """``{"norm", "pls_r2", "ridge_r2"}``."""
        return {"norm": self.norm, "pls_r2": self.pls_r2, "ridge_r2": self.ridge_r2}


@dataclass(frozen=True)
class FeatureNormPrediction:
    """PLSR and ridge compared by cross-validated R² per norm and on average.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 5))
    >>> r = feature_norm_prediction(X, X[:, :2] @ [[1.0], [2.0]], ["n"], components=2, folds=3)
    >>> r.to_dict()["n_norms"], r.mean_ridge_r2 > 0.99
    (1, True)
    """

    n: int
    dim: int
    folds: int
    components: int
    norms: tuple[NormScore, ...]
    mean_pls_r2: float
    mean_ridge_r2: float
    pls_wins: int

    def to_dict(self) -> dict[str, Any]:
        """``{"n", "dim", "n_norms", "folds", "components", "mean_pls_r2", "mean_ridge_r2", "pls_wins",
        "norms"}``."""
        return {"n": self.n, "dim": self.dim, "n_norms": len(self.norms), "folds": self.folds,
                "components": self.components, "mean_pls_r2": self.mean_pls_r2, "mean_ridge_r2": self.mean_ridge_r2,
                "pls_wins": self.pls_wins, "norms": [s.to_dict() for s in self.norms]}


def feature_norm_prediction(X: Any, Y: Any, norms: Sequence[str] | None = None, *,
                            components: int = DEFAULT_COMPONENTS, folds: int = DEFAULT_FOLDS,
                            alphas: Sequence[float] = DEFAULT_ALPHAS, seed: int = 0) -> FeatureNormPrediction:
    """Predict feature norms ``Y`` from word vectors ``X`` with PLSR and with ridge, K-fold cross-validated (see
    the module).

    Parameters
    ----------
    X : array of shape (n, d)
        One word vector per row.
    Y : array of shape (n, k)
        The words' norms (no missing value), one column per norm.
    norms : sequence of str, optional
        The norms' names (default ``n0..``).
    components : int
        PLS latent components (at most ``d`` and the smallest training fold less 1).
    folds : int
        K of the K-fold split (2 ≤ K ≤ n).
    alphas : sequence of float
        Ridge penalties searched within each training fold.
    seed : int
        Shuffle of the words before the split.

    Returns
    -------
    FeatureNormPrediction

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((80, 6))
    >>> Y = X @ rng.standard_normal((6, 3)) + 0.1 * rng.standard_normal((80, 3))
    >>> r = feature_norm_prediction(X, Y, ["a", "b", "c"], components=6, folds=4)
    >>> round(r.mean_pls_r2, 2) > 0.95, round(r.mean_ridge_r2, 2) > 0.95
    (True, True)
    """
    from sklearn.cross_decomposition import PLSRegression
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import KFold
    from sklearn.preprocessing import StandardScaler

    X = np.asarray(as_matrix(X, min_rows=4), dtype=np.float64)
    n, d = X.shape
    try:
        Y = np.asarray(Y, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"the norms must be numbers: {e}") from None
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or len(Y) != n:
        raise InputError(f"the norms must have one row per word ({n}), got shape {Y.shape}")
    if not np.isfinite(Y).all():
        raise InputError("the norms have a missing, NaN or infinite value")
    k = Y.shape[1]
    names = [f"n{j}" for j in range(k)] if norms is None else check_strings(norms, "norms", "norm name")
    if len(names) != k:
        raise InputError(f"{len(names)} norm names for {k} norm columns")
    folds = check_scalar(folds, "folds", int, low=2, high=n)
    components = check_scalar(components, "components", int, low=1)
    smallest_train = n - -(-n // folds)
    components = min(components, d, smallest_train - 1)
    alphas = [check_scalar(a, "alpha", float, low=0, include="neither") for a in alphas]
    if not alphas:
        raise InputError("give at least one ridge penalty")
    flat = np.ptp(Y, axis=0) == 0
    if flat.any():
        raise InputError(f"norm {names[int(np.flatnonzero(flat)[0])]!r} has one value on every word; R² is "
                         "undefined")
    pls_pred, ridge_pred = np.empty_like(Y), np.empty_like(Y)
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(X):
        pls = PLSRegression(n_components=components).fit(X[train], Y[train])
        pls_pred[test] = pls.predict(X[test]).reshape(len(test), k)
        scaler = StandardScaler().fit(X[train])
        ridge = RidgeCV(alphas=alphas, alpha_per_target=True).fit(scaler.transform(X[train]), Y[train])
        ridge_pred[test] = ridge.predict(scaler.transform(X[test])).reshape(len(test), k)
    pls_r2, ridge_r2 = _r2(Y, pls_pred), _r2(Y, ridge_pred)
    scores = tuple(NormScore(nm, round(float(p), 9), round(float(r), 9))
                   for nm, p, r in zip(names, pls_r2, ridge_r2))
    return FeatureNormPrediction(n, d, folds, components, scores, round(float(pls_r2.mean()), 9),
                                 round(float(ridge_r2.mean()), 9), int((pls_r2 > ridge_r2).sum()))
