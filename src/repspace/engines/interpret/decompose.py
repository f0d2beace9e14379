"""Token hidden states split into position, context and residual parts; items re-expressed in a concept basis.

Mean decomposition
------------------
Song & Zhong (*Uncovering hidden geometry in Transformers via disentangling
position and context*, 2023) write the hidden state of token ``t`` of sequence
``c`` as

``h_{c,t} = μ + pos_t + ctx_c + resid_{c,t}``

with ``μ`` the global mean, ``pos_t`` the mean over the sequences of the states
at position ``t`` minus ``μ``, and ``ctx_c`` the mean over the positions of
sequence ``c`` minus ``μ``. :func:`mean_decomposition` computes this
decomposition for any labelling of the rows of ``states`` (one row per token
occurrence) by a *position* and a *context* and reports the share of the
total centred sum of squares ``T = Σ_i ‖h_i − μ‖²`` carried by each part:

``positional = Σ_i ‖pos_{t(i)}‖² / T``, ``context = Σ_i ‖ctx_{c(i)}‖² / T``,
``residual = Σ_i ‖resid_i‖² / T`` and
``cross = 2 Σ_i (pos·ctx + pos·resid + ctx·resid) / T``,

so that the four shares add up to 1 (to rounding, about 1e-15: ``cross`` is
computed from the parts, not as the remainder).

Positions and contexts are not orthogonal factors in general: with sequences
of different lengths the late positions occur only in the long sequences, so
the position means and the context means overlap. Two definitions are offered
(``method``):

``means`` (default, Song & Zhong's)
    The simple group means above. The parts are mutually orthogonal — and
    ``cross`` is 0 — exactly when the design is *proportional* (the number of
    tokens at position ``t`` in context ``c`` is ``n_t n_c / N``, e.g. every
    sequence has the same length). Otherwise ``cross`` says by how much the
    two sets of means double count (or miss) the same variation.
``ols``
    The two-way additive model ``h_i ≈ μ + a_{t(i)} + b_{c(i)}`` (two-way
    ANOVA main effects) fitted by ordinary least squares, identified by
    ``Σ_i a_{t(i)} = Σ_i b_{c(i)} = 0`` (so the intercept is the global mean).
    The residual is orthogonal to both effects, so ``cross = 2 Σ_i a·b / T``
    only: the variance the two effects share and that cannot be given to
    either alone. Equal to ``means`` for a proportional design. The split is
    unique only when the bipartite graph of positions and contexts (an edge per
    pair that occurs) is connected; otherwise :class:`InputError`.

Degenerate inputs have defined values: a single context gives a zero context
part (``ctx = 0``), a single position a zero positional part; every row the
same (including a single row) has ``T = 0`` and is refused.

Concept bases
-------------
:func:`concept_basis` re-expresses each item as its cosine similarities to a
named vocabulary of concept vectors, optionally merged into fewer concepts by
agglomerative clustering (``granularity``), and reports how much of each item
vector the basis spans (an uncentred ``R²``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from repspace.core.arrays import as_matrix, row_norms, row_slices, unit_rows
from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.interpret._labels import label_codes, labels_per_row

__all__ = [
    "LINKAGES",
    "METHODS",
    "ConceptBasis",
    "LayerDecomposition",
    "MeanDecomposition",
    "concept_basis",
    "mean_decomposition",
    "mean_decomposition_layers",
]

#: The decompositions of :func:`mean_decomposition` (see the module docstring).
METHODS = ("means", "ols")
#: The linkages :func:`concept_basis` merges concepts with (cosine distance; Ward needs Euclidean).
LINKAGES = ("average", "complete", "single")

#: Relative tolerance of the proportional-design check.
_PROPORTIONAL_RTOL = 1e-12


# -- mean decomposition ------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class MeanDecomposition:
    """The shares of the centred sum of squares of token states carried by position, context and the rest.

    Attributes
    ----------
    method : str
        ``means`` or ``ols`` (see the module docstring).
    positional_share, context_share, residual_share, cross_share : float
        ``Σ‖pos‖²``, ``Σ‖ctx‖²``, ``Σ‖resid‖²`` and ``2Σ(pos·ctx + pos·resid +
        ctx·resid)`` over the tokens, each divided by ``total_ss``; they add up
        to 1. ``cross_share`` may be negative.
    total_ss : float
        ``Σ_i ‖h_i − μ‖²``.
    n_tokens, n_positions, n_contexts, d : int
        Rows, distinct positions, distinct contexts, dimensions.
    proportional : bool
        Whether the design is proportional (``n_tc = n_t n_c / N``; e.g. equal
        lengths): then the parts are orthogonal, ``cross_share`` is 0 and both
        methods agree.
    chance_positional_share, chance_context_share : float
        ``(P − 1)/(N − 1)`` and ``(C − 1)/(N − 1)``: the share a factor with no
        effect at all gets from noise alone (the ratio of expectations for
        i.i.d. states, as in a one-way ANOVA, ``E[SS_between] = (P − 1)σ²``;
        exact for ``means``, close for ``ols``). With few tokens per position
        or per context (a rare late position is "explained" by its one or two
        tokens) this baseline is far from 0; read the shares against it.
    mean : ndarray of shape (d,)
        The global mean ``μ``.
    position_labels, context_labels : tuple
        The distinct positions and contexts, sorted.
    position_effects : ndarray of shape (n_positions, d)
        ``pos_t``, one row per label of ``position_labels``.
    context_effects : ndarray of shape (n_contexts, d)
        ``ctx_c``, one row per label of ``context_labels``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> pos, ctx = np.tile(np.arange(5), 8), np.repeat(np.arange(8), 5)   # 8 sequences of 5 tokens
    >>> h = 3.0 * rng.standard_normal((5, 4))[pos] + rng.standard_normal((40, 4))
    >>> r = mean_decomposition(h, pos, ctx)
    >>> r.positional_share > 0.8, r.proportional, round(r.cross_share, 12) == 0
    (True, True, True)
    >>> list(r.to_dict())[:3]  # the scalar fields, in their order
    ['method', 'positional_share', 'context_share']
    """

    method: str
    positional_share: float
    context_share: float
    residual_share: float
    cross_share: float
    total_ss: float
    n_tokens: int
    n_positions: int
    n_contexts: int
    d: int
    proportional: bool
    chance_positional_share: float
    chance_context_share: float
    mean: np.ndarray = field(repr=False)
    position_labels: tuple[Any, ...] = field(repr=False)
    context_labels: tuple[Any, ...] = field(repr=False)
    position_effects: np.ndarray = field(repr=False)
    context_effects: np.ndarray = field(repr=False)

    @property
    def shares(self) -> dict[str, float]:
        """``{"positional", "context", "residual", "cross"}``: the four shares."""
        return {"positional": self.positional_share, "context": self.context_share,
                "residual": self.residual_share, "cross": self.cross_share}

    def to_dict(self) -> dict[str, Any]:
        """The scalar fields, in order, as JSON-ready values (the mean, labels and effects, kept out of the
        repr, stay on the object)."""
        plain = {"str": str, "float": float, "int": int, "bool": bool}
        return {f.name: plain[str(f.type)](getattr(self, f.name)) for f in fields(self) if f.repr}

    def __repr__(self) -> str:
        return (f"MeanDecomposition(method={self.method!r}, positional={self.positional_share:.4f}, "
                f"context={self.context_share:.4f}, residual={self.residual_share:.4f}, "
                f"cross={self.cross_share:.4f}, n_tokens={self.n_tokens}, n_positions={self.n_positions}, "
                f"n_contexts={self.n_contexts}, d={self.d})")


@dataclass(frozen=True, eq=False)
class LayerDecomposition:
    """One :class:`MeanDecomposition` per layer, over the same tokens.

    Attributes
    ----------
    layers : tuple of int
        The layer labels (``0, 1, …`` unless given).
    rows : tuple of MeanDecomposition
        One per layer, in the same order.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> pos, ctx = np.tile(np.arange(4), 6), np.repeat(np.arange(6), 4)
    >>> states = [rng.standard_normal((4, 3))[pos] + 0.1 * rng.standard_normal((24, 3)),
    ...           rng.standard_normal((6, 3))[ctx] + 0.1 * rng.standard_normal((24, 3))]
    >>> table = mean_decomposition_layers(states, pos, ctx).table()
    >>> [(row["layer"], row["positional_share"] > 0.9, row["context_share"] > 0.9) for row in table]
    [(0, True, False), (1, False, True)]
    """

    layers: tuple[int, ...]
    rows: tuple[MeanDecomposition, ...]

    def table(self) -> list[dict[str, Any]]:
        """``[{"layer": i, ...MeanDecomposition.to_dict()...}, ...]``, one row per layer."""
        return [{"layer": int(layer), **row.to_dict()} for layer, row in zip(self.layers, self.rows)]

    def to_dict(self) -> dict[str, Any]:
        """``{"layers": [{"layer": i, ...shares...}, ...]}``."""
        return {"layers": self.table()}


@dataclass(frozen=True)
class _Design:
    """Integer codes of the positions and contexts of the rows, and their counts."""

    pos: np.ndarray  # (N,) codes into pos_labels
    ctx: np.ndarray  # (N,) codes into ctx_labels
    pos_labels: tuple[Any, ...]
    ctx_labels: tuple[Any, ...]
    n_pos: np.ndarray  # (P,) tokens per position
    n_ctx: np.ndarray  # (C,) tokens per context
    counts: sparse.csr_matrix  # (P, C) tokens per (position, context)
    proportional: bool


def _codes(values: Any, n: int, name: str) -> tuple[np.ndarray, tuple[Any, ...]]:
    labels, codes, _ = label_codes(labels_per_row(values, n, name, "states"), name)
    return codes, tuple(labels.tolist())


def _design(positions: Any, contexts: Any, n: int) -> _Design:
    pos, pos_labels = _codes(positions, n, "positions")
    ctx, ctx_labels = _codes(contexts, n, "contexts")
    P, C = len(pos_labels), len(ctx_labels)
    counts = sparse.csr_matrix((np.ones(n), (pos, ctx)), shape=(P, C))
    counts.sum_duplicates()
    n_pos = np.bincount(pos, minlength=P).astype(np.float64)
    n_ctx = np.bincount(ctx, minlength=C).astype(np.float64)
    # Proportional: n_tc = n_t n_c / N for every pair (then every pair occurs, so it is enough to compare the
    # stored entries and their number).
    proportional = counts.nnz == P * C
    if proportional:
        coo = counts.tocoo()
        expected = n_pos[coo.row] * n_ctx[coo.col] / n
        proportional = bool(np.allclose(coo.data, expected, rtol=_PROPORTIONAL_RTOL, atol=0.0))
    return _Design(pos, ctx, pos_labels, ctx_labels, n_pos, n_ctx, counts, proportional)


def _group_sums(codes: np.ndarray, G: int, block: np.ndarray) -> np.ndarray:
    """``S[g] = Σ_{rows i of the block with code g} block[i]``, shape ``(G, d)`` (float64)."""
    onehot = sparse.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))), shape=(G, codes.size))
    return np.asarray(onehot @ block)


def _decompose(states: np.ndarray, design: _Design, method: str) -> MeanDecomposition:
    n, d = states.shape
    P, C = design.n_pos.size, design.n_ctx.size
    # Pass 1: group sums of h, hence μ and the group means.
    sum_pos, sum_ctx = np.zeros((P, d)), np.zeros((C, d))
    for s in row_slices(n, d):
        block = np.asarray(states[s], dtype=np.float64)
        sum_pos += _group_sums(design.pos[s], P, block)
        sum_ctx += _group_sums(design.ctx[s], C, block)
    mu = sum_pos.sum(axis=0) / n
    mean_pos, mean_ctx = sum_pos / design.n_pos[:, None], sum_ctx / design.n_ctx[:, None]
    if method == "means":
        a, b = mean_pos - mu, mean_ctx - mu
    else:
        a, b = _ols_effects(design, sum_pos, mean_ctx, mu)
    # Pass 2: the total and residual sums of squares, and the group sums of the residual (for the cross terms).
    total = resid_ss = 0.0
    resid_pos, resid_ctx = np.zeros((P, d)), np.zeros((C, d))
    for s in row_slices(n, d):
        x = np.asarray(states[s], dtype=np.float64) - mu
        total += float(np.einsum("ij,ij->", x, x))
        r = x - a[design.pos[s]] - b[design.ctx[s]]
        resid_ss += float(np.einsum("ij,ij->", r, r))
        resid_pos += _group_sums(design.pos[s], P, r)
        resid_ctx += _group_sums(design.ctx[s], C, r)
    if not total > 0.0:
        raise InputError(f"states has no variance (all {n} rows are the same): the shares are undefined")
    pos_ss = float(design.n_pos @ np.einsum("ij,ij->i", a, a))
    ctx_ss = float(design.n_ctx @ np.einsum("ij,ij->i", b, b))
    coo = design.counts.tocoo()
    pos_ctx = float(coo.data @ np.einsum("ij,ij->i", a[coo.row], b[coo.col]))
    cross = 2.0 * (pos_ctx + float(np.sum(a * resid_pos)) + float(np.sum(b * resid_ctx)))
    return MeanDecomposition(
        method=method, positional_share=pos_ss / total, context_share=ctx_ss / total,
        residual_share=resid_ss / total, cross_share=cross / total, total_ss=total, n_tokens=n, n_positions=P,
        n_contexts=C, d=d, proportional=design.proportional, chance_positional_share=(P - 1) / (n - 1),
        chance_context_share=(C - 1) / (n - 1), mean=mu, position_labels=design.pos_labels,
        context_labels=design.ctx_labels, position_effects=a, context_effects=b)


def _ols_effects(design: _Design, sum_pos: np.ndarray, mean_ctx: np.ndarray,
                 mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares main effects ``a`` (positions) and ``b`` (contexts), each centred over the tokens.

    The contexts are absorbed (within-context centring), leaving the reduced normal equations of the
    positions, ``(diag(n_t) − N diag(1/n_c) Nᵀ) a = Σ_{i∈t} (h_i − mean_{c(i)})`` with ``N`` the position ×
    context counts; that ``P × P`` system has the constants as its null space when the design is connected.
    """
    graph = sparse.bmat([[None, design.counts], [design.counts.T, None]])
    n_components = connected_components(graph, directed=False)[0]
    if n_components > 1:
        raise InputError(f"positions and contexts fall into {n_components} disconnected groups (no token links "
                         "them): the OLS split is not unique; use method='means'")
    counts = design.counts  # sparse: P × C with C up to the number of texts
    reduced = np.diag(design.n_pos) - (counts @ sparse.diags(1.0 / design.n_ctx) @ counts.T).toarray()
    rhs = sum_pos - counts @ mean_ctx
    a = np.linalg.lstsq(reduced, rhs, rcond=None)[0]
    a -= (design.n_pos @ a) / design.n_pos.sum()
    b = mean_ctx - (counts.T @ a) / design.n_ctx[:, None] - mu
    return a, b


