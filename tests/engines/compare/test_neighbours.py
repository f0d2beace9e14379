"""repspace.engines.compare.neighbours against brute-force neighbour lists, the platonic-rep formula, HNSW and GloVe."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.compare import changed_items, mutual_knn, neighbourhood_jaccard

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def brute_knn(X: np.ndarray, k: int) -> np.ndarray:
    """Cosine neighbours by an explicit n × n matrix, self excluded, ties to the lower row."""
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    U = np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(len(X)), S.shape), -S), axis=-1)
    return order[:, :k]


def platonic_mutual_knn(A: np.ndarray, B: np.ndarray, k: int) -> float:
    """minyoungg/platonic-rep's ``mutual_knn`` (normalised features, diagonal excluded, n × n masks), in numpy."""
    def nn(F: np.ndarray) -> np.ndarray:
        F = F / np.linalg.norm(F, axis=1, keepdims=True)
        G = F @ F.T
        np.fill_diagonal(G, -1e8)
        return np.argsort(-G, axis=1, kind="stable")[:, :k]

    ka, kb = nn(A), nn(B)
    n = len(A)
    ma, mb = np.zeros((n, n)), np.zeros((n, n))
    ma[np.arange(n)[:, None], ka] = 1.0
    mb[np.arange(n)[:, None], kb] = 1.0
    return float(((ma * mb).sum(axis=1) / k).mean())


def related(n: int, d: int, noise: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X + noise * rng.standard_normal((n, d))


@pytest.mark.parametrize(("n", "d", "k"), [(200, 8, 10), (50, 3, 1), (12, 30, 11)])
def test_mutual_knn_equals_brute_force_and_platonic(n: int, d: int, k: int) -> None:
    X, Y = related(n, d, 0.5)
    ix, iy = brute_knn(X, k), brute_knn(Y, k)
    expected = np.mean([len(set(a) & set(b)) / k for a, b in zip(ix.tolist(), iy.tolist())])
    r = mutual_knn(X, Y, k=k)
    assert r.value == pytest.approx(expected, abs=1e-12)
    assert r.value == pytest.approx(platonic_mutual_knn(X, Y, k), abs=1e-12)
    assert r.k == k and r.overlap.shape == (n,)
    assert r.knn["method"] == "exact" and r.knn["recall"] is None


def test_jaccard_per_item_equals_sets() -> None:
    X, Y = related(150, 6, 0.8, seed=2)
    ix, iy = brute_knn(X, 7), brute_knn(Y, 7)
    expected = [len(set(a) & set(b)) / len(set(a) | set(b)) for a, b in zip(ix.tolist(), iy.tolist())]
    r = neighbourhood_jaccard(X, Y, k=7)
    np.testing.assert_allclose(r.per_item, expected, atol=1e-15)
    assert r.value == pytest.approx(np.mean(expected))
    d = r.to_dict(per_item=True)
    assert d["median"] == pytest.approx(np.median(expected)) and d["min"] == pytest.approx(min(expected))
    assert len(d["per_item"]) == 150 and "per_item" not in r.to_dict()


def test_identical_rotated_scaled_spaces_score_one() -> None:
    X, _ = related(300, 10, 0.0)
    Q, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((10, 10)))
    for Y in (X, X @ Q, 3.0 * X, X[:, ::-1], np.hstack([X, np.zeros((300, 4))])):
        assert mutual_knn(X, Y).value == 1.0
        assert neighbourhood_jaccard(X, Y).per_item.min() == 1.0
    assert mutual_knn(X, X + 2.0).value < 0.9  # cosine neighbours move under translation


def test_symmetric() -> None:
    X, Y = related(120, 5, 1.0)
    assert mutual_knn(X, Y).value == mutual_knn(Y, X).value
    np.testing.assert_array_equal(neighbourhood_jaccard(X, Y).per_item, neighbourhood_jaccard(Y, X).per_item)


