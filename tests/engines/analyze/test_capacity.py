"""Near-orthogonality capacity (repspace.engines.analyze.capacity) against the exact law of random cosines,
a direct all-pairs computation and the paper's formula written out."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from repspace.core.errors import InputError
from repspace.engines.analyze import capacity, capacity_log10, packing_epsilon
from repspace.engines.analyze.capacity import CAPACITY_FIT

pytestmark = pytest.mark.numerics


@pytest.mark.parametrize("d", [64, 384])
def test_random_directions_follow_the_exact_cosine_law(d):
    # the cosine of two independent uniform directions: (1 + cos) / 2 ~ Beta((d-1)/2, (d-1)/2); mean 0, var 1/d
    X = np.random.default_rng(d).standard_normal((4000, d))
    c = capacity(X, pairs=400_000, seed=1)
    sd = 1 / math.sqrt(d)
    assert not c.exact and c.n_pairs == 400_000
    assert abs(c.cosine_mean) < 5 * sd / math.sqrt(4000)  # pairs share 4,000 rows: the row means' scale
    assert c.cosine_std == pytest.approx(sd, rel=0.01)
    assert c.epsilon == pytest.approx(2 * sd, rel=0.02)
    law = beta((d - 1) / 2, (d - 1) / 2)
    for p, key in ((0.5, "q50"), (0.9, "q90"), (0.95, "q95"), (0.99, "q99")):
        exact = 2 * law.ppf((1 + p) / 2) - 1  # |cos| <= q with probability p
        assert c.abs_cosine_quantiles[key] == pytest.approx(exact, rel=0.02), key


def test_all_pairs_equal_a_direct_gram_computation_and_zero_rows_are_left_out(glove_vectors):
    X = np.asarray(glove_vectors[:300], dtype=np.float64).copy()
    X[[5, 17]] = 0.0
    c = capacity(X, pairs=10**6)
    keep = np.delete(X, [5, 17], axis=0)
    U = keep / np.linalg.norm(keep, axis=1, keepdims=True)
    cos = (U @ U.T)[np.triu_indices(298, 1)]
    assert c.exact and c.zero_rows == 2 and c.n == 298 and c.n_pairs == 298 * 297 // 2
    assert c.cosine_mean == pytest.approx(cos.mean(), abs=1e-12)
    assert c.cosine_std == pytest.approx(cos.std(ddof=1), abs=1e-12)
    assert c.epsilon == pytest.approx(cos.mean() + 2 * cos.std(ddof=1), abs=1e-12)
    assert c.abs_cosine_quantiles["q95"] == pytest.approx(np.quantile(np.abs(cos), 0.95), abs=1e-12)


@pytest.mark.parametrize("d, eps", [(384, 0.05), (768, 0.08), (4096, 0.03), (100, 0.3)])
def test_capacity_is_the_papers_max_k_and_inverts_its_relation(d, eps):
    C, a, b, c = CAPACITY_FIT
    max_k = (d * math.exp((eps ** 2 * d ** c / C) ** (1 / b))) ** (1 / a)  # representational_capacity.max_k
    assert capacity_log10(d, eps) == pytest.approx(math.log10(max_k), rel=1e-12)
    assert packing_epsilon(max_k, d) == pytest.approx(eps, rel=1e-9)


def test_capacity_grows_with_tolerance_and_dimension():
    assert capacity_log10(384, 0.05) < capacity_log10(384, 0.08) < capacity_log10(768, 0.08)


@pytest.mark.parametrize("X, message", [(np.zeros((5, 3)), "non-zero norm"), (np.eye(1, 3), "at least 2")])
def test_too_few_directions_are_refused(X, message):
    with pytest.raises(InputError, match=message):
        capacity(X)
