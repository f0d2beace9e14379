"""Poincare embeddings of a hierarchy (gensim's PoincareModel), their Euclidean baseline, and reconstruction scores.

Nickel & Kiela (2017, "Poincaré Embeddings for Learning Hierarchical
Representations") place the nodes of a hierarchy in the open unit ball so that
related nodes are close in hyperbolic distance ``d`` (see
:mod:`repspace.core.hyperbolic`). For each relation ``(u, v)`` (``u`` a child,
``v`` one of its ancestors in the transitive closure) and negatives ``N(u)``
(nodes ``u`` is not related to, drawn by frequency) the loss is the softmax

    L(u, v) = -log(exp(-d(u, v)) / sum_{v' in N(u) ∪ {v}} exp(-d(u, v')))  (+ c |v|^2, gensim's regulariser)

minimised by Riemannian SGD: the Euclidean gradient scaled by
``(1 - |x|^2)^2 / 4`` and each point pulled back inside the ball. A few
"burn-in" epochs at a low learning rate first give the points a good angular
layout.

* :func:`train_poincare` trains gensim's ``PoincareModel`` on ``(child,
  parent)`` string pairs and returns :class:`TrainedVectors` with the full recipe.
* :func:`train_euclidean` trains the paper's Euclidean baseline the same way:
  the same loss with Euclidean distance, the same initialisation, shuffles and
  negatives (the same random stream), plain SGD without projection.
* :func:`reconstruction` scores how well vectors reconstruct the relations:
  mean rank and mean average precision (MAP), as in the paper's table 1.

Determinism
-----------
``PoincareModel`` draws everything from ``numpy.random.RandomState(seed)``
and keeps its node sets as sets of integers, whose order does not depend on
``PYTHONHASHSEED``; the node order is the order of first appearance in the
relations. The relations are deduplicated and sorted before training, so the
vectors depend only on the set of relations and the hyper-parameters (and the
gensim and numpy versions): bit-identical in two runs, in one process or two,
whatever ``PYTHONHASHSEED`` (checked by the tests). Training runs one epoch
per ``PoincareModel.train`` call to report progress; that gives the same
vectors, bit for bit, as one call for all epochs (also checked).

Examples
--------
>>> from repspace.engines.learn.poincare import reconstruction, train_poincare
>>> relations = [("dog", "mammal"), ("cat", "mammal"), ("mammal", "animal"), ("dog", "animal"),
...              ("cat", "animal"), ("trout", "fish"), ("fish", "animal"), ("trout", "animal")]
>>> r = train_poincare(relations, size=2, negative=2, epochs=30, burn_in=5, seed=1)
>>> r.keys
('cat', 'animal', 'mammal', 'dog', 'fish', 'trout')
>>> r.vectors.shape, r.recipe["method"], r.recipe["params"]["seed"]
((6, 2), 'poincare', 1)
>>> scores = reconstruction(r.keys, r.vectors, relations)
>>> scores["pairs"], scores["mean_rank"] < 2, scores["map"] > 0.7
(8, True, True)
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice, check_scalar, positive_int
from repspace.core.errors import InputError
from repspace.core.hyperbolic import pairwise_poincare
from repspace.core.progress import Progress, Tally
from repspace.engines.learn._gensim import (
    TrainedVectors,
    check_positive_float,
    check_seed,
    frozen,
    load_saved,
    model_to_bytes,
    versions,
)

__all__ = ["load_poincare_model", "reconstruction", "relations_fingerprint", "train_euclidean", "train_poincare"]

#: gensim's PoincareModel defaults that train_poincare does not expose (recorded in the recipe).
FIXED = {"init_range": (-0.001, 0.001), "epsilon": 1e-5, "dtype": "float64", "workers": 1}
#: Negatives drawn at once into gensim's buffer (PoincareModel._negatives_buffer_size).
NEGATIVES_BUFFER = 2000


# ---------------------------------------------------------------------------------------------- input checks


def check_relations(relations: Any) -> tuple[list[tuple[str, str]], int]:
    """The relations as a sorted list of distinct ``(child, parent)`` string pairs, and how many duplicates were
    dropped; one :class:`InputError` line for an empty input, a pair that is not two non-empty strings, or a
    self-loop (the first, with its position)."""
    if isinstance(relations, (str, bytes)) or not isinstance(relations, Iterable):
        raise InputError(f"relations must be a sequence of (child, parent) pairs, not {type(relations).__name__}")
    pairs: list[tuple[str, str]] = []
    for i, rel in enumerate(relations):
        if isinstance(rel, (str, bytes)) or not isinstance(rel, Sequence) or len(rel) != 2 \
                or not all(isinstance(x, str) and x for x in rel):
            raise InputError(f"relation {i} must be a (child, parent) pair of non-empty strings, not {rel!r}")
        if rel[0] == rel[1]:
            raise InputError(f"relation {i} is a self-loop ({rel[0]!r}, {rel[1]!r}): a node cannot be its own parent")
        pairs.append((rel[0], rel[1]))
    if not pairs:
        raise InputError("no relations: give at least one (child, parent) pair")
    unique = sorted(set(pairs))
    return unique, len(pairs) - len(unique)


def relations_fingerprint(relations: Iterable[tuple[str, str]]) -> str:
    """SHA-256 (hex) of the relations, one ``child<TAB>parent<LF>`` line each, in the order given.

    Examples
    --------
    >>> relations_fingerprint([("dog", "mammal")])[:16]
    'fa049793aadc790b'
    """
    h = hashlib.sha256()
    for child, parent in relations:
        h.update(f"{child}\t{parent}\n".encode("utf-8"))
    return h.hexdigest()


def _params(size: Any, negative: Any, epochs: Any, burn_in: Any, alpha: Any, burn_in_alpha: Any,
            regularization_coeff: Any, batch_size: Any, seed: Any) -> dict[str, Any]:
    return {
        "size": positive_int(size, "size"),
        "negative": positive_int(negative, "negative"),
        "epochs": positive_int(epochs, "epochs"),
        "burn_in": check_scalar(burn_in, "burn_in", int, low=0),
        "alpha": check_positive_float(alpha, "alpha"),
        "burn_in_alpha": check_positive_float(burn_in_alpha, "burn_in_alpha"),
        "regularization_coeff": check_scalar(regularization_coeff, "regularization_coeff", float, low=0),
        "batch_size": positive_int(batch_size, "batch_size"),
        "seed": check_seed(seed),
    }


class _Graph:
    """Nodes in order of first appearance, their counts and each child's parents, as PoincareModel builds them."""

    def __init__(self, relations: list[tuple[str, str]]) -> None:
        self.index: dict[str, int] = {}
        counts: list[int] = []
        self.parents: dict[int, set[int]] = {}
        self.pairs: list[tuple[int, int]] = []
        for rel in relations:
            for node in rel:
                if node in self.index:
                    counts[self.index[node]] += 1
                else:
                    self.index[node] = len(counts)
                    counts.append(1)
            u, v = self.index[rel[0]], self.index[rel[1]]
            self.parents.setdefault(u, set()).add(v)
            self.pairs.append((u, v))
        self.keys = tuple(self.index)
        self.counts = np.array(counts, dtype=np.int64)

    def check_negatives(self, negative: int) -> None:
        """gensim fails mid-training when a child has fewer than ``negative`` nodes it is not related to."""
        n = len(self.keys)
        for u, ps in self.parents.items():
            if n - len(ps) < negative:
                raise InputError(f"negative={negative} is too many: {self.keys[u]!r} is related to {len(ps)} of the "
                                 f"{n} nodes, leaving {n - len(ps)} to draw negatives from; lower negative")