def _check_method(method: str) -> None:
    check_choice(method, "method", METHODS)


def mean_decomposition(states: Any, positions: Any, contexts: Any, *, method: str = "means") -> MeanDecomposition:
    """Split token states into global mean, positional, context and residual parts, with their variance shares.

    Parameters
    ----------
    states : array of shape (N, d)
        One row per token occurrence (finite numbers; float32 is read in
        float64 blocks, a memory map is not copied whole).
    positions : array of shape (N,)
        The position of each token (usually its index in its sequence); any
        sortable labels.
    contexts : array of shape (N,)
        The context of each token (usually the index of its sequence); any
        sortable labels.
    method : ``means`` or ``ols``
        Simple group means (Song & Zhong 2023) or the least-squares two-way
        additive fit; see the module docstring for both definitions and what
        ``cross_share`` means in each.

    Returns
    -------
    MeanDecomposition
        The four shares add up to 1.

    Raises
    ------
    InputError
        ``states`` not a finite 2-d numeric array, labels of another length
        (or NaN, or unsortable), every row the same (no variance), an unknown
        ``method``, or, for ``ols``, positions and contexts in disconnected
        groups.

    Examples
    --------
    Four sequences of different lengths, states = a positional pattern plus a
    per-sequence offset:

    >>> rng = np.random.default_rng(1)
    >>> lengths = [3, 5, 6, 4]
    >>> pos = np.concatenate([np.arange(k) for k in lengths])
    >>> ctx = np.repeat(np.arange(4), lengths)
    >>> h = rng.standard_normal((6, 8))[pos] + rng.standard_normal((4, 8))[ctx]
    >>> ols = mean_decomposition(h, pos, ctx, method="ols")
    >>> round(ols.residual_share, 10), ols.proportional      # the additive model is exact
    (0.0, False)
    >>> r = mean_decomposition(h, pos, ctx)                    # simple means: the parts overlap
    >>> round(sum(r.shares.values()), 12), r.cross_share != 0
    (1.0, True)
    >>> mean_decomposition(np.ones((3, 2)), [0, 1, 2], [0, 0, 0])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: states has no variance (all 3 rows are the same): the shares are undefined
    """
    _check_method(method)
    X = as_matrix(states, "states")
    return _decompose(X, _design(positions, contexts, X.shape[0]), method)


