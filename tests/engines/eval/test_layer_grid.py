"""The best cell per budget of a layer x width grid, against a brute-force search written out here; the heat map."""

from __future__ import annotations

import numpy as np
import pytest

from repspace.core.errors import InputError
from repspace.engines.eval.layer_grid import best_per_budget, layer_grid_figure, plot_layer_grid


def brute_force(scores: np.ndarray, cost: list[int], budget: int) -> tuple[int, int]:
    cells = [(-scores[i, j], cost[j], j, i) for i in range(scores.shape[0]) for j in range(scores.shape[1])
             if cost[j] <= budget and np.isfinite(scores[i, j])]
    _, _, j, i = min(cells)
    return i, j


def test_best_per_budget_equals_a_brute_force_search():
    rng = np.random.default_rng(5)
    layers, dims = [0, 1, 2, 3, 4, 5, 6], [16, 32, 64, 128, 384]
    cost = [4 * d for d in dims]
    for _ in range(50):
        scores = rng.uniform(0.3, 0.9, size=(7, 5)).round(2)  # rounded: ties happen, and go to the smaller cell
        scores[rng.integers(7), rng.integers(5)] = np.nan
        best = best_per_budget(scores, layers, dims, cost, ci_low=scores - 0.01, ci_high=scores + 0.01)
        assert [b.budget for b in best] == cost
        for b in best:
            i, j = brute_force(scores, cost, b.budget)
            assert (b.layer, b.dims, b.score) == (layers[i], dims[j], scores[i, j])
            assert b.ci_low == pytest.approx(scores[i, j] - 0.01) and b.bytes_per_vector == cost[j]


def test_hand_worked_grid_and_its_heat_map(tmp_path):
    scores = np.array([[0.55, 0.60, 0.62], [0.70, 0.80, 0.82]])
    best = best_per_budget(scores, [0, 6], [32, 64, 384], [128, 256, 1536])
    assert [(b.layer, b.dims, b.score) for b in best] == [(6, 32, 0.70), (6, 64, 0.80), (6, 384, 0.82)]
    fig = layer_grid_figure(scores, [0, 6], [32, 64, 384], metric="spearman", best=best)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["0.550", "0.600", "0.620", "0.700", "0.800", "0.820"]
    assert len(ax.patches) == 3 and ax.get_ylabel() == "layer"
    assert plot_layer_grid(scores, [0, 6], [32, 64, 384], tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(InputError, match="2 layers x 2 widths"):
        best_per_budget(scores, [0, 6], [32, 64], [128, 256])
