"""A self-contained HTML page of a space's sparse dictionary (``repspace interpret sae --html``).

:func:`dictionary_html` renders a :class:`~repspace.workflows.dictionary.DictionaryReport` as one HTML page:
the dictionary's parameters and file, its metrics on the training items, the held-out items and all items
(FVU, NMSE, L0, dead latents), the feature-density histogram (log10 of each latent's firing frequency over
all items), the training curve, and a table of the most frequent latents with their density, mean
activation and top items (ids and texts).

As the geometry report (:mod:`repspace.interfaces.reports.diagnosis_html`), whose plotting helpers it uses,
the page needs nothing else: plots are inline SVG drawn by matplotlib's object API, the CSS is inline, and
every string that comes from the store (ids, texts, names, paths) is escaped with :func:`html.escape`.
"""

from __future__ import annotations

import html
import math
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from repspace.core.atomic import write_atomic
from repspace.core.errors import InputError
from repspace.interfaces.reports.diagnosis_html import _CSS, _empty, _new, _num, _svg
from repspace.workflows.dictionary import DictionaryReport

__all__ = ["dictionary_html", "write_dictionary_html"]

#: Characters of an item's text shown in the latents table.
_TEXT_CHARS = 160

_EXTRA_CSS = """\
table.metrics td.num,table.metrics th{text-align:right}
table.metrics td:first-child,table.metrics th:first-child{text-align:left}
table.latents ol{margin:0;padding-left:1.2rem}
table.latents .text{color:#555;font-size:.85rem}
table.latents .act{color:#777;font-variant-numeric:tabular-nums}
"""


def dictionary_html(report: DictionaryReport, *, title: str | None = None) -> str:
    """Render a fitted dictionary as one self-contained HTML page.

    Parameters
    ----------
    report : DictionaryReport
        From :func:`repspace.workflows.dictionary.fit_dictionary`.
    title : str, optional
        Default ``"dictionary <name> of space <space>"`` (escaped either way).

    Returns
    -------
    str
        The page: 2 inline ``<svg>`` plots and a ``<table class="latents">``; no external script, style,
        font or image.

    Raises
    ------
    InputError
        ``report`` is not a :class:`DictionaryReport`.

    Examples
    --------
    >>> from repspace.store import example_space
    >>> from repspace.workflows.dictionary import fit_dictionary
    >>> sp = example_space(300, 6, texts=["<b>bold</b> & co"] * 300)
    >>> page = dictionary_html(fit_dictionary(sp, 12, 3, epochs=2))
    >>> page.count("<svg"), "&lt;b&gt;bold&lt;/b&gt; &amp; co" in page, "<b>" in page, 'class="latents"' in page
    (2, True, False, True)
    """
    if not isinstance(report, DictionaryReport):
        raise InputError(f"report must be a DictionaryReport (from repspace.workflows.dictionary), "
                         f"got {type(report).__name__}")
    esc = html.escape
    title = f"dictionary {report.name} of space {report.space}" if title is None else str(title)
    shape = (f"{report.n:,} items × {report.dim:,} dimensions · metric {esc(report.metric)}"
             f"{' (rows normalised)' if report.normalized else ''} · {report.n_latents:,} latents, k = {report.k}")
    facts = [
        ("file", str(report.path)), ("generation", f"{report.generation:,}"),
        ("items", f"{report.n_train:,} trained on, {report.n_heldout:,} held out (share {report.holdout:g}, "
                  f"seed {report.seed})"),
        ("training", f"{report.epochs:,} epochs, {report.fit_seconds:.1f} s ({report.seconds:.1f} s in all)"),
    ]
    if report.save_top is not None:
        facts.append(("metadata", f"top latents of {report.saved:,} items saved under {report.save_top!r}"))
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>", f"<style>\n{_CSS}{_EXTRA_CSS}</style>", "</head>", "<body>",
        "<header>", f"<h1>{esc(title)}</h1>", f'<p class="shape">{shape}</p>',
        '<dl class="provenance">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts) + "</dl>",
        "</header>",
        '<section id="metrics"><h2>Metrics</h2>', _metrics_table(report), "</section>",
        '<section id="plots"><h2>Plots</h2>', '<div class="grid">', *_figures(report), "</div></section>",
        '<section id="latents"><h2>Latents</h2>', _latents_table(report), "</section>",
        f"<footer>repspace {esc(version('repspace'))} · top-k sparse autoencoder (Gao et al. 2024); "
        "FVU = fraction of variance unexplained, NMSE = mean of ‖x − x̂‖² / ‖x‖², L0 = active latents per item"
        "</footer>",
        "</body>", "</html>", "",
    ]
    return "\n".join(p for p in parts if p)


