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
       the soft matching that best preserves all pairwise distances; each row is
       matched to its largest coupling entry, both directions.

2. **Self-learning**: orthogonal Procrustes on the current matching, then a
   new matching from the mapped rows' **mutual** nearest neighbours under CSLS
   (Conneau et al. 2018), repeated until the mean best CSLS stops improving.
   Early rounds keep only a random ``keep_prob`` share of the similarity entries
   (stochastic dictionary induction, Artetxe et al. 2018), doubled each time
   progress stalls, so a weak first matching is not simply reproduced.

Rows are normalised (unit length, centred, unit length) for both stages; the
final map is plain :class:`~repspace.align.Procrustes` on the raw rows of the
final matching, so it has the same form ``(x − mean_x_) W_ + mean_y_`` and state
as the supervised maps. Hand-written because no maintained library does this on
arrays (VecMap and MUSE are research scripts over word-embedding files); POT
supplies the Gromov–Wasserstein solver.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np

from repspace.align._base import Map
from repspace.align.maps import Procrustes, padded_rotation
from repspace.align.relative import _unit_rows
from repspace.align.scores import _mean_top_k
from repspace.errors import InputError
from repspace.transforms._base import as_matrix, block64, row_blocks

__all__ = ["INITS", "Unsupervised", "similarity_profiles"]

#: The initial matchings :class:`Unsupervised` knows.
INITS = ("profiles", "gw")

#: Rows of a similarity matrix held at once.
_BLOCK = 2048


def _normalise(A: np.ndarray) -> np.ndarray:
    """Unit length, centred, unit length again (Artetxe et al. 2018); float32."""
    A = _unit_rows(A)
    A = _unit_rows(A - A.mean(axis=0))
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
    A = _normalise(as_matrix(A, "A").astype(np.float64)).astype(np.float64)
    u, s, _ = np.linalg.svd(A, full_matrices=False)
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


