"""Ideal words: the linear factorisation of an attribute × object grid of embeddings, and how well it predicts a
cell it has not seen.

Trager et al. (2023, *Linear Spaces of Meanings: Compositional Structures in Vision-Language Models*, S048; the
additive model of concept combinations, S115) write the embedding of the composite concept "ATTR_i OBJ_j" as
``u_ij ≈ c + a_i + o_j``: ``c`` the grid's mean, and the *ideal words* ``a_i = mean_j u_ij − c`` and
``o_j = mean_i u_ij − c`` the centred row and column means. On a full (balanced) grid these are the least-squares
solution of the two-way additive model (the fitted values of the one-hot design's least squares, with the
parameters fixed by Σ a_i = Σ o_j = 0).

The held-out test: each cell in turn is left out, the additive model is fitted by least squares on the other
``mn − 1`` cells, and the cell is predicted from it. With the hat matrix of the balanced design, whose diagonal is
``h = (m + n − 1) / (mn)`` for every cell, the leave-one-out prediction is exact in closed form:
``û_(−ij) = (û_ij − h u_ij) / (1 − h)`` (the usual leave-one-out identity of linear least squares), so no refit
is needed. Each prediction is scored by its cosine with the true cell and by the rank of the true cell among all
``mn`` cells by cosine to the prediction (1: the prediction is nearest the right cell). Beside it the baselines:
the mean of the other cells (``mean``), and the mean of the other cells of the same object (``object``) or of the
same attribute (``attribute``): the additive model should beat all three when the grid composes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repspace.core.checks import check_strings
from repspace.core.errors import InputError
from repspace.core.limits import RESCORE_ENTRIES

__all__ = ["IdealWords", "ideal_word_vectors", "ideal_words", "leave_one_out_predictions"]

#: Baselines reported beside the additive model, in the order of ``held_out``.
METHODS = ("ideal_words", "mean", "object", "attribute")


def _grid(U: Any) -> np.ndarray:
    try:
        U = np.asarray(U, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(f"the grid must be a numeric array of shape (attributes, objects, d): {e}") from None
    if U.ndim != 3:
        raise InputError(f"the grid must have shape (attributes, objects, d), not {U.shape}")
    m, n, d = U.shape
    if m < 2 or n < 2 or d < 1:
        raise InputError(f"the grid needs at least 2 attributes and 2 objects (and d ≥ 1), got {m} × {n} × {d}")
    if not np.isfinite(U).all():
        raise InputError("the grid has a NaN or infinite value")
    return U


def ideal_word_vectors(U: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(c, A, O)``: the grid's mean and the ideal words, ``A[i] = mean_j U[i, j] − c`` (attributes) and
    ``O[j] = mean_i U[i, j] − c`` (objects), so that ``c + A[i] + O[j]`` is the additive fit of cell
    ``(i, j)``.

    Parameters
    ----------
    U : array of shape (m, n, d)
        ``U[i, j]`` the embedding of attribute ``i`` with object ``j``.

    Examples
    --------
    >>> U = np.array([[[1.0, 0.0], [1.0, 2.0]], [[3.0, 0.0], [3.0, 2.0]]])
    >>> c, A, O = ideal_word_vectors(U)
    >>> c.tolist(), A.tolist(), O.tolist()
    ([2.0, 1.0], [[-1.0, 0.0], [1.0, 0.0]], [[0.0, -1.0], [0.0, 1.0]])
    """
    U = _grid(U)
    c = U.mean(axis=(0, 1))
    return c, U.mean(axis=1) - c, U.mean(axis=0) - c


def leave_one_out_predictions(U: Any) -> np.ndarray:
    """``P[i, j]``: the additive model fitted by least squares on every cell but ``(i, j)``, evaluated at
    ``(i, j)``; from the full fit by the leave-one-out identity ``(û − h u) / (1 − h)``, ``h = (m + n − 1)/(mn)``.

    Examples
    --------
    An additive grid is predicted exactly from the other cells:

    >>> a, o = np.array([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 3.0]])
    >>> U = a[:, None, :] + o[None, :, :]
    >>> np.allclose(leave_one_out_predictions(U), U)
    True
    """
    U = _grid(U)
    m, n, _ = U.shape
    c, A, O = ideal_word_vectors(U)
    fit = c + A[:, None, :] + O[None, :, :]
    h = (m + n - 1) / (m * n)
    return (fit - h * U) / (1.0 - h)


