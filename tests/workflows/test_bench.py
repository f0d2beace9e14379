"""``repspace bench search``: recall against exact search on the user's own space, through the real knn path."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from repspace import InputError
from repspace.interfaces.cli import main
from repspace.workflows.bench import bench_search
from repspace.workflows.search import knn

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


@pytest.fixture()
def space(store):
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((30, 24)) * 2
    x = (centers[rng.integers(0, 30, 3000)] + rng.standard_normal((3000, 24))).astype(np.float32)
    sp = store.create_space("v", dim=24)
    sp.add([f"i{i}" for i in range(3000)], x, metadata=[{"g": i % 10} for i in range(3000)])
    return sp


def _nearest_others(x: np.ndarray, k: int) -> np.ndarray:
    """For each row of ``x``, the positions of its ``k`` nearest *other* rows by cosine (numpy, float64)."""
    unit = x.astype(np.float64) / np.linalg.norm(x.astype(np.float64), axis=1, keepdims=True)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)  # a query is not its own neighbour
    return np.argsort(-sims, axis=1, kind="stable")[:, :k]


def _returned_others(space, x: np.ndarray, rows: np.ndarray, spec: str, k: int) -> list[np.ndarray]:
    """What ``spec`` returns for each stored vector as a query, its own row dropped, first ``k``."""
    found = knn(space, x, k + 1, index=spec).rows
    return [f[(f != own) & (f >= 0)][:k] for f, own in zip(found, rows)]


def _mean_recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(np.mean([len(set(f.tolist()) & set(t.tolist())) / len(t) for f, t in zip(found, truth)]))


def test_exact_is_perfect_and_approximate_specs_are_measured_honestly(space):
    t0 = time.perf_counter()
    b = bench_search(space, ["exact", "hnsw16", "binary>rescore2", "int8>rescore4"], queries=100)
    elapsed = time.perf_counter() - t0
    got = {r.spec: r for r in b.results}
    assert b.n_queries == 100 and b.count == 3000 and b.dim == 24
    assert got["exact"].recall == 1.0 and got["exact"].memory_bytes is None
    assert got["int8>rescore4"].recall >= 0.95 and got["hnsw16"].recall >= 0.9
    # Binary codes of 24 bits with a small shortlist really lose neighbours: the figure is not flattered.
    assert got["binary>rescore2"].recall < got["int8>rescore4"].recall
    # The timed batches and the builds all ran inside this call: the time the figures stand for
    # (n_queries / qps per spec, plus build_s) cannot exceed the call's wall time.
    assert all(math.isfinite(r.qps) and r.qps > 0 and r.build_s >= 0 for r in b.results)
    assert sum(b.n_queries / r.qps + r.build_s for r in b.results) <= elapsed
    # Memory of the funnels, from their sizes: one bit per dimension (24 bits: 3 bytes) or one byte per
    # dimension per vector, plus an 8-byte row label each; int8 also keeps a (min, range) float32 pair per dimension.
    assert got["binary>rescore2"].memory_bytes == 3000 * (24 // 8 + 8)
    assert got["int8>rescore4"].memory_bytes == 3000 * (24 + 8) + 2 * 24 * 4
    assert got["hnsw16"].action == "built" and got["hnsw16"].memory_bytes > 0
    again = {r.spec: r for r in bench_search(space, ["hnsw16"], queries=100).results}
    assert again["hnsw16"].action == "loaded" and again["hnsw16"].build_s == 0.0


def test_a_query_never_counts_itself(space):
    rows, x = space.rows_and_vectors()
    truth = rows[_nearest_others(x, 1)]  # the nearest *other* item, by brute force
    # Every stored vector is a query (queries >= count), so the sample is the whole space, in row order.
    b = bench_search(space, ["exact", "binary>rescore2"], queries=len(rows), k=1)
    assert b.n_queries == len(rows)
    exact, binary = b.results
    assert exact.recall == 1.0
    # exact search itself finds the brute-force nearest other item
    assert _mean_recall(_returned_others(space, x, rows, "exact", 1), truth) == 1.0
    # binary codes find a query's own row first (Hamming distance 0, then cosine 1): counted, that row would
    # make every query a hit. The reported figure is the independent one, well below 1.
    independent = _mean_recall(_returned_others(space, x, rows, "binary>rescore2", 1), truth)
    assert binary.recall == pytest.approx(independent, abs=1e-3)
    assert binary.recall < 0.95


def test_recall_equals_a_recomputation_from_the_returned_neighbours(space):
    k = 10
    rows, x = space.rows_and_vectors()
    truth = rows[_nearest_others(x, k)]
    b = bench_search(space, ["hnsw16", "binary>rescore2", "int8>rescore4"], queries=len(rows), k=k)
    for r in b.results:
        # abs: float32 search and float64 brute force may order a near-tie at rank k differently
        assert r.recall == pytest.approx(_mean_recall(_returned_others(space, x, rows, r.spec, k), truth), abs=1e-3)
    assert min(r.recall for r in b.results) < 0.95  # at least one figure that a perfect score would not match


def test_filtered_bench_reports_the_planner(space):
    """A selective filter is searched exactly over its matches even with a named index; the bench says so."""
    (r,) = bench_search(space, ["hnsw16"], queries=50, where="g = 3").results
    assert r.recall == 1.0 and r.plan == "exact"


def test_cli_json_and_errors(capsys, space, store):
    code = main(["--store", str(store.path), "bench", "search", "v", "--spec", "exact", "--queries", "10", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["results"][0]["spec"] == "exact" and out["n_queries"] == 10
    code = main(["--store", str(store.path), "bench", "search", "v", "--spec", "hnsw1"])
    assert code == 2 and capsys.readouterr().err.startswith("error: ")
    with pytest.raises(InputError):
        bench_search(space, [])
