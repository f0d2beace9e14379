"""Ollivier-Ricci curvature (repspace.engines.analyze.ricci) against GraphRicciCurvature, an LP and closed forms."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog

from repspace.core.errors import InputError
from repspace.core.knn import knn_graph
from repspace.engines.analyze import graph_ricci, knn_ricci, union_edges
from repspace.engines.analyze import ricci as ricci_module

pytestmark = pytest.mark.numerics


def _glove_graph(glove_vectors, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(glove_vectors[:n], dtype=np.float64)
    return X, union_edges(knn_graph(X, k).indices)


def test_equals_graph_ricci_curvature_ollivier_ricci_otd(glove_vectors):
    pytest.importorskip("networkit", reason="GraphRicciCurvature imports networkit (not installed here)")
    pytest.importorskip("community", reason="GraphRicciCurvature imports python-louvain (not installed here)")
    orc_module = pytest.importorskip("GraphRicciCurvature.OllivierRicci")
    X, edges = _glove_graph(glove_vectors, 500, 10)
    ours = knn_ricci(X, 10)
    G = nx.Graph()
    G.add_nodes_from(range(500))
    G.add_edges_from(edges.tolist(), weight=1)
    orc = orc_module.OllivierRicci(G, alpha=0.5, method="OTD", proc=1, verbose="ERROR")
    orc.compute_ricci_curvature()
    ref_edges = np.array([orc.G[u][v]["ricciCurvature"] for u, v in edges.tolist()])
    ref_nodes = np.array([orc.G.nodes[i]["ricciCurvature"] for i in range(500)])
    assert np.array_equal(ours.edges, edges)
    # both solve the same transport problems with the same network simplex; 1e-6 leaves room for its pivots
    assert np.abs(ours.edge_curvature - ref_edges).max() < 1e-6
    assert np.abs(ours.node_curvature - ref_nodes).max() < 1e-6
    assert ours.mean_curvature == pytest.approx(ref_edges.mean(), abs=1e-9)


def _w1_linprog(mu: dict[int, float], nu: dict[int, float], dist: dict[int, dict[int, int]]) -> float:
    """Wasserstein-1 between two measures on graph nodes as the transport LP, solved by scipy (HiGHS)."""
    xs, ys = list(mu), list(nu)
    cost = np.array([[dist[x][y] for y in ys] for x in xs], dtype=float).ravel()
    a_eq = np.zeros((len(xs) + len(ys), len(xs) * len(ys)))
    for i in range(len(xs)):
        a_eq[i, i * len(ys):(i + 1) * len(ys)] = 1
    for j in range(len(ys)):
        a_eq[len(xs) + j, j::len(ys)] = 1
    b_eq = np.r_[[mu[x] for x in xs], [nu[y] for y in ys]]
    return float(linprog(cost, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs").fun)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.8])
def test_equals_the_transport_lp_on_networkx_hop_distances(glove_vectors, alpha):
    X, edges = _glove_graph(glove_vectors, 120, 4)
    ours = graph_ricci(edges, 120, alpha=alpha)
    G = nx.Graph(edges.tolist())
    dist = dict(nx.all_pairs_shortest_path_length(G, cutoff=3))

    def measure(x: int) -> dict[int, float]:
        nb = list(G[x])
        return {**{y: (1 - alpha) / len(nb) for y in nb}, x: alpha}

    ref = np.array([1 - _w1_linprog(measure(u), measure(v), dist) for u, v in edges.tolist()])
    assert np.abs(ours.edge_curvature - ref).max() < 1e-7  # HiGHS's feasibility tolerance
    ref_nodes = [np.mean([ref[i] for i, e in enumerate(edges.tolist()) if x in e]) for x in range(120)]
    assert np.abs(ours.node_curvature - ref_nodes).max() < 1e-7


@pytest.mark.parametrize("n", [3, 5, 9])
def test_complete_graph_closed_form(n):
    # m_u and m_v differ only on u and v: move alpha - (1-alpha)/(n-1) from u to v, one hop
    r = graph_ricci([(i, j) for i in range(n) for j in range(i + 1, n)], n, alpha=0.5)
    assert np.allclose(r.edge_curvature, 0.5 + 0.5 / (n - 1), atol=1e-12)
    assert np.allclose(r.node_curvature, 0.5 + 0.5 / (n - 1), atol=1e-12)


def test_long_cycle_is_flat_for_alpha_zero_and_a_path_by_hand():
    # on a cycle of length >= 6 the two neighbours of u map onto those of v one hop each: W1 = 1
    r = graph_ricci([(i, (i + 1) % 8) for i in range(8)], 8, alpha=0.0)
    assert np.allclose(r.edge_curvature, 0.0, atol=1e-12)
    # path 0-1-2-3, alpha 1/2: end edge: m_0 = {0: .5, 1: .5}, m_1 = {1: .5, 0: .25, 2: .25}: W1 = .25 + .25
    p = graph_ricci([(0, 1), (1, 2), (2, 3)], 4)
    assert p.edge_curvature.round(12).tolist() == [0.5, 0.0, 0.5]


def test_blocks_of_any_size_give_the_same_curvatures(glove_vectors, monkeypatch):
    X, edges = _glove_graph(glove_vectors, 300, 6)
    whole = graph_ricci(edges, 300)
    monkeypatch.setattr(ricci_module, "BLOCK_COST_ENTRIES", 50)  # below one node's entries: a node per block
    seen = []
    small = graph_ricci(edges, 300, progress=lambda *a: seen.append(a))
    assert np.array_equal(whole.edge_curvature, small.edge_curvature)
    assert seen[0] == ("curvature", 0, len(edges)) and seen[-1] == ("curvature", len(edges), len(edges))
    assert len(seen) > 100


def test_union_symmetrises_and_every_node_has_k_neighbours():
    X = np.random.default_rng(0).standard_normal((200, 5))
    g = knn_graph(X, 3)
    edges = union_edges(g.indices)
    G = nx.Graph([(i, j) for i in range(200) for j in g.indices[i].tolist()])
    assert sorted(map(tuple, edges.tolist())) == sorted(tuple(sorted(e)) for e in G.edges)
    assert min(d for _, d in G.degree) >= 3  # so a kNN graph never has an isolated node


@pytest.mark.parametrize("edges, n, message", [
    ([(0, 1)], 3, "isolated node"),
    ([(0, 0), (0, 1)], 2, "self-loop"),
    ([(0, 5)], 3, "outside"),
    ([], 3, "no edges"),
])
def test_bad_graphs_are_refused(edges, n, message):
    with pytest.raises(InputError, match=message):
        graph_ricci(edges, n)


@pytest.mark.parametrize("rows, k, message", [(2, 1, "at least 3"), (5, 5, "more than 5"), (5, 0, "k")])
def test_bad_knn_input_is_refused(rows, k, message):
    with pytest.raises(InputError, match=message):
        knn_ricci(np.eye(rows, 4), k)


def test_to_dict_names_and_histogram():
    r = knn_ricci(np.random.default_rng(1).standard_normal((80, 4)), 5)
    d = r.to_dict()
    assert d["mean_curvature"] == pytest.approx(r.edge_curvature.mean())
    assert sum(d["edge_histogram"]["counts"]) == d["n_edges"] == len(r.edges)
    assert d["node_curvature"]["min"] <= d["node_curvature"]["median"] <= d["node_curvature"]["max"]
