"""Matching pursuit: another encoder for a sparse autoencoder's dictionary (or any set of atoms).

Owns :func:`matching_pursuit` and its result :class:`MatchingPursuit`; the gap
between its reconstruction and the autoencoder's is the amortisation gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from repspace.core.arrays import as_matrix, row_slices
from repspace.core.checks import check_scalar
from repspace.core.errors import InputError
from repspace.engines.interpret.sae.compare import unit_atoms
from repspace.engines.interpret.sae.model import SparseAutoencoder

__all__ = ["MatchingPursuit", "matching_pursuit"]

#: Gram matrices of matching pursuit up to this many entries are kept (float64, 512 MiB).
_GRAM_LIMIT = 1 << 26


@dataclass(frozen=True, eq=False)
class MatchingPursuit:
    """Codes of :func:`matching_pursuit` and the residual norm after each step.

    Attributes
    ----------
    codes : scipy.sparse.csr_matrix or ndarray of shape (n, n_atoms), float32
        At most ``k`` non-zeros per row (an atom picked twice is summed).
    residual_norms : ndarray of shape (n, k + 1), float64
        ``‖r_0‖, …, ‖r_k‖`` with ``r_0 = x − bias``; non-increasing along each row.

    Examples
    --------
    >>> mp = matching_pursuit([[3.0, -2.0, 0.5], [0.0, 1.0, 0.0]], np.eye(3), k=2)
    >>> mp.codes.shape, mp.codes.getnnz(axis=1).tolist()  # the second row is found in one step
    ((2, 3), [2, 1])
    >>> mp.residual_norms.round(3).tolist()
    [[3.64, 2.062, 0.5], [1.0, 0.0, 0.0]]
    >>> matching_pursuit([[3.0, -2.0, 0.5]], np.eye(3), k=2, positive=True).codes.toarray().tolist()
    [[3.0, 0.0, 0.5]]
    """

    codes: sp.csr_matrix | np.ndarray
    residual_norms: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Each row's code as ``{atom: value}`` (its non-zeros) and the residual norms, as JSON values."""
        dense = self.codes.toarray() if sp.issparse(self.codes) else np.asarray(self.codes)
        codes = [{int(a): float(row[a]) for a in np.flatnonzero(row)} for row in dense]
        return {"codes": codes, "residual_norms": self.residual_norms.tolist()}


def matching_pursuit(X: Any, dictionary: Any, k: int, *, bias: Any = None, positive: bool = False,
                     dense: bool = False) -> MatchingPursuit:
    """Greedy matching pursuit (Mallat & Zhang 1993) of each row over unit atoms, ``k`` steps.

    Each step picks the atom most correlated with the residual ``r``
    (largest ``|⟨r, d⟩|``, or largest ``⟨r, d⟩`` with ``positive``), adds
    ``⟨r, d⟩`` to its code and subtracts ``⟨r, d⟩ d`` from ``r``, so
    ``‖r‖²`` falls by ``⟨r, d⟩²`` each step. It encodes with the same
    dictionary as an SAE but without its encoder: the gap between the two
    reconstructions is the SAE's amortisation gap.

    Plain MP rather than :func:`sklearn.linear_model.orthogonal_mp`: OMP
    re-solves a least-squares problem per row and step and cannot be
    restricted to non-negative codes (an SAE's codes are); MP runs on all rows
    at once with one ``n × n_atoms`` correlation matrix updated through the
    atoms' Gram matrix (``C ← C − c · G[j]``), and its residual decreases by
    construction.

    Parameters
    ----------
    X : array of shape (n, d)
    dictionary : SparseAutoencoder or array of shape (n_atoms, d)
        A fitted SAE (its ``components_``, with ``pre_bias_`` as ``bias``) or
        atoms as rows (normalised to unit length).
    k : int
        Steps (``≥ 1``).
    bias : array of shape (d,), optional
        Subtracted from ``X`` first (default: the SAE's ``pre_bias_``, else 0).
    positive : bool, default False
        Only positive codes; a row stops early when no atom correlates positively.
    dense : bool, default False
        Dense codes instead of CSR.

    Returns
    -------
    MatchingPursuit

    Raises
    ------
    InputError
        Bad ``X``, ``k``, a zero atom, or mismatched dimensions.

    Examples
    --------
    >>> D = np.eye(3)
    >>> mp = matching_pursuit([[3.0, -2.0, 0.5]], D, k=2)
    >>> mp.codes.toarray().tolist(), mp.residual_norms.round(3).tolist()
    ([[3.0, -2.0, 0.0]], [[3.64, 2.062, 0.5]])
    """
    k = check_scalar(k, "k", int, low=1)
    atoms = unit_atoms(dictionary, "dictionary")
    if bias is None and isinstance(dictionary, SparseAutoencoder):
        bias = dictionary.pre_bias_
    data = as_matrix(X, "X", min_rows=0)
    n, d = data.shape
    if d != atoms.shape[1]:
        raise InputError(f"X has {d} dimensions and the dictionary's atoms {atoms.shape[1]}")
    b = np.zeros(d) if bias is None else np.asarray(bias, dtype=np.float64)
    if b.shape != (d,) or not np.isfinite(b).all():
        raise InputError(f"bias must be a finite vector of length {d}, got shape {b.shape}")
    m = len(atoms)
    gram = atoms @ atoms.T if m * m <= _GRAM_LIMIT else None
    norms = np.empty((n, k + 1))
    picked = np.empty((n, k), np.int64)
    coefs = np.empty((n, k))
    for rows in row_slices(n, m):
        r = np.asarray(data[rows], dtype=np.float64) - b
        corr = r @ atoms.T
        at = np.arange(len(r))
        norms[rows, 0] = np.linalg.norm(r, axis=1)
        for s in range(k):
            j = np.argmax(corr, axis=1) if positive else np.argmax(np.abs(corr), axis=1)
            c = corr[at, j]
            if positive:
                c = np.maximum(c, 0.0)
            r -= c[:, None] * atoms[j]
            if gram is not None:
                corr -= c[:, None] * gram[j]
            else:
                corr = r @ atoms.T
            picked[rows, s], coefs[rows, s] = j, c
            norms[rows, s + 1] = np.linalg.norm(r, axis=1)
    coo = sp.coo_matrix((coefs.ravel(), (np.repeat(np.arange(n), k), picked.ravel())), shape=(n, m))
    codes = coo.tocsr()  # sums an atom picked twice
    codes.eliminate_zeros()
    codes = codes.astype(np.float32)
    return MatchingPursuit(codes=codes.toarray() if dense else codes, residual_norms=norms)