def _recipe(method: str, params: dict[str, Any], graph: _Graph, fingerprint: str, extra: dict[str, Any]) -> dict:
    return {
        "method": method,
        "params": dict(params),
        **extra,
        "workers": 1,
        "deterministic": True,
        "relations_fingerprint": fingerprint,
        "corpus_fingerprint": fingerprint,  # the name TrainedVectors' repr and the learn workflows read
        "relations": len(graph.pairs),
        "nodes": len(graph.keys),
        **versions(),
    }


# -------------------------------------------------------------------------------------------------- Poincare


def train_poincare(relations: Iterable[tuple[str, str]], *, size: int = 10, negative: int = 10, epochs: int = 50,
                   burn_in: int = 10, alpha: float = 0.1, burn_in_alpha: float = 0.01,
                   regularization_coeff: float = 1.0, batch_size: int = 10, seed: int = 0,
                   progress: Progress | None = None) -> TrainedVectors:
    """Train Poincare embeddings (Nickel & Kiela 2017) of ``(child, parent)`` relations with gensim's ``PoincareModel``.

    Parameters
    ----------
    relations : iterable of (str, str)
        ``(child, parent)`` pairs; for a hierarchy its transitive closure (every
        ancestor of each node: :func:`repspace.engines.learn.wordnet.hypernym_closure`).
        Deduplicated and sorted before training (see the module's notes).
    size : int
        Dimensions of the ball.
    negative : int
        Negatives per relation (nodes the child is not related to, drawn by
        their frequency in the relations).
    epochs, burn_in : int
        Epochs at ``alpha``, after ``burn_in`` epochs at ``burn_in_alpha``.
    alpha, burn_in_alpha : float
        Learning rates of Riemannian SGD.
    regularization_coeff : float
        gensim's ``c |v|^2`` on each parent (``0`` switches it off).
    batch_size : int
        Relations per SGD step.
    seed : int
        Seeds ``numpy.random.RandomState``: initial vectors (uniform in
        ``±0.001``), shuffles and negatives.
    progress : callable, optional
        ``progress(phase, done, total)`` after each epoch: phase ``"burn-in"``,
        then ``"train"``.

    Returns
    -------
    TrainedVectors
        ``method="poincare"``; keys in order of first appearance in the sorted
        relations; float32 points of the unit ball (gensim trains in float64;
        :func:`load_poincare_model` of ``model_bytes`` gives them); ``counts``:
        relations each node is part of; ``recipe``: method, every
        hyper-parameter with the seed, gensim's fixed ones, the relations'
        fingerprint (:func:`relations_fingerprint` of the sorted relations),
        nodes, relations, gensim and numpy versions.

    Raises
    ------
    InputError
        No relations, a pair that is not two non-empty strings, a self-loop (the
        first, with its position), ``negative`` above the nodes a child is not
        related to, or a bad hyper-parameter.

    Examples
    --------
    >>> rel = [("a", "root"), ("b", "root"), ("a1", "a"), ("a1", "root"), ("b1", "b"), ("b1", "root")]
    >>> r = train_poincare(rel, size=3, negative=2, epochs=5, burn_in=2)
    >>> bool((np.linalg.norm(r.vectors, axis=1) < 1).all()), r.recipe["relations"], r.recipe["nodes"]
    (True, 6, 5)
    >>> train_poincare([("a", "b"), ("c", "c")])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: relation 1 is a self-loop ('c', 'c'): a node cannot be its own parent
    """
    from gensim.models.poincare import PoincareModel

    pairs, dropped = check_relations(relations)
    params = _params(size, negative, epochs, burn_in, alpha, burn_in_alpha, regularization_coeff, batch_size, seed)
    graph = _Graph(pairs)
    graph.check_negatives(params["negative"])
    start = time.perf_counter()
    # burn_in=0 here: the burn-in epochs are run one by one below at burn_in_alpha (what train() does with
    # burn_in > 0, and bit-identical to it), so that progress can be reported after each.
    model = PoincareModel(pairs, size=params["size"], alpha=params["alpha"], negative=params["negative"],
                          workers=1, epsilon=FIXED["epsilon"], regularization_coeff=params["regularization_coeff"],
                          burn_in=0, burn_in_alpha=params["burn_in_alpha"], init_range=FIXED["init_range"],
                          dtype=np.float64, seed=params["seed"])
    if model.kv.index_to_key != list(graph.keys):  # pragma: no cover - gensim changed how it orders nodes
        raise RuntimeError("gensim's PoincareModel ordered the nodes differently from this module's reading")
    for phase, n_epochs, rate in (("burn-in", params["burn_in"], params["burn_in_alpha"]),
                                  ("train", params["epochs"], params["alpha"])):
        if n_epochs == 0:
            continue
        tally = Tally(progress, phase, n_epochs)
        model.train_alpha = rate
        for _ in range(n_epochs):
            model.train(epochs=1, batch_size=params["batch_size"], print_every=10**9)
            tally(1)
    # Leave the model as gensim's own burn-in would: further train() calls go on at alpha, without burn-in
    # (its burn_in stays 0, since the burn-in is done; the recipe records the epochs it ran).
    model.train_alpha = model.alpha = params["alpha"]
    seconds = time.perf_counter() - start
    vectors = model.kv.vectors
    if not np.isfinite(vectors).all():
        raise InputError(f"training diverged (non-finite vectors); lower alpha={params['alpha']:g}")
    recipe = _recipe("poincare", params, graph, relations_fingerprint(pairs),
                     {"trainer": "gensim.models.poincare.PoincareModel", "fixed": dict(FIXED),
                      "optimizer": "riemannian-sgd"})
    info = {"nodes": len(graph.keys), "relations": len(pairs), "duplicates_dropped": dropped,
            "max_norm": float(np.linalg.norm(vectors, axis=1).max())}
    return TrainedVectors("poincare", graph.keys, frozen(vectors, np.float32), frozen(graph.counts, np.int64),
                          recipe, model_to_bytes(model), seconds, info)


