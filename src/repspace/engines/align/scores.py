"""How good a map is, on held-out pairs: ``top1``, ``mean_cosine``, ``mean_rank``, with or without CSLS."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import block64, unit_rows
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.core.scores import csls as _csls
from repspace.engines.align._base import check_pairs

__all__ = ["MapScores", "score_map"]

#: Rows of the n × n similarity matrix held at once.
_BLOCK = 1024
#: A target scoring within this (relative) distance of the true pair's score ties with it. Far above
#: float64 rounding (the BLAS product rounds equal scores of duplicate targets differently by column
#: and by CPU, by ~1e-16), far below any real difference between two cosines.
TIE_TOL = 1e-9


@dataclass(frozen=True)
class MapScores:
    """Scores of a map on ``n_pairs`` held-out pairs (METRICS.md, "Maps between spaces").

    Attributes
    ----------
    top1 : float
        Fraction of mapped rows whose best-scoring target, among all ``n`` targets
        of the held-out set, is their own pair (ties, within :data:`TIE_TOL` of
        rounding, count for the true pair).
    mean_cosine : float
        Mean cosine between each mapped row and its true target (plain cosine,
        also when ``csls`` is set: CSLS changes the ranking, not the pair).
    mean_rank : float
        Mean 1-based rank of the true target (``1 +`` the number of targets that
        score higher by more than :data:`TIE_TOL` relative).
    csls : bool
        Whether ranks and ``top1`` use CSLS instead of cosine.
    k_csls : int
        Neighbours in CSLS's ``r`` terms (after clipping to ``n``); 0 without CSLS.
    n_pairs : int

    Examples
    --------
    A rotation fitted on 30 pairs, scored on the 10 it did not see:

    >>> from repspace.engines.align import Procrustes
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 4))
    >>> Y = X @ np.linalg.qr(rng.normal(size=(4, 4)))[0] + 0.01 * rng.normal(size=(40, 4))
    >>> s = score_map(Procrustes().fit(X[:30], Y[:30]).transform(X[30:]), Y[30:])
    >>> s.top1, round(s.mean_cosine, 2), s.mean_rank, s.n_pairs
    (1.0, 1.0, 1.0, 10)
    """

    top1: float
    mean_cosine: float
    mean_rank: float
    csls: bool
    k_csls: int
    n_pairs: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``{"top1", "mean_cosine", "mean_rank", "csls", "k_csls", "n_pairs"}``."""
        return asdict(self)


def _mean_top_k(Q: np.ndarray, B: np.ndarray, k: int) -> np.ndarray:
    """For each row of ``Q``, the mean of its ``k`` largest cosines to the rows of ``B``."""
    out = np.empty(Q.shape[0])
    n = B.shape[0]
    for lo in range(0, Q.shape[0], _BLOCK):
        s = Q[lo:lo + _BLOCK] @ B.T
        top = s if k >= n else np.partition(s, n - k, axis=1)[:, n - k:]
        out[lo:lo + _BLOCK] = top.mean(axis=1)
    return out


def score_map(mapped_X: Any, Y: Any, *, csls: bool = False, k_csls: int = 10) -> MapScores:
    """Score mapped source rows against their true targets (row ``i`` ↔ row ``i``), retrieving among all ``n``.

    Cosine similarity; with ``csls`` the retrieval score is
    ``2cos(Wx, y) − r_T(Wx) − r_S(y)`` (Conneau et al. 2018), where ``r_T(Wx)``
    is the mean cosine of ``Wx`` to its ``k_csls`` nearest targets and ``r_S(y)``
    the mean cosine of ``y`` to its ``k_csls`` nearest mapped sources, both within
    the held-out set (``k_csls`` is clipped to ``n``). A zero row has cosine 0
    with everything. The ``n × n`` score matrix is built in blocks of rows.
    A target ties with the true pair when its score is within
    ``TIE_TOL·(1 + |score|)`` (1e-9) of it, and ties count for the true pair,
    so a duplicate of the true target never outranks it, whatever the CPU's
    rounding.

    Parameters
    ----------
    mapped_X : (n, d) array
        The held-out source rows after the map (``m.transform(X_test)``).
    Y : (n, d) array
        Their true targets, row for row.
    csls : bool
    k_csls : int

    Returns
    -------
    MapScores

    Raises
    ------
    InputError
        Fewer than 2 pairs, different shapes, NaN / inf, or a bad ``k_csls``.

    Examples
    --------
    >>> Y = np.eye(4)
    >>> score_map(Y, Y).to_dict()
    {'top1': 1.0, 'mean_cosine': 1.0, 'mean_rank': 1.0, 'csls': False, 'k_csls': 0, 'n_pairs': 4}
    >>> s = score_map(Y[[1, 0, 2, 3]], Y, csls=True, k_csls=2)
    >>> s.top1, s.mean_rank
    (0.5, 1.5)
    """
    M, T = check_pairs(mapped_X, Y, min_rows=2, owner="score_map")
    if M.shape[1] != T.shape[1]:
        raise InputError(f"score_map: mapped_X has {M.shape[1]} dimensions and Y has {T.shape[1]}; "
                         "map X into the target space first")
    check_scalar(k_csls, "score_map: k_csls", int, low=1)
    n = M.shape[0]
    Mn, Tn = unit_rows(block64(M, slice(None), "mapped_X")), unit_rows(block64(T, slice(None), "Y"))
    k = min(int(k_csls), n) if csls else 0
    if csls:
        r_t = _mean_top_k(Mn, Tn, k)  # each mapped source's k nearest targets
        r_s = _mean_top_k(Tn, Mn, k)  # each target's k nearest mapped sources
    ranks = np.empty(n, dtype=np.int64)
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        s = Mn[lo:hi] @ Tn.T
        if csls:
            s = _csls(s, r_t[lo:hi], r_s)
        true = s[np.arange(hi - lo), np.arange(lo, hi)]
        above = true + TIE_TOL * (1.0 + np.abs(true))  # rounding of equal scores is not a win
        ranks[lo:hi] = 1 + (s > above[:, None]).sum(axis=1)
    cos = np.einsum("ij,ij->i", Mn, Tn)
    return MapScores(
        top1=float(np.mean(ranks == 1)),
        mean_cosine=float(np.clip(cos, -1.0, 1.0).mean()),
        mean_rank=float(ranks.mean()),
        csls=bool(csls),
        k_csls=k,
        n_pairs=int(n),
    )
