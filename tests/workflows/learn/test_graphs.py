"""Spaces learned from edge lists: node2vec on Zachary's karate club, Poincare on WordNet hierarchies.

The Poincare space's metric is ``poincare``: search, diagnose and compare use the
hyperbolic distance, and what needs a vector space says so in one line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from repspace.core.errors import ConflictError, InputError
from repspace.workflows.learn.graphs import learn_node2vec, learn_poincare

# ----------------------------------------------------------------------------- data


@pytest.fixture(scope="module")
def karate(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Zachary's karate club (networkx's copy of the 1977 data) as a TSV edge list, and each member's club."""
    import networkx as nx

    g = nx.karate_club_graph()
    path = tmp_path_factory.mktemp("karate") / "karate.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in g.edges()))
    return path, {str(n): g.nodes[n]["club"] for n in g.nodes}


def wordnet_closure(root: str) -> list[tuple[str, str]]:
    from repspace.engines.learn.wordnet import hypernym_closure, wordnet_available

    if not wordnet_available():
        pytest.skip("WordNet is absent (/usr/share/wordnet: `make test` installs Debian's wordnet-base)")
    return list(hypernym_closure(root))


@pytest.fixture(scope="module")
def felines(tmp_path_factory) -> Path:
    """The transitive closure of WordNet's hypernyms under feline.n.01, as child<TAB>ancestor lines."""
    pairs = wordnet_closure("feline.n.01")
    path = tmp_path_factory.mktemp("wn") / "felines.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in pairs))
    return path


# ----------------------------------------------------------------------------- node2vec


def loo_accuracy(X: np.ndarray, labels: list[str]) -> float:
    """Leave-one-out accuracy of the nearest neighbour by cosine."""
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    y = np.array(labels)
    return float((y[S.argmax(axis=1)] == y).mean())


def test_node2vec_karate_space_separates_the_clubs_and_repeats(store, karate):
    path, club = karate
    params = dict(dimensions=16, p=1.0, q=2.0, seed=7)  # walks and window: the reference defaults
    r = learn_node2vec(store, "club", path, **params)
    assert (r.n, r.dim, r.metric, r.method) == (34, 16, "cosine", "node2vec")
    sp = store.space("club")
    prov = sp.provenance
    assert prov["encoder"] == "learn:node2vec" and prov["edges"]["edges"] == 78 and prov["edges"]["nodes"] == 34
    assert prov["params"]["p"] == 1.0 and prov["params"]["q"] == 2.0 and prov["params"]["seed"] == 7
    ids, X = sp.ids(), sp.vectors_of(sp.ids())
    assert sp.get(["33"])[0].metadata == {"degree": 17}
    assert loo_accuracy(np.asarray(X), [club[i] for i in ids]) >= 0.9
    again = learn_node2vec(store, "club2", path, **params)
    assert again.recipe["edges"]["fingerprint"] == prov["edges"]["fingerprint"]
    assert np.array_equal(store.space("club2").vectors_of(ids), X)  # one worker + seed: identical
    hits = sp.search(sp.vectors_of(["0"])[0], k=5)
    assert hits[0].id == "0" and all(club[h.id] == club["0"] for h in hits[:3])


def test_node2vec_space_has_no_text_encoder(store, karate):
    from repspace.workflows.stored_transforms import encoder_for_space

    learn_node2vec(store, "club", karate[0], dimensions=8, walk_length=10, num_walks=2, seed=1)
    with pytest.raises(InputError, match="learned from a graph .node2vec.*search it by id or by vector"):
        encoder_for_space(store.space("club"))


@pytest.mark.parametrize("lines, message", [
    ("a\tb\nb\tb\n", r"e\.tsv:2: .*self-loop"),
    ("a\tb\nb\tc\t-1\n", r"e\.tsv:2: .*weight"),
    ("a\tb\tc\td\n", r"e\.tsv:1: .*column"),
    ("# nothing\n\n", r"no edge"),
])
def test_bad_edge_lists_store_nothing(store, tmp_path, lines, message):
    path = tmp_path / "e.tsv"
    path.write_text(lines)
    with pytest.raises(InputError, match=message):
        learn_node2vec(store, "g", path, dimensions=4, walk_length=5, num_walks=1)
    assert store.spaces() == []


def test_unknown_node_against_a_node_list(store, tmp_path, karate):
    nodes = tmp_path / "nodes.txt"
    nodes.write_text("\n".join(str(i) for i in range(33)))  # 33 is missing
    with pytest.raises(InputError, match="unknown node"):
        learn_node2vec(store, "g", karate[0], nodes=nodes, dimensions=4, walk_length=5, num_walks=1)
    assert store.spaces() == []


def test_an_existing_name_is_refused_before_training(store, karate):
    learn_node2vec(store, "g", karate[0], dimensions=4, walk_length=5, num_walks=1)
    with pytest.raises(ConflictError, match="already exists"):
        learn_node2vec(store, "g", karate[0], dimensions=4, walk_length=5, num_walks=1)


# ----------------------------------------------------------------------------- Poincare


@pytest.fixture(scope="module")
def feline_store(tmp_path_factory, felines):
    from repspace import Store

    s = Store(tmp_path_factory.mktemp("poincare") / "s.db")
    learn_poincare(s, "felines", felines, size=5, epochs=30, burn_in=5, negative=5, seed=2)
    yield s
    s.close()