def load_poincare_model(model: TrainedVectors | bytes | str | Path) -> Any:
    """gensim's ``PoincareModel`` from :func:`train_poincare`'s result, its ``model_bytes`` or a saved file.

    The bytes are a pickle (gensim's ``save`` format): load only your own models.

    Examples
    --------
    >>> r = train_poincare([("a", "b"), ("c", "b"), ("d", "c"), ("d", "b")], size=2, negative=1, epochs=2)
    >>> m = load_poincare_model(r)
    >>> type(m).__name__, bool(np.allclose(m.kv.vectors, r.vectors, atol=1e-7))
    ('PoincareModel', True)
    """
    from gensim.models.poincare import PoincareModel

    if isinstance(model, TrainedVectors):
        if model.method != "poincare":
            raise InputError(f"a {model.method} result has no gensim PoincareModel")
        model = model.model_bytes
    loaded = load_saved(model, PoincareModel, "PoincareModel")
    if not isinstance(loaded, PoincareModel):
        raise InputError(f"not a gensim PoincareModel but a {type(loaded).__name__}")
    return loaded


# ------------------------------------------------------------------------------- the hand-written trainer


class _Sampler:
    """gensim's PoincareModel negative sampling, call for call on the same RandomState (same draws, same order)."""

    def __init__(self, graph: _Graph, negative: int, rng: np.random.RandomState) -> None:
        self.graph, self.negative, self.rng = graph, negative, rng
        counts = graph.counts.astype(np.float64)
        self.cumsum = np.cumsum(counts)
        self.probabilities = counts / counts.sum()
        self.all_nodes = set(range(len(graph.keys)))
        self.buffer: np.ndarray = np.zeros(0, dtype=np.int64)
        self.at = 0

    def _candidates(self) -> np.ndarray:
        if len(self.buffer) - self.at < self.negative:
            uniform = self.rng.randint(1, self.cumsum[-1] + 1, NEGATIVES_BUFFER)
            self.buffer, self.at = np.searchsorted(self.cumsum, uniform), 0
        out = self.buffer[self.at:self.at + self.negative]
        self.at += self.negative
        return out

    def __call__(self, u: int) -> list[int]:
        related = self.graph.parents[u]
        if len(related) / len(self.graph.keys) < 0.01:  # few relations: redraw until none is related
            idx = self._candidates()
            unique = set(idx.tolist())
            while len(idx) != len(unique) or (unique & related):
                idx = self._candidates()
                unique = set(idx.tolist())
            return idx.tolist()
        valid = np.array(list(self.all_nodes - related))
        p = self.probabilities[valid]
        p /= p.sum()
        return self.rng.choice(valid, size=self.negative, p=p, replace=False).tolist()


