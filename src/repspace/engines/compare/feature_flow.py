"""Cross-layer feature flow graphs (S285): sparse dictionaries of consecutive layers linked by activation correlation.

Given the codes of one dictionary per layer over the *same* inputs (row for row), :func:`feature_flow` links
feature ``i`` of layer ``l`` to feature ``j`` of layer ``l + 1`` when the Pearson correlation of their activations
(:func:`~repspace.engines.compare.feature_correlations`) reaches ``threshold``: every such pair
(``mode="threshold"``), or only each feature's most correlated successor (``mode="top1"``). Each live feature of
layer ``l`` (one that varies over the inputs) then *persists* (it has an edge into ``l + 1``) or *dies* (none);
each live feature of layer ``l + 1`` is *born* when no edge reaches it. Dead features (constant) are no nodes.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> L0 = rng.exponential(size=(400, 3)) * (rng.random((400, 3)) < 0.3)
>>> new = rng.exponential(size=(400, 1)) * (rng.random((400, 1)) < 0.3)
>>> L1 = np.column_stack([L0[:, 2], new, L0[:, 0]])      # feature 1 of L0 dies, L1's feature 1 is born
>>> f = feature_flow([L0, L1], threshold=0.5)
>>> [(e.source, e.target, round(e.weight, 6)) for e in f.edges]
[((0, 0), (1, 2), 1.0), ((0, 2), (1, 0), 1.0)]
>>> [(s.persists, s.dies, s.born) for s in f.steps]
[(2, 1, 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar
from repspace.core.errors import InputError
from repspace.engines.compare.universality import feature_correlations

__all__ = ["FLOW_MODES", "FeatureFlow", "FlowEdge", "FlowStep", "feature_flow"]

#: How :func:`feature_flow` draws edges.
FLOW_MODES = ("threshold", "top1")


@dataclass(frozen=True)
class FlowEdge:
    """One edge: feature ``source = (layer, latent)`` to ``target = (layer + 1, latent)``, weight its correlation.

    >>> FlowEdge((0, 3), (1, 5), 0.8).to_dict()
    {'source': '0:3', 'target': '1:5', 'weight': 0.8}
    """

    source: tuple[int, int]
    target: tuple[int, int]
    weight: float

    def to_dict(self) -> dict[str, Any]:
        """``{"source", "target", "weight"}``, nodes named ``"<layer>:<latent>"``."""
        return {"source": f"{self.source[0]}:{self.source[1]}", "target": f"{self.target[0]}:{self.target[1]}",
                "weight": float(self.weight)}


@dataclass(frozen=True)
class FlowStep:
    """The counts of one step ``layer → layer + 1``.

    ``persists``: live features of ``layer`` with an edge into the next; ``dies``: those without; ``born``: live
    features of ``layer + 1`` no edge reaches; ``n_edges``; ``mean_weight`` (None without edges).

    >>> FlowStep(0, 1, 2, 1, 1, 2, 0.9).to_dict()["dies"]
    1
    """

    layer: int
    next_layer: int
    persists: int
    dies: int
    born: int
    n_edges: int
    mean_weight: float | None

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (``layer``, ``next_layer``, ``persists``, ``dies``, ``born``, ``n_edges``,
        ``mean_weight``)."""
        return {"layer": self.layer, "next_layer": self.next_layer, "persists": self.persists, "dies": self.dies,
                "born": self.born, "n_edges": self.n_edges, "mean_weight": self.mean_weight}


@dataclass(frozen=True, eq=False)
class FeatureFlow:
    """A feature flow graph over layers ``0 … L−1`` (positions in the list given; ``labels`` name them).

    Attributes
    ----------
    labels : list of str
    n_features, live : list of int
        Features of each layer's dictionary, and those that vary over the inputs (the nodes).
    live_masks : list of bool arrays
    edges : list of FlowEdge
        By layer, then source latent, then target latent.
    steps : list of FlowStep
    threshold : float
    mode : str

    Examples
    --------
    >>> L = np.random.default_rng(0).random((50, 4))
    >>> f = feature_flow([L, L, L], labels=["l2", "l4", "l6"], threshold=0.99)
    >>> [s.persists for s in f.steps], f.to_dict()["nodes"][0]
    ([4, 4], {'id': '0:0', 'layer': 0, 'label': 'l2', 'latent': 0, 'status': 'persists'})
    """

    labels: list[str]
    n_features: list[int]
    live: list[int]
    live_masks: list[np.ndarray] = field(repr=False)
    edges: list[FlowEdge] = field(repr=False)
    steps: list[FlowStep]
    threshold: float
    mode: str

    def status(self, layer: int, latent: int) -> str:
        """``"dead"`` (not live), or the feature's fate: ``"persists"`` (first layer: an edge out; last layer: an
        edge in), ``"dies"`` (no edge out, not the last layer), ``"born"`` (no edge in, not the first layer),
        ``"passes"`` (a middle layer's feature with an edge in and one out), ``"isolated"`` (neither).

        >>> L = np.random.default_rng(0).random((40, 2))
        >>> f = feature_flow([L, L[:, [1]]], threshold=0.9)
        >>> f.status(0, 0), f.status(0, 1), f.status(1, 0)
        ('dies', 'persists', 'persists')
        """
        if not 0 <= layer < len(self.live_masks) or not 0 <= latent < len(self.live_masks[layer]):
            raise InputError(f"no feature {latent} of layer {layer}")
        return _fates(self)[layer].get(int(latent), "dead")

    def to_dict(self, nodes: bool = True) -> dict[str, Any]:
        """``{labels, n_features, live, threshold, mode, steps: [...], n_edges, edges: [...], nodes: [...]}``; each
        node ``{id, layer, label, latent, status}`` (:meth:`status`) for the live features; ``nodes=False`` leaves
        nodes and edges out."""
        out: dict[str, Any] = {"labels": list(self.labels), "n_features": list(self.n_features),
                               "live": list(self.live), "threshold": self.threshold, "mode": self.mode,
                               "steps": [s.to_dict() for s in self.steps], "n_edges": len(self.edges)}
        if nodes:
            out["edges"] = [e.to_dict() for e in self.edges]
            fate = _fates(self)
            out["nodes"] = [{"id": f"{layer}:{j}", "layer": layer, "label": self.labels[layer], "latent": int(j),
                             "status": fate[layer][j]}
                            for layer, mask in enumerate(self.live_masks) for j in np.flatnonzero(mask).tolist()]
        return out


