"""What a head is trained on and what training returns: checked scored pairs and the learned affine map.

Owns :class:`PairData` with :func:`pair_data` (scored pairs of frozen vectors,
checked, fingerprinted) and :func:`pair_spearman` (how well a space's cosines
rank the pairs), and :class:`HeadResult` (``W``, ``b``, the recipe, the
history) with its :meth:`~HeadResult.transform`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.arrays import as_matrix
from repspace.core.checks import positive_int
from repspace.core.errors import InputError
from repspace.engines.learn._gensim import frozen

__all__ = ["HeadResult", "PairData", "as_pairs", "pair_data", "pair_spearman"]


@dataclass(frozen=True, eq=False, repr=False)
class PairData:
    """Scored pairs of frozen embeddings, checked: ``A[i]`` and ``B[i]`` are the two sides of pair ``i``.

    Make one with :func:`pair_data` (which checks and copies); the trainers
    accept a :class:`PairData` or a plain ``(A, B, scores)`` tuple.

    Attributes
    ----------
    A, B : ndarray of float32, shape (n, d)
        Read-only.
    scores : ndarray of float64, shape (n,)
        Read-only.
    fingerprint : str
        SHA-256 over the shapes and bytes of the three arrays (hex).
    """

    A: np.ndarray
    B: np.ndarray
    scores: np.ndarray
    fingerprint: str

    @property
    def n(self) -> int:
        """Number of pairs."""
        return int(self.A.shape[0])

    @property
    def d(self) -> int:
        """Dimension of the embeddings."""
        return int(self.A.shape[1])

    def __repr__(self) -> str:
        return f"PairData({self.n} pairs x {self.d} dims, fingerprint={self.fingerprint[:12]}…)"


def pair_data(A: Any, B: Any, scores: Any, *, name: str = "pairs", min_pairs: int = 2) -> PairData:
    """Check and copy scored pairs: ``A`` and ``B`` finite ``(n, d)``, ``scores`` finite ``(n,)``, ``n ≥ min_pairs``.

    Raises
    ------
    InputError
        One line: which array, and what is wrong (shape mismatch, too few
        pairs, NaN / inf).

    Examples
    --------
    >>> p = pair_data(np.eye(3), np.ones((3, 3)), [1.0, 2.0, 3.0])
    >>> p.n, p.d, p.A.dtype, len(p.fingerprint)
    (3, 3, dtype('float32'), 64)
    >>> pair_data(np.eye(3), np.ones((3, 2)), [1, 2, 3])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: pairs: A has shape (3, 3) and B (3, 2); both sides need the same shape ...
    """
    A = as_matrix(A, f"{name}: A", min_rows=0)
    B = as_matrix(B, f"{name}: B", min_rows=0)
    if A.shape != B.shape:
        raise InputError(f"{name}: A has shape {A.shape} and B {B.shape}; both sides need the same shape "
                         "(n pairs × d)")
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name}: scores must be numbers, one per pair") from None
    if s.ndim != 1 or s.shape[0] != A.shape[0]:
        raise InputError(f"{name}: scores must be a 1-d array of {A.shape[0]} numbers (one per pair), "
                         f"got shape {s.shape}")
    if not np.isfinite(s).all():
        raise InputError(f"{name}: scores has NaN or infinite values (pair {int(np.argmin(np.isfinite(s)))})")
    if A.shape[0] < min_pairs:
        raise InputError(f"{name}: need at least {min_pairs} pairs, got {A.shape[0]}")
    A32, B32 = frozen(A, np.float32), frozen(B, np.float32)
    if not (np.isfinite(A32).all() and np.isfinite(B32).all()):  # float64 values beyond float32's range
        raise InputError(f"{name}: A or B has values beyond the float32 range")
    s = frozen(s, np.float64)
    digest = hashlib.sha256()
    for arr in (A32, B32, s):
        digest.update(f"{arr.dtype.str}{arr.shape}".encode())
        digest.update(arr.tobytes())
    return PairData(A32, B32, s, digest.hexdigest())


def as_pairs(data: Any, name: str) -> PairData:
    """``data`` when it is a :class:`PairData`, else :func:`pair_data` of the ``(A, B, scores)`` triple."""
    if isinstance(data, PairData):
        return data
    if not isinstance(data, (tuple, list)) or len(data) != 3:
        raise InputError(f"{name} must be a PairData or a tuple (A, B, scores), not {type(data).__name__}")
    return pair_data(*data, name=name)


def pair_spearman(A: Any, B: Any, scores: Any) -> float:
    """Spearman correlation between the cosine of each pair ``(A[i], B[i])`` and ``scores[i]`` (float64).

    A zero row has cosine 0. Returns ``nan`` when the cosines or the scores
    are all equal.

    Examples
    --------
    >>> A = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    >>> B = np.array([[1.0, 0.1], [1.0, 1.0], [0.0, 1.0]])
    >>> pair_spearman(A, B, [5.0, 3.0, 0.0])
    1.0
    """
    from scipy.stats import spearmanr

    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    na, nb = np.linalg.norm(A, axis=1), np.linalg.norm(B, axis=1)
    cos = np.einsum("ij,ij->i", A, B) / np.where(na * nb > 0, na * nb, 1.0)
    s = np.asarray(scores, dtype=np.float64)
    if np.ptp(cos) == 0 or np.ptp(s) == 0:
        return float("nan")
    return float(spearmanr(cos, s).statistic)


# ---------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False, repr=False)
class HeadResult:
    """A trained linear head ``z = x W + b``, with its recipe and training history.

    Attributes
    ----------
    W : ndarray of float64, shape (d_in, d_out)
        Read-only. For a Matryoshka head the first ``k`` columns give the
        ``k``-dimensional prefix.
    b : ndarray of float64, shape (d_out,)
        Read-only.
    recipe : dict
        ``method`` (``matryoshka`` or ``pair-adapter``), ``params`` (every
        hyper-parameter, ``seed`` included), ``threads``, ``deterministic``,
        ``n_pairs``, ``d``, ``train_fingerprint``, ``dev_fingerprint`` (or
        ``None``), ``best_epoch``, ``selected_by`` (``dev`` or ``last epoch``),
        ``epochs_run``, ``torch_version``, ``numpy_version``; a Matryoshka head
        also ``dims`` (the prefixes, resolved to integers).
    history : tuple of dict
        One entry per epoch, epoch 0 being the starting map: ``epoch``,
        ``train_loss`` (mean over the epoch's batches; ``None`` for epoch 0),
        ``dev_spearman`` (the score that chooses the epoch; ``None`` without a
        dev set) and, for a Matryoshka head, ``dev_spearman_by_dim``.
    seconds : float
        Wall seconds of the whole call (checks, initialisation, training,
        dev scoring).

    Examples
    --------
    >>> from repspace.engines.learn.heads import train_matryoshka_head
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(64, 8)).astype(np.float32)
    >>> B = (A + 0.5 * rng.normal(size=(64, 8))).astype(np.float32)
    >>> head = train_matryoshka_head(A, B, -np.linalg.norm(A - B, axis=1), dims=(4, None), epochs=1)
    >>> head.d_in, head.d_out, head.recipe["method"], head.recipe["dims"], len(head.history)
    (8, 8, 'matryoshka', [4, 8], 2)
    >>> head.transform(A, dims=4).shape, head.W.flags.writeable
    ((64, 4), False)
    >>> sorted(head.to_dict())
    ['d_in', 'd_out', 'history', 'recipe', 'seconds']
    """

    W: np.ndarray
    b: np.ndarray
    recipe: dict[str, Any]
    history: tuple[dict[str, Any], ...]
    seconds: float

    @property
    def d_in(self) -> int:
        """Input dimension."""
        return int(self.W.shape[0])

    @property
    def d_out(self) -> int:
        """Output dimension."""
        return int(self.W.shape[1])

    @property
    def best_epoch(self) -> int:
        """The epoch whose map was returned (0: the starting map)."""
        return int(self.recipe["best_epoch"])

    def transform(self, X: Any, *, dims: int | None = None, normalize: bool = True) -> np.ndarray:
        """``(X W + b)[:, :dims]`` as float32, rows L2-normalised when ``normalize`` (a zero row stays zero).

        Examples
        --------
        >>> h = HeadResult(np.eye(2), np.zeros(2), {}, (), 0.0)
        >>> h.transform([[3.0, 4.0]]).tolist()
        [[0.6000000238418579, 0.800000011920929]]
        """
        arr = as_matrix(X, "X", min_rows=0)
        if arr.shape[1] != self.d_in:
            raise InputError(f"the head maps {self.d_in} dimensions; X has {arr.shape[1]}")
        k = self.d_out if dims is None else positive_int(dims, "dims")
        if k > self.d_out:
            raise InputError(f"dims must be at most {self.d_out}, not {k}")
        z = np.asarray(arr, dtype=np.float64) @ self.W[:, :k] + self.b[:k]
        if normalize:
            norms = np.linalg.norm(z, axis=1, keepdims=True)
            z = z / np.where(norms > 0, norms, 1.0)
        return z.astype(np.float32)

    def to_dict(self) -> dict[str, Any]:
        """Everything but ``W`` and ``b``, as plain JSON values."""
        return {"d_in": self.d_in, "d_out": self.d_out, "seconds": self.seconds, "recipe": self.recipe,
                "history": [dict(h) for h in self.history]}

    def __repr__(self) -> str:
        return (f"HeadResult(method={self.recipe.get('method')!r}, {self.d_in} -> {self.d_out}, "
                f"best_epoch={self.recipe.get('best_epoch')}, seconds={self.seconds:.2f})")
