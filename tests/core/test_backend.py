"""The explicit backend of the two heavy kernels: the kNN graph and the moment pass.

``knn_graph`` and ``moments`` hand their work to the backend they are given (``None``: this process), and
nothing in core chooses one through a context variable set elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import repspace.core
from repspace.core.backend import LOCAL, Backend, LocalBackend
from repspace.core.knn import knn_graph, local_graph
from repspace.core.moments import accumulate, add_sums, moments
from repspace.engines.compare import cka_linear, compare, mutual_knn, procrustes, svcca
from repspace.engines.geometry import diagnose, hubness, intrinsic_dimension


class Recording:
    """A backend that does the local work in two shards of rows and records every call."""

    name = "recording"

    def __init__(self) -> None:
        self.graphs: list[tuple[int, int, str, bool | None]] = []
        self.passes: list[int] = []

    def knn_graph(self, X, k, *, metric, exact, recall_sample, seed):
        self.graphs.append((len(X), k, metric, exact))
        return local_graph(X, k, metric=metric, exact=exact, recall_sample=recall_sample, seed=seed)

    def accumulate(self, X, Y, plan):
        self.passes.append(len(X))
        half = len(X) // 2
        return add_sums(accumulate(X[:half], Y[:half], plan), accumulate(X[half:], Y[half:], plan))


def test_no_context_variable_in_core():
    sources = sorted(Path(repspace.core.__file__).parent.rglob("*.py"))
    assert sources
    assert [str(p) for p in sources if "ContextVar" in p.read_text(encoding="utf-8")] == []


def test_local_is_the_default_and_a_backend():
    assert isinstance(LOCAL, LocalBackend) and LOCAL.name == "local"
    assert isinstance(LOCAL, Backend) and isinstance(Recording(), Backend)
    X = np.random.default_rng(0).standard_normal((60, 4))
    a, b = knn_graph(X, 5), knn_graph(X, 5, backend=LOCAL)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.distances, b.distances)
    assert moments(X, X, backend=LOCAL).cxx.tolist() == moments(X, X).cxx.tolist()


def test_the_graph_is_checked_before_the_backend_sees_it():
    from repspace.core.errors import InputError

    rec = Recording()
    with pytest.raises(InputError, match="at least 6 items"):
        knn_graph(np.eye(5), 5, backend=rec)
    with pytest.raises(InputError, match="NaN"):
        knn_graph(np.full((10, 2), np.nan), 3, backend=rec)
    ball = np.random.default_rng(0).uniform(-0.3, 0.3, size=(20, 2))
    assert knn_graph(ball, 3, metric="poincare", backend=rec).method == "exact"  # always scanned here
    assert rec.graphs == []


def test_engines_pass_the_backend_down_to_both_kernels():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 6))
    Y = np.tanh(X @ rng.standard_normal((6, 5)))
    rec = Recording()
    assert cka_linear(X, Y, backend=rec) == pytest.approx(cka_linear(X, Y), rel=1e-12)
    assert procrustes(X, Y, backend=rec) == pytest.approx(procrustes(X, Y), rel=1e-12)
    assert svcca(X, Y, backend=rec).value == pytest.approx(svcca(X, Y).value, rel=1e-12)
    assert mutual_knn(X, Y, k=5, backend=rec).value == mutual_knn(X, Y, k=5).value
    assert rec.passes == [200, 200, 200] and rec.graphs == [(200, 5, "cosine", None)] * 2
    rec = Recording()
    got = compare(X, Y, ["cka_linear", "neighbourhood_jaccard"], k=5, backend=rec).scores()
    want = compare(X, Y, ["cka_linear", "neighbourhood_jaccard"], k=5).scores()
    assert got == pytest.approx(want, rel=1e-12)
    assert len(rec.passes) == 1 and len(rec.graphs) == 2


def test_geometry_passes_the_backend_down():
    X = np.random.default_rng(1).standard_normal((300, 5))
    rec = Recording()
    np.testing.assert_array_equal(hubness(X, k=5, metric="l2", backend=rec).k_occurrence,
                                  hubness(X, k=5, metric="l2").k_occurrence)
    assert intrinsic_dimension(X, backend=rec).twonn == intrinsic_dimension(X).twonn
    assert [g[:3] for g in rec.graphs] == [(300, 5, "l2"), (300, 20, "l2")]
    rec = Recording()
    assert diagnose(X, k=5, backend=rec).to_dict() == diagnose(X, k=5).to_dict()
    assert len(rec.graphs) == 2  # hubness' cosine graph and intrinsic dimension's Euclidean one
