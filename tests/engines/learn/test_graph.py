"""Edge lists: reading, CSR layout, duplicates, node lists, the fingerprint, and one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.learn.graph import Graph, graph_from_edges, read_edges


def write(tmp_path, text: str, name: str = "edges.tsv", encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_read_undirected_weighted_with_comments_blank_lines_crlf_and_bom(tmp_path):
    path = write(tmp_path, "\ufeff# a comment\r\nc\ta\t2\r\n\r\n  # indented comment\nb\tc\na\tb\t0.5\n\n")
    g = read_edges(path)
    assert isinstance(g, Graph) and g.nodes == ("c", "a", "b") and not g.directed
    assert (g.n_nodes, g.n_edges) == (3, 3)
    # both directions, rows sorted by target index
    assert g.indptr.tolist() == [0, 2, 4, 6]
    assert g.indices.tolist() == [1, 2, 0, 2, 0, 1]
    assert g.weights.tolist() == [2.0, 1.0, 2.0, 0.5, 1.0, 0.5]
    assert g.indptr.dtype == g.indices.dtype == np.int64 and g.weights.dtype == np.float64
    assert not (g.indptr.flags.writeable or g.indices.flags.writeable or g.weights.flags.writeable)
    assert g.neighbors("a") == ("c", "b") and g.degrees().tolist() == [2, 2, 2]
    assert g.to_dict() == {"nodes": 3, "edges": 3, "directed": False, "weighted": True, "isolated": 0,
                           "fingerprint": g.fingerprint}
    assert len(g.fingerprint) == 64


def test_directed_edges_go_one_way_and_a_to_b_differs_from_b_to_a(tmp_path):
    g = read_edges(write(tmp_path, "a\tb\nb\ta\t3\nb\tc\n"), directed=True)
    assert g.directed and g.n_edges == 3
    assert g.neighbors("a") == ("b",) and g.neighbors("b") == ("a", "c") and g.neighbors("c") == ()
    assert list(g.edges()) == [("a", "b", 1.0), ("b", "a", 3.0), ("b", "c", 1.0)]
    assert repr(g).startswith("Graph(3 nodes, 3 directed edges, fingerprint=")


def test_neighbour_order_is_by_node_index_whatever_the_line_order():
    g = graph_from_edges([("hub", "z"), ("y", "hub"), ("hub", "a"), ("m", "hub"), ("b", "c")])
    assert g.nodes == ("hub", "z", "y", "a", "m", "b", "c")
    assert g.neighbors("hub") == ("z", "y", "a", "m")
    for i in range(g.n_nodes):
        assert (np.diff(g.indices[g.indptr[i]:g.indptr[i + 1]]) > 0).all()


def test_duplicates_are_summed_by_default_and_refused_on_request(tmp_path):
    path = write(tmp_path, "a\tb\t1.5\nb\tc\nb\ta\n# again\na\tb\t0.25\n")
    g = read_edges(path)
    assert list(g.edges()) == [("a", "b", 2.75), ("b", "c", 1.0)]
    # the same graph written with the sums has the same fingerprint
    assert g.fingerprint == graph_from_edges([("a", "b", 2.75), ("b", "c")]).fingerprint
    with pytest.raises(InputError) as e:
        read_edges(path, duplicates="error")
    assert str(e.value) == (f"{path}:3: duplicate edge 'b' - 'a' (first at {path}:1; "
                            "pass duplicates='sum' to add their weights)")
    # directed: a -> b and b -> a are two edges, a -> b twice is a duplicate
    d = read_edges(path, directed=True)
    assert list(d.edges()) == [("a", "b", 1.75), ("b", "a", 1.0), ("b", "c", 1.0)]
    with pytest.raises(InputError, match=r"edges\.tsv:5: duplicate edge 'a' -> 'b' \(first at .*edges\.tsv:1;"):
        read_edges(path, directed=True, duplicates="error")
    with pytest.raises(InputError, match="duplicates must be one of sum, error, not 'max'"):
        graph_from_edges([("a", "b")], duplicates="max")


def test_fingerprint_ignores_how_edges_are_written_but_not_what_they_are(tmp_path):
    base = read_edges(write(tmp_path, "a\tb\nb\tc\t2\nc\ta\n", "1.tsv")).fingerprint
    same = [
        "a\tb\t1.0\nb\tc\t2.000\nc\ta\t1\n",      # weights written otherwise
        "a\tb\nc\ta\nb\tc\t2\n",                   # another line order, same first-seen node order
        "a\tb\nb\tc\t1.5\nc\ta\n#x\nc\tb\t0.5\n",  # a weight split over two lines (summed)
        " a \t b\nb\tc\t2\nc\ta\n",               # spaces around names
    ]
    for i, text in enumerate(same):
        assert read_edges(write(tmp_path, text, f"s{i}.tsv")).fingerprint == base, text
    other = [
        "a\tb\nb\tc\t2.5\nc\ta\n",  # a weight
        "a\tb\nb\tc\t2\nc\tA\n",    # a name
        "b\tc\t2\na\tb\nc\ta\n",    # the node order (b, c, a): walks differ
    ]
    for i, text in enumerate(other):
        assert read_edges(write(tmp_path, text, f"o{i}.tsv")).fingerprint != base, text
    assert read_edges(tmp_path / "1.tsv", directed=True).fingerprint != base
    assert read_edges(tmp_path / "1.tsv", nodes=["a", "b", "c", "d"]).fingerprint != base
    # the canonical edge list reads back to the same graph
    g = read_edges(tmp_path / "1.tsv")
    assert graph_from_edges(list(g.edges())).fingerprint == base


def test_a_node_list_fixes_order_keeps_isolated_nodes_and_refuses_unknown_ones(tmp_path):
    path = write(tmp_path, "a\tb\nb\tc\n")
    g = read_edges(path, nodes=["c", "z", "b", "a"])
    assert g.nodes == ("c", "z", "b", "a") and g.isolated() == ("z",)
    assert g.neighbors("b") == ("c", "a") and g.neighbors("z") == () and g.degrees().tolist() == [1, 0, 2, 1]
    with pytest.raises(InputError) as e:
        read_edges(path, nodes=["a", "b"])
    assert str(e.value) == f"{path}:2: unknown node 'c' (not among the 2 nodes given)"
    with pytest.raises(InputError, match="node list entry 2: 'a' is listed twice"):
        read_edges(path, nodes=["a", "b", "a"])
    with pytest.raises(InputError, match="the node list is empty"):
        read_edges(path, nodes=[])
    with pytest.raises(InputError, match="nodes must be a list of node names, not one string"):
        read_edges(path, nodes="abc")
    with pytest.raises(InputError, match="node list entry 1: empty node name"):
        graph_from_edges([("a", "b")], nodes=["a", " "])


def test_directed_isolated_means_no_edge_in_or_out():
    g = graph_from_edges([("a", "b")], directed=True, nodes=["a", "b", "c"])
    assert g.isolated() == ("c",) and g.neighbors("b") == ()


@pytest.mark.parametrize(("text", "message"), [
    ("a\tb\nc\n", "{path}:2: expected source<TAB>target[<TAB>weight], found 1 tab-separated column"),
    ("a\tb\na\tb\t1\tx\n", "{path}:2: expected source<TAB>target[<TAB>weight], found 4 tab-separated columns"),
    ("a b\n", "{path}:1: expected source<TAB>target[<TAB>weight], found 1 tab-separated column"),
    ("a\tb\n\t c\n", "{path}:2: empty node name"),
    ("a\t \n", "{path}:1: empty node name"),
    ("a\tb\tabc\n", "{path}:1: weight 'abc' is not a number"),
    ("a\tb\t\n", "{path}:1: weight '' is not a number"),
    ("# x\na\tb\t0\n", "{path}:2: weight '0' is not a finite positive number"),
    ("a\tb\t-1.5\n", "{path}:1: weight '-1.5' is not a finite positive number"),
    ("a\tb\tnan\n", "{path}:1: weight 'nan' is not a finite positive number"),
    ("a\tb\tinf\n", "{path}:1: weight 'inf' is not a finite positive number"),
    ("a\tb\t1e400\n", "{path}:1: weight '1e400' is not a finite positive number"),
    ("a\tb\nb\tb\t2\n", "{path}:2: self-loop 'b' -> 'b' (node2vec has no use for it; drop the edge)"),
    ("", "{path}: no edges (only blank lines and comments)"),
    ("# only\n\n  \n", "{path}: no edges (only blank lines and comments)"),
])
def test_bad_lines_are_one_error_line_with_file_and_line_number(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as e:
        read_edges(path)
    assert str(e.value) == message.format(path=path) and "\n" not in str(e.value)


def test_file_errors(tmp_path):
    with pytest.raises(InputError, match=r"edge file .*nope\.tsv does not exist"):
        read_edges(tmp_path / "nope.tsv")
    with pytest.raises(InputError, match=r"edge file .* is a folder"):
        read_edges(tmp_path)
    latin = write(tmp_path, "caf\u00e9\tbar\n", "latin.tsv", encoding="latin-1")
    with pytest.raises(InputError) as e:
        read_edges(latin)
    assert str(e.value) == f"{latin}:1: invalid UTF-8 at byte 3 (pass the file's encoding)"
    assert read_edges(latin, encoding="latin-1").nodes == ("caf\u00e9", "bar")
    with pytest.raises(InputError, match="unknown text encoding 'klingon'"):
        read_edges(latin, encoding="klingon")


def test_graph_from_edges_takes_pairs_triples_and_integer_names():
    g = graph_from_edges([(1, 2), (2, 3, 0.5), [3, 1, "2"]])
    assert g.nodes == ("1", "2", "3") and g.index("3") == 2
    assert list(g.edges()) == [("1", "2", 1.0), ("1", "3", 2.0), ("2", "3", 0.5)]
    assert graph_from_edges(iter([("a", "b")])).n_edges == 1


@pytest.mark.parametrize(("edges", "message"), [
    ([("a", "b"), ("a",)], "edge 1: expected (source, target) or (source, target, weight), not ('a',)"),
    ([("a", "b", 1, 2)], "edge 0: expected (source, target) or (source, target, weight), not ('a', 'b', 1, 2)"),
    (["ab"], "edge 0: expected (source, target) or (source, target, weight), not 'ab'"),
    ([("a", "")], "edge 0: empty node name"),
    ([("a", None)], "edge 0: a node name must be a string or an integer, not None"),
    ([("a", True)], "edge 0: a node name must be a string or an integer, not True"),
    ([("a", "b", 0.0)], "edge 0: weight 0.0 is not a finite positive number"),
    ([("a", "b", float("inf"))], "edge 0: weight inf is not a finite positive number"),
    ([("a", "b", True)], "edge 0: weight True is not a number"),
    ([("a", "b", None)], "edge 0: weight None is not a number"),
    ([("a", "b"), (7, 7)], "edge 1: self-loop '7' -> '7' (node2vec has no use for it; drop the edge)"),
    ([], "no edges"),
])
def test_graph_from_edges_errors(edges, message):
    with pytest.raises(InputError) as e:
        graph_from_edges(edges)
    assert str(e.value) == message
    with pytest.raises(InputError, match="expected a list of edges, got one string"):
        graph_from_edges("a\tb")


def test_index_of_an_unknown_node():
    g = graph_from_edges([("a", "b")])
    with pytest.raises(InputError, match=r"unknown node 'q' \(the graph has 2 nodes\)"):
        g.neighbors("q")
    with pytest.raises(InputError, match="unknown node"):
        g.index(["a"])


def test_karate_club_as_an_edge_file(tmp_path):
    import networkx as nx

    kc = nx.karate_club_graph()
    path = write(tmp_path, "".join(f"{u}\t{v}\t{d['weight']}\n" for u, v, d in kc.edges(data=True)))
    g = read_edges(path)
    assert (g.n_nodes, g.n_edges) == (34, 78) and g.to_dict()["weighted"]
    for name in g.nodes:
        assert set(g.neighbors(name)) == {str(x) for x in kc.neighbors(int(name))}
    assert dict(zip(g.nodes, g.degrees().tolist())) == {str(n): d for n, d in kc.degree()}
    assert read_edges(path, directed=True).n_edges == 78
