"""Learn a space from an edge list: Poincare embeddings of a hierarchy, or node2vec.

``learn_poincare(store, "mammals", "closure.tsv")`` reads ``child<TAB>parent``
lines (a hierarchy's transitive closure, as Nickel & Kiela 2017 train it),
trains gensim's ``PoincareModel`` and stores a space whose metric is
``poincare``: each node is an item (id = its name) at a point of the open unit
ball, searched and measured by hyperbolic distance.

``learn_node2vec(store, "club", "edges.tsv", p=1, q=0.5)`` reads
``source<TAB>target[<TAB>weight]`` lines, draws node2vec's biased second-order
walks (:mod:`repspace.engines.learn.node2vec`) and trains gensim's skip-gram on
them: a cosine space with one item per node.

Both record the full recipe (every hyper-parameter, seed, the edge list's
fingerprint and path, library versions) as the space's provenance; items
have no text and the spaces no text encoder (search them by id or vector).
The space appears whole or not at all.

Examples
--------
>>> from repspace.store import example_store
>>> store = example_store()
>>> edges = store.path.with_name("e.tsv")
>>> _ = edges.write_text("".join(f"{a}\\t{b}\\n" for a, b in
...     [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "d")]))
>>> r = learn_node2vec(store, "toy", edges, dimensions=8, walk_length=10, num_walks=20, window=3, seed=1)
>>> r.n, r.dim, r.metric, store.space("toy").provenance["encoder"]
(6, 8, 'cosine', 'learn:node2vec')
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.files import text_lines
from repspace.core.progress import Progress
from repspace.core.space import check_space_name
from repspace.workflows.learn._params import check_params
from repspace.workflows.learn._report import LearnedSpace
from repspace.workflows.new_space import refuse_existing, write_new_space

if TYPE_CHECKING:
    from repspace.core.store import Store
    from repspace.engines.learn.graph import Graph

__all__ = ["GRAPH_METHODS", "learn_node2vec", "learn_poincare"]

#: The methods that learn from an edge list (their spaces have no text encoder).
GRAPH_METHODS: tuple[str, ...] = ("poincare", "node2vec")


def _read_nodes(nodes: str | Path | Iterable[str] | None) -> list[str] | None:
    """A node list: names in a file (one a line, blank lines skipped) or given."""
    if nodes is None:
        return None
    if isinstance(nodes, (str, Path)):
        out = [line.strip() for _, line in text_lines(nodes, "node list") if line.strip()]
        if not out:
            raise InputError(f"node list {nodes} names no node")
        return out
    return [str(n) for n in nodes]


def _degrees(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """Out- and in-degree of every node (equal for an undirected graph)."""
    out_deg = np.diff(graph.indptr).astype(np.int64)
    in_deg = np.bincount(graph.indices, minlength=len(graph.nodes)).astype(np.int64)
    return out_deg, in_deg


#: ``edges`` naming a WordNet closure instead of a file: ``wordnet:<synset>``.
WORDNET = "wordnet:"


def _edges_record(edges: str | Path, graph: Graph, directed: bool) -> dict[str, Any]:
    where = ({"wordnet": str(edges)[len(WORDNET):], "source": "WordNet 3.0 (Debian wordnet-base)"}
             if str(edges).startswith(WORDNET) else {"file": str(Path(edges).resolve())})
    return {**where, "fingerprint": graph.fingerprint, "nodes": len(graph.nodes),
            "edges": int(len(graph.indices) if directed else len(graph.indices) // 2), "directed": directed}


def _hierarchy(edges: str | Path, nodes: Any, encoding: str) -> Graph:
    """The relations of ``edges``: a ``child<TAB>parent`` file, or ``wordnet:<synset>``'s hypernym closure."""
    from repspace.engines.learn.graph import graph_from_edges, read_edges

    if str(edges).startswith(WORDNET):
        from repspace.engines.learn.wordnet import hypernym_closure

        return graph_from_edges(hypernym_closure(str(edges)[len(WORDNET):]), directed=True, nodes=_read_nodes(nodes))
    return read_edges(edges, directed=True, nodes=_read_nodes(nodes), encoding=encoding, duplicates="sum")


