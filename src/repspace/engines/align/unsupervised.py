"""A map between two spaces learned without pairs: an initial matching, then iterative Procrustes.

No item of the source is known to correspond to any item of the target. The
method assumes the two spaces are roughly isometric (the same items, or items of
the same kind, laid out alike by both models) and works in two stages, as in
VecMap (Artetxe, Labaka & Agirre, *A robust self-learning method for fully
unsupervised cross-lingual mappings of word embeddings*, ACL 2018) and
mini-vec2vec (Dar 2025):

1. **Initial matching** on up to ``n_init`` rows of each side, from something
   that does not depend on the coordinates:

   ``profiles``
       each row's *sorted* similarity profile: the row of ``√(AAᵀ)`` (the
       square root of the Gram matrix of the normalised rows) sorted, then
       normalised. Rotating a space leaves it unchanged, so two isometric spaces
       give matching profiles for matching items; rows are matched by nearest
       profile (CSLS, both directions).
   ``gw``
       the Gromov–Wasserstein coupling (POT, ``ot.gromov.gromov_wasserstein``,
       square loss) between the two within-space cosine-distance matrices:
       the soft matching that best preserves all pairwise distances, started
       from the exact transport plan of Mémoli's third lower bound (not POT's
       product coupling, from which the solver's local minimum is decided by
       rounding); each row is matched to its largest coupling entry, both
       directions.

2. **Self-learning**: orthogonal Procrustes on the current matching, then a
   new matching from the mapped rows' **mutual** nearest neighbours under CSLS
   (Conneau et al. 2018), repeated until the mean best CSLS stops improving.
   A matching is first refined this way as it is; only when the starts (see
   3.) disagree is it refined again with stochastic dictionary induction
   (Artetxe et al. 2018): early rounds keep a random ``keep_prob`` share of
   the similarity entries, doubled each time progress stalls, so that a weak
   first matching is not simply reproduced. Stochastic rounds take the union
   of both directions' best pairs, never only the mutual ones: under dropout a
   right pair is mutual with probability ``keep_prob²``, which leaves fewer
   pairs than dimensions, and a rotation fitted on those is decided by
   rounding (issue 12: 95% right at the start, 0% ten rounds later, or 100%,
   depending on the BLAS kernel).

3. **Independent starts and agreement**: ``n_restarts`` initial matchings (the
   whole initial sample, then random 80% subsamples of it), each refined. A
   pairing reached by two starts is kept; a pairing reached by one start only
   is reported as not reproduced (``trustworthy_`` is ``False``). On two
   unrelated spaces the starts end at pairings that share almost nothing, so
   a wrong map is flagged rather than returned with the same confidence as a
   right one.

Rows are normalised (unit length, centred, unit length) for both stages; the
final map is plain :class:`~repspace.engines.align.Procrustes` on the raw rows of the
final matching, so it has the same form ``(x − mean_x_) W_ + mean_y_`` and state
as the supervised maps. Hand-written because no maintained library does this on
arrays (VecMap and MUSE are research scripts over word-embedding files); POT
supplies the Gromov–Wasserstein solver.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from repspace.core.arrays import as_matrix, block64, row_slices, unit_rows
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.core.linalg import svd
from repspace.engines.align._base import Map
from repspace.engines.align.maps import Procrustes, padded_rotation
from repspace.engines.align.scores import _mean_top_k

__all__ = ["INITS", "Unsupervised", "similarity_profiles"]

#: The initial matchings :class:`Unsupervised` knows.
INITS = ("profiles", "gw")

#: Rows of a similarity matrix held at once.
_BLOCK = 2048


def _normalise(A: np.ndarray) -> np.ndarray:
    """Unit length, centred, unit length again (Artetxe et al. 2018); float32."""
    A = unit_rows(A)
    A = unit_rows(A - A.mean(axis=0))
    return np.ascontiguousarray(A, dtype=np.float32)


def similarity_profiles(A: Any) -> np.ndarray:
    """Each row's sorted similarity profile: the sorted rows of ``√(AAᵀ)``, normalised; ``(n, n)`` float32.

    ``A`` is normalised first (unit length, centred, unit length). The square
    root of the Gram matrix comes from the thin SVD ``A = USVᵀ`` as ``USUᵀ``.
    A rotation of ``A`` (any ``AQ`` with orthogonal ``Q``) has the same profiles,
    which is what makes them comparable across spaces.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(50, 8))
    >>> Q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    >>> bool(np.allclose(similarity_profiles(A), similarity_profiles(A @ Q), atol=1e-5))
    True
    """
    A = _normalise(as_matrix(A, "A", min_rows=0, scan=False).astype(np.float64)).astype(np.float64)
    u, s, _ = svd(A, full_matrices=False)
    root = (u * s) @ u.T
    root.sort(axis=1)
    return _normalise(root)


def _best(Q: np.ndarray, B: np.ndarray, r_b: np.ndarray, keep: float,
          rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each row of ``Q``'s best row of ``B`` by ``2s − r_b`` (CSLS without the row's own constant) and that score.

    With ``keep < 1`` each entry survives with probability ``keep`` (a row with
    no survivor falls back to all its entries).
    """
    idx = np.empty(Q.shape[0], np.int64)
    best = np.empty(Q.shape[0], np.float32)
    for lo in range(0, Q.shape[0], _BLOCK):
        s = 2.0 * (Q[lo:lo + _BLOCK] @ B.T) - r_b
        if keep < 1.0:
            dropped = rng.random(s.shape, dtype=np.float32) >= keep
            dropped[dropped.all(axis=1)] = False
            s[dropped] = -np.inf
        j = s.argmax(axis=1)
        idx[lo:lo + len(j)] = j
        best[lo:lo + len(j)] = s[np.arange(len(j)), j]
    return idx, best


