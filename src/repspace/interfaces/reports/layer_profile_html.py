"""A self-contained HTML page of layer profiles (``repspace layers profile --html``).

:func:`layer_profile_html` draws every figure of one or several
:class:`~repspace.workflows.layer_profile.LayerProfile` against depth (the
layer index): one panel per figure, one line per model with its 95% bootstrap
band, the shuffled-token baseline dashed in the same colour in the panel of its
figure, and the task's score per layer when one was given (the best layer
circled). A table per model gives every figure with its interval. The page is
built as :mod:`repspace.interfaces.reports.diagnosis_html` builds its own:
inline SVG from matplotlib's object API, one inline style block, every string
escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import InputError
from repspace.interfaces.reports.diagnosis_html import _CSS, _figure, _new, _num, _provenance, _svg
from repspace.workflows.layer_profile import LayerFigure, LayerProfile

__all__ = ["PANEL_TITLES", "layer_profile_html", "write_layer_profile_html"]

#: Panel titles of the figures (a figure not named here is titled by its JSON name).
PANEL_TITLES = {
    "prompt_entropy": "prompt entropy (Shannon, / log T)",
    "curvature": "curvature (radians)",
    "augmentation_invariance": "augmentation invariance (cosine)",
    "infonce": "InfoNCE loss of (input, perturbation) pairs (lower: more invariant)",
    "lidar": "LiDAR of (input, perturbation) pairs",
    "dime": "DiME of (input, perturbation) pairs",
    "intrinsic_dimension": "token-cloud TwoNN dimension",
    "neighbourhood_overlap": "neighbourhood overlap with the layer before",
    "mean_cosine": "mean pairwise cosine of tokens",
    "task": "task score",
}
_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b2", "#937860", "#da8bc3", "#8c8c8c")


def _panel_names(profiles: Sequence[LayerProfile]) -> list[str]:
    names: list[str] = []
    for p in profiles:
        for name in p.figures:
            if not name.endswith("_shuffled") and name not in names:
                names.append(name)
    if any(p.task_scores for p in profiles):
        names.append("task")
    return names


def _series(p: LayerProfile, name: str) -> Sequence[LayerFigure | None] | None:
    if name == "task":
        return p.task_scores
    return p.figures.get(name)


def _draw(ax: Any, layers: Sequence[int], series: Sequence[LayerFigure | None], colour: str, label: str,
          dashed: bool = False) -> None:
    x = np.array(layers, dtype=float)
    y = np.array([np.nan if f is None else f.mean for f in series])
    ok = np.isfinite(y)
    if not ok.any():
        return
    ax.plot(x[ok], y[ok], marker="o", markersize=3, linewidth=1.2, color=colour, label=label,
            linestyle="--" if dashed else "-")
    low = np.array([np.nan if f is None or f.low is None else f.low for f in series])
    high = np.array([np.nan if f is None or f.high is None else f.high for f in series])
    band = ok & np.isfinite(low) & np.isfinite(high)
    if band.any():
        ax.fill_between(x[band], low[band], high[band], color=colour, alpha=0.12 if dashed else 0.2, linewidth=0)


def _panel(profiles: Sequence[LayerProfile], name: str) -> str:
    fig, ax = _new(4.2, 2.9)
    for i, p in enumerate(profiles):
        colour = _COLOURS[i % len(_COLOURS)]
        series = _series(p, name)
        if series is None:
            continue
        _draw(ax, p.layers, series, colour, p.encoder)
        baseline = p.figures.get(f"{name}_shuffled")
        if baseline is not None:
            _draw(ax, p.layers, baseline, colour, f"{p.encoder}, shuffled", dashed=True)
        if name == "task" and p.best_layer is not None:
            best = p.task_scores[p.layers.index(p.best_layer)].mean  # type: ignore[index]
            ax.plot([p.best_layer], [best], marker="o", markersize=9, markerfacecolor="none", color=colour)
    ax.set_xlabel("layer (0 = embeddings)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(PANEL_TITLES.get(name, name), fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6, frameon=False)
    return _svg(fig, f"profile-{name}")


def _cell(f: LayerFigure | None) -> str:
    if f is None:
        return "—"
    ci = "" if f.low is None else f" [{_num(f.low)}, {_num(f.high)}]"
    return f"{_num(f.mean)}{ci}"


def _table(p: LayerProfile) -> str:
    esc = html.escape
    names = list(p.figures) + (["task"] if p.task_scores else [])
    head = "<tr><th>layer</th>" + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr>"
    body = []
    for j, layer in enumerate(p.layers):
        cells = "".join(f'<td class="num">{_cell(_series(p, n)[j])}</td>' for n in names)  # type: ignore[index]
        mark = ' class="shown"' if layer == p.best_layer else ""
        body.append(f"<tr{mark}><td>{layer}</td>{cells}</tr>")
    task = (f" Task {esc(p.task)}: best layer {p.best_layer} (highlighted)." if p.task_scores else "")
    skipped = ", ".join(f"{esc(k)} {v:,}" for k, v in p.skipped.items() if v)
    return (f"<h3>{esc(p.encoder)}</h3><p class=\"caption\">{p.n_inputs:,} inputs; mean over the inputs with its "
            f"95% bootstrap interval.{task}{' Undefined at the last layer for: ' + skipped + '.' if skipped else ''}"
            f"</p>{_provenance(p.provenance)}<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>")


def layer_profile_html(profiles: Sequence[LayerProfile], *, title: str) -> str:
    """Render layer profiles as one self-contained HTML page (one line per model in every panel).

    Examples
    --------
    >>> f = lambda m: LayerFigure(m, m - 0.1, m + 0.1, 50)
    >>> p = LayerProfile("hf-layers:tiny", (0, 1, 2), {"curvature": (f(1.0), f(1.2), f(1.1)),
    ...                  "mean_cosine": (f(0.2), f(0.3), f(0.5)), "mean_cosine_shuffled": (f(0.2), f(0.25), f(0.4))},
    ...                  50, {})
    >>> page = layer_profile_html([p], title="tiny <model>")
    >>> page.count("<svg"), "tiny &lt;model&gt;" in page, "<script" in page
    (2, True, False)
    """
    profiles = list(profiles)
    if not profiles or not all(isinstance(p, LayerProfile) for p in profiles):
        raise InputError("layer_profile_html needs one or more LayerProfile results")
    esc = html.escape
    figures = [_figure(_panel(profiles, name), f"{esc(name)} by layer") for name in _panel_names(profiles)]
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(str(title))}</title>", f"<style>\n{_CSS}</style>", "</head>", "<body>",
             f"<header><h1>{esc(str(title))}</h1><p class=\"shape\">{len(profiles)} model"
             f"{'s' if len(profiles) > 1 else ''}; dashed: the same inputs with their tokens shuffled</p></header>",
             '<section id="plots"><h2>Figures by layer</h2><div class="grid small">', *figures, "</div></section>",
             '<section id="tables"><h2>Per layer</h2>', *(_table(p) for p in profiles), "</section>",
             f"<footer>repspace {esc(version('repspace'))} · definitions: repspace.workflows.layer_profile</footer>",
             "</body>", "</html>", ""]
    return "\n".join(parts)


def write_layer_profile_html(path: str | Path, profiles: Sequence[LayerProfile], *, title: str) -> Path:
    """Write :func:`layer_profile_html` to ``path`` atomically (a reader never sees half a page).

    Examples
    --------
    >>> import os, tempfile
    >>> p = LayerProfile("hf-layers:tiny", (0, 1), {"curvature": (LayerFigure(1.0, None, None, 5),) * 2}, 5, {})
    >>> out = write_layer_profile_html(os.path.join(tempfile.mkdtemp(), "p.html"), [p], title="tiny")
    >>> out.name, out.read_text(encoding="utf-8").count("<svg")
    ('p.html', 1)
    """
    page = layer_profile_html(profiles, title=title).encode("utf-8")
    path = Path(path)
    write_atomic(path, lambda f: f.write(page), durable=True)
    return path