def _store_nodes(store: Store, name: str, edges: str | Path, graph: Graph, trained: Any, *, metric: str,
                 labels: tuple[str, str], t0: float, progress: Progress | None,
                 details: dict[str, Any]) -> LearnedSpace:
    """One item per trained node (metadata: its degrees under ``labels``, one name when they are equal)."""
    refuse_existing(store, name)  # another process may have taken the name while training
    record = _edges_record(edges, graph, graph.directed)
    prov = {"encoder": f"learn:{trained.method}", **trained.recipe, "edges": record}
    out_deg, in_deg = _degrees(graph)
    index = {node: i for i, node in enumerate(graph.nodes)}
    keys = list(trained.keys)
    rows = np.array([index[k] for k in keys], dtype=np.int64)

    def batch(lo: int, hi: int) -> tuple[list[str], np.ndarray, None, list[dict[str, Any]]]:
        at = rows[lo:hi].tolist()
        if labels[0] == labels[1]:
            meta = [{labels[0]: int(out_deg[r])} for r in at]
        else:
            meta = [{labels[0]: int(out_deg[r]), labels[1]: int(in_deg[r])} for r in at]
        return keys[lo:hi], trained.vectors[lo:hi], None, meta

    space = write_new_space(store, name, len(keys), batch, dim=int(trained.vectors.shape[1]), metric=metric,
                            provenance=prov, progress=progress)
    return LearnedSpace(space=name, uid=space.uid, method=trained.method, n=len(keys),
                        dim=int(trained.vectors.shape[1]), metric=metric, train_seconds=trained.seconds,
                        seconds=time.perf_counter() - t0, recipe=space.provenance,
                        details={"nodes": len(keys), "edges": record, **details})


def learn_poincare(store: Store, name: str, edges: str | Path, *, nodes: str | Path | Iterable[str] | None = None,
                   encoding: str = "utf-8", progress: Progress | None = None, **params: Any) -> LearnedSpace:
    """Train Poincare embeddings of the relations in ``edges`` and store them as the ``poincare`` space ``name``.

    Parameters
    ----------
    store : Store
    name : str
        The new space (must not exist).
    edges : str or Path
        ``child<TAB>parent`` lines (blank lines and ``#`` comments skipped); for a
        hierarchy, its transitive closure (every ancestor of each node).
        Unweighted: a third column other than 1 is refused. Or
        ``"wordnet:<synset>"``: the closure of WordNet's hypernyms under that
        synset (``wordnet:mammal.n.01``, Nickel & Kiela's mammals: 1,180 nodes,
        6,540 pairs), from Debian's ``wordnet-base``.
    nodes : file, list of names, optional
        The allowed nodes: an edge naming another is an error ("unknown node").
    encoding : str
        Of the edge list.
    progress : callable, optional
        ``(phase, done, total)``: ``burn-in`` and ``train`` (per epoch), then ``write``.
    **params
        Of :func:`repspace.engines.learn.poincare.train_poincare` (``size``,
        ``negative``, ``epochs``, ``burn_in``, ``alpha``, ``seed``, ...).

    Returns
    -------
    LearnedSpace
        ``details``: ``relations``, ``nodes``, ``edges`` (the file's record).

    Raises
    ------
    InputError
        A bad edge list (self-loop, unknown node, bad line: the file and line
        number), a weight, an unknown synset, a bad hyper-parameter. Nothing is stored.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> closure = store.path.with_name("zoo.tsv")
    >>> _ = closure.write_text("cat\\tmammal\\ndog\\tmammal\\ncat\\tanimal\\ndog\\tanimal\\nmammal\\tanimal\\n"
    ...                        "trout\\tfish\\ntrout\\tanimal\\nfish\\tanimal\\n")
    >>> r = learn_poincare(store, "zoo", closure, size=2, negative=2, epochs=20, seed=1)
    >>> r.n, r.dim, r.metric, r.details["relations"]
    (6, 2, 'poincare', 8)
    >>> bool((np.linalg.norm(store.space("zoo").vectors_of(["cat", "animal"]), axis=1) < 1).all())  # in the unit ball
    True
    """
    from repspace.engines.learn.poincare import train_poincare

    t0 = time.perf_counter()
    params = check_params("poincare", train_poincare, params)
    check_space_name(name)
    refuse_existing(store, name)
    graph = _hierarchy(edges, nodes, encoding)
    if len(graph.weights) and not np.all(graph.weights == 1.0):
        i = int(np.flatnonzero(graph.weights != 1.0)[0])
        src = int(np.searchsorted(graph.indptr, i, side="right") - 1)
        raise InputError(f"{edges}: Poincare embeddings learn unweighted relations; the edge "
                         f"{graph.nodes[src]} -> {graph.nodes[int(graph.indices[i])]} has weight {graph.weights[i]:g} "
                         f"(or appears more than once)")
    starts = np.repeat(np.arange(len(graph.nodes)), np.diff(graph.indptr))
    relations = [(graph.nodes[a], graph.nodes[b]) for a, b in zip(starts.tolist(), graph.indices.tolist())]
    trained = train_poincare(relations, progress=progress, **params)
    return _store_nodes(store, name, edges, graph, trained, metric="poincare", labels=("parents", "children"), t0=t0,
                        progress=progress, details={"relations": len(relations)})