def _best_pairs(S: np.ndarray, T: np.ndarray, *, k: int, keep: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """Each row's best partner by CSLS in both directions (rows of ``S`` and ``T``: same dimension, unit rows).

    Returns ``fwd`` (each row of ``S``' best row of ``T``), ``bwd`` (each row of
    ``T``'s best row of ``S``) and the objective (mean of the rows of ``S``' best
    CSLS, ``2s − r_T(i) − r_S(j)``).
    """
    r_t = _mean_top_k(S, T, k).astype(np.float32)  # each source row's k nearest targets
    r_s = _mean_top_k(T, S, k).astype(np.float32)  # each target row's k nearest sources
    fwd, fwd_score = _best(S, T, r_s, keep, rng)
    bwd, _ = _best(T, S, r_t, keep, rng)
    return fwd, bwd, float(np.mean(fwd_score - r_t))


def _dictionary(fwd: np.ndarray, bwd: np.ndarray, *, mutual: bool) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)`` from both directions' best: only the mutual ones, or the union (distinct, sorted)."""
    if mutual:
        j = np.flatnonzero(fwd[bwd] == np.arange(len(bwd)))
        return bwd[j], j
    src = np.concatenate([np.arange(len(fwd)), bwd])
    trg = np.concatenate([fwd, np.arange(len(bwd))])
    return _union(src, trg, len(bwd))


