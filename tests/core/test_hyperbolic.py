"""Poincare-ball math: the identities of exp/log/Mobius addition, the distance's metric axioms, exact search."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.core.hyperbolic import (
    check_ball,
    exp_map,
    log_map,
    mobius_add,
    pairwise_poincare,
    poincare_distance,
    poincare_search,
    project,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def ball_points(rng: np.random.Generator, n: int, d: int, max_norm: float = 0.95, c: float = 1.0) -> np.ndarray:
    """Random points with norms spread over (0, max_norm / sqrt(c))."""
    x = rng.standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x * rng.uniform(0, max_norm, (n, 1)) / np.sqrt(c)


@pytest.mark.parametrize("c", [1.0, 0.5, 2.0])
def test_log_inverts_exp_at_the_origin_and_at_any_point(c):
    rng = np.random.default_rng(0)
    v = rng.standard_normal((200, 5)) * rng.uniform(0, 1, (200, 1))
    np.testing.assert_allclose(log_map(exp_map(v, c=c), c=c), v, rtol=1e-9, atol=1e-11)
    x = ball_points(rng, 200, 5, 0.9, c)
    lam = 2 / (1 - c * (x * x).sum(1))
    # Steps of geodesic length lambda_x |v| up to ~8: beyond ~30, tanh rounds to 1 and exp_x lands on the boundary.
    v = v / lam[:, None]
    np.testing.assert_allclose(log_map(exp_map(v, x, c=c), x, c=c), v, rtol=1e-8, atol=1e-10)
    y = ball_points(rng, 200, 5, 0.9, c)
    np.testing.assert_allclose(exp_map(log_map(y, x, c=c), x, c=c), y, rtol=1e-8, atol=1e-10)
    # Distance from x to exp_x(v) is lambda_x |v|; at the origin |log_0(y)| = d(0, y) / 2.
    np.testing.assert_allclose(poincare_distance(x, exp_map(v, x, c=c), c=c), lam * np.linalg.norm(v, axis=1),
                               rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(log_map(y, c=c), axis=1),
                               poincare_distance(np.zeros(5), y, c=c) / 2, rtol=1e-10)


@pytest.mark.parametrize("c", [1.0, 0.3])
def test_distance_equals_twice_artanh_of_the_mobius_difference(c):
    rng = np.random.default_rng(1)
    x, y = ball_points(rng, 500, 4, 0.99, c), ball_points(rng, 500, 4, 0.99, c)
    w = np.linalg.norm(mobius_add(-x, y, c=c), axis=1)
    np.testing.assert_allclose(poincare_distance(x, y, c=c), 2 / np.sqrt(c) * np.arctanh(np.sqrt(c) * w),
                               rtol=1e-8)


def test_mobius_addition_identities():
    rng = np.random.default_rng(2)
    x, y = ball_points(rng, 100, 3), ball_points(rng, 100, 3)
    zero = np.zeros(3)
    np.testing.assert_allclose(mobius_add(x, zero), x, rtol=0, atol=0)
    np.testing.assert_allclose(mobius_add(zero, x), x, rtol=1e-15, atol=1e-16)
    np.testing.assert_allclose(mobius_add(-x, x), np.zeros_like(x), atol=1e-15)
    # Left cancellation: (-x) ⊕ (x ⊕ y) = y.
    np.testing.assert_allclose(mobius_add(-x, mobius_add(x, y)), y, rtol=1e-9, atol=1e-12)
    # Collinear points add like velocities: tanh(a) ⊕ tanh(b) = tanh(a + b).
    np.testing.assert_allclose(mobius_add([np.tanh(0.4), 0.0], [np.tanh(0.9), 0.0]), [np.tanh(1.3), 0.0])
    assert np.all(np.linalg.norm(mobius_add(x, y), axis=1) < 1)


def test_distance_is_a_metric_and_matches_the_closed_form():
    rng = np.random.default_rng(3)
    a, b, c = (ball_points(rng, 2000, 6, 0.999) for _ in range(3))
    dab, dba = poincare_distance(a, b), poincare_distance(b, a)
    np.testing.assert_array_equal(dab, dba)
    assert np.all(dab > 0) and np.all(poincare_distance(a, a) == 0)
    assert np.all(dab <= poincare_distance(a, c) + poincare_distance(c, b) + 1e-9)
    naive = np.arccosh(1 + 2 * ((a - b) ** 2).sum(1) / ((1 - (a * a).sum(1)) * (1 - (b * b).sum(1))))
    np.testing.assert_allclose(dab, naive, rtol=1e-9)
    # Close points keep their distance (arccosh(1 + z) would round it away): ~2 |u - v| / (1 - |u|^2).
    u = np.array([0.3, 0.4])
    assert float(poincare_distance(u, u + [1e-12, 0])) == pytest.approx(2e-12 / 0.75, rel=1e-6)
    # Broadcasting: (n, d) against (d,), and a 0-d result for two points.
    assert poincare_distance(a, np.zeros(6)).shape == (2000,) and poincare_distance(a[0], b[0]).shape == ()
    np.testing.assert_allclose(poincare_distance(np.zeros(6), a), 2 * np.arctanh(np.linalg.norm(a, axis=1)),
                               rtol=1e-9)


def test_pairwise_matches_row_wise_distances_across_tiles(monkeypatch):
    import repspace.core.hyperbolic as hyp

    rng = np.random.default_rng(4)
    Q, B = ball_points(rng, 37, 5), ball_points(rng, 53, 5)
    full = pairwise_poincare(Q, B)
    assert full.shape == (37, 53) and full.dtype == np.float64
    np.testing.assert_allclose(full, poincare_distance(Q[:, None, :], B[None, :, :]), rtol=1e-12)
    monkeypatch.setattr(hyp, "TILE_ENTRIES", 5 * 7)  # 7 base rows and 1 query per tile
    np.testing.assert_array_equal(pairwise_poincare(Q, B), full)
    np.testing.assert_allclose(pairwise_poincare(Q / 2, B / 2, c=2.0),
                               poincare_distance(Q[:, None] / 2, B[None] / 2, c=2.0), rtol=1e-12)


@pytest.mark.parametrize("tile", [None, 4 * 9])
def test_search_equals_brute_force_with_ties_to_the_lower_row(monkeypatch, tile):
    import repspace.core.hyperbolic as hyp

    if tile:
        monkeypatch.setattr(hyp, "TILE_ENTRIES", tile)
    rng = np.random.default_rng(5)
    B = ball_points(rng, 300, 4)
    B[[10, 50, 120, 299]] = B[7]  # exact duplicates: ties
    Q = np.vstack([ball_points(rng, 40, 4), B[7], B[200]])
    d, i = poincare_search(Q, B, k=10)
    full = pairwise_poincare(Q, B)
    order = np.argsort(full, axis=1, kind="stable")[:, :10]  # stable: equal distances keep the lower row first
    np.testing.assert_array_equal(i, order)
    np.testing.assert_allclose(d, np.take_along_axis(full, order, 1).astype(np.float32), rtol=0, atol=0)
    assert d.dtype == np.float32 and i.dtype == np.int64 and np.all(np.diff(d, axis=1) >= 0)
    assert i[-2, :5].tolist() == [7, 10, 50, 120, 299]
    # k above the base size returns every row.
    d_all, i_all = poincare_search(Q[:2], B[:5], k=50)
    assert i_all.shape == (2, 5) and sorted(i_all[0].tolist()) == [0, 1, 2, 3, 4]


def test_search_is_stable_under_tiny_perturbations():
    rng = np.random.default_rng(6)
    B, Q = ball_points(rng, 500, 8), ball_points(rng, 30, 8)
    d, i = poincare_search(Q, B, k=20)
    d2, i2 = poincare_search(Q + rng.uniform(-1e-9, 1e-9, Q.shape), B + rng.uniform(-1e-9, 1e-9, B.shape), k=20)
    full = pairwise_poincare(Q, B)
    gaps = np.diff(np.take_along_axis(full, i, 1), axis=1).min(axis=1)
    clear = gaps > 1e-6  # rows without a near-tie among their 20 neighbours
    assert clear.sum() > 20
    np.testing.assert_array_equal(i[clear], i2[clear])
    np.testing.assert_allclose(d, d2, atol=1e-6)


def test_project_pulls_points_inside_and_keeps_the_others():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0], [1.0, 0.0]])
    P = project(X)
    np.testing.assert_allclose(np.linalg.norm(P[[0, 3]], axis=1), 1 - 1e-5)
    np.testing.assert_array_equal(P[1:3], X[1:3])
    np.testing.assert_allclose(P[0] / np.linalg.norm(P[0]), [0.6, 0.8])
    check_ball(P)
    assert np.linalg.norm(project([4.0, 0.0], c=4.0)) == pytest.approx((1 - 1e-5) / 2)
    with pytest.raises(InputError, match="eps must be"):
        project(X, eps=0)


def test_bad_input_is_one_line():
    with pytest.raises(InputError, match=r"^X: 1 of 2 points lie outside the open Poincare ball \(norm >= 1\); "
                                         r"the largest norm is 1;"):
        check_ball([[0.1, 0.0], [1.0, 0.0]])
    with pytest.raises(InputError, match=r"u: 1 of 1 points .* largest norm is 2"):
        poincare_distance([2.0, 0.0], [0.0, 0.0])
    with pytest.raises(InputError, match=r"norm >= 1/sqrt\(c\) = 0.5"):
        check_ball([0.6, 0.0], c=4.0)
    with pytest.raises(InputError, match=r"base has NaN or infinite values \(row 1\)"):
        poincare_search([[0.0, 0.0]], [[0.0, 0.1], [np.nan, 0.0]], k=1)
    with pytest.raises(InputError, match="NaN"):
        exp_map([np.inf, 0.0])
    with pytest.raises(InputError, match="numeric"):
        check_ball([["a", "b"]])
    with pytest.raises(InputError, match="queries have 3 dimensions but base has 2"):
        pairwise_poincare([[0.0, 0.0, 0.0]], [[0.0, 0.0]])
    with pytest.raises(InputError, match="k must be a positive integer"):
        poincare_search([[0.0, 0.0]], [[0.0, 0.0]], k=0)
    with pytest.raises(InputError, match="curvature"):
        poincare_distance([0.0], [0.0], c=-1)
    for fn in (log_map, lambda y: mobius_add(y, [0.0, 0.0]), lambda y: log_map([0.0, 0.0], y)):
        with pytest.raises(InputError, match="outside the open Poincare ball"):
            fn([0.6, 0.8])