def _fates(flow: FeatureFlow) -> list[dict[int, str]]:
    """Every live node's :meth:`FeatureFlow.status`, from one pass over the edges."""
    last = len(flow.labels) - 1
    outs: set[tuple[int, int]] = {e.source for e in flow.edges}
    ins: set[tuple[int, int]] = {e.target for e in flow.edges}
    table = {(True, True): "passes", (True, False): "dies", (False, True): "born", (False, False): "isolated"}
    fates: list[dict[int, str]] = []
    for layer, mask in enumerate(flow.live_masks):
        f: dict[int, str] = {}
        for j in np.flatnonzero(mask).tolist():
            o, i = (layer, j) in outs, (layer, j) in ins
            if layer == 0:
                f[j] = "persists" if o else "dies"
            elif layer == last:
                f[j] = "persists" if i else "born"
            else:
                f[j] = table[(i, o)]
        fates.append(f)
    return fates


def feature_flow(codes: Sequence[Any], *, threshold: float = 0.5, mode: str = "threshold",
                 labels: Sequence[str] | None = None) -> FeatureFlow:
    """Link the features of consecutive layers' dictionaries by activation correlation.

    Parameters
    ----------
    codes : sequence of arrays or sparse matrices, each (n, m_l)
        One dictionary's codes per layer, in layer order, of the same ``n`` inputs row for row (at least two).
    threshold : float, default 0.5
        Smallest correlation of an edge (in ``[−1, 1]``).
    mode : {"threshold", "top1"}
        Every pair at or above ``threshold``, or only each feature's most correlated successor (when it reaches
        ``threshold``).
    labels : sequence of str, optional
        Names of the layers (default ``"0"``, ``"1"`` …).

    Returns
    -------
    FeatureFlow

    Raises
    ------
    InputError
        Fewer than two layers, labels of another length, different numbers of rows, a NaN.

    Examples
    --------
    >>> L0 = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    >>> L1 = np.column_stack([L0[:, 0] + L0[:, 1], L0[:, 1]])
    >>> f = feature_flow([L0, L1], threshold=0.5, mode="top1")
    >>> [e.to_dict()["target"] for e in f.edges], f.steps[0].born
    (['1:0', '1:1'], 0)
    """
    if isinstance(codes, (str, bytes)) or len(codes) < 2:
        raise InputError("a feature flow needs the codes of at least two layers")
    threshold = check_scalar(threshold, "threshold", float, low=-1.0, high=1.0)
    check_choice(mode, "the flow mode", FLOW_MODES)
    names = [str(i) for i in range(len(codes))] if labels is None else [str(x) for x in labels]
    if len(names) != len(codes):
        raise InputError(f"{len(names)} labels for {len(codes)} layers")
    edges: list[FlowEdge] = []
    steps: list[FlowStep] = []
    masks: list[np.ndarray] = []
    sizes: list[int] = []
    for layer in range(len(codes) - 1):
        C, live_a, live_b = feature_correlations(codes[layer], codes[layer + 1])
        if layer == 0:
            masks.append(live_a)
            sizes.append(int(C.shape[0]))
        masks.append(live_b)
        sizes.append(int(C.shape[1]))
        if mode == "top1":
            keep = np.zeros(C.shape, dtype=bool)
            best = np.argmax(np.where(live_b[None, :], C, -np.inf), axis=1) if live_b.any() else None
            if best is not None:
                keep[np.arange(len(C)), best] = True
            keep &= C >= threshold
        else:
            keep = C >= threshold
        keep &= live_a[:, None] & live_b[None, :]
        src, dst = np.nonzero(keep)  # row-major: by source, then target
        w = C[src, dst]
        edges += [FlowEdge((layer, int(i)), (layer + 1, int(j)), float(v))
                  for i, j, v in zip(src.tolist(), dst.tolist(), w.tolist(), strict=True)]
        has_out = np.zeros(len(live_a), bool)
        has_out[src] = True
        has_in = np.zeros(len(live_b), bool)
        has_in[dst] = True
        steps.append(FlowStep(layer, layer + 1, int((has_out & live_a).sum()), int((~has_out & live_a).sum()),
                              int((~has_in & live_b).sum()), int(len(src)), float(w.mean()) if len(w) else None))
    return FeatureFlow(names, sizes, [int(m.sum()) for m in masks], masks, edges, steps, float(threshold), mode)