def _rotation(S: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Orthogonal ``W`` (see :func:`~repspace.engines.align.maps.padded_rotation`) minimising ``‖SW − T‖``; float32."""
    return padded_rotation(S.astype(np.float64).T @ T.astype(np.float64)).astype(np.float32)


def _union(src: np.ndarray, trg: np.ndarray, n_trg: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(src, trg)`` pairs, sorted."""
    key = np.unique(src * n_trg + trg)
    return key // n_trg, key % n_trg


def _quantiles(rows: np.ndarray, m: int) -> np.ndarray:
    """Each sorted row resampled to ``m`` evenly spaced quantiles (linear interpolation); float64."""
    n = rows.shape[1]
    if n == m:
        return rows.astype(np.float64)
    pos = np.linspace(0.0, n - 1.0, m)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac = pos - lo
    return rows[:, lo] * (1.0 - frac) + rows[:, hi] * frac


def _gromov_wasserstein(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The Gromov–Wasserstein coupling of the cosine-distance matrices of ``A`` and ``B`` (POT), started well.

    POT starts from the product coupling ``abᵀ`` by default. There the gradient
    is rank one, so the first step matches rows by their mean distance to all
    others, which many rows share to a few digits: which local minimum the
    solver ends in is then decided by rounding (on 600 GloVe words against a
    rotated copy: 100% right, or 0.3%, from input that differs by 1e-6). It is
    started instead from the exact transport plan of Mémoli's third lower bound
    (2011): the cost of matching row ``i`` of ``A`` with row ``j`` of ``B`` is
    the squared 2-Wasserstein distance between their distance distributions
    (sorted rows, resampled to common quantiles), which depends on neither
    rotation nor order.
    """
    import ot

    ca = np.clip(1.0 - A.astype(np.float64) @ A.T.astype(np.float64), 0.0, None)
    cb = np.clip(1.0 - B.astype(np.float64) @ B.T.astype(np.float64), 0.0, None)
    ca /= ca.max() or 1.0
    cb /= cb.max() or 1.0
    w = min(len(A), len(B))
    qa, qb = _quantiles(np.sort(ca, axis=1), w), _quantiles(np.sort(cb, axis=1), w)
    tlb = ((qa * qa).sum(axis=1)[:, None] + (qb * qb).sum(axis=1)[None, :] - 2.0 * qa @ qb.T) / w
    p, q = ot.unif(len(A)), ot.unif(len(B))
    start = ot.emd(p, q, np.clip(tlb, 0.0, None))
    plan = ot.gromov.gromov_wasserstein(ca, cb, p, q, loss_fun="square_loss", symmetric=True, G0=start,
                                        max_iter=1000)
    return np.asarray(plan)


def _agreement(runs: list[tuple[Any, ...]], n_trg: int) -> tuple[int, np.ndarray]:
    """The run with the highest objective, and the share of its pairs that each run also found."""
    kept = max(range(len(runs)), key=lambda r: runs[r][2][-1]["objective"])
    key = runs[kept][0] * n_trg + runs[kept][1]
    return kept, np.array([np.isin(key, run[0] * n_trg + run[1]).mean() for run in runs])


class Unsupervised(Map):
    """Orthogonal map from a source space to a target space learned with **no pairs**, and how far to trust it.

    ``fit(X, Y)`` takes two *unpaired* sets of rows (any numbers of rows, any
    dimensions): initial matchings (``init``: sorted similarity profiles or
    Gromov–Wasserstein) from ``n_restarts`` independent starts, then iterative
    Procrustes on mutual CSLS nearest neighbours; see the module docstring.
    The fitted map is ``(x − mean_x_) W_ + mean_y_``, the orthogonal Procrustes
    map of the matched raw rows, with the same state as
    :class:`~repspace.engines.align.Procrustes`.

    **Starts and confidence.** Start 0 matches the whole initial sample; every
    further start matches its own random 80% of each side's rows, so the starts
    are independent attempts. Each is first refined deterministically (a few
    rounds when the start is good). When at least two starts end at the same
    pairing (they share half of its pairs or more), that pairing is kept and
    nothing more is run. Otherwise every start is also refined stochastically
    (the expensive part) and keeps the better of its two ends. The kept start
    is the one with the highest objective; ``n_agree_`` counts the starts that
    reached its pairing. A map is marked trustworthy (``trustworthy_``) only
    when it was reached by at least two starts and its pairs determine the
    rotation (more pairs than dimensions); ``warnings_`` says why not.
    On GloVe against a rotated noisy copy every start agrees. On two unrelated
    sets the starts' pairings share under 5% of their pairs.

    Parameters
    ----------
    init : ``"profiles"`` or ``"gw"``
        The initial matching.
    n_init : int, optional
        Rows of each side used for the initial matching (seeded sample when a
        side has more); default 4,000 for ``profiles`` (``n²`` memory) and 1,000
        for ``gw`` (each solver step is ``O(n³)``).
    max_rows : int
        Rows of each side used in self-learning (one seeded sample shared by
        all starts): each round costs three ``max_rows² · d`` products.
    k_csls : int
        Neighbours in CSLS's ``r`` terms.
    keep_prob : float
        Share of similarity entries kept in the first stochastic rounds (``1``
        turns the stochastic refinement off); doubled whenever ``patience``
        rounds pass without the objective improving by ``tol``.
    patience : int
        Rounds without progress before ``keep_prob`` doubles (and, at 1, before
        stopping). A long stochastic phase is what makes a weak first matching
        recoverable: on Cranfield (1,400 abstracts, MiniLM vs a model2vec model
        distilled from it, pairing withheld) the profile matching starts 1.7%
        right; with patience 3 self-learning ends at 0.4% right, with 25 at
        99.9% (VecMap waits 50 rounds).
    tol : float
    max_iter : int
        Rounds at most of each refinement.
    dictionary : ``"mutual"`` or ``"union"``
        Pairs kept by deterministic rounds: mutual CSLS nearest neighbours
        (precise), or the best of each row in both directions (VecMap's
        default). Stochastic rounds always take the union.
    n_restarts : int
        Independent starts (``≥ 2`` to measure agreement; with one start
        ``trustworthy_`` is ``None``, not measured).
    random_state : int
        Seed of the samples and of the stochastic induction.

    Attributes
    ----------
    mean_x_, mean_y_, W_, n_features_in_
        As :class:`~repspace.engines.align.Procrustes`.
    pairs_ : (m, 2) int64
        The final matching: row numbers of the fitted ``X`` and ``Y``.
    objective_ : float
        Mean best CSLS of the source rows at the end (larger is better).
    n_iter_ : int
        Rounds run by the kept refinement.
    history_ : list of dict
        Per round of the kept refinement: ``keep_prob``, ``objective``, ``n_pairs``.
    starts_ : list of dict
        Per start: ``objective``, ``n_pairs``, ``agreement`` (share of the
        kept pairing's pairs this start also found) and ``explored`` (whether
        its stochastic refinement ran).
    n_agree_ : int
        Starts whose agreement is at least 0.5 (the kept one included).
    mutual_rate_ : float
        Pairs found over the smaller side's self-learning rows: near 1 for
        two isometric spaces of the same items, about 0.6 for unrelated ones.
    trustworthy_ : bool or None
        See above; ``None`` with a single start.
    warnings_ : list of str
        Why the map is not trustworthy (empty when it is).

    Raises
    ------
    InputError
        Bad parameters, fewer than 10 rows on a side, NaN / inf, or a side
        whose rows are all the same.

    Examples
    --------
    The rows of ``Y`` are a rotated, shuffled copy of ``X``; no pair is given:

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 6)) * [5, 4, 3, 2, 1.5, 1]
    >>> Q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    >>> perm = rng.permutation(300)
    >>> m = Unsupervised(n_restarts=3).fit(X, (X @ Q)[perm])
    >>> bool(np.allclose(m.W_, Q, atol=1e-3))
    True
    >>> bool((perm[m.pairs_[:, 1]] == m.pairs_[:, 0]).mean() > 0.99)
    True
    >>> m.trustworthy_, m.n_agree_
    (True, 3)
    """

    def __init__(self, init: str = "profiles", n_init: int | None = None, max_rows: int = 10_000,
                 k_csls: int = 10, keep_prob: float = 0.1, patience: int = 25, tol: float = 1e-6,
                 max_iter: int = 500, dictionary: str = "mutual", n_restarts: int = 3,
                 random_state: int = 0) -> None:
        self.init = init
        self.n_init = n_init
        self.max_rows = max_rows
        self.k_csls = k_csls
        self.keep_prob = keep_prob
        self.patience = patience
        self.tol = tol
        self.max_iter = max_iter
        self.dictionary = dictionary
        self.n_restarts = n_restarts
        self.random_state = random_state

    def fit(self, X: Any, Y: Any) -> Self:
        """Learn the map from two unpaired sets of rows; returns ``self``."""
        self._check_params()
        X, Y = as_matrix(X, "X", min_rows=0, scan=False), as_matrix(Y, "Y", min_rows=0, scan=False)
        for name, arr in (("X", X), ("Y", Y)):
            if arr.shape[0] < 10:
                raise InputError(f"Unsupervised needs at least 10 rows of {name}, got {arr.shape[0]}")
            if arr.shape[1] < 1:
                raise InputError(f"Unsupervised: {name} has no dimensions")
        X64 = np.concatenate([block64(X, rows, "X") for rows in row_slices(*X.shape)])
        Y64 = np.concatenate([block64(Y, rows, "Y") for rows in row_slices(*Y.shape)])
        for name, arr in (("X", X64), ("Y", Y64)):
            if not np.ptp(arr, axis=0).any():
                raise InputError(f"Unsupervised: every row of {name} is the same; there is nothing to match")
        rng = np.random.default_rng(self.random_state)
        rx, ry = (self._sample(len(a), self.max_rows, rng) for a in (X64, Y64))
        Xn, Yn = _normalise(X64[rx]), _normalise(Y64[ry])

        rngs = [np.random.default_rng([self.random_state, r]) for r in range(self.n_restarts)]
        starts = [self._start(Xn, Yn, r, rngs[r]) for r in range(self.n_restarts)]
        runs = [self._refine(Xn, Yn, src, trg, 1.0, rngs[r]) for r, (src, trg) in enumerate(starts)]
        explored = [False] * self.n_restarts
        kept, agreement = _agreement(runs, len(Yn))
        if float(self.keep_prob) < 1.0 and (agreement >= 0.5).sum() < 2:  # not reproduced: explore
            for r, (src, trg) in enumerate(starts):
                run = self._refine(Xn, Yn, src, trg, float(self.keep_prob), rngs[r])
                explored[r] = True
                if run[2][-1]["objective"] > runs[r][2][-1]["objective"]:
                    runs[r] = run
            kept, agreement = _agreement(runs, len(Yn))

        src, trg, history, it = runs[kept]
        final = Procrustes().fit(X64[rx[src]], Y64[ry[trg]])
        self.mean_x_, self.mean_y_, self.W_ = final.mean_x_, final.mean_y_, final.W_
        self.pairs_ = np.stack([rx[src], ry[trg]], axis=1).astype(np.int64)
        self.objective_ = float(history[-1]["objective"])
        self.n_iter_ = it
        self.history_ = history
        self.starts_ = [{"objective": float(run[2][-1]["objective"]), "n_pairs": len(run[0]),
                         "agreement": float(a), "explored": e} for run, a, e in zip(runs, agreement, explored)]
        self.n_agree_ = int((agreement >= 0.5).sum())
        self.mutual_rate_ = len(src) / min(len(rx), len(ry))
        self.warnings_ = self._doubts(len(src), X.shape[1], Y.shape[1])
        self.trustworthy_ = None if self.n_restarts == 1 and not self.warnings_ else not self.warnings_
        self.n_features_in_ = int(X.shape[1])
        return self

    # --------------------------------------------------------------- pieces

    def _start(self, Xn: np.ndarray, Yn: np.ndarray, r: int, rng: np.random.Generator) -> tuple[Any, Any]:
        """Start ``r``'s initial matching (row numbers of ``Xn``, ``Yn``): all of the sample, or a random 80%."""
        n_init = self.n_init or (4000 if self.init == "profiles" else 1000)
        rows = []
        for a in (Xn, Yn):
            m = min(len(a), n_init)
            rows.append(self._sample(len(a), m if r == 0 else max(10, int(np.ceil(0.8 * m))), rng))
        ix, iy = rows
        src, trg = self._initial(Xn[ix], Yn[iy], rng)
        return ix[src], iy[trg]

    def _doubts(self, n_pairs: int, d_x: int, d_y: int) -> list[str]:
        """Why the fitted map should not be trusted (empty: no reason found)."""
        doubts = []
        if self.n_restarts > 1 and self.n_agree_ < 2:
            doubts.append(f"only 1 of {self.n_restarts} starts reached this pairing (the others share "
                          f"{max(s['agreement'] for s in self.starts_ if s['agreement'] < 0.5):.0%} of its "
                          "pairs at most): it was not reproduced")
        if n_pairs <= min(d_x, d_y):
            doubts.append(f"{n_pairs} pairs for {min(d_x, d_y)} dimensions do not determine a rotation: "
                          "items outside the fitted ones are mapped arbitrarily")
        return doubts

    def _refine(self, Xn: np.ndarray, Yn: np.ndarray, src: np.ndarray, trg: np.ndarray, keep: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]], int]:
        """Self-learning from one matching, starting at ``keep``; ``(src, trg, history, rounds)``."""
        best, since, history, it = -np.inf, 0, [], 0
        while it < self.max_iter:
            it += 1
            src, trg, objective = self._round(Xn, Yn, src, trg, keep, rng)
            history.append({"keep_prob": keep, "objective": objective, "n_pairs": len(src)})
            if objective - best >= self.tol:
                best, since = objective, 0
            else:
                since += 1
            if since >= self.patience:
                if keep >= 1.0:
                    break
                keep, since = min(1.0, 2.0 * keep), 0
        if keep < 1.0:  # stopped by max_iter while still stochastic: one deterministic round
            src, trg, objective = self._round(Xn, Yn, src, trg, 1.0, rng)
            history.append({"keep_prob": 1.0, "objective": objective, "n_pairs": len(src)})
        return src, trg, history, it

    @staticmethod
    def _sample(n: int, cap: int, rng: np.random.Generator) -> np.ndarray:
        return np.arange(n) if n <= cap else np.sort(rng.choice(n, cap, replace=False))

    def _round(self, Xn: np.ndarray, Yn: np.ndarray, src: np.ndarray, trg: np.ndarray, keep: float,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
        """One self-learning round: Procrustes on the matching, then CSLS neighbours of the mapped rows.

        Stochastic rounds (``keep < 1``) always take the union of both
        directions' best: a mutual dictionary under dropout keeps a right pair
        only when both directions' draws keep it (``keep²``), which leaves fewer
        pairs than dimensions, and the rotation fitted on them is then decided by
        rounding. Deterministic rounds take ``dictionary``, falling back to the
        union when the mutual pairs are too few to determine a rotation.
        """
        mapped = Xn @ _rotation(Xn[src], Yn[trg])
        fwd, bwd, objective = _best_pairs(mapped, Yn, k=self.k_csls, keep=keep, rng=rng)
        mutual = self.dictionary == "mutual" and keep >= 1.0
        new_src, new_trg = _dictionary(fwd, bwd, mutual=mutual)
        if mutual and len(new_src) < min(Xn.shape[1], Yn.shape[1], len(Xn), len(Yn)):
            new_src, new_trg = _dictionary(fwd, bwd, mutual=False)
        return new_src, new_trg, objective

    def _initial(self, A: np.ndarray, B: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The initial matching between rows of ``A`` and ``B`` (normalised), both directions' best."""
        if self.init == "profiles":
            pa, pb = similarity_profiles(A), similarity_profiles(B)
            if pa.shape[1] != pb.shape[1]:  # different sample sizes: the same quantiles of each profile
                w = min(pa.shape[1], pb.shape[1])
                pa, pb = _normalise(_quantiles(pa, w)), _normalise(_quantiles(pb, w))
            fwd, bwd, _ = _best_pairs(pa, pb, k=self.k_csls, keep=1.0, rng=rng)
            return _dictionary(fwd, bwd, mutual=False)
        plan = _gromov_wasserstein(A, B)
        src = np.concatenate([np.arange(len(A)), plan.argmax(axis=0)])
        trg = np.concatenate([plan.argmax(axis=1), np.arange(len(B))])
        return _union(src, trg, len(B))

    def _check_params(self) -> None:
        check_choice(self.init, "Unsupervised: init", INITS)
        check_choice(self.dictionary, "Unsupervised: dictionary", ("mutual", "union"))
        minimums = {"max_rows": 10, "k_csls": 1, "patience": 1, "max_iter": 1, "n_restarts": 1}
        if self.n_init is not None:
            minimums["n_init"] = 10
        for name, low in minimums.items():
            check_scalar(getattr(self, name), f"Unsupervised: {name}", int, low=low)
        check_scalar(self.keep_prob, "Unsupervised: keep_prob", float, low=0, high=1, include="right")
        check_scalar(self.tol, "Unsupervised: tol", float, low=0)