def _apply(vectors: np.ndarray, indices: list[int], updates: np.ndarray) -> None:
    """``vectors[indices] -= updates`` with the updates of a repeated index summed first (as gensim does)."""
    positions: dict[int, list[int]] = {}
    for i, node in enumerate(indices):
        positions.setdefault(node, []).append(i)
    for pos in positions.values():
        if len(pos) > 1:
            updates[pos[-1]] = updates[pos].sum(axis=0)
            updates[pos[:-1]] = 0
    vectors[indices] -= updates


def _clip(vectors: np.ndarray, eps: float) -> np.ndarray:
    """gensim's ``PoincareModel._clip_vectors`` (rows at norm ``>= 1 - eps`` scaled back, then moved ``eps`` in)."""
    norms = np.linalg.norm(vectors, axis=1)
    over = norms >= 1 - eps
    if over.any():
        vectors[over] *= ((1 - eps) / norms[over])[:, np.newaxis]
        vectors[over] -= np.sign(vectors[over]) * eps
    return vectors


def _batch(vectors: np.ndarray, us: list[int], vs: list[int], geometry: str, reg: float,
           rate: float, eps: float) -> float:
    """One SGD step on a batch: ``vs`` holds, per relation, the parent then its negatives. Returns the loss."""
    b = len(us)
    u = vectors[us]                                   # (b, dim)
    w = vectors[vs].reshape(b, -1, vectors.shape[1])  # (b, 1 + negative, dim)
    diff = u[:, None, :] - w
    euclid = np.linalg.norm(diff, axis=2)  # (b, k)
    if geometry == "euclidean":
        dist = euclid
        safe = np.where(dist > 0, dist, 1.0)
        grad_du = np.where((dist > 0)[..., None], diff / safe[..., None], 0.0)  # d|u - w| / du
        grad_dw = -grad_du
    else:  # gensim's PoincareBatch, term for term
        sq = euclid ** 2
        a = 1 - np.linalg.norm(u, axis=1)[:, None] ** 2  # (b, 1)
        be = 1 - np.linalg.norm(w, axis=2) ** 2           # (b, k)
        gamma = 1 + 2 * (sq / (a * be))
        dist = np.arccosh(gamma)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = (4 / (a * be * np.sqrt(gamma ** 2 - 1)))[..., None]
            grad_du = ((sq + a) / a)[..., None] * u[:, None, :] - w
            grad_du *= c
            grad_dw = ((sq + be) / be)[..., None] * w - u[:, None, :]
            grad_dw *= c
        grad_du[gamma == 1] = 0
        grad_dw[gamma == 1] = 0
    e = np.exp(-dist)
    z = e.sum(axis=1)
    grad_w = -e[..., None] * grad_dw
    grad_w /= z[:, None, None]
    grad_w[:, 0] += grad_dw[:, 0]
    grad_w[:, 0] += reg * 2 * w[:, 0]
    grad_u = -e[..., None] * grad_du
    grad_u /= z[:, None, None]
    grad_u = grad_u.sum(axis=1) + grad_du[:, 0]
    if geometry == "euclidean":
        upd_u, upd_w = rate * grad_u, rate * grad_w
    else:
        upd_u = rate * (a ** 2) / 4 * grad_u
        upd_w = rate * (be ** 2)[..., None] / 4 * grad_w
    _apply(vectors, us, upd_u)
    if geometry != "euclidean":
        vectors[us] = _clip(vectors[us], eps)
    _apply(vectors, vs, upd_w.reshape(-1, vectors.shape[1]))
    if geometry != "euclidean":
        vectors[vs] = _clip(vectors[vs], eps)
    return float(-np.log(e[:, 0] / z).sum())