def mean_decomposition_layers(states: Sequence[Any], positions: Any, contexts: Any, *,
                              layers: Sequence[int] | None = None, method: str = "means") -> LayerDecomposition:
    """:func:`mean_decomposition` of every layer's token states, over the same tokens.

    Parameters
    ----------
    states : sequence of arrays of shape (N, d_l), or an array of shape (L, N, d)
        The token states of each layer, row ``i`` the same token in every
        layer (the dimension may differ between layers).
    positions, contexts : arrays of shape (N,)
        As in :func:`mean_decomposition`; shared by all layers.
    layers : sequence of int, optional
        The label of each layer (default ``0 … L−1``).
    method : ``means`` or ``ols``

    Returns
    -------
    LayerDecomposition
        One row per layer.

    Raises
    ------
    InputError
        No layers, layers with different numbers of rows, ``layers`` of the
        wrong length, or any error of :func:`mean_decomposition` (the message
        names the layer).

    Examples
    --------
    >>> pos, ctx = np.tile(np.arange(3), 4), np.repeat(np.arange(4), 3)
    >>> h = np.random.default_rng(0).standard_normal((12, 5))
    >>> r = mean_decomposition_layers([h, 2 * h + 1], pos, ctx, layers=[3, 7])
    >>> r.layers, round(r.rows[0].positional_share - r.rows[1].positional_share, 12)
    ((3, 7), 0.0)
    """
    _check_method(method)
    if isinstance(states, np.ndarray) and states.ndim == 3:
        arrays: list[Any] = list(states)
    else:
        try:
            arrays = list(states)
        except TypeError:
            raise InputError("states must be a sequence of (N, d) arrays, one per layer") from None
    if not arrays:
        raise InputError("states has no layers")
    labels = tuple(range(len(arrays))) if layers is None else tuple(layers)
    if len(labels) != len(arrays):
        raise InputError(f"{len(labels)} layer labels for {len(arrays)} layers")
    for lay in labels:
        check_scalar(lay, "a layer label", int)
    checked = [as_matrix(arr, f"states of layer {lay}") for lay, arr in zip(labels, arrays)]
    n = checked[0].shape[0]
    for lay, arr in zip(labels, checked):
        if arr.shape[0] != n:
            raise InputError(f"layer {lay} has {arr.shape[0]} rows and layer {labels[0]} has {n}: "
                             "every layer must hold the same tokens")
    design = _design(positions, contexts, n)
    rows = []
    for lay, arr in zip(labels, checked):
        try:
            rows.append(_decompose(arr, design, method))
        except InputError as e:
            raise InputError(f"layer {lay}: {e}") from None
    return LayerDecomposition(tuple(int(v) for v in labels), tuple(rows))


