"""A sparse space searched through the library: the query forms, the index kept per generation, the request rules.

Scores are checked against scipy.sparse brute force over the rows as written (float64), ids by the
dense exact search's rule (score, then row).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps

from repspace.core.errors import InputError
from repspace.core.sparse import SparseRows
from repspace.workflows.search import SearchRequest, search_space, sparse_index

pytestmark = pytest.mark.numerics


def _rows(seed: int, n: int, n_features: int = 40) -> sps.csr_array:
    m = sps.random_array((n, n_features), density=0.15, format="csr", dtype=np.float32,
                         rng=np.random.default_rng(seed))
    m.data = (m.data + 0.05).astype(np.float32)
    m.sort_indices()
    return m


def _brute(X: sps.csr_array, q: np.ndarray, k: int) -> list[int]:
    s = X.astype(np.float64) @ q
    return np.lexsort((np.arange(len(s)), -s))[:k].tolist()


def test_the_index_follows_the_generation(store):
    sp = store.create_space("s", dim=40, metric="ip", layout="sparse")
    first = _rows(1, 200)
    sp.add([f"a{i}" for i in range(200)], first)
    q = np.zeros(40)
    q[[3, 9, 30]] = [1.0, 0.5, 2.0]
    assert [h.id for h in sp.search(q, k=5)] == [f"a{i}" for i in _brute(first, q, 5)]
    assert sparse_index(sp)[2] == "loaded"
    more = _rows(2, 100)
    sp.add([f"b{i}" for i in range(100)], more)
    sp.delete([f"a{i}" for i in range(0, 200, 2)])
    rows, index, action = sparse_index(sp)
    assert action == "built" and index.n == 200
    live = sps.vstack([first[1::2], more]).tocsr()
    ids = [f"a{i}" for i in range(1, 200, 2)] + [f"b{i}" for i in range(100)]
    res = search_space(sp, {"3": 1.0, "9": 0.5, "30": 2.0}, k=8)
    assert [h.id for h in res] == [ids[i] for i in _brute(live, q, 8)]
    np.testing.assert_allclose([h.score for h in res], np.sort(live.astype(np.float64) @ q)[::-1][:8], rtol=1e-6)


def test_token_queries_and_the_request_rules(store):
    sp = store.create_space("t", dim=3, metric="cosine", layout="sparse", features=["cat", "dog", "12"])
    sp.add(["x", "y"], SparseRows.from_pairs([([0, 2], [1.0, 1.0]), ([1], [4.0])], 3))
    assert [h.id for h in sp.search({"12": 1.0}, k=1)] == ["x"]  # a token, though it reads as a number
    assert [h.id for h in sp.search(SearchRequest.of(None, sparse={"dog": 2.0}, k=1))] == ["y"]
    with pytest.raises(InputError, match="exactly one of text, vector, id, sparse"):
        SearchRequest.of({"cat": 1.0}, id="x")
    with pytest.raises(InputError, match="hybrid does not apply to sparse space"):
        sp.search(SearchRequest.of("cats", hybrid=True))
    dense = store.create_space("d", dim=3)
    dense.add(["a"], [[1.0, 0.0, 0.0]])
    with pytest.raises(InputError, match="a sparse query searches a sparse space"):
        dense.search({"0": 1.0})
    with pytest.raises(InputError, match="holds sparse vectors"):
        from repspace.workflows.search import knn

        knn(sp, np.ones((1, 3)), 1)


@pytest.mark.parametrize("names", [False, True])
def test_the_plain_map_path_answers_as_the_request_model(store, names):
    """A {feature: weight} map of text keys and Python numbers skips the request model (plain_sparse_query);
    every map gives what SearchRequest.of gives, and a map the plain path cannot take (numpy numbers, NaN,
    '²', a feature named twice, a zero or negative weight) gets the request model's answer or error."""
    from repspace.workflows.search.request import SearchRequest

    features = [f"t{j}" for j in range(40)] if names else None
    sp = store.create_space(f"plain-{names}", dim=40, metric="cosine", layout="sparse", features=features)
    X = _rows(5, 300)
    sp.add([f"a{i}" for i in range(300)], X)
    key = (lambda j: f"t{j}") if names else str
    maps = [{key(3): 1.0, key(9): 0.5, key(30): 2}, {key(7): 0.25}, {key(1): 1.0, key(2): 0.0},
            {key(4): -1.0, key(5): 1.0}, {key(6): np.float32(0.5)}, {key(8): float("nan")}, {"²": 1.0},
            {key(11): 1.0, "11": 2.0}, {"99": 1.0}, {}]
    for m in maps:
        got = want = None
        try:
            got = [(h.id, h.score) for h in sp.search(m, k=7)]
        except InputError as e:
            got = str(e)
        try:
            want = [(h.id, h.score) for h in search_space(sp, SearchRequest.of(m, k=7))]
        except InputError as e:
            want = str(e)
        assert got == want, m
