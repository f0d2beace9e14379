"""``repspace layers grid``: score every (layer, prefix dimension) cell of an encoder on a task, from one pass.

:func:`layer_grid` is the evaluation sweep of :func:`repspace.workflows.evaluate.run` with every layer
(``layer="all"``: one forward pass per batch gives all of them) and prefix truncations (Matryoshka / 2DMSE
prefixes, float32), read as a grid (:meth:`~repspace.workflows.evaluate.EvalReport.grid`), with the best cell per
bytes-per-vector budget (:func:`~repspace.engines.eval.layer_grid.best_per_budget`) and, on request, a heat map
PNG (:func:`~repspace.engines.eval.layer_grid.plot_layer_grid`). No score is computed here: each cell is exactly
the result ``repspace eval TASK --layer L --dims D`` gives.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "pairs.csv")
>>> _ = open(path, "w").write("a cat sat,a cat was sitting,5\\na dog ran,the market fell,0\\n"
...                            "birds sing,birds are singing,4.5\\nhe cooks,the car is red,0.5\\n")
>>> g = layer_grid("hf-layers:minilm", "sts", path, dims="16,full", bootstrap=0)
>>> g.layers, g.dims, g.bytes_per_vector, g.scores.shape
((0, 1, 2, 3, 4, 5, 6), (16, 384), (64, 1536), (7, 2))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.errors import InputError
from repspace.core.progress import Progress
from repspace.engines.eval.layer_grid import BudgetBest, best_per_budget, plot_layer_grid

__all__ = ["LayerGrid", "layer_grid"]


@dataclass(frozen=True, eq=False)
class LayerGrid:
    """Scores of every (layer, prefix width) cell of an encoder on one task, and the best cell per budget.

    Attributes
    ----------
    encoder, task, metric : str
        The encoder spec, the task's name (``sts:<file>``) and its main metric.
    layers : tuple of int
    dims : tuple of int
        Prefix widths, the full width last when asked.
    bytes_per_vector : tuple of int
        Each width's cost (float32).
    scores, ci_low, ci_high : ndarray of shape (n_layers, n_dims)
        Main scores and their bootstrap interval ends (NaN without resamples).
    best : tuple of BudgetBest
        One per budget, smallest first.
    plot : Path or None
        The heat map PNG.

    Examples
    --------
    >>> g = LayerGrid("hf-layers:m", "sts:t", "spearman", (0, 1), (8, 16), (32, 64), np.array([[0.1, 0.2], [0.3, 0.4]]),
    ...               np.full((2, 2), np.nan), np.full((2, 2), np.nan))
    >>> g.to_dict()["cells"][3]
    {'layer': 1, 'dims': 16, 'bytes_per_vector': 64, 'score': 0.4, 'ci_low': None, 'ci_high': None}
    """

    encoder: str
    task: str
    metric: str
    layers: tuple[int, ...]
    dims: tuple[int, ...]
    bytes_per_vector: tuple[int, ...]
    scores: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    best: tuple[BudgetBest, ...] = ()
    plot: Path | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """``{"encoder", "task", "metric", "layers", "dims", "bytes_per_vector", "cells": [...], "best": [...],
        "plot"}``, a cell per (layer, width), layer by layer."""
        def num(x: float) -> float | None:
            return None if not np.isfinite(x) else float(x)

        cells = [{"layer": int(layer), "dims": int(d), "bytes_per_vector": int(b), "score": num(self.scores[i, j]),
                  "ci_low": num(self.ci_low[i, j]), "ci_high": num(self.ci_high[i, j])}
                 for i, layer in enumerate(self.layers)
                 for j, (d, b) in enumerate(zip(self.dims, self.bytes_per_vector, strict=True))]
        return {"encoder": self.encoder, "task": self.task, "metric": self.metric, "layers": list(self.layers),
                "dims": list(self.dims), "bytes_per_vector": list(self.bytes_per_vector), "cells": cells,
                "best": [b.to_dict() for b in self.best], "plot": None if self.plot is None else str(self.plot)}


def _checked_dims(dims: str, width: int, encoder: str) -> str:
    """``dims`` as given, once every entry is at most the encoder's width (one error line otherwise)."""
    from repspace.engines.eval.compression import parse_dims

    above = [d for d in parse_dims(dims) if d is not None and d > width]
    if above:
        raise InputError(f"--dims {', '.join(map(str, above))} above the width of {encoder}: it has {width} "
                         "dimensions")
    return dims


