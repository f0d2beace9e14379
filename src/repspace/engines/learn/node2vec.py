"""node2vec (Grover & Leskovec 2016): biased second-order random walks, then skip-gram on the walks.

:func:`random_walks` (names) and :func:`walk_indices` (a padded int array)
draw the walks; :func:`train_node2vec` feeds them to gensim's ``Word2Vec``
(skip-gram, negative sampling) and returns
:class:`~repspace.engines.learn._gensim.TrainedVectors` whose keys are the
graph's nodes in :attr:`Graph.nodes` order.

The walks
---------
Each of ``num_walks`` rounds starts one walk at every node (in a fresh random
order, as the reference implementation shuffles them), and all walks of the
round advance in lockstep, one numpy operation per step for all of them (on a
graph of fewer than :data:`BATCH_WALKS` nodes, several rounds advance together). A
walk that arrived at ``v`` from ``t`` moves to the out-neighbour ``x`` of
``v`` with probability proportional to ``w(v, x) * alpha(t, x)``, where
``alpha`` is ``1/p`` when ``x == t`` (return), ``1`` when ``x`` is a
neighbour of ``t`` (an edge ``t -> x``), and ``1/q`` otherwise; the first step
is proportional to ``w(v, x)``. (For directed graphs the reference code tests
the edge ``x -> t`` instead; we follow the paper's distance ``d(t, x)`` and
PecanPy, which test ``t -> x``. Undirected graphs are the same either way.) A
walk that reaches a node without out-edges (only in a directed graph) stops
there, shorter than ``walk_length``.

The second-order choice is drawn exactly, without the reference code's
per-edge alias tables (memory ``O(sum of squared degrees)``), by rejection
sampling as KnightKing (Yang et al., SOSP 2019) does: propose ``x`` from the
first-order distribution ``w(v, x)``, with the return edge's excess folded
into one extra "outlier" bar when ``1/p`` is the largest factor, and accept
with probability ``alpha(t, x) / h(x)``, ``h`` the envelope; accepted draws
follow ``w(v, x) * alpha(t, x)`` exactly. "Is ``x`` a neighbour of ``t``" is a
binary search (``numpy.searchsorted``) of ``t * n + x`` in the sorted keys
``row * n + column`` of the CSR rows. Weighted first-order draws search the
row's own cumulative weights (summed row by row, so no row loses precision to
the others). The acceptance rate is at least ``min(1, 1/q) / max(1, 1/q)``.

Determinism
-----------
Every draw comes from one ``numpy.random.Generator(PCG64(seed))`` in a fixed
order: the same graph, parameters and seed give the same walks in any process,
on any platform numpy supports. Training is then bit-for-bit repeatable with
``workers=1`` (see :mod:`repspace.engines.learn.word2vec`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from repspace.core.checks import check_scalar, positive_int
from repspace.core.errors import InputError
from repspace.engines.learn._gensim import (
    TrainedVectors,
    check_positive_float,
    check_seed,
    check_workers,
    epoch_progress,
    frozen,
    model_to_bytes,
    skipgram_params,
    stable_hash,
    versions,
)
from repspace.engines.learn.graph import Graph

__all__ = ["random_walks", "train_node2vec", "walk_indices"]

#: Names the walk algorithm in recipes; bump it when a change would draw other walks from the same seed.
WALK_ALGORITHM = "node2vec-rejection-v1"

#: Rounds of walks advance together until they hold this many walks (one round at least): small graphs then
#: take few numpy steps. Part of the algorithm: another value draws other walks from the same seed.
BATCH_WALKS = 65_536

#: ``progress(phase, done, total)``: phase ``"walk"`` after each round, ``"train"`` after each epoch.
Progress = Callable[[str, int, int], Any]


class _Sampler:
    """The CSR arrays of a graph, prepared for vectorised first- and second-order draws."""

    def __init__(self, graph: Graph, p: float, q: float) -> None:
        self.n = n = graph.n_nodes
        self.indptr = graph.indptr
        self.indices = graph.indices
        self.weights = graph.weights
        self.deg = np.diff(graph.indptr)
        self.uniform = bool((self.weights == self.weights[0]).all()) if len(self.weights) else True
        # row * n + column, ascending: CSR rows are in order and sorted within
        self.keys = np.repeat(np.arange(n, dtype=np.int64), self.deg) * n + self.indices
        self.total = np.zeros(n, dtype=np.float64)
        if self.uniform:
            self.total[:] = self.deg * (self.weights[0] if len(self.weights) else 1.0)
            self.rowcum = None
        else:
            self.rowcum = _row_cumsum(self.indptr, self.weights, self.deg)
            has = self.deg > 0
            self.total[has] = self.rowcum[self.indptr[1:][has] - 1]
        self.inv_p, self.inv_q = 1.0 / p, 1.0 / q
        self.first_order_only = p == 1.0 and q == 1.0
        self.m = max(1.0, self.inv_q)       # envelope over every x but the return
        self.h = max(self.m, self.inv_p)    # envelope over the return edge

    def edge(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each edge ``a -> b`` exists, and its position in the CSR arrays (where it does)."""
        key = a * self.n + b
        order = np.argsort(key)  # sorted queries search several times faster (numpy reuses the last position)
        pos = np.empty(len(key), dtype=np.int64)
        pos[order] = np.searchsorted(self.keys, key[order])
        np.minimum(pos, len(self.keys) - 1, out=pos)
        return self.keys[pos] == key, pos

    def first_order(self, v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One out-neighbour of each node of ``v`` (all with out-edges), drawn in proportion to the weights."""
        start = self.indptr[v]
        d = self.deg[v]
        if self.rowcum is None:
            return self.indices[start + rng.integers(0, d)]
        target = rng.random(len(v)) * self.total[v]
        lo, hi = start, start + d - 1
        while True:  # lockstep binary search: the first edge of the row whose cumulative weight exceeds target
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            right = self.rowcum[mid] <= target
            lo = np.where(active & right, mid + 1, lo)
            hi = np.where(active & ~right, mid, hi)
        return self.indices[lo]

    def second_order(self, t: np.ndarray, v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The next node of walks that went ``t -> v``: node2vec's biased choice, by rejection sampling."""
        if self.first_order_only:
            return self.first_order(v, rng)
        out = np.empty(len(v), dtype=np.int64)
        outlier = self.h > self.m
        if outlier:  # probability of proposing from the first-order bars rather than the return's excess
            found, pos = self.edge(v, t)
            excess = (self.h - self.m) * np.where(found, self.weights[pos], 0.0)
            base = self.m * self.total[v]
            p_base = base / (base + excess)
        pending = np.arange(len(v))
        while len(pending):
            tt, vv = t[pending], v[pending]
            if outlier:
                ret = rng.random(len(pending)) >= p_base[pending]
                x = tt.copy()
                if not ret.all():
                    x[~ret] = self.first_order(vv[~ret], rng)
            else:
                x = self.first_order(vv, rng)
            back = x == tt
            common, _ = self.edge(tt, x)
            alpha = np.where(back, self.inv_p, np.where(common, 1.0, self.inv_q))
            envelope = np.where(back, self.h, self.m)
            accept = rng.random(len(pending)) * envelope < alpha
            out[pending[accept]] = x[accept]
            pending = pending[~accept]
        return out


def _row_cumsum(indptr: np.ndarray, weights: np.ndarray, deg: np.ndarray) -> np.ndarray:
    """Cumulative weights within each row, each row summed on its own (rows of equal degree together)."""
    out = np.empty_like(weights)
    rows = np.argsort(deg, kind="stable")
    sorted_deg = deg[rows]
    bounds = np.flatnonzero(np.diff(sorted_deg)) + 1
    for group in np.split(rows, bounds):
        d = int(deg[group[0]])
        if d == 0:
            continue
        idx = indptr[group][:, None] + np.arange(d)
        out[idx] = np.cumsum(weights[idx], axis=1)
    return out


def _check_walk_params(graph: Any, walk_length: Any, num_walks: Any, p: Any, q: Any, seed: Any,
                       progress: Any) -> tuple[int, int, float, float, int]:
    if not isinstance(graph, Graph):
        raise InputError(f"expected a Graph (read_edges, graph_from_edges), not {type(graph).__name__}")
    if graph.n_nodes >= 2**31:
        raise InputError(f"the graph has {graph.n_nodes} nodes; walks hold node indices as int32 (< 2**31)")
    if progress is not None and not callable(progress):
        raise InputError(f"progress must be a callable(phase, done, total) or None, not {progress!r}")
    return (positive_int(walk_length, "walk_length"), positive_int(num_walks, "num_walks"),
            check_positive_float(p, "p"), check_positive_float(q, "q"), check_seed(seed))


def walk_indices(graph: Graph, *, walk_length: int = 80, num_walks: int = 10, p: float = 1.0, q: float = 1.0,
                 seed: int = 0, progress: Progress | None = None) -> np.ndarray:
    """node2vec walks as node indices: an int32 array, one walk a row, ``-1`` after a walk that stopped.

    Row ``r * n + i`` is the ``i``-th walk of round ``r`` (``n`` nodes, every
    node starting one walk a round, in a random order). Column 0 is the start;
    a walk is shorter than ``walk_length`` only when it reached a node without
    out-edges (a directed graph's sink, or an isolated node as start), and the
    rest of its row is ``-1``. See the module's notes for the walk itself.

    Parameters
    ----------
    graph : Graph
        From :func:`~repspace.engines.learn.graph.read_edges` or
        :func:`~repspace.engines.learn.graph.graph_from_edges`.
    walk_length : int
        Nodes per walk, the start included.
    num_walks : int
        Rounds: walks started at each node.
    p, q : float
        Return and in-out parameters: a step back to the previous node weighs
        ``1/p``, a step to a node two hops from it ``1/q`` (``q < 1`` explores
        outwards, depth-first like; ``q > 1`` stays local, breadth-first like).
        ``p = q = 1`` is a weighted DeepWalk walk.
    seed : int
        Seeds ``numpy.random.Generator(PCG64(seed))``, the only source of randomness.
    progress : callable, optional
        ``progress("walk", rounds_done, num_walks)`` after each round (after
        each batch of rounds on a graph of fewer than :data:`BATCH_WALKS` nodes).

    Returns
    -------
    ndarray of int32, shape (num_walks * len(graph.nodes), walk_length)

    Examples
    --------
    >>> from repspace.engines.learn.graph import graph_from_edges
    >>> g = graph_from_edges([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    >>> w = walk_indices(g, walk_length=5, num_walks=2, p=0.5, q=2.0, seed=1)
    >>> w.shape, w.dtype, sorted(w[:4, 0].tolist())
    ((8, 5), dtype('int32'), [0, 1, 2, 3])
    >>> bool((w == walk_indices(g, walk_length=5, num_walks=2, p=0.5, q=2.0, seed=1)).all())
    True
    """
    walk_length, num_walks, p, q, seed = _check_walk_params(graph, walk_length, num_walks, p, q, seed, progress)
    rng = np.random.Generator(np.random.PCG64(seed))
    sampler = _Sampler(graph, p, q)
    n = graph.n_nodes
    deg = sampler.deg
    out = np.full((num_walks * n, walk_length), -1, dtype=np.int32)
    per_batch = max(1, BATCH_WALKS // n)
    done = 0
    while done < num_walks:
        rounds = min(per_batch, num_walks - done)
        block = out[done * n:(done + rounds) * n]
        starts = np.concatenate([rng.permutation(n) for _ in range(rounds)])
        block[:, 0] = starts
        rows = np.flatnonzero(deg[starts] > 0)  # the walks still going
        prev = cur = starts[rows]
        for step in range(1, walk_length):
            if not len(rows):
                break
            nxt = sampler.first_order(cur, rng) if step == 1 else sampler.second_order(prev, cur, rng)
            block[rows, step] = nxt
            going = deg[nxt] > 0
            rows, prev, cur = rows[going], cur[going], nxt[going]
        done += rounds
        if progress is not None:
            progress("walk", done, num_walks)
    return out


def random_walks(graph: Graph, *, walk_length: int = 80, num_walks: int = 10, p: float = 1.0, q: float = 1.0,
                 seed: int = 0, progress: Progress | None = None) -> list[list[str]]:
    """node2vec walks as lists of node names (the walks of :func:`walk_indices`, stopped walks shorter).

    Examples
    --------
    >>> from repspace.engines.learn.graph import graph_from_edges
    >>> g = graph_from_edges([("a", "b"), ("b", "c")], directed=True)
    >>> random_walks(g, walk_length=4, num_walks=1, seed=0)
    [['c'], ['a', 'b', 'c'], ['b', 'c']]
    """
    idx = walk_indices(graph, walk_length=walk_length, num_walks=num_walks, p=p, q=q, seed=seed, progress=progress)
    return list(_Walks(idx, graph.nodes))


class _Walks:
    """The walks as gensim reads them: a re-iterable of name lists, kept as one int32 array."""

    def __init__(self, walks: np.ndarray, nodes: tuple[str, ...]) -> None:
        self.walks = walks
        self.nodes = nodes
        self.lengths = (walks >= 0).sum(axis=1)

    def __len__(self) -> int:
        return len(self.walks)

    def __iter__(self) -> Iterator[list[str]]:
        nodes = self.nodes
        for row, length in zip(self.walks.tolist(), self.lengths.tolist()):
            yield [nodes[i] for i in row[:length]]


def train_node2vec(graph: Graph, *, dimensions: int = 128, walk_length: int = 80, num_walks: int = 10,
                   p: float = 1.0, q: float = 1.0, window: int = 10, epochs: int = 1, negative: int = 5,
                   min_count: int = 0, sample: float = 1e-3, alpha: float = 0.025, min_alpha: float = 0.0001,
                   workers: int = 1, seed: int = 0, progress: Progress | None = None) -> TrainedVectors:
    """Train node2vec: :func:`walk_indices`, then gensim's skip-gram ``Word2Vec`` on the walks.

    The defaults are those of the reference implementation (128 dimensions,
    10 walks of 80 nodes from every node, window 10, one epoch, gensim's
    ``negative=5``, ``sample=1e-3``, ``alpha=0.025``).

    Parameters
    ----------
    graph : Graph
        Every node must have an edge: an isolated node (possible only through
        a given node list) is refused, since no walk can place it and its
        vector would stay the random start, indistinguishable from a learned one.
    dimensions : int
        Vector size.
    walk_length, num_walks, p, q : int, int, float, float
        The walks (see :func:`walk_indices`).
    window, epochs, negative, sample, alpha, min_alpha
        Skip-gram's context window, passes over the walks, negative samples,
        subsampling of frequent nodes, and learning rate (see
        :func:`repspace.engines.learn.word2vec.train_word2vec`).
    min_count : int
        Nodes seen fewer times in the walks are left out; the default 0 (and
        any value up to ``num_walks``, as each node starts that many walks)
        keeps every node.
    workers : int
        Training threads; only ``1`` is deterministic.
    seed : int
        Seeds the walks and the training.
    progress : callable, optional
        ``progress(phase, done, total)``: ``("walk", rounds_done, num_walks)``
        after each round (or batch of rounds) of walks, ``("train", epoch, epochs)`` after each epoch.

    Returns
    -------
    TrainedVectors
        ``method`` ``"node2vec"``; ``keys`` the nodes in ``graph.nodes`` order;
        ``counts`` their occurrences in the walks; ``recipe`` with ``params``
        (walk and skip-gram hyper-parameters, seed included), ``walks`` (the
        algorithm, the number of walks and nodes in them), ``graph`` (its
        summary) and ``graph_fingerprint`` (also as ``corpus_fingerprint``),
        ``workers``, ``deterministic`` and the gensim and numpy versions;
        ``info`` the walk and training seconds.

    Raises
    ------
    InputError
        Not a :class:`Graph`, an isolated node, a walk longer than gensim's
        10,000-token sentences, ``min_count`` leaving no node, or a bad
        hyper-parameter.

    Examples
    --------
    >>> from repspace.engines.learn.graph import graph_from_edges
    >>> g = graph_from_edges([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "c")])
    >>> r = train_node2vec(g, dimensions=8, walk_length=10, num_walks=5, window=3, p=0.5, q=2, seed=1)
    >>> r.keys, r.vectors.shape, r.recipe["params"]["p"], r.recipe["graph_fingerprint"] == g.fingerprint
    (('a', 'b', 'c', 'd', 'e'), (5, 8), 0.5, True)
    >>> again = train_node2vec(g, dimensions=8, walk_length=10, num_walks=5, window=3, p=0.5, q=2, seed=1)
    >>> again.vectors.tobytes() == r.vectors.tobytes()
    True
    >>> train_node2vec(graph_from_edges([("a", "b")], nodes=["a", "b", "c"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: node2vec cannot place isolated nodes (no edge): 'c' (1 of 3 nodes); ...
    """
    from gensim.models import Word2Vec

    walk_length, num_walks, p, q, seed = _check_walk_params(graph, walk_length, num_walks, p, q, seed, progress)
    if walk_length > 10_000:
        raise InputError(f"walk_length {walk_length} is over 10,000, the longest sentence gensim trains on")
    check_scalar(min_count, "min_count", int, low=0)
    params: dict[str, Any] = {
        "walk_length": walk_length,
        "num_walks": num_walks,
        "p": p,
        "q": q,
        **skipgram_params(sg=True, vector_size=dimensions, window=window, min_count=int(min_count), negative=negative,
                          sample=sample, alpha=alpha, min_alpha=min_alpha, epochs=epochs, seed=seed,
                          size_name="dimensions"),
    }
    workers = check_workers(workers)
    isolated = graph.isolated()
    if isolated:
        shown = ", ".join(repr(x) for x in isolated[:5]) + (", ..." if len(isolated) > 5 else "")
        raise InputError(f"node2vec cannot place isolated nodes (no edge): {shown} ({len(isolated)} of "
                         f"{graph.n_nodes} nodes); leave them out of the node list")

    start = time.perf_counter()
    walks = walk_indices(graph, walk_length=walk_length, num_walks=num_walks, p=p, q=q, seed=seed,
                         progress=progress)
    walk_seconds = time.perf_counter() - start
    sentences = _Walks(walks, graph.nodes)
    w2v = {k: v for k, v in params.items() if k not in ("walk_length", "num_walks", "p", "q")}
    model = Word2Vec(workers=workers, hashfxn=stable_hash, **w2v)
    model.build_vocab(sentences)
    if len(model.wv) == 0:
        raise InputError(f"no node occurs at least min_count={min_count} times in the walks")
    callbacks = epoch_progress(progress, params["epochs"])
    model.train(sentences, total_examples=model.corpus_count, total_words=model.corpus_total_words,
                epochs=model.epochs, callbacks=callbacks)
    seconds = time.perf_counter() - start
    keys = tuple(k for k in graph.nodes if k in model.wv.key_to_index)
    rows = [model.wv.key_to_index[k] for k in keys]
    counts = np.array([model.wv.get_vecattr(k, "count") for k in keys], dtype=np.int64)
    tokens = int(sentences.lengths.sum())
    recipe = {
        "method": "node2vec",
        "architecture": "skip-gram",
        "params": params,
        "walks": {"algorithm": WALK_ALGORITHM, "rng": "numpy PCG64", "seed": seed, "batch_walks": BATCH_WALKS,
                  "walks": len(walks), "tokens": tokens, "common_neighbour": "edge t -> x"},
        "workers": workers,
        "deterministic": workers == 1,
        "hashfxn": "crc32",
        "phrases": None,
        "tokenizer": None,
        "graph": graph.to_dict(),
        "graph_fingerprint": graph.fingerprint,
        "corpus_fingerprint": graph.fingerprint,
        "corpus": None,
        **versions(),
    }
    trained = np.zeros(graph.n_nodes, dtype=bool)
    long_walks = walks[sentences.lengths >= 2]
    trained[long_walks[long_walks >= 0]] = True
    info = {"nodes": graph.n_nodes, "edges": graph.n_edges, "vocabulary": len(keys),
            "dropped": graph.n_nodes - len(keys), "unwalked": int((~trained).sum()), "walks": len(walks),
            "tokens": tokens, "walk_seconds": walk_seconds, "train_seconds": seconds - walk_seconds}
    return TrainedVectors("node2vec", keys, frozen(model.wv.vectors[rows], np.float32), frozen(counts, np.int64),
                          recipe, model_to_bytes(model), seconds, info)
