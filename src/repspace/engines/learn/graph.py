"""A graph for node2vec: node names, compressed sparse rows of weighted edges, and a fingerprint.

:func:`read_edges` reads an edge list, one edge a line
(``source<TAB>target[<TAB>weight]``; blank lines and ``#`` comments are
skipped, a missing weight is 1), and :func:`graph_from_edges` takes the same
edges in memory. Both return a :class:`Graph`: the node names in first-seen
order (or in the order of a given node list), and the out-edges of node ``i``
in ``indices[indptr[i]:indptr[i + 1]]`` with their ``weights``, sorted by
target index, so every walk over the graph is reproducible.

Rules
-----
* An undirected edge ``a - b`` is stored in both rows (``a -> b`` and
  ``b -> a``); ``b a`` after ``a b`` is then the same edge.
* Duplicate edges are merged by summing their weights (``duplicates="sum"``,
  the default): an edge list with repeated lines reads as a multigraph, and
  node2vec on a multigraph (each parallel edge drawn alike) walks exactly as on
  the weighted graph whose weights are the sums. ``duplicates="error"``
  refuses them instead, naming both lines.
* Refused, each with one :class:`~repspace.core.errors.InputError` line giving
  the file and line number (or the edge's position): a wrong number of
  columns, an empty node name, a weight that is not a finite positive number,
  a self-loop (``a -> a``), a node outside the given ``nodes`` list ("unknown
  node"), and an edge list without edges.

The fingerprint is a SHA-256 over the node names in their order, the
direction and the edges with their weights in the canonical (sorted CSR)
order: the order of the lines, how a weight is written (``1`` or ``1.0``) and
how duplicates were split do not change it; the node order does, since it
fixes the walks a seed draws.

This module imports only :mod:`repspace.core`, numpy and the standard library.

Examples
--------
>>> g = graph_from_edges([("a", "b"), ("b", "c", 2.0), ("c", "a")])
>>> g  # doctest: +ELLIPSIS
Graph(3 nodes, 3 undirected edges, fingerprint=...…)
>>> g.nodes, g.neighbors("c")
(('a', 'b', 'c'), ('a', 'b'))
>>> g.indptr.tolist(), g.indices.tolist(), g.weights.tolist()
([0, 2, 4, 6], [1, 2, 0, 2, 0, 1], [1.0, 1.0, 1.0, 2.0, 1.0, 2.0])
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.checks import check_choice
from repspace.core.errors import InputError
from repspace.core.files import text_lines

__all__ = ["Graph", "graph_from_edges", "read_edges"]

_DUPLICATES = ("sum", "error")


@dataclass(frozen=True, eq=False, repr=False)
class Graph:
    """A weighted graph in compressed sparse rows, with its node names and fingerprint.

    Attributes
    ----------
    nodes : tuple of str
        Node names; node ``i`` is ``nodes[i]`` (first-seen order in the edge
        list, or the order of the given node list).
    indptr : ndarray of int64, shape (len(nodes) + 1,)
        Node ``i``'s out-edges are ``indptr[i]`` to ``indptr[i + 1]``.
    indices : ndarray of int64
        Target node of each edge, ascending within each row.
    weights : ndarray of float64
        Weight of each edge (finite, positive; duplicates summed).
    directed : bool
        False: each edge is stored in both directions.
    fingerprint : str
        SHA-256 (hex) of the node names, the direction and the canonical edge list.

    All arrays are read-only. Build graphs with :func:`read_edges` or
    :func:`graph_from_edges`, which check everything the walks rely on; a
    ``Graph`` assembled by hand is not checked.

    Examples
    --------
    >>> g = graph_from_edges([("cat", "mammal"), ("dog", "mammal"), ("mammal", "animal", 2.0)])
    >>> g.nodes, g.n_edges, g.directed
    (('cat', 'mammal', 'dog', 'animal'), 3, False)
    >>> g.neighbors("mammal"), g.degrees().tolist()
    (('cat', 'dog', 'animal'), [1, 3, 1, 1])
    """

    nodes: tuple[str, ...]
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    directed: bool
    fingerprint: str

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        """Number of distinct edges (an undirected edge counts once)."""
        return len(self.indices) if self.directed else len(self.indices) // 2

    def degrees(self) -> np.ndarray:
        """Out-degree of each node (for an undirected graph, its degree), int64."""
        return np.diff(self.indptr)

    def isolated(self) -> tuple[str, ...]:
        """The nodes with no edge at all (neither in nor out); only a given node list can hold them.

        Examples
        --------
        >>> graph_from_edges([("a", "b")], nodes=["a", "b", "c"]).isolated()
        ('c',)
        """
        touched = np.zeros(self.n_nodes, dtype=bool)
        touched[self.indices] = True
        touched[self.degrees() > 0] = True
        return tuple(self.nodes[i] for i in np.flatnonzero(~touched))

    def index(self, node: str) -> int:
        """The index of ``node``; :class:`InputError` when the graph has no such node."""
        try:
            return self._positions()[node]
        except (KeyError, TypeError):
            raise InputError(f"unknown node {node!r} (the graph has {self.n_nodes} nodes)") from None

    def neighbors(self, node: str) -> tuple[str, ...]:
        """Names of the out-neighbours of ``node``, in index order."""
        i = self.index(node)
        return tuple(self.nodes[j] for j in self.indices[self.indptr[i]:self.indptr[i + 1]])

    def edges(self) -> Iterator[tuple[str, str, float]]:
        """The canonical edge list: ``(source, target, weight)`` by source then target index.

        An undirected edge appears once, from its lower-index end.

        Examples
        --------
        >>> list(graph_from_edges([("b", "a", 2), ("a", "b"), ("c", "a")]).edges())
        [('b', 'a', 3.0), ('a', 'c', 1.0)]
        """
        for i in range(self.n_nodes):
            for k in range(int(self.indptr[i]), int(self.indptr[i + 1])):
                j = int(self.indices[k])
                if self.directed or i < j:
                    yield self.nodes[i], self.nodes[j], float(self.weights[k])

    def to_dict(self) -> dict[str, Any]:
        """A JSON summary: counts, direction, whether weighted, fingerprint."""
        return {"nodes": self.n_nodes, "edges": self.n_edges, "directed": self.directed,
                "weighted": bool(len(self.weights) and not (self.weights == self.weights[0]).all()),
                "isolated": len(self.isolated()), "fingerprint": self.fingerprint}

    def _positions(self) -> dict[str, int]:
        cached = self.__dict__.get("_index")
        if cached is None:
            cached = {name: i for i, name in enumerate(self.nodes)}
            object.__setattr__(self, "_index", cached)
        return cached

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"Graph({self.n_nodes} nodes, {self.n_edges} {kind} edges, fingerprint={self.fingerprint[:12]}…)"


def _fingerprint(nodes: Sequence[str], indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray,
                 directed: bool) -> str:
    h = hashlib.sha256(b"repspace-graph-v1\x00")
    h.update(b"directed\x00" if directed else b"undirected\x00")
    h.update(len(nodes).to_bytes(8, "little"))
    for name in nodes:
        h.update(name.encode("utf-8"))
        h.update(b"\x00")
    for array, dtype in ((indptr, "<i8"), (indices, "<i8"), (weights, "<f8")):
        h.update(np.ascontiguousarray(array, dtype=dtype).tobytes())
    return h.hexdigest()


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class _Builder:
    """Collects edges one at a time (names to indices, checks), then builds the :class:`Graph`."""

    def __init__(self, directed: bool, nodes: Iterable[Any] | None, duplicates: str, where: Any) -> None:
        check_choice(duplicates, "duplicates", _DUPLICATES)
        self.directed = bool(directed)
        self.duplicates = duplicates
        self.where = where  # where(i) -> "file:line" or "edge i", for messages
        self.fixed = nodes is not None
        self.names: list[str] = []
        self.position: dict[str, int] = {}
        if nodes is not None:
            if isinstance(nodes, (str, bytes)):
                raise InputError("nodes must be a list of node names, not one string")
            for k, name in enumerate(nodes):
                name = _name(name, f"node list entry {k}")
                if name in self.position:
                    raise InputError(f"node list entry {k}: {name!r} is listed twice")
                self.position[name] = len(self.names)
                self.names.append(name)
            if not self.names:
                raise InputError("the node list is empty")
        self.src: list[int] = []
        self.dst: list[int] = []
        self.wts: list[float] = []
        self.origin: list[Any] = []

    def node(self, name: str, at: Any) -> int:
        i = self.position.get(name)
        if i is None:
            if self.fixed:
                raise InputError(f"{self.where(at)}: unknown node {name!r} (not among the {len(self.names)} "
                                 "nodes given)")
            i = self.position[name] = len(self.names)
            self.names.append(name)
        return i

    def add(self, source: str, target: str, weight: float, at: Any) -> None:
        if source == target:
            raise InputError(f"{self.where(at)}: self-loop {source!r} -> {target!r} (node2vec has no use for it; "
                             "drop the edge)")
        self.src.append(self.node(source, at))
        self.dst.append(self.node(target, at))
        self.wts.append(weight)
        self.origin.append(at)

    def build(self, empty: str) -> Graph:
        if not self.src:
            raise InputError(empty)
        n = len(self.names)
        src = np.asarray(self.src, dtype=np.int64)
        dst = np.asarray(self.dst, dtype=np.int64)
        wts = np.asarray(self.wts, dtype=np.float64)
        lo, hi = (src, dst) if self.directed else (np.minimum(src, dst), np.maximum(src, dst))
        key = lo * n + hi
        if self.duplicates == "error":
            order = np.argsort(key, kind="stable")
            same = np.flatnonzero(key[order][1:] == key[order][:-1])
            if len(same):
                first, second = int(order[same[0]]), int(order[same[0] + 1])
                arrow = "->" if self.directed else "-"
                raise InputError(f"{self.where(self.origin[second])}: duplicate edge {self.names[src[second]]!r} "
                                 f"{arrow} {self.names[dst[second]]!r} (first at {self.where(self.origin[first])}; "
                                 "pass duplicates='sum' to add their weights)")
        if not self.directed:  # both directions
            key = np.concatenate([key, hi * n + lo])
            wts = np.concatenate([wts, wts])
        unique, inverse = np.unique(key, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights=wts, minlength=len(unique))
        rows, cols = np.divmod(unique, n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        indices = cols.astype(np.int64)
        weights = summed.astype(np.float64)
        if not np.isfinite(weights).all():
            raise InputError("the summed weights of duplicate edges overflow to infinity")
        nodes = tuple(self.names)
        return Graph(nodes, _readonly(indptr), _readonly(indices), _readonly(weights), self.directed,
                     _fingerprint(nodes, indptr, indices, weights, self.directed))


def _name(value: Any, where: str) -> str:
    """A node name: a non-empty string (surrounding whitespace removed) or an integer, as str."""
    if isinstance(value, bool) or not isinstance(value, (str, int, np.integer)):
        raise InputError(f"{where}: a node name must be a string or an integer, not {value!r}")
    name = str(value).strip()
    if not name:
        raise InputError(f"{where}: empty node name")
    return name


def _weight(value: Any, where: str) -> float:
    """A weight: a finite number > 0, given as a number or its text."""
    text = value.strip() if isinstance(value, str) else value
    try:
        if isinstance(text, bool) or not isinstance(text, (str, int, float, np.integer, np.floating)):
            raise ValueError
        w = float(text)
    except (ValueError, OverflowError):
        raise InputError(f"{where}: weight {value!r} is not a number") from None
    if not math.isfinite(w) or w <= 0:
        raise InputError(f"{where}: weight {value!r} is not a finite positive number")
    return w


def read_edges(path: str | Path, *, directed: bool = False, nodes: Iterable[str] | None = None,
               encoding: str = "utf-8", duplicates: str = "sum") -> Graph:
    """A :class:`Graph` from an edge-list file: ``source<TAB>target[<TAB>weight]`` a line.

    Blank lines and lines whose first non-blank character is ``#`` are
    skipped; a UTF-8 byte-order mark is ignored. Names and weights lose their
    surrounding spaces; a missing weight is 1.

    Parameters
    ----------
    path : str or Path
        The edge list (tab-separated, 2 or 3 columns).
    directed : bool
        When false (the default) each line is an undirected edge, stored in
        both directions.
    nodes : iterable of str, optional
        The graph's nodes, in this order: an edge naming any other node is an
        error ("unknown node"), and listed nodes without edges stay in the
        graph (isolated). Default: the nodes as the edges name them, in
        first-seen order.
    encoding : str
        Any Python codec; a line that does not decode is an error naming it.
    duplicates : {"sum", "error"}
        What a repeated edge does: add its weight to the first (a multigraph
        read as a weighted graph), or stop with an error naming both lines.

    Returns
    -------
    Graph

    Raises
    ------
    InputError
        A missing file, or a bad line: wrong column count, empty name, weight
        not a finite positive number, self-loop, unknown node, duplicate (with
        ``duplicates="error"``); or no edge at all. The message starts with
        ``file:line:``.

    Examples
    --------
    >>> from repspace.store import example_file
    >>> p = example_file("g.tsv", "# friends\\nann\\tbob\\nbob\\tcy\\t2.5\\n\\ncy\\tann\\n")
    >>> g = read_edges(p)
    >>> g.nodes, g.n_edges, g.neighbors("bob")
    (('ann', 'bob', 'cy'), 3, ('ann', 'cy'))
    >>> _ = open(p, "w").write("ann\\tbob\\nbob\\tbob\\n")
    >>> read_edges(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: ...g.tsv:2: self-loop 'bob' -> 'bob' (node2vec has no use for it; drop the edge)
    """
    path = Path(path)
    builder = _Builder(directed, nodes, duplicates, lambda number: f"{path}:{number}")
    for number, line in text_lines(path, "edge file", encoding=encoding):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise InputError(f"{path}:{number}: expected source<TAB>target[<TAB>weight], found "
                             f"{len(fields)} tab-separated column{'s' if len(fields) != 1 else ''}")
        where = f"{path}:{number}"
        source, target = _name(fields[0], where), _name(fields[1], where)
        weight = _weight(fields[2], where) if len(fields) == 3 else 1.0
        builder.add(source, target, weight, number)
    return builder.build(f"{path}: no edges (only blank lines and comments)")


def graph_from_edges(edges: Iterable[Sequence[Any]], *, directed: bool = False, nodes: Iterable[str] | None = None,
                     duplicates: str = "sum") -> Graph:
    """A :class:`Graph` from ``(source, target)`` pairs or ``(source, target, weight)`` triples.

    Node names are strings or integers (stored as ``str``); the rules are those
    of :func:`read_edges`, and messages name the edge by its 0-based position.

    Examples
    --------
    >>> g = graph_from_edges([(1, 2), (2, 3, 0.5)], directed=True)
    >>> g.nodes, g.n_edges, g.neighbors("3")
    (('1', '2', '3'), 2, ())
    >>> graph_from_edges([("a", "b"), ("b", "x")], nodes=["a", "b"])
    Traceback (most recent call last):
    ...
    repspace.core.errors.InputError: edge 1: unknown node 'x' (not among the 2 nodes given)
    """
    if isinstance(edges, (str, bytes)):
        raise InputError("expected a list of edges, got one string")
    builder = _Builder(directed, nodes, duplicates, lambda i: f"edge {i}")
    for i, edge in enumerate(edges):
        where = f"edge {i}"
        if isinstance(edge, (str, bytes)) or not isinstance(edge, Sequence) or len(edge) not in (2, 3):
            raise InputError(f"{where}: expected (source, target) or (source, target, weight), not {edge!r}")
        source, target = _name(edge[0], where), _name(edge[1], where)
        weight = _weight(edge[2], where) if len(edge) == 3 else 1.0
        builder.add(source, target, weight, i)
    return builder.build("no edges")