def layer_grid(encoder: str, task: str, source: str | Path, *, dims: str = "32,64,128,full", bootstrap: int = 1000,
               seed: int = 0, plot: str | Path | None = None, batch_size: int = 64,
               encoder_options: dict[str, Any] | None = None, progress: Progress | None = None,
               **options: Any) -> LayerGrid:
    """Score every (layer, prefix width) cell of ``encoder`` on ``task`` and find the best cell per budget.

    Parameters
    ----------
    encoder : str
        A layered encoder, ``hf-layers:<folder>``.
    task : str
        A task with the compression sweep: ``sts``, ``pairclass`` or ``retrieval``.
    source : str or Path
        The task's data (as ``repspace eval TASK``).
    dims : str
        Prefix widths, e.g. ``"32,64,128,full"``; none may exceed the encoder's width.
    bootstrap, seed : int
        Resamples (0: none) and seed of each cell's 95% interval.
    plot : path, optional
        Write the heat map PNG there.
    batch_size, encoder_options, progress, **options
        As :func:`repspace.workflows.evaluate.run`.

    Returns
    -------
    LayerGrid

    Raises
    ------
    InputError
        An encoder without layers, a width above the encoder's, a task without the sweep, bad data.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.csv")
    >>> _ = open(path, "w").write("a cat sat,a cat was sitting,5\\na dog ran,the market fell,0\\n"
    ...                            "birds sing,birds are singing,4.5\\nhe cooks,the car is red,0.5\\n")
    >>> g = layer_grid("hf-layers:minilm", "sts", path, dims="32,full", bootstrap=0)
    >>> [b.budget for b in g.best], g.best[0].dims
    ([128, 1536], 32)
    """
    from repspace.engines.encoders import get_encoder
    from repspace.engines.encoders.base import LayeredEncoder
    from repspace.workflows.evaluate import run

    enc = get_encoder(encoder, **(encoder_options or {}))
    if not isinstance(enc, LayeredEncoder):
        raise InputError(f"{encoder} has no layers to grid; use a layered encoder such as hf-layers:minilm")
    _checked_dims(dims, enc.dim, encoder)
    report = run(task, source, encoder=encoder, layer="all", encoder_options=encoder_options, dims=dims,
                 methods=("prefix",), batch_size=batch_size, bootstrap=bootstrap, seed=seed, progress=progress,
                 **options)
    grid = report.grid()
    widths = {row["codec"]: (row["dims"] or enc.dim, row["bytes_per_vector"]) for row in report.tradeoff}
    dims_of, cost = zip(*(widths[c] for c in grid["codecs"]), strict=True)

    def table(rows: list[list[Any]], pick: Any = float) -> np.ndarray:
        return np.array([[np.nan if v is None else float(pick(v)) for v in row] for row in rows], dtype=np.float64)

    scores = table(grid["scores"])
    lows, highs = table(grid["intervals"], lambda ci: ci[0]), table(grid["intervals"], lambda ci: ci[1])
    layers = tuple(int(layer) for layer in grid["layers"])
    best = tuple(best_per_budget(scores, layers, dims_of, cost, ci_low=lows, ci_high=highs))
    first = report.results[0]
    path = None
    if plot is not None:
        path = plot_layer_grid(scores, layers, dims_of, plot, metric=first.main_metric, best=best,
                               title=f"{first.task_name}: {encoder}")
    return LayerGrid(encoder, first.task_name, first.main_metric, layers, tuple(int(d) for d in dims_of),
                     tuple(int(b) for b in cost), scores, lows, highs, best, path)