def _unit(X: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(X, axis=-1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0)


def _scores(P: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cosine of each prediction with its cell, and the rank of the true cell among all cells (1 best)."""
    m, n, d = U.shape
    cells = m * n
    Pu, Uu = _unit(P.reshape(cells, d)), _unit(U.reshape(cells, d))
    own = np.einsum("ij,ij->i", Pu, Uu)
    ranks = np.empty(cells, dtype=np.int64)
    step = max(1, RESCORE_ENTRIES // cells)  # predictions against every cell, a bounded block at a time
    for lo in range(0, cells, step):
        sims = Pu[lo:lo + step] @ Uu.T
        ranks[lo:lo + step] = 1 + (sims > own[lo:lo + step, None] + 1e-12).sum(axis=1)
    return own.reshape(m, n), ranks.reshape(m, n)


def _baselines(U: np.ndarray) -> dict[str, np.ndarray]:
    m, n, _ = U.shape
    total, rows, cols = U.sum(axis=(0, 1)), U.sum(axis=1), U.sum(axis=0)
    return {"mean": (total - U) / (m * n - 1),
            "object": (cols[None, :, :] - U) / (m - 1),
            "attribute": (rows[:, None, :] - U) / (n - 1)}


@dataclass(frozen=True)
class IdealWords:
    """The ideal-word factorisation of a grid and its leave-one-out reconstruction beside the baselines.

    Attributes
    ----------
    attributes, objects : tuple of str
        The grid's row and column names.
    dim : int
    normalized : bool
        Whether the cells were scaled to unit length first.
    explained_variance : float
        Share of the grid's variance about its mean that the additive fit explains (1: exactly additive).
    held_out : dict
        Per method (``ideal_words``, ``mean``, ``object``, ``attribute``) ``{"mean_cosine", "mean_rank",
        "top1"}`` over the left-out cells.
    cells : tuple of dict
        Per cell ``{"attribute", "object", "cosine", "rank"}`` of the ideal-word prediction.
    center, attribute_vectors, object_vectors : ndarray
        ``c``, ``A`` (m, d) and ``O`` (n, d) of the full grid (not in ``to_dict``).

    Examples
    --------
    >>> U = np.random.default_rng(0).standard_normal((3, 4, 8))
    >>> r = ideal_words(U)
    >>> sorted(r.held_out), r.to_dict()["n_cells"]
    (['attribute', 'ideal_words', 'mean', 'object'], 12)
    """

    attributes: tuple[str, ...]
    objects: tuple[str, ...]
    dim: int
    normalized: bool
    explained_variance: float
    held_out: dict[str, dict[str, float]]
    cells: tuple[dict[str, Any], ...]
    center: np.ndarray
    attribute_vectors: np.ndarray
    object_vectors: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """``{"n_attributes", "n_objects", "n_cells", "dim", "normalized", "explained_variance", "held_out",
        "attribute_norms", "object_norms", "cells"}``."""
        return {"n_attributes": len(self.attributes), "n_objects": len(self.objects),
                "n_cells": len(self.attributes) * len(self.objects), "dim": self.dim, "normalized": self.normalized,
                "explained_variance": self.explained_variance,
                "held_out": {k: dict(v) for k, v in self.held_out.items()},
                "attribute_norms": {a: round(float(np.linalg.norm(v)), 9)
                                    for a, v in zip(self.attributes, self.attribute_vectors)},
                "object_norms": {o: round(float(np.linalg.norm(v)), 9)
                                 for o, v in zip(self.objects, self.object_vectors)},
                "cells": [dict(c) for c in self.cells]}


def _names(names: Sequence[str] | None, k: int, prefix: str, what: str) -> tuple[str, ...]:
    if names is None:
        return tuple(f"{prefix}{i}" for i in range(k))
    names = check_strings(names, what, "name")
    if len(names) != k:
        raise InputError(f"{len(names)} {what} for a grid with {k}")
    if len(set(names)) != k:
        raise InputError(f"the {what} repeat a name")
    return tuple(names)


def ideal_words(U: Any, attributes: Sequence[str] | None = None, objects: Sequence[str] | None = None, *,
                normalize: bool = True) -> IdealWords:
    """Ideal words of an attribute × object grid (Trager et al., S048) with the held-out reconstruction of every
    cell beside the mean, object-only and attribute-only baselines (see the module).

    Parameters
    ----------
    U : array of shape (m, n, d)
        ``U[i, j]`` the embedding of attribute ``i`` with object ``j``; m, n ≥ 2.
    attributes, objects : sequence of str, optional
        Names of the rows and columns (default ``a0..``, ``o0..``).
    normalize : bool
        Scale every cell to unit length first (Trager et al. work with unit embeddings).

    Returns
    -------
    IdealWords

    Examples
    --------
    An exactly additive grid: every left-out cell is predicted exactly and ranked first.

    >>> rng = np.random.default_rng(1)
    >>> U = rng.standard_normal((3, 1, 16)) + rng.standard_normal((1, 4, 16))
    >>> r = ideal_words(U, ["red", "green", "blue"], ["car", "cup", "hat", "box"], normalize=False)
    >>> best = r.held_out["ideal_words"]
    >>> round(r.explained_variance, 6), best["top1"], round(best["mean_cosine"], 6)
    (1.0, 1.0, 1.0)
    """
    U = _grid(U)
    m, n, d = U.shape
    attributes = _names(attributes, m, "a", "attributes")
    objects = _names(objects, n, "o", "objects")
    if normalize:
        if (np.linalg.norm(U, axis=-1) == 0).any():
            raise InputError("a cell of the grid is the zero vector; it has no direction to normalise")
        U = _unit(U)
    c, A, O = ideal_word_vectors(U)
    fit = c + A[:, None, :] + O[None, :, :]
    total = float(((U - c) ** 2).sum())
    explained = 1.0 - float(((U - fit) ** 2).sum()) / total if total > 0 else 1.0
    preds = {"ideal_words": leave_one_out_predictions(U), **_baselines(U)}
    held: dict[str, dict[str, float]] = {}
    cells: tuple[dict[str, Any], ...] = ()
    for name in METHODS:
        cos, rank = _scores(preds[name], U)
        held[name] = {"mean_cosine": round(float(cos.mean()), 9), "mean_rank": round(float(rank.mean()), 9),
                      "top1": round(float((rank == 1).mean()), 9)}
        if name == "ideal_words":
            cells = tuple({"attribute": attributes[i], "object": objects[j], "cosine": round(float(cos[i, j]), 9),
                           "rank": int(rank[i, j])} for i in range(m) for j in range(n))
    return IdealWords(attributes, objects, d, bool(normalize), round(explained, 9), held, cells, c, A, O)