def write_dictionary_html(report: DictionaryReport, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`dictionary_html` to ``path`` atomically (the folder is created) and return the path.

    ``kwargs``: ``title``, as in :func:`dictionary_html`.

    Examples
    --------
    >>> import tempfile, os
    >>> from repspace.store import example_space
    >>> from repspace.interpret import fit_dictionary
    >>> path = write_dictionary_html(fit_dictionary(example_space(200, 6), 12, 3, epochs=1),
    ...                              os.path.join(tempfile.mkdtemp(), "new-folder", "sae.html"), title="toy")
    >>> path.name, path.read_text().startswith("<!DOCTYPE html>"), "<title>toy</title>" in path.read_text()
    ('sae.html', True, True)
    """
    page = dictionary_html(report, **kwargs).encode("utf-8")
    path = Path(path)
    write_atomic(path, lambda f: f.write(page), durable=True)
    return path


# -- page parts ---------------------------------------------------------------------------------


def _metrics_table(r: DictionaryReport) -> str:
    sets = [("training items", r.train), ("held-out items", r.heldout), ("all items", r.overall)]
    head = "<tr><th>measure</th>" + "".join(f"<th>{name}</th>" for name, _ in sets) + "</tr>"

    def row(label: str, get: Any) -> str:
        cells = "".join(f'<td class="num">{"—" if m is None else _num(get(m))}</td>' for _, m in sets)
        return f"<tr><td>{label}</td>{cells}</tr>"

    body = [row("items", lambda m: m.n), row("FVU", lambda m: m.fvu), row("NMSE", lambda m: m.nmse),
            row("L0 (active latents per item)", lambda m: m.l0),
            row("dead fraction (never fired)", lambda m: m.dead_fraction)]
    window = (f'<p class="caption">Dead in the training window (no firing on the last '
              f"{int(r.model.dead_window):,} training rows): {_num(r.overall.dead_fraction_train)}.</p>")
    return (f'<table class="metrics"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>{window}')


def _figures(r: DictionaryReport) -> list[str]:
    m = r.overall
    never = int((m.density == 0).sum())
    dens_caption = (f"Feature density: latents by log<sub>10</sub> of their firing frequency over all {m.n:,} "
                    f"items ({_num(m.density_edges[1] - m.density_edges[0])}-decade bins); "
                    f"{never:,} latent{'s' if never != 1 else ''} never fired (not drawn).")
    held = "" if r.heldout is None else f"; dashed: held-out FVU {_num(r.heldout.fvu)} after training"
    curve_caption = f"Training FVU (batches' mean, as trained) after each epoch{held}."
    return [f"<figure>{_density_plot(m.density_edges, m.density_counts)}<figcaption>{dens_caption}"
            "</figcaption></figure>",
            f"<figure>{_curve_plot(r)}<figcaption>{curve_caption}</figcaption></figure>"]


def _latents_table(r: DictionaryReport) -> str:
    esc = html.escape
    if not r.latents:
        return '<p class="caption">No latent fired on any item.</p>'
    body = []
    for rank, lat in enumerate(r.latents, 1):
        items = []
        for item_id, text, act in lat.items:
            shown = ""
            if text:
                cut = text if len(text) <= _TEXT_CHARS else text[:_TEXT_CHARS] + "…"
                shown = f' <span class="text">{esc(cut)}</span>'
            items.append(f'<li>{esc(item_id)}{shown} <span class="act">{_num(act)}</span></li>')
        body.append(f'<tr><td class="num">{rank}</td><td class="num">{lat.latent}</td>'
                    f'<td class="num">{_num(lat.density)}</td><td class="num">{_num(lat.mean_activation)}</td>'
                    f"<td><ol>{''.join(items)}</ol></td></tr>")
    caption = (f'<p class="caption">The {len(r.latents):,} most frequent latents over all items; '
               "density = share of items where the latent is active, mean activation over those items; "
               "top items by activation.</p>")
    head = ("<tr><th>#</th><th>latent</th><th>density</th><th>mean activation</th>"
            "<th>top items (id, text, activation)</th></tr>")
    return f'{caption}<table class="latents"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


# -- plots --------------------------------------------------------------------------------------


def _density_plot(edges: np.ndarray, counts: np.ndarray) -> str:
    fig, ax = _new()
    ax.set_title("feature density")
    edges = np.asarray(edges, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    if not counts.size or counts.sum() == 0:
        _empty(ax, "no latent fired")
        return _svg(fig, "density")
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="#4c72b0", edgecolor="white",
           linewidth=0.5)
    ax.set_xlabel("log$_{10}$ firing frequency")
    ax.set_ylabel("latents")
    ax.set_xlim(edges[0], edges[-1])
    return _svg(fig, "density")


def _curve_plot(r: DictionaryReport) -> str:
    fig, ax = _new()
    ax.set_title("training")
    epochs = [h.get("epoch") for h in r.history]
    fvu = [h.get("fvu") for h in r.history]
    points = [(e, f) for e, f in zip(epochs, fvu) if isinstance(f, (int, float)) and math.isfinite(f)]
    if not points:
        _empty(ax, "no training record")
        return _svg(fig, "training")
    x, y = zip(*points)
    ax.plot(x, y, marker="o", markersize=3, linewidth=1.2, color="#4c72b0", label="training FVU")
    if r.heldout is not None and math.isfinite(r.heldout.fvu):
        ax.axhline(r.heldout.fvu, color="#c44e52", linestyle="--", linewidth=1.2,
                   label=f"held-out FVU {r.heldout.fvu:.3g}")
    ax.set_xlabel("epoch")
    ax.set_ylabel("FVU")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig, "training")