def test_poincare_space_is_a_ball_with_the_full_recipe(feline_store, felines):
    sp = feline_store.space("felines")
    assert sp.metric.value == "poincare" and sp.dim == 5
    prov = sp.provenance
    assert prov["encoder"] == "learn:poincare" and prov["edges"]["directed"] is True
    n_pairs = sum(1 for line in felines.read_text().splitlines() if line)
    assert prov["edges"]["edges"] == n_pairs
    X = np.asarray(sp.vectors_of(sp.ids()), np.float64)
    assert (np.linalg.norm(X, axis=1) < 1).all()
    root = sp.get(["feline.n.01"])[0]
    assert root.metadata["parents"] == 0 and root.metadata["children"] == len(sp.ids()) - 1


def test_poincare_search_ranks_by_hyperbolic_distance(feline_store):
    from repspace.core.hyperbolic import poincare_distance

    sp = feline_store.space("felines")
    ids = sp.ids()
    X = np.asarray(sp.vectors_of(ids), np.float64)
    q = X[ids.index("cat.n.01")]
    hits = sp.search(q, k=8)
    d = poincare_distance(q[None, :], X)
    order = np.lexsort((np.arange(len(ids)), d))[:8]
    assert [h.id for h in hits] == [ids[i] for i in order]
    assert np.allclose([h.score for h in hits], d[order], atol=1e-5)
    assert all(a.score <= b.score for a, b in zip(hits, hits[1:]))  # distances: nearest first


def test_poincare_refuses_what_needs_a_vector_space_in_one_line(feline_store):
    from repspace.workflows.search.indexes import build_index
    from repspace.workflows.transform import derive_space

    sp = feline_store.space("felines")
    with pytest.raises(InputError, match=r"index 'hnsw32' is not defined for a poincare space"):
        build_index(sp, "hnsw32")
    with pytest.raises(InputError, match=r"transform 'whiten' is not defined for a poincare space"):
        derive_space(feline_store, "felines", "w", "whiten")
    with pytest.raises(InputError, match="poincare space"):
        sp.search(np.zeros(5), k=3, method="hnsw")
    with pytest.raises(InputError, match="learned from a graph .poincare."):
        sp.search("a cat", k=3)
    with pytest.raises(InputError, match="open unit ball"):
        sp.add(["outside"], [[0.8, 0.8, 0.0, 0.0, 0.0]])
    assert "outside" not in sp.ids()


def test_poincare_diagnosis_measures_hubness_and_dimension_and_names_the_rest(feline_store):
    from repspace.workflows.diagnose import diagnose_space

    report = diagnose_space(feline_store.space("felines"), k=5)
    d = report.to_dict()
    assert d["metric"] == "poincare" and d["hubness.knn"]["metric"] == "poincare"
    assert np.isfinite(d["hubness.k_skewness"]) and d["intrinsic_dimension.twonn"] > 0
    assert "isotropy.mean_cosine" not in d and "rank.effective_rank" not in d and "uniformity" not in d
    assert "not a vector space" in d["undefined.isotropy"] or "Poincare ball" in d["undefined.isotropy"]
    assert any("not defined on the Poincare ball" in line for line in report.readings)


def test_poincare_comparison_keeps_the_neighbour_measures(feline_store, felines):
    from repspace.workflows.compare import compare_spaces

    learn_poincare(feline_store, "felines-b", felines, size=5, epochs=30, burn_in=5, negative=5, seed=3)
    a, b = feline_store.space("felines"), feline_store.space("felines-b")
    c = compare_spaces(a, b, k=5).to_dict()
    assert c["mutual_knn"]["knn"]["metric"] == "poincare" and 0.3 < c["mutual_knn"]["value"] <= 1.0
    assert c["neighbourhood_jaccard"]["knn"]["metric"] == "poincare"
    assert set(c["skipped"]) == {"cka_linear", "cka_debiased", "procrustes", "svcca"}
    assert 0.3 < c["rsa"]["value"] <= 1.0  # on hyperbolic distances
    assert c["skipped"]["cka_linear"].startswith("cka_linear (a measure on coordinates) is not defined for a "
                                                 "poincare space")


def test_poincare_same_seed_same_vectors(tmp_path, felines):
    from repspace import Store

    s = Store(tmp_path / "s.db")
    learn_poincare(s, "a", felines, size=3, epochs=5, burn_in=2, seed=5)
    learn_poincare(s, "b", felines, size=3, epochs=5, burn_in=2, seed=5)
    ids = s.space("a").ids()
    assert np.array_equal(s.space("a").vectors_of(ids), s.space("b").vectors_of(ids))


def test_poincare_refuses_weighted_edges(store, tmp_path):
    path = tmp_path / "w.tsv"
    path.write_text("cat\tfeline\t2\n")
    with pytest.raises(InputError, match="unweighted"):
        learn_poincare(store, "p", path)
    assert store.spaces() == []


def test_poincare_export_names_its_metric_and_no_lancedb_distance(feline_store, tmp_path):
    import pyarrow.parquet as pq

    from repspace.workflows.export import export_parquet

    out = export_parquet(feline_store.space("felines"), tmp_path / "f.parquet")
    field = pq.read_table(out["path"]).schema.field("vector")
    assert out["metric"] == "poincare" and field.metadata == {b"metric": b"poincare"}


def test_poincare_refuses_vector_interpretations_in_one_line(feline_store):
    from repspace.workflows.interpret import axis_space, erase_space

    sp = feline_store.space("felines")
    with pytest.raises(InputError, match="a semantic axis .* is not defined for a poincare space"):
        axis_space(sp, ["cat.n.01"], ["lion.n.01"])
    with pytest.raises(InputError, match="not defined for a poincare space"):
        erase_space(feline_store, sp, "parents", "erased")
    assert "erased" not in [s.name for s in feline_store.spaces()]
