"""Feature universality of two sparse dictionaries (Lan et al. 2024, *Sparse autoencoders reveal universal feature
spaces across large language models*): match features by activation correlation, then SVCCA on the matched ones.

Two dictionaries fitted on two models' (or two layers') vectors of the *same* inputs give two code matrices
``A`` (``n × m_a``) and ``B`` (``n × m_b``), row for row. :func:`feature_correlations` is the ``m_a × m_b`` matrix of
Pearson correlations of their columns over the ``n`` inputs (a column that never varies, a dead latent, has no
correlation: its row or column is 0 and it is marked not live). :func:`match_features` pairs the features:

``hungarian``
    one to one, maximising the total correlation (:func:`scipy.optimize.linear_sum_assignment`);
``max``
    each feature of ``A`` with its most correlated feature of ``B`` (many to one allowed), as the paper pairs them.

:func:`feature_universality` then measures how alike the two dictionaries' matched features are with
:func:`~repspace.engines.compare.svcca`, on their decoder directions (the paper's measure: the matched features are
the items, the model dimensions the variables, ``W_a[rows]`` against ``W_b[cols]``) and on their activations
(``A[:, rows]`` against ``B[:, cols]``), each beside a random-pairing baseline (the ``B`` side of the pairs
shuffled, ``n_random`` times): the paper's evidence of universality is SVCCA well above that baseline.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> A = rng.exponential(size=(300, 6)) * (rng.random((300, 6)) < 0.3)
>>> perm = np.array([4, 0, 5, 2, 1, 3])
>>> B = A[:, np.argsort(perm)]                        # B's feature perm[i] is A's feature i
>>> m = match_features(A, B)
>>> m.cols.tolist() == perm.tolist(), round(m.mean_correlation, 6)
(True, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.compare.svcca import SVCCAResult, svcca

__all__ = ["FeatureMatch", "FeatureUniversality", "MATCH_METHODS", "feature_correlations", "feature_universality",
           "match_features"]

#: How :func:`match_features` pairs features.
MATCH_METHODS = ("hungarian", "max")
#: Largest correlation matrix held, in entries (float64: 512 MiB): two 8,192-latent dictionaries.
FEATURE_PAIRS_MAX = 64 * 1024 * 1024
#: Rows of ``Aᵀ`` per block of the correlation product.
_BLOCK = 1024


def _codes(X: Any, name: str) -> sp.csc_matrix | np.ndarray:
    """A finite 2-d code matrix, sparse kept sparse (CSC: column blocks), dense as float64."""
    if sp.issparse(X):
        M = sp.csc_matrix(X, dtype=np.float64)
        if M.ndim != 2 or M.shape[1] < 1:
            raise InputError(f"{name} must be an n × m code matrix, got shape {M.shape}")
        if not np.isfinite(M.data).all():
            raise InputError(f"{name} has NaN or infinite values")
        return M
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"{name} is not a numeric array: {e}") from None
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise InputError(f"{name} must be an n × m code matrix (inputs × features), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} has NaN or infinite values")
    return arr


def _column_moments(M: sp.csc_matrix | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and (population) standard deviations, float64."""
    n = M.shape[0]
    if sp.issparse(M):
        mean = np.asarray(M.sum(axis=0)).ravel() / n
        sq = np.asarray(M.multiply(M).sum(axis=0)).ravel() / n
        var = np.maximum(sq - mean ** 2, 0.0)
    else:
        mean = M.mean(axis=0)
        var = ((M - mean) ** 2).mean(axis=0)  # two-pass: exact zero for a constant column
    return mean, np.sqrt(var)


