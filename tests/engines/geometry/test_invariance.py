"""InfoNCE, LiDAR and DiME of paired views, each against its formula written out here with numpy and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import linalg, stats

from repspace.core.errors import InputError
from repspace.engines.geometry.invariance import (
    DIME_PERMUTATIONS,
    INFONCE_TEMPERATURE,
    LIDAR_DELTA,
    dime,
    infonce,
    lidar,
)

pytestmark = pytest.mark.numerics


@pytest.fixture(scope="module")
def views() -> tuple[np.ndarray, np.ndarray]:
    """12 inputs in 6-d and their views: the inputs plus noise, rows of any length (the figures use cosines)."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((12, 6)) * rng.uniform(0.5, 3.0, (12, 1))
    return a, a + 0.4 * rng.standard_normal((12, 6))


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_infonce_is_the_nt_xent_loss_written_out(views):
    a, b = map(_unit, views)
    z = np.vstack([a, b])
    n2 = len(z)
    losses = []
    for i in range(n2):
        pair = (i + n2 // 2) % n2
        num = math.exp(z[i] @ z[pair] / INFONCE_TEMPERATURE)
        den = sum(math.exp(z[i] @ z[j] / INFONCE_TEMPERATURE) for j in range(n2) if j != i)
        losses.append(-math.log(num / den))
    assert infonce(*views) == pytest.approx(np.mean(losses), abs=1e-6)
    # views all orthogonal to one another: every cosine 0, the loss is log(2N - 1)
    e = np.eye(10)
    assert infonce(e[:5], e[5:]) == pytest.approx(math.log(9), abs=1e-12)


def test_lidar_is_the_entropy_of_the_lda_matrix_written_out(views):
    a, b = map(_unit, views)
    n, d = a.shape
    stacked = np.stack([a, b], axis=1)  # N x 2 x d: each input a class of its two views
    mu = stacked.mean(axis=(0, 1))
    means = stacked.mean(axis=1)
    sb = sum(np.outer(m - mu, m - mu) for m in means) / n
    sw = sum(np.outer(v - means[i], v - means[i]) for i in range(n) for v in stacked[i]) / (2 * n)
    sw = sw + LIDAR_DELTA * np.eye(d)
    root = linalg.fractional_matrix_power(sw, -0.5).real
    lam = linalg.eigvalsh(root @ sb @ root)
    lam = lam[lam > 1e-12 * lam.max()]
    expected = stats.entropy(lam) / min(math.log(n), math.log(d))  # scipy normalises p itself
    assert lidar(*views) == pytest.approx(expected, abs=1e-6)


def test_dime_is_the_permuted_minus_paired_joint_entropy_written_out(views):
    a, b = map(_unit, views)
    n, d = a.shape

    def h(k: np.ndarray) -> float:
        lam = linalg.eigvalsh(k)
        return stats.entropy(lam[lam > 1e-12 * lam.max()])

    ka, kb = a @ a.T, b @ b.T
    rng = np.random.default_rng(3)
    permuted = []
    for _ in range(DIME_PERMUTATIONS):
        p = np.eye(n)[rng.permutation(n)]  # a permutation matrix: P K_B Pᵀ
        permuted.append(h(ka * (p @ kb @ p.T)))
    expected = (np.mean(permuted) - h(ka * kb)) / min(math.log(n), math.log(d))
    assert dime(*views, rng=np.random.default_rng(3)) == pytest.approx(expected, abs=1e-6)


def test_figures_read_directions_not_lengths(views):
    """Each view is scaled to unit length first: rescaling rows changes nothing."""
    a, b = views
    scale = np.linspace(0.1, 10, len(a))[:, None]
    for f in (infonce, lidar):
        assert f(a * scale, b / scale) == pytest.approx(f(a, b), abs=1e-9)
    assert dime(a * scale, b, rng=np.random.default_rng(0)) == pytest.approx(
        dime(a, b, rng=np.random.default_rng(0)), abs=1e-9)


def test_identical_views_are_the_most_invariant(views):
    a, _ = views
    rng = np.random.default_rng(1)
    other = rng.standard_normal(a.shape)
    assert infonce(a, a) < infonce(a, other)
    assert dime(a, a) > dime(a, other)


def test_bad_views_are_refused():
    with pytest.raises(InputError, match="same shape"):
        infonce(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(InputError, match="N >= 2"):
        lidar(np.ones((1, 2)), np.ones((1, 2)))
    with pytest.raises(InputError, match="NaN"):
        dime(np.full((3, 2), np.nan), np.ones((3, 2)))
    with pytest.raises(InputError, match="temperature"):
        infonce(np.eye(2), np.eye(2), temperature=0)
    with pytest.raises(InputError, match="permutations"):
        dime(np.eye(2), np.eye(2), permutations=0)
