"""repspace.engines.compare.rsa against scipy's spearmanr on pdist cosine distances, sampling, degenerate input, GloVe."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from scipy.stats import spearmanr

from repspace.core.errors import InputError
from repspace.engines.compare import rsa

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def direct_rsa(X: np.ndarray, Y: np.ndarray) -> float:
    return float(spearmanr(pdist(X, "cosine"), pdist(Y, "cosine")).statistic)


def related(n: int, d1: int, d2: int, seed: int = 0, noise: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d1)) + 0.5
    Y = np.tanh(X @ rng.standard_normal((d1, d2))) + noise * rng.standard_normal((n, d2))
    return X, Y


@pytest.mark.parametrize(("n", "d1", "d2"), [(40, 3, 5), (300, 10, 4), (5, 2, 2)])
def test_exact_equals_scipy(n: int, d1: int, d2: int) -> None:
    X, Y = related(n, d1, d2)
    e = rsa(X, Y)
    assert e.exact and e.n_pairs == n * (n - 1) // 2
    assert e.value == pytest.approx(direct_rsa(X, Y), abs=1e-12)
    assert e.low == e.high == e.value


def test_sampled_on_the_same_pairs_and_interval_covers_the_exact_value() -> None:
    X, Y = related(1200, 8, 6)
    exact = rsa(X, Y)
    assert exact.exact
    e = rsa(X, Y, exact_max=1000)  # n > exact_max: 200,000 sampled pairs
    assert not e.exact and e.n_pairs == 200_000
    assert e.low < exact.value < e.high
    assert e.high - e.low < 0.01
    assert rsa(X, Y, exact_max=1000, seed=5).value != e.value  # the seed matters ...
    assert rsa(X, Y, exact_max=1000).value == e.value  # ... and fixes the result


def test_sampled_value_is_spearman_of_the_sampled_pairs() -> None:
    from repspace.core.estimate import sample_pairs

    X, Y = related(200, 4, 4)
    e = rsa(X, Y, exact_max=100, pairs=3000, seed=3)
    i, j = sample_pairs(200, 3000, 3)

    def dist(M: np.ndarray) -> np.ndarray:
        U = M / np.linalg.norm(M, axis=1, keepdims=True)
        return 1.0 - np.sum(U[i] * U[j], axis=1)

    assert e.value == pytest.approx(float(spearmanr(dist(X), dist(Y)).statistic), abs=1e-9)


def test_identities_and_symmetry() -> None:
    X, Y = related(100, 6, 4)
    Q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((6, 6)))
    assert rsa(X, -4.0 * X @ Q).value == pytest.approx(1.0, abs=1e-12)
    assert rsa(X, Y).value == pytest.approx(rsa(Y, X).value, abs=1e-12)
    assert rsa(X, X + 3.0).value < 0.99  # cosine distances change under translation


def test_duplicate_rows_tie_in_both_spaces() -> None:
    """Duplicates make many equal distances; rounding must not order them differently in a rotated copy."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((20, 5))
    X = np.vstack([base, base, base[:5]])
    Q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    assert rsa(X, X @ Q).value == pytest.approx(1.0, abs=1e-12)


def test_degenerate() -> None:
    X, Y = related(30, 4, 4)
    with pytest.raises(InputError, match="every cosine distance in Y is the same"):
        rsa(X, np.ones((30, 4)))
    with pytest.raises(InputError, match="every cosine distance in X is the same"):
        rsa(np.outer(np.arange(1.0, 31.0), [1.0, 2.0]), Y)  # all rows parallel
    with pytest.raises(InputError, match="RSA needs at least 3 items"):
        rsa(X[:2], Y[:2])
    Z = X.copy()
    Z[3] = 0.0  # a zero row: cosine 0 with everything
    assert np.isfinite(rsa(Z, Y).value)
    Xc = np.hstack([X, np.zeros((30, 2))])
    assert rsa(Xc, Y).value == pytest.approx(rsa(X, Y).value, abs=1e-12)
    with pytest.raises(InputError, match="pairs"):
        rsa(X, Y, exact_max=5, pairs=1)


def test_glove_noise(glove_vectors) -> None:
    X = np.array(glove_vectors[:1000], dtype=np.float64)
    rng = np.random.default_rng(0)
    values = [rsa(X, X + s * rng.standard_normal(X.shape)).value for s in (0.1, 0.5, 2.0)]
    assert values[0] > values[1] > values[2] > 0.0
    assert values[0] > 0.95
    Y = X + 0.5 * rng.standard_normal(X.shape)
    assert rsa(X[:600], Y[:600]).value == pytest.approx(direct_rsa(X[:600], Y[:600]), abs=1e-10)


def test_rsa_on_poincare_distances_exact_and_sampled():
    from repspace.core.hyperbolic import exp_map, mobius_add, poincare_distance

    rng = np.random.default_rng(3)
    X = exp_map(0.5 * rng.standard_normal((80, 3)))           # points of the ball
    shift = np.full((1, 3), 0.3)
    moved = mobius_add(np.repeat(shift, 80, axis=0), X)         # a hyperbolic isometry (Mobius translation)
    assert rsa(X, moved, metrics=("poincare", "poincare")).value == pytest.approx(1.0)
    # cosine distances of the same points rank pairs differently from hyperbolic ones
    assert rsa(X, moved, metrics=("cosine", "cosine")).value < 0.99
    exact = rsa(X, X + 0.0, metrics=("poincare", "cosine")).value
    sampled = rsa(X, X + 0.0, metrics=("poincare", "cosine"), exact_max=10, pairs=20_000)
    assert sampled.low <= exact <= sampled.high
    d = poincare_distance(X[:1], X[1:2])
    assert d.shape == (1,) and d[0] > 0
    with pytest.raises(InputError, match="cosine or poincare distances, not 'l2'"):
        rsa(X, X, metrics=("l2", "cosine"))