def learn_node2vec(store: Store, name: str, edges: str | Path, *, directed: bool = False,
                   nodes: str | Path | Iterable[str] | None = None, encoding: str = "utf-8",
                   progress: Progress | None = None, **params: Any) -> LearnedSpace:
    """Train node2vec on the graph in ``edges`` and store one item per node as the cosine space ``name``.

    Parameters
    ----------
    store : Store
    name : str
        The new space (must not exist).
    edges : str or Path
        ``source<TAB>target[<TAB>weight]`` lines (undirected unless ``directed``;
        duplicates add their weights).
    directed : bool
        Read each line as one direction only.
    nodes : file, list of names, optional
        The allowed nodes, in this order: an edge naming another is an error.
    encoding : str
        Of the edge list.
    progress : callable, optional
        ``(phase, done, total)``: ``walk``, ``train`` and ``write``.
    **params
        Of :func:`repspace.engines.learn.node2vec.train_node2vec`
        (``dimensions``, ``walk_length``, ``num_walks``, ``p``, ``q``,
        ``window``, ``epochs``, ``workers``, ``seed``, ...).

    Returns
    -------
    LearnedSpace
        ``details``: ``nodes``, ``edges`` (the file's record), ``walks``.

    Raises
    ------
    InputError
        A bad edge list (self-loop, unknown node, bad weight or line: the file
        and line number), an isolated node, a bad hyper-parameter. Nothing is stored.

    Examples
    --------
    >>> from repspace.store import example_store
    >>> store = example_store()
    >>> edges = store.path.with_name("club.tsv")
    >>> _ = edges.write_text("ann\\tbob\\nbob\\tcy\\ncy\\tann\\ncy\\tdan\\t2\\n")  # the last edge weighs 2
    >>> r = learn_node2vec(store, "club", edges, dimensions=4, walk_length=5, num_walks=5, window=2, seed=1)
    >>> r.n, r.dim, r.metric, r.details["walks"], r.details["edges"]["edges"]
    (4, 4, 'cosine', 20, 4)
    """
    from repspace.engines.learn.graph import read_edges
    from repspace.engines.learn.node2vec import train_node2vec

    t0 = time.perf_counter()
    params = check_params("node2vec", train_node2vec, params)
    check_space_name(name)
    refuse_existing(store, name)
    graph = read_edges(edges, directed=directed, nodes=_read_nodes(nodes), encoding=encoding, duplicates="sum")
    trained = train_node2vec(graph, progress=progress, **params)
    labels = ("out_degree", "in_degree") if directed else ("degree", "degree")
    return _store_nodes(store, name, edges, graph, trained, metric="cosine", labels=labels, t0=t0, progress=progress,
                        details={"walks": trained.info.get("walks")})