def _matching(S: np.ndarray, T: np.ndarray, *, k: int, keep: float, rng: np.random.Generator,
              mutual: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """Pairs ``(i, j)`` of rows of ``S`` and ``T`` (same dimension, unit rows) by CSLS nearest neighbours.

    ``mutual``: only pairs that are each other's best; otherwise the union of the
    two directions. Returns the pairs and the objective (mean of the rows of
    ``S``' best CSLS, ``2s − r_T(i) − r_S(j)``).
    """
    r_t = _mean_top_k(S, T, k).astype(np.float32)  # each source row's k nearest targets
    r_s = _mean_top_k(T, S, k).astype(np.float32)  # each target row's k nearest sources
    fwd, fwd_score = _best(S, T, r_s, keep, rng)
    bwd, _ = _best(T, S, r_t, keep, rng)
    objective = float(np.mean(fwd_score - r_t))
    if mutual:
        j = np.flatnonzero(fwd[bwd] == np.arange(len(bwd)))
        src, trg = bwd[j], j
    else:
        src = np.concatenate([np.arange(len(fwd)), bwd])
        trg = np.concatenate([fwd, np.arange(len(bwd))])
        src, trg = _union(src, trg, len(T))
    return src, trg, objective


def _rotation(S: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Orthogonal ``W`` (see :func:`~repspace.align.maps.padded_rotation`) minimising ``‖SW − T‖``; float32."""
    return padded_rotation(S.astype(np.float64).T @ T.astype(np.float64)).astype(np.float32)


def _union(src: np.ndarray, trg: np.ndarray, n_trg: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(src, trg)`` pairs, sorted."""
    key = np.unique(src * n_trg + trg)
    return key // n_trg, key % n_trg


class Unsupervised(Map):
    """Orthogonal map from a source space to a target space learned with **no pairs**.

    ``fit(X, Y)`` takes two *unpaired* sets of rows (any numbers of rows, any
    dimensions): an initial matching (``init``: sorted similarity profiles or
    Gromov–Wasserstein), then iterative Procrustes on mutual CSLS nearest
    neighbours; see the module docstring. The fitted map is
    ``(x − mean_x_) W_ + mean_y_``, the orthogonal Procrustes map of the matched
    raw rows, with the same state as :class:`~repspace.align.Procrustes`.

    Parameters
    ----------
    init : ``"profiles"`` or ``"gw"``
        The initial matching.
    n_init : int, optional
        Rows of each side used for the initial matching (seeded sample when a
        side has more); default 4,000 for ``profiles`` (``n²`` memory) and 1,000
        for ``gw`` (each solver step is ``O(n³)``).
    max_rows : int
        Rows of each side used in self-learning (seeded sample when a side has
        more): each round costs three ``max_rows² · d`` products.
    k_csls : int
        Neighbours in CSLS's ``r`` terms.
    keep_prob : float
        Share of similarity entries kept in the first rounds (``1`` turns the
        stochastic induction off); doubled whenever ``patience`` rounds pass
        without the objective improving by ``tol``.
    patience : int
        Rounds without progress before ``keep_prob`` doubles (and, at 1, before
        stopping). A long stochastic phase is what makes a weak first matching
        recoverable: on Cranfield (1,400 abstracts, MiniLM vs a model2vec model
        distilled from it, pairing withheld) the profile matching starts 1.7%
        right; with patience 3 self-learning ends at 0.4% right, with 25 at
        99.9% (VecMap waits 50 rounds).
    tol : float
    max_iter : int
        Self-learning rounds at most.
    dictionary : ``"mutual"`` or ``"union"``
        Pairs kept each round: mutual CSLS nearest neighbours (precise), or the
        best of each row in both directions (VecMap's default).
    n_restarts : int
        Independent starts (other samples and dropout draws); the one with the
        highest final objective is kept. A start either finds the pairing or
        stalls, and the objective tells them apart on the same data: on
        Cranfield (MiniLM vs model2vec / e5) and noisy GloVe copies, starts that
        found the pairing ended at 0.46–0.62, stalled ones at 0.20–0.24.
    random_state : int
        Seed of the samples and of the stochastic induction.

    Attributes
    ----------
    mean_x_, mean_y_, W_, n_features_in_
        As :class:`~repspace.align.Procrustes`.
    pairs_ : (m, 2) int64
        The final matching: row numbers of the fitted ``X`` and ``Y``.
    objective_ : float
        Mean best CSLS of the source rows at the end (larger is better).
    n_iter_ : int
        Self-learning rounds run.
    history_ : list of dict
        Per round: ``keep_prob``, ``objective``, ``n_pairs``.

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
    """

    def __init__(self, init: str = "profiles", n_init: int | None = None, max_rows: int = 10_000,
                 k_csls: int = 10, keep_prob: float = 0.1, patience: int = 25, tol: float = 1e-6,
                 max_iter: int = 500, dictionary: str = "mutual", n_restarts: int = 1,
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
        X, Y = as_matrix(X, "X"), as_matrix(Y, "Y")
        for name, arr in (("X", X), ("Y", Y)):
            if arr.shape[0] < 10:
                raise InputError(f"Unsupervised needs at least 10 rows of {name}, got {arr.shape[0]}")
            if arr.shape[1] < 1:
                raise InputError(f"Unsupervised: {name} has no dimensions")
        X64 = np.concatenate([block64(X, rows, "X") for rows in row_blocks(*X.shape)])
        Y64 = np.concatenate([block64(Y, rows, "Y") for rows in row_blocks(*Y.shape)])
        for name, arr in (("X", X64), ("Y", Y64)):
            if not np.ptp(arr, axis=0).any():
                raise InputError(f"Unsupervised: every row of {name} is the same; there is nothing to match")
        runs = [self._run(X64, Y64, np.random.default_rng([self.random_state, r])) for r in range(self.n_restarts)]
        rx, ry, src, trg, history, it = max(runs, key=lambda run: run[4][-1]["objective"])
        final = Procrustes().fit(X64[rx[src]], Y64[ry[trg]])
        self.mean_x_, self.mean_y_, self.W_ = final.mean_x_, final.mean_y_, final.W_
        self.pairs_ = np.stack([rx[src], ry[trg]], axis=1).astype(np.int64)
        self.objective_ = float(history[-1]["objective"])
        self.n_iter_ = it
        self.history_ = history
        self.n_features_in_ = int(X.shape[1])
        return self

    # --------------------------------------------------------------- pieces

    def _run(self, X64: np.ndarray, Y64: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
        """One start: initial matching, then self-learning; ``(rx, ry, src, trg, history, rounds)``."""
        # self-learning rows, then the initial-matching rows among them
        rx, ry = (self._sample(len(a), self.max_rows, rng) for a in (X64, Y64))
        Xn, Yn = _normalise(X64[rx]), _normalise(Y64[ry])
        n_init = self.n_init or (4000 if self.init == "profiles" else 1000)
        ix, iy = (self._sample(len(a), n_init, rng) for a in (Xn, Yn))
        src, trg = self._initial(Xn[ix], Yn[iy], rng)
        src, trg = ix[src], iy[trg]

        keep, best, since, history = float(self.keep_prob), -np.inf, 0, []
        it = 0
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
        return rx, ry, src, trg, history, it


    @staticmethod
    def _sample(n: int, cap: int, rng: np.random.Generator) -> np.ndarray:
        return np.arange(n) if n <= cap else np.sort(rng.choice(n, cap, replace=False))

    def _round(self, Xn: np.ndarray, Yn: np.ndarray, src: np.ndarray, trg: np.ndarray, keep: float,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
        """One self-learning round: Procrustes on the matching, then mutual CSLS neighbours of the mapped rows."""
        mapped = Xn @ _rotation(Xn[src], Yn[trg])
        new_src, new_trg, objective = _matching(mapped, Yn, k=self.k_csls, keep=keep, rng=rng,
                                                mutual=self.dictionary == "mutual")
        if len(new_src) < 2:  # nothing agrees both ways: both directions' best
            new_src, new_trg, objective = _matching(mapped, Yn, k=self.k_csls, keep=keep, rng=rng, mutual=False)
        return new_src, new_trg, objective

    def _initial(self, A: np.ndarray, B: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The initial matching between rows of ``A`` and ``B`` (normalised), both directions' best."""
        if self.init == "profiles":
            pa, pb = similarity_profiles(A), similarity_profiles(B)
            if pa.shape[1] != pb.shape[1]:  # different sample sizes: compare the profiles' common top
                w = min(pa.shape[1], pb.shape[1])
                pa, pb = _normalise(pa[:, -w:]), _normalise(pb[:, -w:])
            src, trg, _ = _matching(pa, pb, k=self.k_csls, keep=1.0, rng=rng, mutual=False)
            return src, trg
        import ot

        ca = np.clip(1.0 - A.astype(np.float64) @ A.T.astype(np.float64), 0.0, None)
        cb = np.clip(1.0 - B.astype(np.float64) @ B.T.astype(np.float64), 0.0, None)
        ca /= ca.max() or 1.0
        cb /= cb.max() or 1.0
        plan = ot.gromov.gromov_wasserstein(ca, cb, ot.unif(len(A)), ot.unif(len(B)), loss_fun="square_loss",
                                            symmetric=True, max_iter=1000)
        plan = np.asarray(plan)
        src = np.concatenate([np.arange(len(A)), plan.argmax(axis=0)])
        trg = np.concatenate([plan.argmax(axis=1), np.arange(len(B))])
        return _union(src, trg, len(B))

    def _check_params(self) -> None:
        if self.init not in INITS:
            raise InputError(f"Unsupervised: init must be one of {', '.join(INITS)}, not {self.init!r}")
        if self.dictionary not in ("mutual", "union"):
            raise InputError(f"Unsupervised: dictionary must be 'mutual' or 'union', not {self.dictionary!r}")
        minimums = {"max_rows": 10, "k_csls": 1, "patience": 1, "max_iter": 1, "n_restarts": 1}
        if self.n_init is not None:
            minimums["n_init"] = 10
        for name, low in minimums.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise InputError(f"Unsupervised: {name} must be an integer >= {low}, not {v!r}")
        if not (isinstance(self.keep_prob, (int, float)) and 0.0 < float(self.keep_prob) <= 1.0):
            raise InputError(f"Unsupervised: keep_prob must be in (0, 1], not {self.keep_prob!r}")
        if not (isinstance(self.tol, (int, float)) and float(self.tol) >= 0.0):
            raise InputError(f"Unsupervised: tol must be >= 0, not {self.tol!r}")