def _train_loop(graph: _Graph, params: dict[str, Any], geometry: str,
                progress: Progress | None) -> tuple[np.ndarray, list[float]]:
    """gensim's training schedule (init, per-epoch shuffle, batches, negatives) with ``geometry``'s distance and
    update; ``"poincare"`` reproduces PoincareModel (the tests check it), ``"euclidean"`` is the baseline."""
    rng = np.random.RandomState(params["seed"])
    lo, hi = FIXED["init_range"]
    vectors = rng.uniform(lo, hi, (len(graph.keys), params["size"])).astype(np.float64)
    sample = _Sampler(graph, params["negative"], rng)
    losses: list[float] = []
    bs = params["batch_size"]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # divergence is checked per epoch
        for phase, n_epochs, rate in (("burn-in", params["burn_in"], params["burn_in_alpha"]),
                                      ("train", params["epochs"], params["alpha"])):
            if n_epochs == 0:
                continue
            tally = Tally(progress, phase, n_epochs)
            for _ in range(n_epochs):
                order = list(range(len(graph.pairs)))
                rng.shuffle(order)
                loss = 0.0
                for i in range(0, len(order), bs):
                    batch = [graph.pairs[j] for j in order[i:i + bs]]
                    us = [p[0] for p in batch]
                    vs: list[int] = []
                    for u, v in batch:
                        vs.append(v)
                        vs.extend(sample(u))
                    loss += _batch(vectors, us, vs, geometry, params["regularization_coeff"], rate,
                                   FIXED["epsilon"])
                losses.append(loss / len(order))
                if not np.isfinite(vectors).all():
                    raise InputError(f"training diverged (non-finite vectors) in {phase} epoch {len(losses)}; "
                                     f"lower alpha={params['alpha']:g} / burn_in_alpha={params['burn_in_alpha']:g}")
                tally(1)
    return vectors, losses


