"""Ideal words (repspace.engines.analyze.ideal_words) against numpy's least squares on the one-hot and
sum-to-zero designs of the two-way additive model, and the leave-one-out predictions against a refit without
the cell."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.analyze import ideal_word_vectors, ideal_words, leave_one_out_predictions

pytestmark = pytest.mark.numerics


def _one_hot(m: int, n: int, skip: tuple[int, int] | None = None) -> tuple[np.ndarray, list[tuple[int, int]]]:
    cells = [(i, j) for i in range(m) for j in range(n) if (i, j) != skip]
    D = np.zeros((len(cells), 1 + m + n))
    for k, (i, j) in enumerate(cells):
        D[k, 0], D[k, 1 + i], D[k, 1 + m + j] = 1.0, 1.0, 1.0
    return D, cells


@pytest.mark.parametrize("m, n, d", [(2, 2, 3), (3, 5, 8), (6, 4, 20)])
def test_the_factorisation_is_the_least_squares_fit_of_the_additive_model(m, n, d):
    U = np.random.default_rng(m * n).standard_normal((m, n, d))
    c, A, O = ideal_word_vectors(U)
    D, cells = _one_hot(m, n)
    Y = np.stack([U[i, j] for i, j in cells])
    beta = np.linalg.lstsq(D, Y, rcond=None)[0]  # the one-hot design is rank m + n - 1: its fitted values
    fitted = D @ beta
    ours = np.stack([c + A[i] + O[j] for i, j in cells])
    assert np.allclose(ours, fitted, atol=1e-12)
    # Sum-to-zero (effect) coding identifies the parameters: they are the ideal words exactly.
    E = np.zeros((m * n, 1 + (m - 1) + (n - 1)))
    for k, (i, j) in enumerate(cells):
        E[k, 0] = 1.0
        E[k, 1:m] = -1.0 if i == m - 1 else np.eye(m - 1)[i] if m > 1 else 0.0
        E[k, m:] = -1.0 if j == n - 1 else np.eye(n - 1)[j]
    b = np.linalg.lstsq(E, Y, rcond=None)[0]
    assert np.allclose(b[0], c, atol=1e-12)
    assert np.allclose(b[1:m], A[:-1], atol=1e-12) and np.allclose(-b[1:m].sum(axis=0), A[-1], atol=1e-12)
    assert np.allclose(b[m:], O[:-1], atol=1e-12) and np.allclose(-b[m:].sum(axis=0), O[-1], atol=1e-12)


@pytest.mark.parametrize("m, n", [(2, 3), (4, 4), (5, 3)])
def test_leave_one_out_equals_a_least_squares_refit_without_the_cell(m, n):
    U = np.random.default_rng(7 + m).standard_normal((m, n, 6))
    P = leave_one_out_predictions(U)
    for skip in [(i, j) for i in range(m) for j in range(n)]:
        D, cells = _one_hot(m, n, skip)
        Y = np.stack([U[i, j] for i, j in cells])
        beta = np.linalg.lstsq(D, Y, rcond=None)[0]
        x = np.zeros(1 + m + n)
        x[0], x[1 + skip[0]], x[1 + m + skip[1]] = 1.0, 1.0, 1.0
        assert np.allclose(P[skip], x @ beta, atol=1e-10)


def test_an_additive_grid_is_reconstructed_exactly_and_noise_is_not():
    rng = np.random.default_rng(3)
    a, o, c = rng.standard_normal((4, 1, 32)), rng.standard_normal((1, 6, 32)), rng.standard_normal(32)
    U = c + a + o
    r = ideal_words(U, normalize=False)
    assert r.explained_variance == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(leave_one_out_predictions(U), U, atol=1e-12)
    assert r.held_out["ideal_words"]["top1"] == 1.0 and r.held_out["ideal_words"]["mean_rank"] == 1.0
    assert r.held_out["ideal_words"]["mean_cosine"] == pytest.approx(1.0, abs=1e-12)
    assert r.held_out["mean"]["top1"] < 1.0
    assert np.allclose(r.attribute_vectors, a[:, 0] - a.mean(axis=0), atol=1e-12)
    noise = ideal_words(rng.standard_normal((4, 6, 32)), normalize=False)
    assert noise.explained_variance < 0.6 and noise.held_out["ideal_words"]["top1"] < 0.5


def test_scores_equal_cosines_and_ranks_written_out():
    rng = np.random.default_rng(11)
    U = rng.standard_normal((3, 1, 10)) + rng.standard_normal((1, 4, 10)) + 0.8 * rng.standard_normal((3, 4, 10))
    r = ideal_words(U, ["a", "b", "c"], ["w", "x", "y", "z"])
    Un = U / np.linalg.norm(U, axis=-1, keepdims=True)
    P = leave_one_out_predictions(Un)
    flat = Un.reshape(12, 10)
    for cell in r.cells:
        i, j = "abc".index(cell["attribute"]), "wxyz".index(cell["object"])
        cos = [float(P[i, j] @ u / np.linalg.norm(P[i, j]) / np.linalg.norm(u)) for u in flat]
        assert cell["cosine"] == pytest.approx(cos[4 * i + j], abs=1e-8)
        assert cell["rank"] == 1 + sum(x > cos[4 * i + j] for x in cos)
    base = [(Un.sum(axis=(0, 1)) - Un[i, j]) / 11 for i in range(3) for j in range(4)]
    mean_cos = np.mean([b @ u / np.linalg.norm(b) for b, u in zip(base, flat)])
    assert r.held_out["mean"]["mean_cosine"] == pytest.approx(mean_cos, abs=1e-8)


@pytest.mark.parametrize("U, kwargs, fragment", [
    (np.zeros((1, 3, 2)), {}, "at least 2 attributes"),
    (np.zeros((3, 3)), {}, "shape"),
    (np.full((2, 2, 2), np.nan), {}, "NaN"),
    (np.zeros((2, 2, 2)), {}, "zero vector"),
    (np.ones((2, 2, 2)), {"attributes": ["a"]}, "1 attributes for a grid with 2"),
    (np.ones((2, 2, 2)), {"objects": ["x", "x"]}, "repeat"),
])
def test_bad_input_is_one_clear_error(U, kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        ideal_words(U, **kwargs)


def test_ranks_in_small_blocks_equal_one_block(monkeypatch):
    import importlib

    module = importlib.import_module("repspace.engines.analyze.ideal_words")  # the package's name is the function

    U = np.random.default_rng(2).standard_normal((5, 7, 9))
    whole = ideal_words(U)
    monkeypatch.setattr(module, "RESCORE_ENTRIES", 50)  # 1 prediction of 35 cells per block
    blocked = ideal_words(U)
    assert blocked.cells == whole.cells and blocked.held_out == whole.held_out
