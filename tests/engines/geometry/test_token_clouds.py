"""Per-input token-cloud figures of a padded batch against each cloud computed alone from the definitions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

from repspace.core.errors import InputError
from repspace.engines.geometry import twonn
from repspace.engines.geometry.token_clouds import (
    cloud_geometry,
    curvatures,
    left_aligned,
    neighbourhood_overlaps,
    paired_cosines,
    prompt_entropies,
)

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)

LENGTHS = [1, 2, 3, 5, 9, 17, 30]
D = 12  # narrower than the longest cloud: that one takes the Zᵀ Z branch


def _batch(seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Clouds of several lengths, right-padded with garbage that must never count."""
    rng = np.random.default_rng(seed)
    clouds = [rng.standard_normal((t, D)) * rng.uniform(0.5, 20) + rng.standard_normal(D) for t in LENGTHS]
    states = rng.standard_normal((len(LENGTHS), max(LENGTHS), D)) * 1e3
    for i, z in enumerate(clouds):
        states[i, :len(z)] = z
    return states, np.array(LENGTHS), clouds


def _entropy(z: np.ndarray, alpha: float) -> float:
    """From the definition: singular values of Z squared are the eigenvalues of Z Zᵀ."""
    lam = np.linalg.svd(z, compute_uv=False) ** 2
    p = lam / lam.sum()
    p = p[p > 1e-12]
    h = -np.sum(p * np.log(p)) if alpha == 1 else np.log(np.sum(p**alpha)) / (1 - alpha)
    return float(h / np.log(len(z)))


def _curvature(z: np.ndarray) -> float:
    v = [z[k + 1] - z[k] for k in range(len(z) - 1)]
    angles = [np.arccos(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))) for a, b in zip(v, v[1:])]
    return float(np.mean(angles))


def test_entropy_and_curvature_equal_each_cloud_alone():
    states, lengths, clouds = _batch()
    ent = prompt_entropies(states, lengths, alphas=(1.0, 2.0, 0.5))
    curv = curvatures(states, lengths)
    for i, z in enumerate(clouds):
        if len(z) < 2:
            assert np.isnan(ent[:, i]).all()
        else:
            for row, alpha in enumerate((1.0, 2.0, 0.5)):
                assert ent[row, i] == pytest.approx(_entropy(z, alpha), abs=1e-10)
        if len(z) < 3:
            assert np.isnan(curv[i])
        else:
            assert curv[i] == pytest.approx(_curvature(z), abs=1e-10)


def test_geometry_equals_twonn_brute_force_neighbours_and_pairwise_cosine():
    states, lengths, clouds = _batch(1)
    k = 3
    geo = cloud_geometry(states, lengths, k=k)
    shifted = cloud_geometry(states * 1.7 + np.random.default_rng(2).standard_normal(D) * 0.3, lengths, k=k)
    overlap = neighbourhood_overlaps(geo, shifted)
    for i, z in enumerate(clouds):
        t = len(z)
        if t >= 3:  # repspace's TwoNN, itself checked against scikit-dimension (test_intrinsic.py)
            assert geo.intrinsic_dimension[i] == pytest.approx(twonn(z), rel=1e-5)
        else:
            assert np.isnan(geo.intrinsic_dimension[i])
        if t >= 2:
            u = z / np.linalg.norm(z, axis=1, keepdims=True)
            c = u @ u.T
            assert geo.mean_cosine[i] == pytest.approx(c[np.triu_indices(t, 1)].mean(), abs=1e-12)
        if t > k:  # scikit-learn's brute-force neighbours; a scaled, translated copy keeps every neighbour
            nn = NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(z)
            idx = nn.kneighbors(z, return_distance=False)[:, 1:]
            assert np.array_equal(np.sort(geo.neighbours[i, :t], axis=1), np.sort(idx, axis=1))
            assert overlap[i] == pytest.approx(1.0, abs=1e-12)
        else:
            assert np.isnan(overlap[i])


def test_overlap_counts_the_shared_neighbours():
    """Two layers of one 5-token cloud whose neighbour lists share a known number of tokens."""
    line = np.array([0.0, 1.0, 3.0, 6.0, 10.0])[:, None]  # neighbours on a line: 0:1, 1:0, 2:1, 3:2, 4:3
    other = np.array([0.0, 5.0, 1.0, 7.0, 2.0])[:, None]  # 0:2, 1:3, 2:0, 3:1, 4:2
    a = cloud_geometry(line[None], np.array([5]), k=1)
    b = cloud_geometry(other[None], np.array([5]), k=1)
    assert a.neighbours[0, :, 0].tolist() == [1, 0, 1, 2, 3] and b.neighbours[0, :, 0].tolist() == [2, 3, 0, 1, 2]
    assert neighbourhood_overlaps(a, b)[0] == 0.0
    assert neighbourhood_overlaps(a, a)[0] == 1.0


def test_left_padding_gives_the_same_figures_as_right_padding():
    states, lengths, clouds = _batch(3)
    t = states.shape[1]
    left = np.zeros_like(states)
    mask = np.zeros((len(clouds), t), int)
    for i, z in enumerate(clouds):
        left[i, t - len(z):] = z
        mask[i, t - len(z):] = 1
    x, n = left_aligned(left, mask)
    assert n.tolist() == LENGTHS
    np.testing.assert_array_equal(prompt_entropies(x, n), prompt_entropies(states, lengths))
    np.testing.assert_array_equal(curvatures(x, n), curvatures(states, lengths))


def test_degenerate_clouds_give_nan_not_errors_and_bad_shapes_are_refused():
    zeros = np.zeros((1, 4, 3))
    assert np.isnan(prompt_entropies(zeros, np.array([4]))).all()
    assert np.isnan(curvatures(zeros, np.array([4]))).all()
    same = np.ones((1, 4, 3))  # four identical tokens: no nearest distance above 0
    g = cloud_geometry(same, np.array([4]))
    assert np.isnan(g.intrinsic_dimension[0]) and g.mean_cosine[0] == pytest.approx(1.0)
    assert np.isnan(paired_cosines(np.zeros((1, 3)), np.ones((1, 3)))[0])
    with pytest.raises(InputError, match="alpha"):
        prompt_entropies(np.ones((1, 3, 2)), np.array([3]), alphas=(0.0,))
    with pytest.raises(InputError, match="lengths"):
        curvatures(np.ones((1, 3, 2)), np.array([4]))
    with pytest.raises(InputError, match="B, T, d"):
        cloud_geometry(np.ones((3, 2)), np.array([3]))