def train_euclidean(relations: Iterable[tuple[str, str]], *, size: int = 10, negative: int = 10, epochs: int = 50,
                    burn_in: int = 10, alpha: float = 0.1, burn_in_alpha: float = 0.01,
                    regularization_coeff: float = 1.0, batch_size: int = 10, seed: int = 0,
                    progress: Progress | None = None) -> TrainedVectors:
    """Nickel & Kiela's Euclidean baseline: the loss of :func:`train_poincare` with Euclidean distance, plain SGD.

    Everything but the geometry is :func:`train_poincare`'s: the softmax loss
    over ``{v} ∪ N(u)`` with ``d(u, v) = |u - v|`` and gensim's ``c |v|^2``
    regulariser, the initial vectors, the shuffles, the batches and the
    negatives (the same calls on the same ``RandomState(seed)``: for a seed,
    both models see the same negatives in the same order), the burn-in and the
    learning rates. The step is ``x -= alpha * gradient``, without the
    Riemannian scaling ``(1 - |x|^2)^2 / 4`` and without projection (the points
    live in all of R^d).

    It is hand-written (numpy, one process) because no library trains a
    Euclidean embedding with this loss and sampling: gensim implements only
    the Poincare model, and the paper's own code (PyTorch, Hogwild processes)
    is not a package. The same loop run with the Poincare geometry reproduces
    gensim's ``PoincareModel`` (the tests compare them), which checks the
    shared parts.

    Parameters
    ----------
    relations, size, negative, epochs, burn_in, alpha, burn_in_alpha, regularization_coeff, batch_size, seed, progress
        As for :func:`train_poincare`.

    Returns
    -------
    TrainedVectors
        ``method="euclidean-hierarchy"``; the same keys and counts as
        :func:`train_poincare` gives; float32 vectors; the recipe as for it;
        ``model_bytes`` empty (there is no gensim model); ``info["losses"]``:
        mean loss per epoch.

    Examples
    --------
    >>> rel = [("a", "root"), ("b", "root"), ("a1", "a"), ("a1", "root"), ("b1", "b"), ("b1", "root")]
    >>> e = train_euclidean(rel, size=3, negative=2, epochs=5, burn_in=2)
    >>> p = train_poincare(rel, size=3, negative=2, epochs=5, burn_in=2)
    >>> e.method, e.keys == p.keys, e.vectors.shape
    ('euclidean-hierarchy', True, (5, 3))
    """
    pairs, dropped = check_relations(relations)
    params = _params(size, negative, epochs, burn_in, alpha, burn_in_alpha, regularization_coeff, batch_size, seed)
    graph = _Graph(pairs)
    graph.check_negatives(params["negative"])
    start = time.perf_counter()
    vectors, losses = _train_loop(graph, params, "euclidean", progress)
    seconds = time.perf_counter() - start
    recipe = _recipe("euclidean-hierarchy", params, graph, relations_fingerprint(pairs),
                     {"trainer": "repspace.engines.learn.poincare (numpy SGD, gensim's sampling)",
                      "fixed": {**FIXED, "epsilon": None}, "optimizer": "sgd", "distance": "euclidean"})
    info = {"nodes": len(graph.keys), "relations": len(pairs), "duplicates_dropped": dropped,
            "losses": [round(x, 6) for x in losses], "max_norm": float(np.linalg.norm(vectors, axis=1).max())}
    return TrainedVectors("euclidean-hierarchy", graph.keys, frozen(vectors, np.float32),
                          frozen(graph.counts, np.int64), recipe, b"", seconds, info)


