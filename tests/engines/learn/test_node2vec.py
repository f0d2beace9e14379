"""node2vec: the walks follow node2vec's exact transition probabilities, determinism, training, the karate club."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2

from repspace.core.errors import InputError
from repspace.engines.learn.graph import Graph, graph_from_edges, read_edges
from repspace.engines.learn.node2vec import BATCH_WALKS, random_walks, train_node2vec, walk_indices

#: A small graph with triangles, squares and a pendant path, so that every step can return (1/p), stay among the
#: previous node's neighbours (1) or move away (1/q); weights spread over 0.5 to 3.
WEIGHTED = [("a", "b", 1.0), ("a", "c", 2.0), ("b", "c", 1.0), ("b", "d", 3.0), ("c", "d", 1.0), ("c", "e", 0.5),
            ("d", "e", 2.0), ("e", "f", 1.0), ("f", "g", 1.0), ("d", "g", 1.5), ("g", "h", 2.5)]
#: Directed: two-way pairs, one-way edges and a sink (``s``), where walks stop.
DIRECTED = [("a", "b", 1.0), ("b", "a", 2.0), ("b", "c", 1.0), ("c", "a", 1.0), ("a", "c", 0.5), ("c", "d", 2.0),
            ("d", "b", 1.0), ("d", "a", 1.0), ("b", "d", 1.0), ("d", "s", 1.0), ("c", "s", 0.5)]
PQ = [(1.0, 1.0), (0.25, 4.0), (4.0, 0.25)]


def exact_next(g: Graph, p: float, q: float, t: int | None, v: int) -> dict[int, float]:
    """node2vec's transition probabilities from v (having come from t), written from the paper's definition."""
    lo, hi = g.indptr[v], g.indptr[v + 1]
    t_out = set() if t is None else set(g.indices[g.indptr[t]:g.indptr[t + 1]].tolist())
    raw = {}
    for x, w in zip(g.indices[lo:hi].tolist(), g.weights[lo:hi].tolist()):
        if t is None:
            alpha = 1.0
        elif x == t:
            alpha = 1 / p
        elif x in t_out:
            alpha = 1.0
        else:
            alpha = 1 / q
        raw[x] = w * alpha
    total = sum(raw.values())
    return {x: r / total for x, r in raw.items()}


def transition_counts(walks: np.ndarray) -> tuple[Counter, Counter]:
    """Counts of first steps (v, x) and of later steps (t, v, x) in padded walks."""
    ok = walks[:, 1] >= 0
    first = Counter(zip(walks[ok, 0].tolist(), walks[ok, 1].tolist()))
    later: Counter = Counter()
    for s in range(2, walks.shape[1]):
        ok = walks[:, s] >= 0
        later.update(zip(walks[ok, s - 2].tolist(), walks[ok, s - 1].tolist(), walks[ok, s].tolist()))
    return first, later


def chi_square(g: Graph, first: Counter, later: Counter, p: float, q: float) -> tuple[float, int, int]:
    """Pooled chi-square statistic and degrees of freedom of the counts against node2vec's probabilities.

    Also returns the number of transitions the exact model forbids (must be 0).
    """
    contexts: dict[tuple, Counter] = {}
    for (v, x), c in first.items():
        contexts.setdefault((None, v), Counter())[x] += c
    for (t, v, x), c in later.items():
        contexts.setdefault((t, v), Counter())[x] += c
    stat, dof, forbidden = 0.0, 0, 0
    for (t, v), counts in contexts.items():
        probs = exact_next(g, p, q, t, v)
        forbidden += sum(c for x, c in counts.items() if x not in probs)
        n = sum(counts.values())
        stat += sum((counts.get(x, 0) - n * pr) ** 2 / (n * pr) for x, pr in probs.items())
        dof += len(probs) - 1
    return stat, dof, forbidden


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
@pytest.mark.parametrize(("p", "q"), PQ)
def test_walks_follow_node2vec_transition_probabilities_exactly(p, q, weighted):
    g = graph_from_edges(WEIGHTED if weighted else [e[:2] for e in WEIGHTED])
    walks = walk_indices(g, walk_length=30, num_walks=2500, p=p, q=q, seed=11)
    first, later = transition_counts(walks)
    stat, dof, forbidden = chi_square(g, first, later, p, q)
    assert forbidden == 0
    assert sum(later.values()) == 8 * 2500 * 28
    assert chi2.sf(stat, dof) > 1e-3, (stat, dof)
    # the test has power: the same counts against other parameters are rejected outright
    wrong = (1.0, 1.0) if (p, q) != (1.0, 1.0) else (0.5, 2.0)
    stat_wrong, _, _ = chi_square(g, first, later, *wrong)
    assert chi2.sf(stat_wrong, dof) < 1e-12


@pytest.mark.parametrize(("p", "q"), PQ[1:])
def test_directed_walks_follow_node2vec_with_t_to_x_as_the_common_neighbour(p, q):
    g = graph_from_edges(DIRECTED, directed=True)
    walks = walk_indices(g, walk_length=20, num_walks=4000, p=p, q=q, seed=3)
    first, later = transition_counts(walks)
    stat, dof, forbidden = chi_square(g, first, later, p, q)
    assert forbidden == 0 and chi2.sf(stat, dof) > 1e-3, (stat, dof)
    # walks stop at the sink and are padded with -1 after it
    s = g.index("s")
    lengths = (walks >= 0).sum(axis=1)
    short = lengths < 20
    assert short.sum() > 1000 and (walks[short, lengths[short] - 1] == s).all()
    assert ((walks[:, 1:] >= 0) <= (walks[:, :-1] >= 0)).all()


def test_every_step_is_an_edge_and_every_node_starts_each_round():
    g = graph_from_edges(WEIGHTED)
    walks = walk_indices(g, walk_length=12, num_walks=5, p=0.5, q=2.0, seed=0)
    assert walks.shape == (5 * 8, 12) and walks.dtype == np.int32 and (walks >= 0).all()
    for r in range(5):
        assert sorted(walks[r * 8:(r + 1) * 8, 0].tolist()) == list(range(8))
    edges = set(zip((np.repeat(np.arange(8), np.diff(g.indptr))).tolist(), g.indices.tolist()))
    steps = set(zip(walks[:, :-1].ravel().tolist(), walks[:, 1:].ravel().tolist()))
    assert steps <= edges


def test_walks_are_deterministic_for_a_seed_and_names_match_indices():
    g = graph_from_edges(WEIGHTED)
    a = walk_indices(g, walk_length=10, num_walks=3, p=0.25, q=4, seed=42)
    b = walk_indices(g, walk_length=10, num_walks=3, p=0.25, q=4, seed=42)
    c = walk_indices(g, walk_length=10, num_walks=3, p=0.25, q=4, seed=43)
    assert a.tobytes() == b.tobytes() and not np.array_equal(a, c)
    names = random_walks(g, walk_length=10, num_walks=3, p=0.25, q=4, seed=42)
    assert names == [[g.nodes[i] for i in row] for row in a.tolist()]


def test_walk_progress_and_batches_of_rounds():
    g = graph_from_edges(WEIGHTED)
    calls = []
    walk_indices(g, walk_length=3, num_walks=4, seed=0, progress=lambda *a: calls.append(a))
    assert calls == [("walk", 4, 4)]  # 8 nodes: all rounds in one batch
    big = graph_from_edges([(i, i + 1) for i in range(BATCH_WALKS // 2 + 1)])
    calls.clear()
    walk_indices(big, walk_length=2, num_walks=3, seed=0, progress=lambda *a: calls.append(a))
    assert calls == [("walk", 1, 3), ("walk", 2, 3), ("walk", 3, 3)]


def test_walk_length_one_and_isolated_starts():
    g = graph_from_edges([("a", "b")], nodes=["a", "b", "z"])
    w = walk_indices(g, walk_length=4, num_walks=2, seed=0)
    z = g.index("z")
    assert ((w[:, 0] == z) == (w[:, 1] < 0)).all() and (w[w[:, 0] == z, 1:] == -1).all()
    assert walk_indices(g, walk_length=1, num_walks=1).shape == (3, 1)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"walk_length": 0}, "walk_length must be a positive integer, not 0"),
    ({"num_walks": 2.5}, "num_walks must be a positive integer, not 2.5"),
    ({"p": 0}, "p must be a positive number, not 0"),
    ({"q": float("nan")}, "q must be a positive number, not nan"),
    ({"seed": -1}, "seed must be an integer from 0 to 2**32 - 1, not -1"),
    ({"progress": "yes"}, "progress must be a callable(phase, done, total) or None, not 'yes'"),
])
def test_bad_walk_parameters_are_one_line_errors(kwargs, message):
    g = graph_from_edges(WEIGHTED)
    with pytest.raises(InputError) as e:
        walk_indices(g, **kwargs)
    assert str(e.value) == message
    with pytest.raises(InputError, match="expected a Graph"):
        random_walks([("a", "b")])


# ----------------------------------------------------------------------------------------------- training
SMALL = {"dimensions": 8, "walk_length": 20, "num_walks": 4, "window": 4, "p": 0.5, "q": 2.0, "seed": 7}


def test_train_keys_recipe_and_progress():
    import gensim

    g = graph_from_edges(WEIGHTED)
    calls = []
    r = train_node2vec(g, epochs=3, progress=lambda *a: calls.append(a), **SMALL)
    assert r.method == "node2vec" and r.keys == g.nodes and r.vectors.shape == (8, 8)
    assert r.vectors.dtype == np.float32 and not r.vectors.flags.writeable
    assert calls == [("walk", 4, 4), ("train", 0, 3), ("train", 1, 3), ("train", 2, 3), ("train", 3, 3)]
    rec = r.recipe
    assert {k: rec["params"][k] for k in ("walk_length", "num_walks", "p", "q", "vector_size", "window", "epochs",
                                          "negative", "min_count", "sample", "seed", "sg")} == {
        "walk_length": 20, "num_walks": 4, "p": 0.5, "q": 2.0, "vector_size": 8, "window": 4, "epochs": 3,
        "negative": 5, "min_count": 0, "sample": 1e-3, "seed": 7, "sg": 1}
    assert rec["graph_fingerprint"] == rec["corpus_fingerprint"] == g.fingerprint
    assert rec["graph"] == g.to_dict() and rec["walks"]["walks"] == 32 and rec["walks"]["tokens"] == 32 * 20
    assert rec["workers"] == 1 and rec["deterministic"] is True
    assert rec["gensim_version"] == gensim.__version__ and rec["numpy_version"] == np.__version__
    assert int(r.counts.sum()) == 32 * 20 and r.info["unwalked"] == 0 and r.info["dropped"] == 0
    # the model bytes hold the same vectors, under the node names
    m = r.load_model()
    assert np.array_equal(m.wv[list(g.nodes)], r.vectors)


def test_one_worker_and_a_seed_give_bit_identical_vectors_and_another_seed_does_not():
    g = graph_from_edges(WEIGHTED)
    a = train_node2vec(g, **SMALL)
    b = train_node2vec(g, **SMALL)
    c = train_node2vec(g, **{**SMALL, "seed": 8})
    assert a.vectors.tobytes() == b.vectors.tobytes() and a.recipe == b.recipe
    assert not np.array_equal(a.vectors, c.vectors)


def test_vectors_are_the_same_in_another_process_with_another_hash_seed(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("".join(f"{s}\t{t}\t{w}\n" for s, t, w in WEIGHTED), encoding="utf-8")
    script = textwrap.dedent(f"""
        import hashlib
        from repspace.engines.learn.graph import read_edges
        from repspace.engines.learn.node2vec import train_node2vec
        r = train_node2vec(read_edges({str(path)!r}), **{SMALL!r})
        print(hashlib.sha256(r.vectors.tobytes()).hexdigest())
    """)
    here = hashlib.sha256(train_node2vec(read_edges(path), **SMALL).vectors.tobytes()).hexdigest()
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True,
                         cwd=Path(__file__).parent)
    assert out.stdout.strip() == here


def test_isolated_nodes_are_refused_and_min_count_can_drop_nodes():
    g = graph_from_edges([("a", "b"), ("b", "c")], nodes=["a", "b", "c", "x", "y"])
    with pytest.raises(InputError) as e:
        train_node2vec(g)
    assert str(e.value) == ("node2vec cannot place isolated nodes (no edge): 'x', 'y' (2 of 5 nodes); "
                            "leave them out of the node list")
    star = graph_from_edges([("hub", i) for i in range(6)] + [(0, 1)])
    seen = Counter(walk_indices(star, walk_length=5, num_walks=2, seed=0).ravel().tolist())
    least = min(seen.values())
    kept = tuple(k for i, k in enumerate(star.nodes) if seen[i] > least)
    r = train_node2vec(star, dimensions=4, walk_length=5, num_walks=2, min_count=least + 1, seed=0)
    assert r.keys == kept and r.info["dropped"] == 7 - len(kept) > 0 and r.keys[0] == "hub"
    assert r.counts.tolist() == [seen[star.index(k)] for k in kept]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"dimensions": 0}, "dimensions must be a positive integer, not 0"),
    ({"min_count": -1}, "min_count must be a non-negative integer, not -1"),
    ({"walk_length": 10_001}, "walk_length 10001 is over 10,000, the longest sentence gensim trains on"),
    ({"workers": 0}, "workers must be a positive integer, not 0"),
    ({"sample": 1.5}, "sample must be a number in [0, 1), not 1.5"),
])
def test_bad_training_parameters_are_one_line_errors(kwargs, message):
    with pytest.raises(InputError) as e:
        train_node2vec(graph_from_edges(WEIGHTED), **kwargs)
    assert str(e.value) == message


# ------------------------------------------------------------------------------------------- karate club
def loo_accuracy(vectors: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """Leave-one-out accuracy of 1-NN (cosine) and of logistic regression."""
    from sklearn.linear_model import LogisticRegression

    x = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sim = x @ x.T
    np.fill_diagonal(sim, -np.inf)
    nn = float((labels[sim.argmax(axis=1)] == labels).mean())
    hits = 0
    for i in range(len(labels)):
        rest = np.arange(len(labels)) != i
        clf = LogisticRegression(max_iter=1000).fit(vectors[rest], labels[rest])
        hits += int(clf.predict(vectors[i:i + 1])[0] == labels[i])
    return nn, hits / len(labels)


@pytest.fixture(scope="module")
def karate(tmp_path_factory):
    """Zachary's karate club (1977) as a TSV edge file, read back, and each node's club."""
    import networkx as nx

    kc = nx.karate_club_graph()
    path = tmp_path_factory.mktemp("karate") / "karate.tsv"
    path.write_text("# Zachary's karate club\n" + "".join(f"{u}\t{v}\n" for u, v in kc.edges()), encoding="utf-8")
    g = read_edges(path)
    labels = np.array([kc.nodes[int(k)]["club"] for k in g.nodes])
    return g, labels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_karate_club_leave_one_out_accuracy(karate, seed):
    g, labels = karate
    assert (g.n_nodes, g.n_edges) == (34, 78) and sorted(Counter(labels).values()) == [17, 17]
    r = train_node2vec(g, dimensions=16, p=1.0, q=2.0, seed=seed)
    nn, lr = loo_accuracy(r.vectors, labels)
    # measured: 1-NN 0.97, 0.97, 0.94; logistic regression 0.97 for seeds 0-2
    assert nn >= 0.9 and lr >= 0.9, (nn, lr)


def test_karate_club_accuracy_falls_to_chance_with_shuffled_vectors(karate):
    g, labels = karate
    r = train_node2vec(g, dimensions=16, p=1.0, q=2.0, seed=0)
    rng = np.random.default_rng(0)
    scores = np.array([loo_accuracy(r.vectors[rng.permutation(34)], labels) for _ in range(5)])
    assert scores.mean() < 0.7, scores
