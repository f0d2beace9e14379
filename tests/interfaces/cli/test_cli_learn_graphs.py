"""``repspace learn poincare|node2vec`` end to end: learn, search, diagnose; bad edge lists as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_process import run

from repspace import Store


@pytest.fixture()
def db(tmp_path) -> str:
    return str(tmp_path / "s.db")


@pytest.fixture(scope="module")
def karate(tmp_path_factory) -> Path:
    import networkx as nx

    path = tmp_path_factory.mktemp("karate") / "karate.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in nx.karate_club_graph().edges()))
    return path


@pytest.fixture(scope="module")
def canines(tmp_path_factory) -> Path:
    from repspace.engines.learn.wordnet import hypernym_closure, wordnet_available

    if not wordnet_available():
        pytest.skip("WordNet is absent (/usr/share/wordnet: `make test` installs Debian's wordnet-base)")
    path = tmp_path_factory.mktemp("wn") / "canines.tsv"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in hypernym_closure("canine.n.02")))
    return path


@pytest.mark.parametrize("command", ["poincare", "node2vec"])
def test_help_has_examples(capsys, command):
    code, out, _ = run(capsys, "learn", command, "--help")
    assert code == 0 and "Examples:" in out and f"repspace learn {command}" in out


def test_poincare_learn_search_diagnose(capsys, db, canines):
    code, out, err = run(capsys, "--store", db, "learn", "poincare", str(canines), "--space", "dogs", "--dim", "5",
                         "--epochs", "10", "--burn-in", "2", "--seed", "1", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["metric"] == "poincare" and report["dim"] == 5 and report["recipe"]["encoder"] == "learn:poincare"
    code, out, err = run(capsys, "--store", db, "search", "dogs", "--id", "dog.n.01", "-k", "5", "--json")
    assert code == 0, err
    scores = [h["score"] for h in json.loads(out)]
    assert len(scores) == 5 and scores == sorted(scores)  # hyperbolic distances, nearest first
    code, out, err = run(capsys, "--store", db, "diagnose", "dogs", "-k", "5", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["metric"] == "poincare" and "undefined.isotropy" in d and "isotropy.mean_cosine" not in d
    code, out, err = run(capsys, "--store", db, "index", "build", "dogs", "hnsw16")
    assert code != 0 and err.count("\n") == 1 and "not defined for a poincare space" in err


def test_node2vec_learn_then_search(capsys, db, karate):
    code, out, err = run(capsys, "--store", db, "learn", "node2vec", str(karate), "--space", "club", "--dim", "8",
                         "--walk-length", "10", "--num-walks", "5", "--q", "0.5", "--seed", "2")
    assert code == 0, err
    assert "club: 34 nodes × 8 (cosine), 78 edges, p=1, q=0.5, seed 2" in err
    code, out, err = run(capsys, "--store", db, "search", "club", "--id", "33", "-k", "3", "--json")
    assert code == 0 and len(json.loads(out)) == 3


@pytest.mark.parametrize("lines, message", [
    ("0\t1\n1\t1\n", "e.tsv:2: self-loop"),
    ("0\t1\n1\t2\tx\n", "e.tsv:2:"),
    ("", "no edge"),
])
def test_bad_edge_lists_are_one_line_and_store_nothing(capsys, db, tmp_path, lines, message):
    path = tmp_path / "e.tsv"
    path.write_text(lines)
    for command in ("node2vec", "poincare"):
        code, out, err = run(capsys, "--store", db, "learn", command, str(path), "--space", "g")
        assert code == 2 and err.count("\n") == 1 and message in err, err
    assert Store(db).spaces() == []


def test_unknown_node_with_a_node_list(capsys, db, tmp_path, karate):
    nodes = tmp_path / "nodes.txt"
    nodes.write_text("\n".join(str(i) for i in range(30)))
    code, _, err = run(capsys, "--store", db, "learn", "node2vec", str(karate), "--space", "g", "--nodes", str(nodes))
    assert code == 2 and "unknown node" in err and err.count("\n") == 1
    assert Store(db).spaces() == []


def test_poincare_from_a_wordnet_synset(capsys, db, canines):
    code, out, err = run(capsys, "--store", db, "learn", "poincare", "wordnet:feline.n.01", "--space", "cats",
                         "--dim", "3", "--epochs", "2", "--burn-in", "1", "--json")
    assert code == 0, err
    edges = json.loads(out)["recipe"]["edges"]
    assert edges["wordnet"] == "feline.n.01" and edges["nodes"] == 60 and edges["edges"] == 169
    code, _, err = run(capsys, "--store", db, "learn", "poincare", "wordnet:nosuch.n.01", "--space", "x")
    assert code == 2 and err.count("\n") == 1 and "nosuch.n.01" in err
    assert [i.name for i in Store(db).spaces()] == ["cats"]
