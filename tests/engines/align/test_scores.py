"""score_map against direct n × n computations."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.align import MapScores, score_map
from repspace.engines.align import scores as scores_module

pytestmark = pytest.mark.numerics  # rerun by `make test-portable` (see pyproject.toml's markers)


def _direct(M: np.ndarray, Y: np.ndarray, csls: bool, k: int) -> tuple[float, float, float]:
    """Top-1, mean cosine and mean rank straight from the full n × n matrix, with loops."""
    n = len(M)
    S = np.array([[m @ y / (np.linalg.norm(m) * np.linalg.norm(y)) for y in Y] for m in M])
    C = S
    if csls:
        k = min(k, n)
        r_t = np.array([np.sort(S[i])[-k:].mean() for i in range(n)])
        r_s = np.array([np.sort(S[:, j])[-k:].mean() for j in range(n)])
        C = np.array([[2 * S[i, j] - r_t[i] - r_s[j] for j in range(n)] for i in range(n)])
    ranks = np.array([1 + sum(C[i, j] > C[i, i] for j in range(n)) for i in range(n)])
    return float(np.mean(ranks == 1)), float(np.mean(np.diag(S))), float(ranks.mean())


def test_perfect_map_scores_one():
    Y = np.random.default_rng(0).normal(size=(50, 8))
    for csls in (False, True):
        s = score_map(Y, Y, csls=csls)
        assert (s.top1, s.mean_rank) == (1.0, 1.0)
        assert s.mean_cosine == pytest.approx(1.0, abs=1e-12)


def test_noise_makes_scores_worse_and_monotone():
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(200, 10))
    prev = score_map(Y, Y)
    for sigma in (0.5, 1.0, 3.0):
        s = score_map(Y + sigma * rng.normal(size=Y.shape), Y)
        assert s.top1 < prev.top1 + 1e-12 and s.mean_rank > prev.mean_rank and s.mean_cosine < prev.mean_cosine
        prev = s
    assert prev.top1 < 0.5 and prev.mean_rank > 5


@pytest.mark.parametrize("csls", [False, True])
@pytest.mark.parametrize("k", [1, 3, 10, 100])
def test_matches_direct_computation(csls, k, monkeypatch):
    monkeypatch.setattr(scores_module, "_BLOCK", 7)  # several blocks of rows
    rng = np.random.default_rng(2 + k)
    Y = rng.normal(size=(30, 5))
    Y[:10] += 4.0 * rng.normal(size=5)  # a crowded region, so hubs exist and CSLS matters
    M = Y + 1.2 * rng.normal(size=Y.shape)
    s = score_map(M, Y, csls=csls, k_csls=k)
    top1, cos, rank = _direct(M, Y, csls, k)
    assert s.top1 == pytest.approx(top1, abs=1e-12)
    assert s.mean_rank == pytest.approx(rank, abs=1e-12)
    assert s.mean_cosine == pytest.approx(cos, abs=1e-12)
    assert s.k_csls == (min(k, 30) if csls else 0) and s.n_pairs == 30


@pytest.mark.parametrize("csls", [False, True])
def test_duplicate_targets_tie_with_the_true_pair_on_every_cpu(csls):
    # Every target twice: a duplicate scores exactly as the true pair, and ties count for it. The BLAS
    # product rounds the two equal scores differently by column (AVX-512 kernels did here: top1 0.992).
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(131, 255))
    Y[65:] = Y[:66]
    M = Y + 0.01 * rng.normal(size=Y.shape)
    s = score_map(M, Y, csls=csls)
    assert (s.top1, s.mean_rank) == (1.0, 1.0)
    # a target that is really better (not a rounding twin) still outranks the true pair
    far = M.copy()
    far[0] = Y[1]
    assert score_map(far, Y, csls=csls).top1 < 1.0


def test_csls_changes_ranks_on_hubby_data():
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(60, 5))
    Y[:20] += 4.0 * rng.normal(size=5)
    M = Y + 1.2 * rng.normal(size=Y.shape)
    assert score_map(M, Y).mean_rank != score_map(M, Y, csls=True).mean_rank


def test_to_dict_and_zero_rows():
    Y = np.eye(3)
    M = np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, 1.0]])
    s = score_map(M, Y, csls=True)
    d = s.to_dict()
    assert set(d) == {"top1", "mean_cosine", "mean_rank", "csls", "k_csls", "n_pairs"}
    assert all(np.isfinite(v) for v in (s.top1, s.mean_cosine, s.mean_rank))
    assert d["mean_cosine"] == pytest.approx(2 / 3)
    assert isinstance(s, MapScores)
    with pytest.raises(AttributeError):
        s.top1 = 0.0  # frozen


@pytest.mark.parametrize(
    ("args", "kw", "match"),
    [
        ((np.eye(3), np.eye(4)), {}, "3 rows and Y has 4"),
        ((np.eye(3), np.eye(3)[:, :2]), {}, "map X into the target space"),
        ((np.eye(1), np.eye(1)), {}, "at least 2 pairs"),
        ((np.full((3, 3), np.nan), np.eye(3)), {}, "NaN"),
        ((np.eye(3), np.eye(3)), {"csls": True, "k_csls": 0}, "k_csls"),
    ],
)
def test_bad_input(args, kw, match):
    with pytest.raises(InputError, match=match) as info:
        score_map(*args, **kw)
    assert "\n" not in str(info.value)
