"""Gaussian embeddings: the inner product of the augmented vectors ranks items as the KL divergence does."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.core.space import Metric
from repspace.engines.search.gaussian import (
    gaussian_kl,
    kl_from_inner_products,
    kl_item_vectors,
    kl_query_vectors,
    mips_to_l2,
)
from repspace.engines.search.hnsw import HNSWIndex, HNSWParams

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def loop_kl(mu_a, var_a, mu_b, var_b):
    """KL(N(mu_a, var_a) ‖ N(mu_b, var_b)) for diagonal Gaussians, one dimension at a time (the textbook formula)."""
    total = 0.0
    for ma, va, mb, vb in zip(mu_a, var_a, mu_b, var_b):
        total += 0.5 * (np.log(vb / va) + (va + (ma - mb) ** 2) / vb - 1.0)
    return total


def random_gaussians(rng, n, d):
    return rng.standard_normal((n, d)), np.exp(rng.uniform(-1.5, 1.5, (n, d)))


@pytest.mark.parametrize("direction", ["query-item", "item-query"])
def test_inner_product_ranking_equals_the_direct_kl_ranking(direction):
    rng = np.random.default_rng(3)
    mx, vx = random_gaussians(rng, 400, 12)
    mq, vq = random_gaussians(rng, 20, 12)
    kl = gaussian_kl(mq, vq, mx, vx, direction=direction)
    for qi, xi in [(0, 0), (3, 17), (19, 399)]:  # the vectorised KL against the per-dimension loop
        args = (mq[qi], vq[qi], mx[xi], vx[xi]) if direction == "query-item" else (mx[xi], vx[xi], mq[qi], vq[qi])
        assert kl[qi, xi] == pytest.approx(loop_kl(*args), rel=1e-12)
    inner = kl_query_vectors(mq, vq, direction=direction) @ kl_item_vectors(mx, vx, direction=direction).T
    # The identity: the KL recovered from the inner products, to float64 rounding of sums of ~30 terms of size ≤ 1e2.
    np.testing.assert_allclose(kl_from_inner_products(inner, mq, vq, direction=direction), kl, atol=1e-9)
    for row in range(len(mq)):
        by_kl = np.argsort(kl[row], kind="stable")
        by_ip = np.argsort(-inner[row], kind="stable")
        gaps = np.diff(kl[row][by_kl])
        assert gaps.min() > 1e-8  # no ties on random data, so the two orders must agree exactly
        assert by_ip.tolist() == by_kl.tolist()


def test_hnsw_serves_kl_search_after_the_mips_to_l2_coordinate():
    """Exact inner products find the KL top 10 exactly; HNSW over l2 with the extra coordinate nearly so."""
    rng = np.random.default_rng(5)
    mx, vx = random_gaussians(rng, 3000, 16)
    mq, vq = random_gaussians(rng, 50, 16)
    items, queries = kl_item_vectors(mx, vx), kl_query_vectors(mq, vq)
    truth = np.argsort(gaussian_kl(mq, vq, mx, vx), axis=1)[:, :10]

    def recall(rows):
        return np.mean([len(set(r) & set(t)) / 10 for r, t in zip(rows.tolist(), truth.tolist())])

    assert recall(np.argsort(-(queries @ items.T), axis=1)[:, :10]) == 1.0
    x2, q2 = mips_to_l2(items, queries)
    np.testing.assert_allclose(np.linalg.norm(x2, axis=1), np.linalg.norm(items, axis=1).max(), rtol=1e-12)
    index = HNSWIndex(x2.shape[1], Metric.L2, HNSWParams(m=32))
    index.add(x2.astype(np.float32), np.arange(len(x2)))
    _, rows = index.search(q2.astype(np.float32), k=10, ef=200)
    assert recall(rows) >= 0.95  # measured 1.0 (FAISS HNSW over raw inner products: 0.18)


def test_errors():
    with pytest.raises(InputError, match="> 0"):
        kl_item_vectors([[0.0, 1.0]], [[1.0, 0.0]])
    with pytest.raises(InputError, match="NaN"):
        kl_query_vectors([np.nan], [1.0])
    with pytest.raises(InputError, match="variances have shape"):
        kl_item_vectors([[0.0, 1.0]], [[1.0]])
    with pytest.raises(InputError, match="direction"):
        gaussian_kl([0.0], [1.0], [0.0], [1.0], direction="both")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="dimensions"):
        gaussian_kl([0.0], [1.0], [[0.0, 1.0]], [[1.0, 1.0]])