# -- concept bases -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ConceptBasis:
    """Items re-expressed as their cosine similarities to a (possibly merged) named concept vocabulary.

    Attributes
    ----------
    scores : ndarray of shape (n, k)
        Cosine similarity of each item to each basis vector.
    names : tuple of str
        The name of each basis vector: the concept's name, or for a merged
        concept its members' names joined by ``"/"``, most central first.
    members : tuple of tuple of str
        The concepts merged into each basis vector (most central first).
    labels : ndarray of shape (m,)
        The basis vector each input concept went to.
    basis : ndarray of shape (k, d)
        The basis vectors, unit length: a concept's unit vector, or the
        normalised centroid of its members' unit vectors.
    r2 : ndarray of shape (n,)
        Per item, the share of its squared norm in the span of the basis:
        ``‖proj(x)‖² / ‖x‖²``, the uncentred ``R²`` of the least-squares fit of
        ``x`` on the basis vectors (1 whenever the basis spans all ``d``
        dimensions, e.g. ``k ≥ d`` independent concepts).
    granularity : int
        ``k``, the number of basis vectors.
    linkage : str
        How concepts were merged (``average``, ``complete``, ``single``;
        irrelevant when ``k = m``).

    Examples
    --------
    >>> X = np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.2]])
    >>> b = concept_basis(X, np.eye(3), ["x", "y", "z"])
    >>> b.top(1)
    [('x',), ('y',)]
    >>> round(float(b.r2_mean), 6), sorted(b.to_dict())[:3]
    (1.0, ['granularity', 'labels', 'linkage'])
    """

    scores: np.ndarray
    names: tuple[str, ...]
    members: tuple[tuple[str, ...], ...]
    labels: np.ndarray
    basis: np.ndarray
    r2: np.ndarray
    granularity: int
    linkage: str

    @property
    def r2_mean(self) -> float:
        """The mean of :attr:`r2` over the items."""
        return float(np.mean(self.r2))

    def top(self, k: int = 3) -> list[tuple[str, ...]]:
        """The names of each item's ``k`` most similar basis vectors, most similar first (ties: basis order)."""
        k = check_scalar(k, "k", int, low=1, high=len(self.names))
        order = np.argsort(-self.scores, axis=1, kind="stable")[:, : int(k)]
        return [tuple(self.names[j] for j in row) for row in order]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: names, members, labels, scores (list of rows), r2 and its mean, granularity, linkage."""
        return {
            "names": list(self.names),
            "members": [list(m) for m in self.members],
            "labels": [int(v) for v in self.labels],
            "scores": self.scores.tolist(),
            "r2": [float(v) for v in self.r2],
            "r2_mean": self.r2_mean,
            "granularity": int(self.granularity),
            "linkage": self.linkage,
        }

    def __repr__(self) -> str:
        return (f"ConceptBasis(n={self.scores.shape[0]}, granularity={self.granularity}, "
                f"names={list(self.names)!r}, r2_mean={self.r2_mean:.4f})")


def _nonzero_unit_rows(X: np.ndarray, name: str) -> np.ndarray:
    norms = row_norms(X)
    if not (norms > 0).all():
        raise InputError(f"{name} row {int(np.argmin(norms > 0))} is a zero vector: its cosine similarity is undefined")
    return unit_rows(X)


def _merge(U: np.ndarray, k: int, linkage: str) -> np.ndarray:
    """Cluster label of each unit concept vector, clusters numbered by their first concept."""
    m = U.shape[0]
    if k == m:
        return np.arange(m)
    if k == 1:
        return np.zeros(m, dtype=np.int64)
    from sklearn.cluster import AgglomerativeClustering

    raw = AgglomerativeClustering(n_clusters=k, metric="cosine", linkage=linkage).fit_predict(U)
    first: dict[int, int] = {}
    for c in raw.tolist():
        first.setdefault(c, len(first))
    return np.array([first[c] for c in raw.tolist()], dtype=np.int64)


def _span_r2(Xu: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``‖proj_span(B) x‖²`` per unit row ``x`` (an orthonormal basis of the row space of ``B`` from its SVD)."""
    _, s, vt = np.linalg.svd(B, full_matrices=False)
    rank = int(np.sum(s > s[0] * max(B.shape) * np.finfo(np.float64).eps)) if s.size and s[0] > 0 else 0
    coef = Xu @ vt[:rank].T
    return np.clip(np.einsum("ij,ij->i", coef, coef), 0.0, 1.0)


