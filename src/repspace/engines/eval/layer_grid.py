"""The layer x dimension grid (2DMSE): the best cell per bytes-per-vector budget, and the grid as a heat map.

2DMSE (S029) trains an encoder whose every (layer, prefix dimension) sub-model embeds; evaluating one is a grid
of scores, a row per layer and a column per prefix width. The scores themselves come from the evaluation sweep
(:func:`repspace.workflows.evaluate.run` with ``layer="all"`` and ``dims``, one forward pass per batch for every
layer); this module only reads that grid: :func:`best_per_budget` answers "with at most B bytes per vector,
which cell?", and :func:`plot_layer_grid` draws it.

Examples
--------
>>> import numpy as np
>>> scores = np.array([[0.30, 0.40], [0.50, 0.45]])  # 2 layers x 2 widths
>>> [(b.budget, b.layer, b.dims, b.score) for b in best_per_budget(scores, [0, 1], [16, 32], [64, 128])]
[(64, 1, 16, 0.5), (128, 1, 16, 0.5)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.errors import InputError

__all__ = ["BudgetBest", "best_per_budget", "layer_grid_figure", "plot_layer_grid"]


@dataclass(frozen=True)
class BudgetBest:
    """The best (layer, width) cell within a bytes-per-vector budget.

    Attributes
    ----------
    budget : int
        Bytes per vector allowed.
    layer, dims : int
        The cell: its layer and prefix width.
    bytes_per_vector : int
        What the cell costs (at most ``budget``).
    score : float
    ci_low, ci_high : float or None
        Its bootstrap interval.

    Examples
    --------
    >>> BudgetBest(256, 6, 64, 256, 0.8, 0.78, 0.82).to_dict()["layer"]
    6
    """

    budget: int
    layer: int
    dims: int
    bytes_per_vector: int
    score: float
    ci_low: float | None = None
    ci_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict."""
        return {"budget": int(self.budget), "layer": int(self.layer), "dims": int(self.dims),
                "bytes_per_vector": int(self.bytes_per_vector), "score": float(self.score),
                "ci_low": None if self.ci_low is None else float(self.ci_low),
                "ci_high": None if self.ci_high is None else float(self.ci_high)}


def _grid(scores: Any, layers: Sequence[int], dims: Sequence[int]) -> np.ndarray:
    grid = np.asarray(scores, dtype=np.float64)
    if grid.shape != (len(layers), len(dims)):
        raise InputError(f"a grid of {len(layers)} layers x {len(dims)} widths, got scores of shape {grid.shape}")
    return grid


def best_per_budget(scores: Any, layers: Sequence[int], dims: Sequence[int], bytes_per_vector: Sequence[int], *,
                    ci_low: Any = None, ci_high: Any = None) -> list[BudgetBest]:
    """For each budget (each column's bytes per vector), the best-scoring cell that costs at most that.

    Parameters
    ----------
    scores : array of shape (n_layers, n_dims)
        NaN where a cell was not scored.
    layers, dims : sequences of int
        The rows' layers and the columns' prefix widths.
    bytes_per_vector : sequence of int
        Each column's cost; the budgets are its distinct values, smallest first.
    ci_low, ci_high : arrays of shape (n_layers, n_dims), optional
        The cells' interval ends (NaN for none).

    Returns
    -------
    list of BudgetBest
        Ties go to the smaller cell, then the earlier layer.

    Examples
    --------
    >>> best_per_budget([[0.2, 0.9]], [3], [8, 16], [32, 64])[1].dims
    16
    """
    grid = _grid(scores, layers, dims)
    cost = np.asarray(bytes_per_vector, dtype=np.int64)
    if cost.shape != (len(dims),):
        raise InputError(f"{len(dims)} widths but {cost.size} byte counts")
    lows = None if ci_low is None else _grid(ci_low, layers, dims)
    highs = None if ci_high is None else _grid(ci_high, layers, dims)
    out = []
    for budget in sorted(set(cost.tolist())):
        best: tuple[float, int, int] | None = None
        for j in sorted(np.flatnonzero(cost <= budget), key=lambda c: (cost[c], c)):
            for i in range(len(layers)):
                if np.isfinite(grid[i, j]) and (best is None or grid[i, j] > best[0]):
                    best = (float(grid[i, j]), i, int(j))
        if best is None:
            continue
        _, i, j = best

        def end(a: np.ndarray | None) -> float | None:
            return None if a is None or not np.isfinite(a[i, j]) else float(a[i, j])

        out.append(BudgetBest(int(budget), int(layers[i]), int(dims[j]), int(cost[j]), float(grid[i, j]),
                              end(lows), end(highs)))
    return out


def layer_grid_figure(scores: Any, layers: Sequence[int], dims: Sequence[int], *, metric: str = "score",
                      title: str | None = None, best: Sequence[BudgetBest] = ()) -> Any:
    """The grid as a heat map (a matplotlib ``Figure``): layers down, widths across, each cell's score written in
    it, the best cell of each budget outlined.

    Examples
    --------
    >>> fig = layer_grid_figure([[0.3, 0.4], [0.5, 0.45]], [0, 1], [16, 32], metric="spearman")
    >>> fig.axes[0].get_xlabel(), len(fig.axes[0].texts)
    ('prefix dimensions', 4)
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    grid = _grid(scores, layers, dims)
    fig = Figure(figsize=(1.2 + 0.9 * len(dims), 1.2 + 0.5 * len(layers)))
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", aspect="auto")
    fig.colorbar(image, ax=ax, label=metric)
    finite = grid[np.isfinite(grid)]
    middle = float((finite.min() + finite.max()) / 2) if finite.size else 0.0
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.3f}", ha="center", va="center", fontsize="small",
                        color="black" if grid[i, j] > middle else "white")
    for b in best:
        i, j = list(layers).index(b.layer), list(dims).index(b.dims)
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
    ax.set_xticks(range(len(dims)))
    ax.set_xticklabels([str(d) for d in dims])
    ax.set_yticks(range(len(layers)))
    ax.set_yticklabels([str(layer) for layer in layers])
    ax.set_xlabel("prefix dimensions")
    ax.set_ylabel("layer")
    ax.set_title(title if title is not None else f"{metric} by layer and prefix dimensions")
    fig.tight_layout()
    return fig


def plot_layer_grid(scores: Any, layers: Sequence[int], dims: Sequence[int], path: str | Path, *,
                    metric: str = "score", title: str | None = None, best: Sequence[BudgetBest] = ()) -> Path:
    """Write :func:`layer_grid_figure` as a PNG at ``path`` (parent folders created); returns ``path``.

    Examples
    --------
    >>> import tempfile, os
    >>> out = plot_layer_grid([[0.3, 0.4]], [6], [16, 32], os.path.join(tempfile.mkdtemp(), "g.png"))
    >>> out.suffix, out.stat().st_size > 1000
    ('.png', True)
    """
    fig = layer_grid_figure(scores, layers, dims, metric=metric, title=title, best=best)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, format="png")
    return path
