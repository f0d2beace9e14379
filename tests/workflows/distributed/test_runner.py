"""open_backend: the backend object a workflow passes down, from its name or as given (no Ray needed here)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from repspace import Store
from repspace.core.backend import LOCAL
from repspace.core.errors import InputError
from repspace.workflows.compare import compare_spaces
from repspace.workflows.diagnose import diagnose_space
from repspace.workflows.distributed import open_backend


class Counting:
    """A backend doing the local work and counting what it was handed."""

    name = "counting"

    def __init__(self) -> None:
        self.graphs = 0
        self.passes = 0

    def knn_graph(self, X, k, **options):
        self.graphs += 1
        return LOCAL.knn_graph(X, k, **options)

    def accumulate(self, X, Y, plan):
        self.passes += 1
        return LOCAL.accumulate(X, Y, plan)


def test_names_and_objects():
    with open_backend() as b:
        assert b is LOCAL
    given = Counting()
    with open_backend(given) as b:
        assert b is given
    with pytest.raises(InputError, match="the backend must be one of local, ray, not 'spark'"), open_backend("spark"):
        pass
    with pytest.raises(InputError, match="--ray-address goes with --backend ray"), open_backend("local", "h:1"):
        pass
    with pytest.raises(InputError, match="--ray-address goes with --backend ray"), open_backend(given, "h:1"):
        pass


def test_workflows_pass_a_given_backend_down(tmp_path):
    x = np.random.default_rng(0).standard_normal((200, 8))
    store = Store(os.path.join(tmp_path, "s.db"))
    ids = [f"i{j}" for j in range(200)]
    a = store.create_space("a", dim=8)
    a.add(ids, x)
    b = store.create_space("b", dim=8)
    b.add(ids, np.tanh(x))
    given = Counting()
    got = compare_spaces(a, b, measures=["cka_linear", "mutual_knn"], k=5, backend=given)
    want = compare_spaces(a, b, measures=["cka_linear", "mutual_knn"], k=5)
    assert (got.backend, want.backend) == ("counting", "local")
    assert got.comparison.scores() == want.comparison.scores()
    assert (given.passes, given.graphs) == (1, 2)
    given = Counting()
    assert diagnose_space(a, k=5, backend=given).to_dict() == diagnose_space(a, k=5).to_dict()
    assert given.graphs == 2 and given.passes == 0
