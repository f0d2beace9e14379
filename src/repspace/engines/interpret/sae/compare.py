"""Two sparse dictionaries compared atom by atom: one-to-one stability and each latent's best match.

Owns :func:`stability` (the Hungarian matching of two dictionaries' decoder
cosines, e.g. two seeds) with :class:`Stability`, :func:`match_latents` (each
latent's best match in another dictionary, e.g. another layer) with
:class:`LatentMatch`, and the reading of a dictionary's unit atoms from a
fitted model or an array, which :mod:`~repspace.engines.interpret.sae.pursuit` shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from repspace.core.arrays import as_matrix, row_slices
from repspace.core.errors import InputError
from repspace.engines.interpret.sae.model import SparseAutoencoder, _fitted

__all__ = ["LatentMatch", "Stability", "match_latents", "stability", "unit_atoms"]


def unit_atoms(obj: Any, name: str) -> np.ndarray:
    """Unit-norm dictionary rows (float64) of a fitted SAE or of an ``n_atoms × d`` array.

    A fitted model's decoder rows are unit already; an array's rows are
    normalised, and a zero row (no direction) is refused with an
    :class:`~repspace.core.errors.InputError` naming ``name``.

    Examples
    --------
    >>> unit_atoms([[3.0, 4.0], [0.0, 2.0]], "atoms").tolist()
    [[0.6, 0.8], [0.0, 1.0]]
    """
    if isinstance(obj, SparseAutoencoder):
        return _fitted(obj).components_.astype(np.float64)
    arr = as_matrix(obj, name).astype(np.float64)
    norms = np.linalg.norm(arr, axis=1)
    if (norms == 0).any():
        raise InputError(f"{name} has a zero row (atom {int(np.argmin(norms))}); atoms need a direction")
    return arr / norms[:, None]


def _pair_atoms(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    A, B = unit_atoms(a, "a"), unit_atoms(b, "b")
    if A.shape[1] != B.shape[1]:
        raise InputError(f"a's atoms have {A.shape[1]} dimensions and b's {B.shape[1]}: "
                         "dictionaries of one space are needed")
    return A, B


@dataclass(frozen=True, eq=False)
class Stability:
    """Two dictionaries matched one to one by the Hungarian algorithm on the cosines of their atoms.

    Attributes
    ----------
    mean_cosine : float
        Mean cosine over the ``min(n_a, n_b)`` matched pairs.
    share_matched : float
        Share of matched pairs with cosine ``≥ threshold``.
    threshold : float
    rows, cols : ndarray of int64
        Matched latents of ``a`` and ``b`` (``rows`` ascending).
    cosines : ndarray of float64
        Cosine of each matched pair.

    Examples
    --------
    >>> s = stability(np.eye(3), np.eye(3)[[2, 0, 1]])
    >>> s.mean_cosine, s.cols.tolist()
    (1.0, [1, 2, 0])
    """

    mean_cosine: float
    share_matched: float
    threshold: float
    rows: np.ndarray = field(repr=False)
    cols: np.ndarray = field(repr=False)
    cosines: np.ndarray = field(repr=False)

    def to_dict(self, per_latent: bool = False) -> dict[str, Any]:
        """``{mean_cosine, share_matched, threshold, n_matched}``; with ``per_latent`` also
        ``pairs``: ``[{"a", "b", "cosine"}, ...]``."""
        out: dict[str, Any] = {"mean_cosine": float(self.mean_cosine), "share_matched": float(self.share_matched),
                               "threshold": float(self.threshold), "n_matched": int(len(self.rows))}
        if per_latent:
            out["pairs"] = [{"a": int(r), "b": int(c), "cosine": float(v)}
                            for r, c, v in zip(self.rows, self.cols, self.cosines, strict=True)]
        return out


def stability(a: Any, b: Any, *, threshold: float = 0.9) -> Stability:
    """How far two dictionaries (two seeds, two data sets) learned the same atoms.

    The ``n_a × n_b`` cosine matrix of the atoms (decoder rows; array rows are
    normalised) is matched one to one by
    :func:`scipy.optimize.linear_sum_assignment` (maximising the total cosine).
    Cosines are signed: an SAE's codes are non-negative, so an atom and its
    negation are different features.

    Parameters
    ----------
    a, b : SparseAutoencoder or array of shape (n_atoms, d)
    threshold : float, default 0.9
        A pair counts as matched when its cosine reaches it.

    Returns
    -------
    Stability

    Raises
    ------
    InputError
        Not fitted, different dimensions, a zero atom, NaN.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> D = rng.standard_normal((5, 4))
    >>> round(stability(D, D[::-1]).mean_cosine, 12), stability(D, -D).share_matched
    (1.0, 0.0)
    """
    A, B = _pair_atoms(a, b)
    threshold = float(threshold)
    cos = A @ B.T
    rows, cols = linear_sum_assignment(cos, maximize=True)
    vals = np.clip(cos[rows, cols], -1.0, 1.0)
    return Stability(mean_cosine=float(vals.mean()), share_matched=float(np.mean(vals >= threshold)),
                     threshold=threshold, rows=rows.astype(np.int64), cols=cols.astype(np.int64), cosines=vals)


@dataclass(frozen=True, eq=False)
class LatentMatch:
    """Each atom of ``a`` with its most similar atom of ``b`` (many to one allowed).

    Attributes
    ----------
    best : ndarray of int64, shape (n_a,)
        The atom of ``b`` with the largest cosine (the first on ties).
    cosine : ndarray of float64, shape (n_a,)
    mutual : ndarray of bool, shape (n_a,)
        ``a``'s atom is in turn the best match of its best match.

    Examples
    --------
    >>> m = match_latents(np.eye(2), np.array([[1.0, 1.0], [0.0, 1.0]]))
    >>> m.best.tolist(), m.mutual.tolist()
    ([0, 1], [True, True])
    """

    best: np.ndarray
    cosine: np.ndarray
    mutual: np.ndarray

    def to_dict(self, per_latent: bool = False) -> dict[str, Any]:
        """``{n, mean_cosine, median_cosine, share_mutual}``; with ``per_latent`` also
        ``matches``: ``[{"a", "b", "cosine", "mutual"}, ...]``."""
        out: dict[str, Any] = {"n": int(len(self.best)), "mean_cosine": float(self.cosine.mean()),
                               "median_cosine": float(np.median(self.cosine)),
                               "share_mutual": float(self.mutual.mean())}
        if per_latent:
            out["matches"] = [{"a": i, "b": int(j), "cosine": float(c), "mutual": bool(u)}
                              for i, (j, c, u) in enumerate(zip(self.best, self.cosine, self.mutual, strict=True))]
        return out


def match_latents(a: Any, b: Any) -> LatentMatch:
    """The best match in ``b`` of every latent of ``a`` by the cosine of their decoder directions.

    For dictionaries of different layers or models in the same space (the
    dimension must agree); :func:`stability` gives the one-to-one matching.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> D = rng.standard_normal((6, 5))
    >>> m = match_latents(D, D[[3, 1, 0, 5, 4, 2]])
    >>> m.best.tolist(), bool(np.allclose(m.cosine, 1))
    ([2, 1, 5, 0, 4, 3], True)
    """
    A, B = _pair_atoms(a, b)
    best = np.empty(len(A), np.int64)
    cos = np.empty(len(A))
    back = np.full(len(B), -np.inf)
    back_arg = np.zeros(len(B), np.int64)
    for rows in row_slices(len(A), len(B)):
        c = A[rows] @ B.T
        best[rows] = np.argmax(c, axis=1)
        cos[rows] = c[np.arange(len(c)), best[rows]]
        col_best = np.argmax(c, axis=0)
        col_val = c[col_best, np.arange(len(B))]
        better = col_val > back
        back[better], back_arg[better] = col_val[better], col_best[better] + rows.start
    mutual = back_arg[best] == np.arange(len(A))
    return LatentMatch(best=best, cosine=np.clip(cos, -1.0, 1.0), mutual=mutual)
