"""A self-contained HTML report of one space's geometry (``repspace diagnose --html``).

:func:`diagnosis_html` renders a :class:`~repspace.engines.geometry.diagnose.Diagnosis` as one
HTML page: the title and provenance, ``n × d`` and the metric, the readings, a table of
every metric of ``to_dict()`` and four plots (k-occurrence histogram, eigen-spectrum on
log-log axes, per-dimension variance with the rogue dimensions marked, local intrinsic
dimension histogram). Given the diagnoses of several layers it adds one small panel per
key metric against the layer, and a per-layer table.

The page needs nothing else: plots are inline SVG drawn by matplotlib's object API
(``matplotlib.figure.Figure``, never pyplot's global state), text is drawn as paths,
the CSS is one inline ``<style>`` block, and every string that comes from the user
(title, provenance, layer labels) is escaped. Each SVG's ids are renamed to a
per-plot sequence, so ids are unique in the page and the output is deterministic.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from repspace.core.atomic import write_atomic
from repspace.core.errors import InputError
from repspace.core.estimate import Estimate
from repspace.engines.geometry.diagnose import ROGUE_MIN_COSINE, Diagnosis

__all__ = ["LAYER_METRICS", "diagnosis_html", "write_diagnosis_html"]

#: Per-layer panels: (METRICS.md key, axis title, value of a Diagnosis: a float or an Estimate).
LAYER_METRICS: tuple[tuple[str, str, Callable[[Diagnosis], float | Estimate]], ...] = (
    ("hubness.k_skewness", "k-skewness", lambda g: g.hubness.k_skewness),
    ("hubness.robin_hood", "Robin Hood index", lambda g: g.hubness.robin_hood),
    ("isotropy.mean_cosine", "mean cosine", lambda g: g.isotropy.mean_cosine),
    ("isotropy.top_pc_share", "top-PC variance share", lambda g: g.isotropy.top_pc_share),
    ("isotropy.isoscore", "IsoScore", lambda g: g.isotropy.isoscore),
    ("intrinsic_dimension.twonn", "TwoNN intrinsic dimension", lambda g: g.intrinsic_dimension.twonn),
    ("rank.effective_rank", "effective rank", lambda g: g.spectrum.effective_rank),
    ("uniformity", "uniformity", lambda g: g.uniformity),
)
#: Extra columns of the per-layer table.
_LAYER_TABLE_EXTRA: tuple[tuple[str, Callable[[Diagnosis], float | Estimate]], ...] = (
    ("intrinsic_dimension.mle", lambda g: g.intrinsic_dimension.mle),
    ("spectrum.alpha", lambda g: g.spectrum.alpha),
)
#: Keys of ``to_dict()`` left out of the metrics table (plotted, or shown at the top).
_NOT_IN_TABLE = frozenset({"spectrum.eigenvalues", "isotropy.dimension_variances", "readings"})
#: Bars of the k-occurrence histogram at most; rogue dimensions labelled on the variance plot at most.
_MAX_BINS, _MAX_LABELS = 60, 8
#: SVG metadata keys whose defaults (Creator, Date, Format, Type) matplotlib would write: none is kept.
_NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}

_CSS = """\
body{font:15px/1.45 system-ui,sans-serif;color:#1b1b1b;max-width:76rem;margin:1.5rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 .3rem}
h2{font-size:1.2rem;margin:2rem 0 .6rem;border-bottom:1px solid #ddd}
.shape{color:#555;margin:.2rem 0}
dl.provenance{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.6rem 0}
dl.provenance dt{color:#555}
dl.provenance dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
ul.readings li{margin:.2rem 0}
table{border-collapse:collapse;font-size:.9rem;margin:.4rem 0}
th,td{padding:.2rem .6rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.num{font-variant-numeric:tabular-nums}
tr.shown{background:#fff4d6}
.grid{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;flex:1 1 30rem;max-width:40rem}
.small figure{flex:1 1 16rem;max-width:20rem}
figure svg{width:100%;height:auto}
figure svg *{stroke-linejoin:round;stroke-linecap:butt}
figcaption,.caption{color:#555;font-size:.85rem}
footer{color:#777;font-size:.8rem;margin-top:2rem}
"""


def diagnosis_html(diagnosis: Diagnosis, *, title: str, layers: Sequence[tuple[str, Diagnosis]] | None = None,
                   provenance: Mapping[str, Any] | None = None) -> str:
    """Render a geometry diagnosis as one self-contained HTML page.

    Parameters
    ----------
    diagnosis : Diagnosis
        The space shown in detail (readings, metrics table, plots); with ``layers``,
        usually the last layer or a chosen one (the page says which).
    title : str
        Page title, e.g. ``"space glove"`` (escaped).
    layers : sequence of (str, Diagnosis), optional
        One diagnosis per layer, in order: adds a panel per key metric against the
        layer (:data:`LAYER_METRICS`) and a per-layer table.
    provenance : mapping, optional
        Encoder, layer, pooling, ...: shown as a list under the title (escaped;
        non-string values as JSON).

    Returns
    -------
    str
        The HTML page. Without ``layers`` it holds 4 inline ``<svg>`` plots; with
        them 4 + ``len(LAYER_METRICS)``. No external script, style, font or image.

    Raises
    ------
    InputError
        ``diagnosis`` or a layer's value is not a :class:`Diagnosis`.

    Examples
    --------
    >>> import numpy as np
    >>> from repspace.engines.geometry import diagnose
    >>> g = diagnose(np.random.default_rng(0).standard_normal((300, 8)), k=5)
    >>> page = diagnosis_html(g, title="random <normal>")
    >>> page.count("<svg"), "random &lt;normal&gt;" in page, "<script" in page
    (4, True, False)
    """
    _check(diagnosis, "diagnosis")
    labelled = [(str(label), _check(g, f"layer {label!r}")) for label, g in (layers or ())]
    shown = next((i for i, (_, g) in enumerate(labelled) if g is diagnosis), None)
    esc = html.escape
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(str(title))}</title>", f"<style>\n{_CSS}</style>", "</head>", "<body>",
        "<header>", f"<h1>{esc(str(title))}</h1>",
        (f'<p class="shape">{diagnosis.n:,} items × {diagnosis.d:,} dimensions · metric {esc(diagnosis.metric)}'
         f" · k = {diagnosis.hubness.k}</p>"),
        _provenance(provenance), "</header>",
    ]
    where = ""
    if labelled:
        where = f" ({esc(labelled[shown][0])})" if shown is not None else " (the space passed in detail)"
    parts += [f'<section id="readings"><h2>Readings{where}</h2>', '<ul class="readings">',
              *(f"<li>{esc(line)}</li>" for line in diagnosis.readings), "</ul></section>"]
    if labelled:
        parts.append(_layer_section(labelled, shown))
    parts += [f'<section id="metrics"><h2>Metrics{where}</h2>', _metrics_table(diagnosis), "</section>",
              f'<section id="plots"><h2>Plots{where}</h2>', '<div class="grid">',
              *_detail_figures(diagnosis), "</div></section>",
              f"<footer>repspace {esc(version('repspace'))} · definitions of every metric: METRICS.md (geometry)</footer>",
              "</body>", "</html>", ""]
    return "\n".join(p for p in parts if p)


def write_diagnosis_html(path: str | Path, diagnosis: Diagnosis, **kwargs: Any) -> Path:
    """Write :func:`diagnosis_html` to ``path`` atomically and return the path.

    The page goes to a temporary file in the same folder (created if missing),
    which then replaces ``path`` (``os.replace``): a reader sees the old file or
    the whole new one, never a partial page, and an existing file is overwritten.

    Parameters
    ----------
    path : str or Path
        Where to write, e.g. ``report.html``.
    diagnosis : Diagnosis
        As in :func:`diagnosis_html`.
    **kwargs
        ``title`` (required), ``layers``, ``provenance``: as in :func:`diagnosis_html`.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from repspace.engines.geometry import diagnose
    >>> g = diagnose(np.random.default_rng(0).standard_normal((300, 8)), k=5)
    >>> folder = tempfile.mkdtemp()
    >>> p = write_diagnosis_html(os.path.join(folder, "report.html"), g, title="random")
    >>> p.name, os.listdir(folder), p.read_text(encoding="utf-8").count("<svg")
    ('report.html', ['report.html'], 4)
    """
    page = diagnosis_html(diagnosis, **kwargs).encode("utf-8")
    path = Path(path)
    write_atomic(path, lambda f: f.write(page), durable=True)  # the umask decides the mode, as for any new file
    return path


# -- page parts ---------------------------------------------------------------------------------


def _check(value: Any, what: str) -> Diagnosis:
    if not isinstance(value, Diagnosis):
        raise InputError(f"{what} must be a Diagnosis (from repspace.engines.geometry.diagnose), got {type(value).__name__}")
    return value


def _provenance(provenance: Mapping[str, Any] | None) -> str:
    if not provenance:
        return ""
    rows = []
    for key, value in provenance.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        rows.append(f"<dt>{html.escape(str(key))}</dt><dd>{html.escape(text)}</dd>")
    return '<dl class="provenance">' + "".join(rows) + "</dl>"


def _num(value: Any) -> str:
    """A number as text: ints with separators, floats to 4 significant digits, never ``nan``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}" if math.isfinite(value) else "not finite"
    return html.escape(str(value))


def _cell(key: str, value: Any) -> str:
    """One metrics-table value of ``to_dict()`` as escaped HTML text."""
    if isinstance(value, dict) and {"value", "low", "high"} <= value.keys():
        how = ("exact" if value.get("exact") else
               f"95% interval [{_num(value['low'])}, {_num(value['high'])}], sampled")
        return f"{_num(value['value'])} ({how}, {_num(value.get('n_pairs'))} pairs)"
    if isinstance(value, dict) and "method" in value:  # a neighbour graph
        recall = "" if value.get("recall") is None else f", recall {_num(value['recall'])}"
        return f"{_num(value['method'])} ({_num(value.get('metric'))}){recall}"
    if key.endswith("rogue_dimensions"):
        return ", ".join(f"{r['dim']} (share {_num(r['share'])}, variance {_num(r['variance'])})"
                         for r in value) or "none"
    if key.endswith("alpha_ranks"):
        return f"{value[0]}–{value[1]}" if any(value) else "none fitted"
    if isinstance(value, (list, tuple)):
        return ", ".join(_num(v) for v in value)
    return _num(value)


def _metrics_table(g: Diagnosis) -> str:
    rows = [f"<tr><td>{html.escape(key)}</td><td class=\"num\">{_cell(key, value)}</td></tr>"
            for key, value in g.to_dict().items() if key not in _NOT_IN_TABLE]
    return "<table><thead><tr><th>metric</th><th>value</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"


def _layer_section(labelled: list[tuple[str, Diagnosis]], shown: int | None) -> str:
    esc = html.escape
    caption = (f"The readings, metrics and plots below are for {esc(labelled[shown][0])} (highlighted)."
               if shown is not None else
               "The readings, metrics and plots below are for the space passed in detail, not one of these layers.")
    figures = [_figure(_layer_panel(labelled, shown, label, get), f"{esc(key)} by layer")
               for key, label, get in LAYER_METRICS]
    columns = [key for key, _, _ in LAYER_METRICS] + [key for key, _ in _LAYER_TABLE_EXTRA]
    getters = [get for _, _, get in LAYER_METRICS] + [get for _, get in _LAYER_TABLE_EXTRA]
    head = "<tr><th>layer</th><th>n × d</th>" + "".join(f"<th>{esc(c)}</th>" for c in columns) + "</tr>"
    body = []
    for i, (label, g) in enumerate(labelled):
        values = [get(g) for get in getters]
        cells = "".join(f'<td class="num">{_num(v.value if isinstance(v, Estimate) else v)}</td>' for v in values)
        mark = ' class="shown"' if i == shown else ""
        body.append(f"<tr{mark}><td>{esc(label)}</td><td>{g.n:,} × {g.d:,}</td>{cells}</tr>")
    return (f'<section id="layers"><h2>Across layers</h2><p class="caption">{caption}</p>'
            f'<div class="grid small">{"".join(figures)}</div>'
            f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table></section>")


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{caption}</figcaption></figure>"


def _detail_figures(g: Diagnosis) -> list[str]:
    hub, spec, iso, intr = g.hubness, g.spectrum, g.isotropy, g.intrinsic_dimension
    n_hubs = int(hub.hub_flag.sum())
    threshold = hub.hub_size * hub.k
    hub_caption = (f"k-occurrence N<sub>k</sub>: in how many of the {hub.k}-nearest-neighbour lists each item "
                   f"appears (mean {hub.k}). {n_hubs:,} hubs (N<sub>k</sub> ≥ {threshold:g}) take "
                   f"{hub.hub_occurrence:.1%} of all slots; {hub.antihub_rate:.1%} of items appear in none.")
    id_svg, beyond = _local_id_plot(intr.local, intr.twonn, intr.mle)
    cut = f" {beyond:,} item{'s' if beyond > 1 else ''} not drawn (above the axis, or not finite)." if beyond else ""
    id_caption = (f"Per-item MLE intrinsic dimension (k = {intr.k}); lines: global TwoNN {intr.twonn:.3g}, "
                  f"MLE {intr.mle:.3g}.{cut}")
    if spec is None or iso is None:  # a poincare space: the measures on coordinates are undefined
        return [_figure(_k_occurrence_plot(hub.k_occurrence, hub.k, threshold), hub_caption), _figure(id_svg, id_caption)]
    lo, hi = spec.alpha_ranks
    fit = f"fitted decay α = {spec.alpha:.3g} on ranks {lo}–{hi}" if lo else "no decay fitted"
    spec_caption = f"Covariance eigenvalues by rank, log-log ({fit}; non-positive eigenvalues are not drawn)."
    rogue = iso.rogue_dimensions.dimensions
    if not rogue:
        rogue_text = "no rogue dimension"
    elif iso.mean_cosine.value > ROGUE_MIN_COSINE:
        rogue_text = (f"in red the {len(rogue)} rogue dimension{'s' if len(rogue) > 1 else ''}, whose share "
                      f"exceeds {iso.rogue_dimensions.threshold:.3g}")
    else:
        rogue_text = (f"{len(rogue)} dimension{'s' if len(rogue) > 1 else ''} above the rogue threshold not marked: "
                      f"the mean cosine {iso.mean_cosine.value:.2g} ≤ {ROGUE_MIN_COSINE} makes the shares noise")
    var_caption = (f"Variance of each dimension, and its share of the mean cosine (Timkey &amp; van Schijndel "
                   f"2021): {rogue_text}.")
    return [_figure(_k_occurrence_plot(hub.k_occurrence, hub.k, threshold), hub_caption),
            _figure(_spectrum_plot(spec.eigenvalues, spec.alpha, spec.alpha_ranks), spec_caption),
            _figure(_variance_plot(iso.variances, iso.rogue_dimensions.shares, iso.rogue_dimensions.threshold,
                                   rogue if iso.mean_cosine.value > ROGUE_MIN_COSINE else ()), var_caption),
            _figure(id_svg, id_caption)]


# -- plots --------------------------------------------------------------------------------------


def _new(width: float = 6.4, height: float = 3.6) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _svg(fig: Figure, label: str) -> str:
    """The figure as an inline ``<svg>`` element: no XML prolog, metadata or style block; ids unique per plot."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata=_NO_METADATA)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<defs>\s*<style[^>]*>.*?</style>\s*</defs>\s*", "", text, count=1, flags=re.DOTALL)
    ids: dict[str, str] = {}
    prefix = f"{label}-"
    for old in re.findall(r'\bid="([^"]+)"', text):
        ids.setdefault(old, f"{prefix}{len(ids)}")
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{ids[m.group(1)]}"', text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{ids.get(m.group(1), m.group(1))}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{ids.get(m.group(1), m.group(1))})", text)
    return text.replace("<svg ", f'<svg role="img" aria-label="{html.escape(label)}" ', 1).strip()


def _empty(ax: Any, message: str) -> None:
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def _k_occurrence_plot(nk: np.ndarray, k: int, threshold: float) -> str:
    fig, ax = _new()
    top = int(nk.max()) if nk.size else 0
    width = max(1, math.ceil((top + 1) / _MAX_BINS))
    edges = -0.5 + width * np.arange(math.ceil((top + 1) / width) + 1)
    counts, _ = np.histogram(nk, bins=edges)
    keep = counts > 0
    ax.bar(edges[:-1][keep] + width / 2, counts[keep], width=width, color="#4c72b0", edgecolor="white",
           linewidth=0.3)
    ax.set_yscale("log")
    ax.axvline(k, color="0.35", linestyle=":", linewidth=1.2, label=f"mean = k = {k}")
    ax.axvline(threshold, color="#c44e52", linewidth=1.5, label=f"hub threshold {threshold:g}")
    ax.axvspan(threshold, max(threshold, top + width) + 0.5, color="#c44e52", alpha=0.08)
    ax.set_xlabel("$N_k$ (appearances in neighbour lists)")
    ax.set_ylabel("items (log scale)")
    ax.set_title("k-occurrence")
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig, "k-occurrence")


def _spectrum_plot(eigenvalues: np.ndarray, alpha: float, ranks: tuple[int, int]) -> str:
    fig, ax = _new()
    lam = np.asarray(eigenvalues, dtype=np.float64)
    rank = np.arange(1, lam.size + 1)
    ok = np.isfinite(lam) & (lam > 0)
    ax.set_title("eigen-spectrum")
    if not ok.any():
        _empty(ax, "no positive eigenvalue")
        return _svg(fig, "spectrum")
    ax.loglog(rank[ok], lam[ok], marker=".", markersize=3, linewidth=1, color="#4c72b0", label="eigenvalues")
    lo, hi = ranks
    if 1 <= lo < hi <= lam.size and ok[lo - 1:hi].all():
        r = np.arange(lo, hi + 1, dtype=np.float64)
        c = float(np.mean(np.log(lam[lo - 1:hi]) + alpha * np.log(r)))  # intercept of the α line
        ax.loglog(r, np.exp(c - alpha * np.log(r)), "--", color="#c44e52", linewidth=1.5,
                  label=f"α = {alpha:.3g} (ranks {lo}–{hi})")
        ax.axvspan(lo, hi, color="#c44e52", alpha=0.07)
    ax.set_xlabel("rank")
    ax.set_ylabel("eigenvalue")
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig, "spectrum")


def _variance_plot(variances: np.ndarray, shares: np.ndarray, threshold: float, rogue: Sequence[Any]) -> str:
    """Two panels over the dimension index: variance, and share of the mean cosine; rogue dimensions in red."""
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    v = np.asarray(variances, dtype=np.float64)
    c = np.asarray(shares, dtype=np.float64)
    idx = np.arange(v.size)
    red = np.zeros(v.size, bool)
    red[[r.dim for r in rogue]] = True
    for ax, y in ((top, v), (bottom, c)):
        if v.size <= 100:
            ax.bar(idx, y, width=0.8, color=np.where(red, "#c44e52", "0.6").tolist())
        else:
            ax.vlines(idx[~red], 0.0, y[~red], color="0.55", linewidth=0.8)
            ax.vlines(idx[red], 0.0, y[red], color="#c44e52", linewidth=1.2)
    for r in rogue[:_MAX_LABELS]:
        top.annotate(str(r.dim), (r.dim, v[r.dim]), textcoords="offset points", xytext=(0, 3),
                     ha="center", fontsize=8, color="#c44e52")
    top.set_ylim(bottom=0)
    top.set_ylabel("variance")
    top.set_title("per-dimension variance (red: rogue dimensions)" if rogue else "per-dimension variance")
    if np.any(c != 0):
        bottom.axhline(threshold, color="#c44e52", linestyle="--", linewidth=1,
                       label=f"rogue threshold {threshold:.3g}")
        bottom.legend(fontsize=8, frameon=False)
    else:
        bottom.text(0.5, 0.5, "shares undefined (mean cosine 0)", ha="center", va="center",
                    transform=bottom.transAxes, color="0.4")
    bottom.set_ylabel("share of\nmean cosine")
    bottom.set_xlim(-1, v.size)
    bottom.set_xlabel("dimension")
    return _svg(fig, "variance")


def _local_id_plot(local: np.ndarray, twonn: float, mle: float) -> tuple[str, int]:
    """The histogram, and how many items it leaves out: non-finite, or beyond the axis (at most the top 0.5%)."""
    fig, ax = _new()
    ax.set_title("local intrinsic dimension")
    values = np.asarray(local, dtype=np.float64)
    finite = np.isfinite(values)
    values, bad = values[finite], int(np.count_nonzero(~finite))
    if not values.size:
        _empty(ax, "no finite local estimate")
        return _svg(fig, "local-id"), bad
    globals_ = [x for x in (twonn, mle) if math.isfinite(x)]
    upper = max([float(np.quantile(values, 0.995)), *globals_])
    beyond = int(np.count_nonzero(values > upper))
    shown = values[values <= upper]
    ax.hist(shown, bins=min(50, max(10, int(math.sqrt(shown.size)))), color="#55a868", edgecolor="white",
            linewidth=0.3)
    if math.isfinite(twonn):
        ax.axvline(twonn, color="#c44e52", linewidth=1.5, label=f"TwoNN {twonn:.3g}")
    if math.isfinite(mle):
        ax.axvline(mle, color="#8172b2", linestyle="--", linewidth=1.5, label=f"MLE {mle:.3g}")
    ax.set_xlabel("local ID (MLE per item)")
    ax.set_ylabel("items")
    ax.legend(fontsize=8, frameon=False)
    return _svg(fig, "local-id"), beyond + bad


def _layer_panel(labelled: list[tuple[str, Diagnosis]], shown: int | None, title: str,
                 get: Callable[[Diagnosis], float | Estimate]) -> str:
    fig, ax = _new(3.4, 2.5)
    raw = [get(g) for _, g in labelled]
    est = [v if isinstance(v, Estimate) else None for v in raw]
    y = np.array([v.value if isinstance(v, Estimate) else float(v) for v in raw])
    x = np.arange(y.size)
    ok = np.isfinite(y)
    ax.plot(x[ok], y[ok], marker="o", markersize=3, linewidth=1.2, color="#4c72b0")
    if all(e is not None for e in est) and any(not e.exact for e in est):  # sampled: draw the 95% band
        low = np.array([e.low for e in est])
        high = np.array([e.high for e in est])
        ax.fill_between(x[ok], low[ok], high[ok], color="#4c72b0", alpha=0.2, linewidth=0)
    if shown is not None and ok[shown]:
        ax.plot([shown], [y[shown]], marker="o", markersize=8, markerfacecolor="none", color="#c44e52")
    step = max(1, math.ceil(y.size / 10))
    ticks = x[::step]
    ax.set_xticks(ticks, [labelled[i][0] for i in ticks], fontsize=7, parse_math=False,  # "$" stays "$"
                  rotation=45 if y.size > 4 else 0, ha="right" if y.size > 4 else "center")
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(title, fontsize=9)
    return _svg(fig, f"layers-{title.replace(' ', '-')}")

