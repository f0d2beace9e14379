"""``repspace bench search``: recall against exact search on the user's own space, through the real knn path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repspace import InputError
from repspace.workflows.bench import bench_search
from repspace.interfaces.cli import main


@pytest.fixture()
def space(store):
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((30, 24)) * 2
    x = (centers[rng.integers(0, 30, 3000)] + rng.standard_normal((3000, 24))).astype(np.float32)
    sp = store.create_space("v", dim=24)
    sp.add([f"i{i}" for i in range(3000)], x, metadata=[{"g": i % 10} for i in range(3000)])
    return sp


def test_exact_is_perfect_and_approximate_specs_are_measured_honestly(space):
    b = bench_search(space, ["exact", "hnsw16", "binary>rescore2", "int8>rescore4"], queries=100)
    got = {r.spec: r for r in b.results}
    assert got["exact"].recall == 1.0 and got["exact"].memory_bytes is None
    assert got["int8>rescore4"].recall >= 0.95 and got["hnsw16"].recall >= 0.9
    # Binary codes of 24 bits with a small shortlist really lose neighbours: the figure is not flattered.
    assert got["binary>rescore2"].recall < got["int8>rescore4"].recall
    assert all(r.qps > 0 for r in b.results)
    assert got["hnsw16"].action == "built" and got["hnsw16"].memory_bytes > 0
    again = {r.spec: r for r in bench_search(space, ["hnsw16"], queries=100).results}
    assert again["hnsw16"].action == "loaded" and again["hnsw16"].build_s == 0.0


def test_a_query_never_counts_itself(space):
    (r,) = bench_search(space, ["exact"], queries=50, k=1).results
    assert r.recall == 1.0  # the nearest *other* item, found by the same exact search


def test_filtered_bench_reports_the_planner(space):
    (r,) = bench_search(space, ["hnsw16"], queries=50, where="g = 3").results
    assert r.recall >= 0.9 and r.plan == "hnsw"


def test_cli_json_and_errors(capsys, space, store):
    code = main(["--store", str(store.path), "bench", "search", "v", "--spec", "exact", "--queries", "10", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["results"][0]["spec"] == "exact" and out["n_queries"] == 10
    code = main(["--store", str(store.path), "bench", "search", "v", "--spec", "hnsw1"])
    assert code == 2 and capsys.readouterr().err.startswith("error: ")
    with pytest.raises(InputError):
        bench_search(space, [])