def concept_basis(X: Any, concepts: Any, names: Sequence[str], *, granularity: int | None = None,
                  linkage: str = "average") -> ConceptBasis:
    """Re-express items as cosine similarities to named concepts, merged into ``granularity`` clusters.

    Parameters
    ----------
    X : array of shape (n, d)
        The items (finite, no zero row).
    concepts : array of shape (m, d)
        The concept vectors (for example the embeddings of concept words or
        texts, made by the caller with the items' encoder); finite, no zero row.
    names : sequence of m str
        The concepts' names, distinct.
    granularity : int, optional
        The number ``k`` of basis vectors, ``1 ≤ k ≤ m`` (default ``m``: the
        raw concepts). With ``k < m`` the unit concept vectors are merged by
        agglomerative clustering (scikit-learn, cosine distance, ``linkage``)
        into ``k`` clusters; each cluster's basis vector is the normalised
        mean of its members' unit vectors and its name joins the members'
        names by ``"/"``, the member closest to the centroid first. Clusters
        are numbered by their first concept in input order. The clusterings
        of one vocabulary are nested (agglomerative merges), so :attr:`~ConceptBasis.r2`
        can only fall as ``k`` falls: each centroid is a combination of the
        finer ones.
    linkage : ``average``, ``complete`` or ``single``

    Returns
    -------
    ConceptBasis

    Raises
    ------
    InputError
        NaN / inf, a zero row, different dimensions, names of the wrong length
        or repeated, ``granularity`` outside ``[1, m]``, an unknown ``linkage``.

    Examples
    --------
    >>> concepts = np.array([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 0.0, 1.0]])
    >>> X = np.array([[2.0, 0.0, 0.1], [0.1, 0.0, 3.0]])
    >>> b = concept_basis(X, concepts, ["cat", "dog", "red"], granularity=2)
    >>> b.names, b.top(1)
    (('cat/dog', 'red'), [('cat/dog',), ('red',)])
    >>> np.round(b.scores, 2).tolist()
    [[1.0, 0.05], [0.03, 1.0]]
    """
    Xm = as_matrix(X, "X")
    Cm = as_matrix(concepts, "concepts")
    if Xm.shape[1] != Cm.shape[1]:
        raise InputError(f"X has {Xm.shape[1]} dimensions and concepts have {Cm.shape[1]}: they must match")
    m = Cm.shape[0]
    if isinstance(names, str):
        raise InputError("names must be a sequence of strings, not a single string")
    name_list = [str(v) for v in names]
    if len(name_list) != m:
        raise InputError(f"{m} concepts and {len(name_list)} names: one name per concept")
    if len(set(name_list)) < m:
        repeated = next(v for i, v in enumerate(name_list) if v in name_list[:i])
        raise InputError(f"concept name {repeated!r} is repeated: names must be distinct")
    k = m if granularity is None else check_scalar(granularity, "granularity", int, low=1, high=m)
    check_choice(linkage, "linkage", LINKAGES)
    Xu = _nonzero_unit_rows(np.asarray(Xm, dtype=np.float64), "X")
    U = _nonzero_unit_rows(np.asarray(Cm, dtype=np.float64), "concepts")
    labels = _merge(U, k, linkage)
    basis = np.zeros((k, U.shape[1]))
    members: list[tuple[str, ...]] = []
    for c in range(k):
        idx = np.flatnonzero(labels == c)
        centroid = U[idx].mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        if not norm > 0:
            raise InputError(f"the concepts {[name_list[i] for i in idx]} cancel out: their merged centroid is zero")
        basis[c] = centroid / norm
        closeness = U[idx] @ basis[c]
        order = idx[np.lexsort((idx, -closeness))]
        members.append(tuple(name_list[i] for i in order))
    scores = Xu @ basis.T
    return ConceptBasis(scores=scores, names=tuple("/".join(mem) for mem in members), members=tuple(members),
                        labels=labels, basis=basis, r2=_span_r2(Xu, basis), granularity=k, linkage=linkage)