def test_changed_items_lists_the_lowest_jaccard_with_old_and_new_neighbours() -> None:
    X, Y = related(100, 6, 0.6, seed=4)
    k = 5
    r = changed_items(X, Y, k=k, top=8)
    jac = neighbourhood_jaccard(X, Y, k=k).per_item
    expected_rows = np.lexsort((np.arange(100), jac))[:8].tolist()
    assert [c.row for c in r] == expected_rows
    ix, iy = brute_knn(X, k), brute_knn(Y, k)
    for c in r:
        assert c.jaccard == pytest.approx(jac[c.row])
        assert list(c.neighbours_x) == ix[c.row].tolist() and list(c.neighbours_y) == iy[c.row].tolist()
        assert set(c.lost) == set(c.neighbours_x) - set(c.neighbours_y)
        assert set(c.gained) == set(c.neighbours_y) - set(c.neighbours_x)
        assert len(c.lost) == len(c.gained)
    d = r.to_dict()
    assert d["k"] == k and len(d["items"]) == 8 and d["items"][0]["row"] == expected_rows[0]
    assert len(changed_items(X, Y, k=k, top=1000)) == 100
    with pytest.raises(InputError, match="top"):
        changed_items(X, Y, top=0)


def test_degenerate() -> None:
    X, Y = related(11, 4, 0.5)
    with pytest.raises(InputError, match="needs at least 11 items"):
        mutual_knn(X[:10], Y[:10], k=10)
    with pytest.raises(InputError, match="X has 11 rows and Y has 10"):
        neighbourhood_jaccard(X, Y[:10], k=3)
    with pytest.raises(InputError, match="k must be"):
        mutual_knn(X, Y, k=0)
    # constant space: every cosine ties, neighbours are the lowest rows; a defined value
    r = mutual_knn(np.ones((11, 3)), np.ones((11, 3)), k=3)
    assert r.value == 1.0
    assert 0.0 <= mutual_knn(np.ones((11, 3)), Y, k=3).value <= 1.0
    # duplicated rows and zero rows: ties go to the lower row in both spaces, so identical spaces give 1
    D = np.vstack([X, X, np.zeros((2, 4))])
    assert mutual_knn(D, D.copy(), k=4).value == 1.0
    assert np.isfinite(mutual_knn(D, np.vstack([Y, Y, Y[:2]]), k=4).value)
    # n < d and zero-variance columns
    W = np.hstack([related(15, 40, 0.0)[0], np.full((15, 3), 2.0)])
    assert 0.0 <= mutual_knn(W, W[:, ::-1] ** 3, k=3).value <= 1.0


def test_hnsw_graphs_report_recall(glove_vectors) -> None:
    X = np.array(glove_vectors[:2000])
    Y = X + 0.3 * np.random.default_rng(0).standard_normal(X.shape).astype(np.float32)
    exact = mutual_knn(X, Y, k=10)
    approx = mutual_knn(X, Y, k=10, exact=False)
    assert approx.knn["method"] == "hnsw"
    assert approx.knn["recall"] >= 0.95 and approx.knn["recall_sample"] == 1000
    assert approx.knn["recall"] == min(approx.knn["recall_x"], approx.knn["recall_y"])
    assert approx.value == pytest.approx(exact.value, abs=0.03)
    assert approx.to_dict()["knn"]["recall"] == approx.knn["recall"]


def test_glove_rotation_and_noise(glove_vectors) -> None:
    X = np.array(glove_vectors[:2000], dtype=np.float64)
    Q, _ = np.linalg.qr(np.random.default_rng(7).standard_normal((50, 50)))
    assert mutual_knn(X, X @ Q).value >= 0.999  # equal up to neighbours tied within float32 rounding
    rng = np.random.default_rng(0)
    values = [mutual_knn(X, X + s * rng.standard_normal(X.shape)).value for s in (0.05, 0.3, 1.0)]
    assert values[0] > values[1] > values[2] > 10 / 1999