def _live(mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Columns whose spread is above the rounding of their values (a constant column is not live).

    A sparse column's variance is ``E[x²] − E[x]²``, whose rounding leaves a constant column a spread of up to
    about ``1e-8·|mean|``: columns spread less than ``1e-6·|mean|`` count as constant."""
    return (std > 0) & (std > 1e-6 * np.abs(mean))


def feature_correlations(A: Any, B: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pearson correlations of every feature (column) of ``A`` with every feature of ``B`` over the shared rows.

    Parameters
    ----------
    A : array or scipy sparse matrix of shape (n, m_a)
    B : array or scipy sparse matrix of shape (n, m_b)
        Two dictionaries' codes (activations) of the same ``n ≥ 2`` inputs, row for row.

    Returns
    -------
    (C, live_a, live_b)
        ``C`` the ``m_a × m_b`` correlations (float64, in ``[−1, 1]``); ``live_a`` / ``live_b`` mark the features
        that vary over the inputs; a feature that does not (a dead latent) has 0 correlation with everything.

    Raises
    ------
    InputError
        Different numbers of rows, fewer than 2, a NaN, or a matrix above :data:`FEATURE_PAIRS_MAX` entries.

    Examples
    --------
    >>> A = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    >>> B = np.array([[3.0], [2.0], [1.0]])
    >>> C, live_a, live_b = feature_correlations(A, B)
    >>> C.round(6).tolist(), live_a.tolist(), live_b.tolist()
    ([[-1.0], [0.0]], [True, False], [True])
    """
    A, B = _codes(A, "A"), _codes(B, "B")
    n = A.shape[0]
    if B.shape[0] != n:
        raise InputError(f"A has {n} rows and B {B.shape[0]}: the codes of the same inputs are needed, row for row")
    if n < 2:
        raise InputError(f"{n} input(s): a correlation needs at least 2")
    m_a, m_b = A.shape[1], B.shape[1]
    if m_a * m_b > FEATURE_PAIRS_MAX:
        raise InputError(f"{m_a:,} × {m_b:,} feature pairs exceed the {FEATURE_PAIRS_MAX:,} a correlation matrix "
                         "may hold; match fewer features")
    mean_a, std_a = _column_moments(A)
    mean_b, std_b = _column_moments(B)
    live_a, live_b = _live(mean_a, std_a), _live(mean_b, std_b)
    Bc = B if sp.issparse(B) else B - mean_b  # a centred dense side makes the product exact for dense pairs
    C = np.empty((m_a, m_b))
    for s in range(0, m_a, _BLOCK):
        cols = slice(s, min(s + _BLOCK, m_a))
        block = A[:, cols]
        prod = block.T @ Bc
        prod = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
        if sp.issparse(B):  # Σ (a − ā)(b − b̄) = Σ a·b − n·ā·b̄ with B uncentred
            prod = prod - n * np.outer(mean_a[cols], mean_b)
        C[cols] = prod / n
    with np.errstate(divide="ignore", invalid="ignore"):
        C /= np.outer(np.where(live_a, std_a, 1.0), np.where(live_b, std_b, 1.0))
    C[~live_a] = 0.0
    C[:, ~live_b] = 0.0
    np.clip(C, -1.0, 1.0, out=C)
    return C, live_a, live_b


@dataclass(frozen=True, eq=False)
class FeatureMatch:
    """Features of ``A`` paired with features of ``B`` by activation correlation.

    Attributes
    ----------
    method : str
        ``hungarian`` (one to one) or ``max`` (each ``A`` feature's best, many to one).
    rows, cols : ndarray of int64
        The kept pairs: ``A``'s feature ``rows[i]`` with ``B``'s ``cols[i]`` (``rows`` ascending). Pairs with a
        dead feature, or below ``min_correlation``, are left out.
    correlations : ndarray of float64
        Each kept pair's correlation.
    n_a, n_b, live_a, live_b : int
        Features of each dictionary, and those that vary over the inputs.
    min_correlation : float or None
    share_unique : float
        Share of the kept pairs whose ``B`` feature is in no other kept pair (1 for ``hungarian``).

    Examples
    --------
    >>> m = match_features(np.eye(3), np.eye(3)[:, [2, 0, 1]])
    >>> m.cols.tolist(), m.to_dict()["n_pairs"]
    ([1, 2, 0], 3)
    """

    method: str
    rows: np.ndarray = field(repr=False)
    cols: np.ndarray = field(repr=False)
    correlations: np.ndarray = field(repr=False)
    n_a: int
    n_b: int
    live_a: int
    live_b: int
    min_correlation: float | None
    share_unique: float

    @property
    def mean_correlation(self) -> float:
        """Mean correlation of the kept pairs (NaN when none is kept)."""
        return float(self.correlations.mean()) if len(self.correlations) else float("nan")

    def to_dict(self, per_feature: bool = False) -> dict[str, Any]:
        """``{method, n_a, n_b, live_a, live_b, n_pairs, mean_correlation, median_correlation, min_correlation,
        share_unique}``; with ``per_feature`` also ``pairs``: ``[{"a", "b", "correlation"}, ...]``."""
        has = len(self.correlations) > 0
        out: dict[str, Any] = {
            "method": self.method, "n_a": self.n_a, "n_b": self.n_b, "live_a": self.live_a, "live_b": self.live_b,
            "n_pairs": int(len(self.rows)), "mean_correlation": self.mean_correlation if has else None,
            "median_correlation": float(np.median(self.correlations)) if has else None,
            "min_correlation": self.min_correlation, "share_unique": self.share_unique}
        if per_feature:
            out["pairs"] = [{"a": int(r), "b": int(c), "correlation": float(v)}
                            for r, c, v in zip(self.rows, self.cols, self.correlations, strict=True)]
        return out


def _pairs_from(C: np.ndarray, live_a: np.ndarray, live_b: np.ndarray, method: str,
                min_correlation: float | None) -> FeatureMatch:
    if not live_a.any() or not live_b.any():
        raise InputError(f"{'A' if not live_a.any() else 'B'} has no feature that varies over the inputs: "
                         "nothing to match")
    ia, ib = np.flatnonzero(live_a), np.flatnonzero(live_b)
    sub = C[np.ix_(ia, ib)]
    if method == "hungarian":
        r, c = linear_sum_assignment(sub, maximize=True)
    else:
        r, c = np.arange(len(ia)), np.argmax(sub, axis=1)  # the first on ties
    rows, cols = ia[r].astype(np.int64), ib[c].astype(np.int64)
    vals = C[rows, cols]
    if min_correlation is not None:
        keep = vals >= min_correlation
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    _, inverse, counts = np.unique(cols, return_inverse=True, return_counts=True)
    unique = float(np.mean(counts[inverse] == 1)) if len(cols) else 1.0
    return FeatureMatch(method, rows, cols, vals, int(C.shape[0]), int(C.shape[1]), int(live_a.sum()),
                        int(live_b.sum()), min_correlation, unique)


def _method(method: str, min_correlation: float | None) -> float | None:
    check_choice(method, "the matching method", MATCH_METHODS)
    if min_correlation is None:
        return None
    return check_scalar(min_correlation, "min_correlation", float, low=-1.0, high=1.0)


def match_features(A: Any, B: Any, *, method: str = "hungarian", min_correlation: float | None = None
                   ) -> FeatureMatch:
    """Pair the features of two dictionaries by the Pearson correlation of their activations over shared inputs.

    Parameters
    ----------
    A, B : array or sparse matrix of shape (n, m_a), (n, m_b)
        Codes of the same inputs, row for row (:func:`feature_correlations`).
    method : {"hungarian", "max"}
        One to one maximising the total correlation, or each ``A`` feature's most correlated ``B`` feature (the
        first on ties; many to one, as Lan et al. pair them).
    min_correlation : float, optional
        Keep only pairs correlated at least this much (the paper drops weakly correlated pairs).

    Returns
    -------
    FeatureMatch
        Dead features (constant over the inputs) are never paired.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> A = rng.random((50, 3))
    >>> B = np.column_stack([A[:, 1], A[:, 1] + 0.1 * rng.random(50), A[:, 0]])
    >>> match_features(A, B).cols.tolist(), match_features(A, B, method="max").cols.tolist()
    ([2, 0, 1], [2, 0, 2])
    """
    floor = _method(method, min_correlation)
    C, live_a, live_b = feature_correlations(A, B)
    return _pairs_from(C, live_a, live_b, method, floor)


@dataclass(frozen=True, eq=False)
class FeatureUniversality:
    """Matched features of two dictionaries compared by SVCCA, each beside a random pairing.

    Attributes
    ----------
    match : FeatureMatch
    decoder : SVCCAResult or None
        SVCCA of the matched features' decoder directions (items: the pairs; None without decoders).
    activations : SVCCAResult
        SVCCA of the matched features' activations over the inputs.
    random_decoder, random_activations : ndarray of float64
        SVCCA of ``n_random`` random pairings: for decoders the ``B`` side of the pairs shuffled; for activations
        (SVCCA is blind to the order of ``B``'s columns) as many live ``B`` features drawn at random, so that
        with every live feature matched one to one the activation baseline equals the matched value and only
        the decoder comparison tells the pairing apart.
    seed : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> W = rng.standard_normal((40, 8))
    >>> A = rng.exponential(size=(500, 40)) * (rng.random((500, 40)) < 0.2)
    >>> u = feature_universality(A, A[:, ::-1], W, W[::-1] @ rng.standard_normal((8, 8)), n_random=5)
    >>> round(u.decoder.value, 6), u.to_dict()["decoder_random_mean"] < 0.9
    (1.0, True)
    """

    match: FeatureMatch
    decoder: SVCCAResult | None
    activations: SVCCAResult
    random_decoder: np.ndarray = field(repr=False)
    random_activations: np.ndarray = field(repr=False)
    seed: int

    def to_dict(self, per_feature: bool = False) -> dict[str, Any]:
        """``match`` (:meth:`FeatureMatch.to_dict`), ``svcca_decoder`` / ``svcca_activations`` (the SVCCA values),
        ``decoder_random_mean`` / ``_sd`` / ``_p`` and the same for activations (``p``: the share of random
        pairings at least as high, with the observed one counted), ``n_random``, ``seed``, and ``decoder`` /
        ``activations`` (:meth:`SVCCAResult.to_dict`)."""
        out: dict[str, Any] = {"match": self.match.to_dict(per_feature=per_feature), "n_random": 0, "seed": self.seed}
        for name, res, rnd in (("decoder", self.decoder, self.random_decoder),
                               ("activations", self.activations, self.random_activations)):
            out[f"svcca_{name}"] = None if res is None else float(res.value)
            value = None if res is None else float(res.value)
            has = value is not None and len(rnd) > 0
            out[f"{name}_random_mean"] = float(rnd.mean()) if has else None
            out[f"{name}_random_sd"] = float(rnd.std(ddof=1)) if has and len(rnd) > 1 else None
            out[f"{name}_random_p"] = float((1 + np.sum(rnd >= value)) / (1 + len(rnd))) if has else None
            out[name] = None if res is None else res.to_dict()
            out["n_random"] = max(out["n_random"], int(len(rnd)))
        return out


def _decoders(W: Any, m: int, name: str) -> np.ndarray:
    arr = np.asarray(W, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != m:
        raise InputError(f"{name} must have one row per feature ({m}), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} has NaN or infinite values")
    return arr


def _columns(M: sp.csc_matrix | np.ndarray, idx: np.ndarray) -> np.ndarray:
    sub = M[:, idx]
    return sub.toarray() if sp.issparse(sub) else np.asarray(sub)


def feature_universality(A: Any, B: Any, decoder_a: Any = None, decoder_b: Any = None, *,
                         method: str = "hungarian", min_correlation: float | None = None,
                         variance: float = 0.99, n_random: int = 20, seed: int = 0) -> FeatureUniversality:
    """Match two dictionaries' features by activation correlation, then SVCCA on the matched features.

    Parameters
    ----------
    A, B : array or sparse matrix of shape (n, m_a), (n, m_b)
        The two dictionaries' codes of the same inputs, row for row.
    decoder_a, decoder_b : array of shape (m_a, d_a), (m_b, d_b), optional
        Their decoder directions (atoms), one row per feature; the dimensions may differ (two models). Without
        them only the activations are compared.
    method, min_correlation
        As :func:`match_features`.
    variance : float, default 0.99
        :func:`~repspace.engines.compare.svcca`'s variance cut.
    n_random : int, default 20
        Random pairings behind the baseline (0: none).
    seed : int

    Returns
    -------
    FeatureUniversality

    Raises
    ------
    InputError
        As :func:`match_features`; decoders of the wrong shape; fewer than 2 kept pairs.

    Notes
    -----
    SVCCA of decoder directions treats the pairs as items: with fewer pairs than the kept dimensions of both
    sides it is trivially near 1 (:func:`~repspace.engines.compare.svcca`), so compare dictionaries with more
    live features than model dimensions.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.exponential(size=(400, 30)) * (rng.random((400, 30)) < 0.3)
    >>> u = feature_universality(A, A[:, rng.permutation(30)], n_random=5)
    >>> round(u.match.mean_correlation, 6), round(u.activations.value, 6), u.decoder is None
    (1.0, 1.0, True)
    """
    floor = _method(method, min_correlation)
    n_random = check_scalar(n_random, "n_random", int, low=0)
    seed = check_scalar(seed, "seed", int, low=0)
    Ac, Bc = _codes(A, "A"), _codes(B, "B")
    if (decoder_a is None) != (decoder_b is None):
        raise InputError("give both dictionaries' decoders, or neither")
    Wa = None if decoder_a is None else _decoders(decoder_a, Ac.shape[1], "decoder_a")
    Wb = None if decoder_b is None else _decoders(decoder_b, Bc.shape[1], "decoder_b")
    C, live_a, live_b = feature_correlations(Ac, Bc)
    match = _pairs_from(C, live_a, live_b, method, floor)
    if len(match.rows) < 2:
        raise InputError(f"{len(match.rows)} feature pair(s) kept: SVCCA needs at least 2"
                         + (f" (lower min_correlation, now {floor})" if floor is not None else ""))
    rows, cols = match.rows, match.cols
    Xa = _columns(Ac, rows)
    act = svcca(Xa, _columns(Bc, cols), variance=variance)
    dec = None if Wa is None or Wb is None else svcca(Wa[rows], Wb[cols], variance=variance)
    rng = np.random.default_rng(seed)
    rnd_dec, rnd_act = [], []
    pool = np.flatnonzero(live_b)
    for _ in range(n_random):
        if Wa is not None and Wb is not None:  # the same B features, paired at random
            rnd_dec.append(svcca(Wa[rows], Wb[cols[rng.permutation(len(cols))]], variance=variance).value)
        # SVCCA of activations is blind to the order of B's columns: its baseline draws random live B features
        drawn = rng.choice(pool, size=len(cols), replace=len(cols) > len(pool))
        rnd_act.append(svcca(Xa, _columns(Bc, drawn), variance=variance).value)
    return FeatureUniversality(match, dec, act, np.asarray(rnd_dec, dtype=np.float64),
                               np.asarray(rnd_act, dtype=np.float64), seed)