# ---------------------------------------------------------------------------------------------- reconstruction


def reconstruction(keys: Sequence[str], vectors: Any, relations: Iterable[tuple[str, str]],
                   metric: str = "poincare", *, symmetric: bool = False,
                   count_self: bool = False) -> dict[str, float | int]:
    """Nickel & Kiela's reconstruction scores: how well the distances recover the relations.

    For every node ``u`` with neighbours ``N(u)`` (the ``v`` of its relations
    ``(u, v)``; with ``symmetric`` also the ``v`` of ``(v, u)``), each true
    neighbour ``v`` is ranked by distance from ``u`` among the nodes other than
    ``u`` that are not neighbours of ``u``, plus ``v`` itself: its rank is one
    plus the number of those strictly closer. ``mean_rank`` averages over all
    ``(u, v)``; ``map`` averages over ``u`` the average precision of ranking all
    other nodes by distance from ``u`` (``mean_i i / (r_(i) + i - 1)`` with the
    ranks sorted), as the paper's code and gensim compute them. A perfect
    embedding has mean rank 1 and MAP 1.

    Like the paper's code and gensim's ``ReconstructionEvaluation``, relations
    are directed by default (on a transitive closure, ``N(u)`` is ``u``'s
    ancestors). gensim's class also counts ``u`` itself among the closer
    non-neighbours, so its mean rank is higher by exactly one and its MAP is
    lower; ``count_self=True`` reproduces it (the tests compare the two).

    Parameters
    ----------
    keys : sequence of str
        The node of each row of ``vectors`` (distinct).
    vectors : (n, d) array
        Points of the unit ball (``poincare``) or of R^d (``l2``).
    relations : iterable of (str, str)
        The relations to recover; every node must be among ``keys``.
    metric : {"poincare", "l2"}
        Hyperbolic (:func:`repspace.core.hyperbolic.pairwise_poincare`) or Euclidean distance.
    symmetric : bool
        Treat each relation as undirected.
    count_self : bool
        Count ``u`` as a non-neighbour of itself (gensim's ``ReconstructionEvaluation``).

    Returns
    -------
    dict
        ``mean_rank``, ``map``, ``nodes`` (those ranked from), ``pairs`` (ranks averaged).

    Examples
    --------
    >>> keys = ["root", "a", "b", "a1"]
    >>> vectors = np.array([[0.0, 0.0], [0.5, 0.0], [-0.5, 0.0], [0.6, 0.05]])
    >>> relations = [("a", "root"), ("b", "root"), ("a1", "a"), ("a1", "root")]
    >>> reconstruction(keys, vectors, relations)  # from a, a1 is closer than root: rank 2
    {'mean_rank': 1.25, 'map': 0.8333333333333334, 'nodes': 3, 'pairs': 4}
    >>> reconstruction(keys, vectors, relations, count_self=True)["mean_rank"]  # gensim's count
    2.25
    """
    check_choice(metric, "metric", ("poincare", "l2"))
    keys = list(keys)
    index = {k: i for i, k in enumerate(keys)}
    if len(index) != len(keys):
        raise InputError("keys must be distinct")
    X = np.asarray(vectors, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != len(keys):
        raise InputError(f"vectors must be {len(keys)} rows (one per key), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InputError("vectors have NaN or infinite values")
    neighbours: dict[int, set[int]] = {}
    for i, rel in enumerate(relations):
        if isinstance(rel, (str, bytes)) or not isinstance(rel, Sequence) or len(rel) != 2:
            raise InputError(f"relation {i} must be a (child, parent) pair, not {rel!r}")
        for node in rel:
            if node not in index:
                raise InputError(f"relation {i} names {node!r}, which is not among the {len(keys)} keys")
        u, v = index[rel[0]], index[rel[1]]
        if u == v:
            raise InputError(f"relation {i} is a self-loop ({rel[0]!r}, {rel[1]!r})")
        neighbours.setdefault(u, set()).add(v)
        if symmetric:
            neighbours.setdefault(v, set()).add(u)
    if not neighbours:
        raise InputError("no relations to reconstruct")
    sources = sorted(neighbours)
    rank_sum, n_ranks, ap_sum = 0.0, 0, 0.0
    rows = max(1, (1 << 22) // max(1, len(keys) * X.shape[1]))
    for lo in range(0, len(sources), rows):
        block = sources[lo:lo + rows]
        dist = _distances(X[block], X, metric)
        for r, u in enumerate(block):
            pos = np.fromiter(sorted(neighbours[u]), dtype=np.int64)
            d = dist[r]
            negative = np.ones(len(keys), dtype=bool)
            negative[pos] = False
            if not count_self:
                negative[u] = False
            neg_sorted = np.sort(d[negative])
            ranks = np.searchsorted(neg_sorted, d[pos], side="left") + 1
            rank_sum += float(ranks.sum())
            n_ranks += len(ranks)
            ordered = np.sort(ranks)
            ap_sum += float((np.arange(1, len(ordered) + 1) / (ordered + np.arange(len(ordered)))).mean())
    return {"mean_rank": rank_sum / n_ranks, "map": ap_sum / len(sources), "nodes": len(sources), "pairs": n_ranks}


def _distances(Q: np.ndarray, X: np.ndarray, metric: str) -> np.ndarray:
    if metric == "poincare":
        return pairwise_poincare(Q, X)
    from scipy.spatial.distance import cdist

    return cdist(Q, X)

