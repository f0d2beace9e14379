"""Label-free quality (repspace.engines.geometry.tracking): LiDAR against Thilak et al.'s formula written out with
loops and scipy's matrix square root, and against the project's paired LiDAR; alignment over views."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import sqrtm

from repspace.core.errors import InputError
from repspace.engines.geometry.tracking import lidar_views, space_quality, view_alignment
from repspace.engines.geometry import local_id, uniformity
from repspace.engines.geometry.invariance import lidar as paired_lidar

pytestmark = pytest.mark.numerics


def _reference_lidar(X, groups, delta=1e-4, eps=1e-7):
    labels = sorted(set(groups))
    views = {g: X[[i for i, h in enumerate(groups) if h == g]] for g in labels}
    mu = {g: v.mean(axis=0) for g, v in views.items()}
    grand = np.mean([mu[g] for g in labels], axis=0)
    d = X.shape[1]
    sb = sum(np.outer(mu[g] - grand, mu[g] - grand) for g in labels) / (len(labels) - 1)
    sw = sum(np.outer(e - mu[g], e - mu[g]) for g in labels for e in views[g]) / len(X) + delta * np.eye(d)
    inv_root = np.linalg.inv(np.real(sqrtm(sw)))
    lam = np.clip(np.linalg.eigvalsh(inv_root @ sb @ inv_root), 0, None)
    p = lam / lam.sum() + eps
    return math.exp(-np.sum(p * np.log(p)))


def test_lidar_equals_the_formula_written_out(glove_vectors):
    rng = np.random.default_rng(0)
    centres = np.asarray(glove_vectors[:40], dtype=np.float64)[:, :12]
    sizes = rng.integers(2, 5, size=40)
    X = np.concatenate([c + 0.1 * rng.standard_normal((s, 12)) for c, s in zip(centres, sizes)])
    groups = [f"s{i}" for i, s in enumerate(sizes) for _ in range(s)]
    assert lidar_views(X, groups) == pytest.approx(_reference_lidar(X, groups), rel=1e-8)


def test_with_two_unit_views_it_matches_the_paired_lidars_entropy():
    # engines.geometry.invariance.lidar: entropy / min(log N, log d) over unit rows, N pairs (Sigma_b over N)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((80, 10))
    b = a + 0.3 * rng.standard_normal((80, 10))
    a, b = a / np.linalg.norm(a, axis=1, keepdims=True), b / np.linalg.norm(b, axis=1, keepdims=True)
    X = np.concatenate([a, b])
    groups = list(range(80)) * 2
    entropy = paired_lidar(a, b) * min(math.log(80), math.log(10))
    assert math.log(lidar_views(X, groups)) == pytest.approx(entropy, abs=1e-4)  # eps = 1e-7 on 10 eigenvalues


def test_alignment_is_the_mean_over_every_pair_of_views():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((9, 4))
    groups = ["a"] * 3 + ["b"] * 2 + ["c"] * 4
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    pairs = [(0, 1), (0, 2), (1, 2), (3, 4), (5, 6), (5, 7), (5, 8), (6, 7), (6, 8), (7, 8)]
    expected = np.mean([np.sum((U[i] - U[j]) ** 2) for i, j in pairs])
    assert view_alignment(X, groups) == pytest.approx(expected, abs=1e-12)


def test_space_quality_combines_the_estimators(glove_vectors):
    X = np.asarray(glove_vectors[:500], dtype=np.float64)
    groups = [i // 2 if i < 100 else None for i in range(500)]
    q = space_quality(X, groups)
    lid = local_id(X, 20)
    assert q.samples == 50 and q.views == 100
    assert q.local_id_mean == pytest.approx(lid.mean(), rel=1e-9)
    assert q.local_id_median == pytest.approx(np.median(lid), rel=1e-9)
    assert q.uniformity == pytest.approx(uniformity(X).value, abs=1e-12)
    assert q.lidar == pytest.approx(lidar_views(X[:100], groups[:100]), rel=1e-8)


@pytest.mark.parametrize("groups, message", [(["a", "b", "c", "d"], "at least 2 samples"), (["a"], "one per item")])
def test_too_few_views_are_refused(groups, message):
    with pytest.raises(InputError, match=message):
        lidar_views(np.eye(4), groups)
