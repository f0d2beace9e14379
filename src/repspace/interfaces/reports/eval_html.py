"""A self-contained HTML page of evaluation results (``repspace eval report``).

:func:`eval_report_html` renders a :class:`~repspace.workflows.evaluate.ResultsReport`:
per task, a table of the models (main score, its 95% interval, the units it is
over), a forest plot of the scores with their intervals, the table of every
pair's difference with its interval and Holm-corrected p-value (``*`` where
p <= 0.05), and each model's per-part breakdown when its result carries one.

Like the diagnose report, the page needs nothing else: no script, one inline
``<style>``, the plots inline SVG (drawn here, so that the models' names are
text in the page's own fonts, whatever their script). Every string from the
results (model names, task names, sources) is HTML-escaped; control characters
and lone surrogates, which HTML cannot carry, are written as visible
``\\uXXXX`` escapes. Numbers show 4 decimals; each numeric cell also carries
its exact value in ``data-value``.
"""

from __future__ import annotations

import html
import math
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

from repspace.core.atomic import write_atomic
from repspace.core.errors import InputError
from repspace.engines.eval.uncertainty import Comparison
from repspace.workflows.evaluate import ModelRow, ResultsReport, TaskReport

__all__ = ["eval_report_html", "write_eval_report_html"]

#: Characters HTML cannot carry as text (C0 but tab and newline, DEL, C1, lone surrogates, U+FFFE/U+FFFF).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
#: Forest plot geometry (SVG user units): width, label column, row height, margins; name length before "…".
_WIDTH, _LABELS, _ROW, _TOP, _BOTTOM, _RIGHT, _MAX_LABEL = 760, 230, 26, 14, 46, 24, 34

_CSS = """\
body{font:15px/1.45 system-ui,sans-serif;color:#1b1b1b;max-width:76rem;margin:1.5rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 .3rem}
h2{font-size:1.2rem;margin:2rem 0 .6rem;border-bottom:1px solid #ddd}
h3{font-size:1rem;margin:1.2rem 0 .3rem}
.summary{color:#555;margin:.2rem 0}
dl.provenance{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.6rem 0}
dl.provenance dt{color:#555}
dl.provenance dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
table{border-collapse:collapse;font-size:.9rem;margin:.4rem 0}
th,td{padding:.2rem .6rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{font-weight:600}
td.num{font-variant-numeric:tabular-nums;text-align:right;white-space:nowrap}
td.name{overflow-wrap:anywhere;max-width:26rem}
td.src{color:#666;font-family:ui-monospace,monospace;font-size:.8rem;overflow-wrap:anywhere;max-width:18rem}
td.mark{color:#c44e52;font-weight:700}
tr.significant td{background:#fff4d6}
tr.macro td{border-top:1px solid #bbb;font-style:italic}
figure{margin:.6rem 0;max-width:48rem}
figure svg{width:100%;height:auto}
figcaption,.caption{color:#555;font-size:.85rem}
footer{color:#777;font-size:.8rem;margin-top:2rem}
"""


def eval_report_html(report: ResultsReport, *, title: str = "evaluation report") -> str:
    """Render evaluation results as one self-contained HTML page.

    Parameters
    ----------
    report : ResultsReport
        From :func:`repspace.workflows.evaluate.results_report`.
    title : str
        The page's title (escaped).

    Returns
    -------
    str
        The page: a ``<section class="task">`` per task, holding ``table.models``,
        one forest plot (``<svg>``), ``table.comparisons`` when there are
        comparisons, and a ``table.parts`` per model with a per-part breakdown.
        No script, external style, font or image.

    Raises
    ------
    InputError
        ``report`` is not a :class:`ResultsReport`.

    Examples
    --------
    >>> from repspace.workflows.evaluate import ModelRow, ResultsReport, TaskReport
    >>> rows = (ModelRow("<b>x</b>ü", "a.json", "spearman", 0.71234, 0.65, 0.77, 0.95, 150),
    ...         ModelRow("static", "b.json", "spearman", 0.6, 0.52, 0.67, 0.95, 150))
    >>> page = eval_report_html(ResultsReport((TaskReport("sts:stsb", "test", rows),)))
    >>> page.count("<svg"), "&lt;b&gt;x&lt;/b&gt;ü" in page, "<b>x" in page, "0.7123" in page, "<script" in page
    (1, True, False, True, False)
    """
    if not isinstance(report, ResultsReport):
        raise InputError(f"an evaluation report must be a ResultsReport (from results_report), "
                         f"got {type(report).__name__}")
    n_tasks = len(report.tasks)
    summary = (f"{report.n_results:,} result{'s' if report.n_results != 1 else ''} of {n_tasks:,} "
               f"task{'s' if n_tasks != 1 else ''}")
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>", f"<style>\n{_CSS}</style>", "</head>", "<body>",
        "<header>", f"<h1>{_esc(title)}</h1>", f'<p class="summary">{summary}</p>', _sources(report.sources),
        "</header>",
        *(_task_section(i, task, report) for i, task in enumerate(report.tasks)),
        (f"<footer>repspace {_esc(version('repspace'))} · score intervals: seeded bootstrap over the task's units; "
         f"comparisons: paired bootstrap interval of a − b and paired randomization test, p-values "
         f"Holm-corrected across each task's pairs; * p ≤ {report.significance:g} · METRICS.md defines each "
         f"metric</footer>"),
        "</body>", "</html>", "",
    ]
    return "\n".join(p for p in parts if p)


def write_eval_report_html(path: str | Path, report: ResultsReport, **kwargs: Any) -> Path:
    """Write :func:`eval_report_html` to ``path`` atomically (a reader never sees half a page); returns the path.

    Parameters
    ----------
    path : str or Path
        Where to write, e.g. ``report.html`` (its folder is created if missing).
    report : ResultsReport
    **kwargs
        ``title``: as in :func:`eval_report_html`.

    Examples
    --------
    >>> import os, tempfile
    >>> from repspace.workflows.evaluate import ModelRow, ResultsReport, TaskReport
    >>> report = ResultsReport((TaskReport("sts:x", "test", (ModelRow("a", "a.json", "spearman", 0.5),)),))
    >>> p = write_eval_report_html(os.path.join(tempfile.mkdtemp(), "report.html"), report)
    >>> p.name, p.read_text(encoding="utf-8").count('<section class="task"')
    ('report.html', 1)
    """
    page = eval_report_html(report, **kwargs).encode("utf-8")
    path = Path(path)
    write_atomic(path, lambda f: f.write(page), durable=True)
    return path


# -- text and numbers ----------------------------------------------------------------------------


def _esc(text: Any) -> str:
    """User text as HTML: characters HTML cannot carry made visible escapes, then HTML-escaped."""
    return html.escape(_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text)))


def _fixed(value: float | None, fmt: str = ".4f") -> str:
    return "—" if value is None or not math.isfinite(value) else format(value, fmt)


def _num(value: float | int | None, fmt: str = ".4f", cls: str = "num") -> str:
    """A numeric cell: the value shown with ``fmt``, its exact value in ``data-value``."""
    if value is None:
        return f'<td class="{cls}">—</td>'
    shown = f"{value:,}" if isinstance(value, int) else _fixed(value, fmt)
    return f'<td class="{cls}" data-value="{value!r}">{shown}</td>'


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return '<td class="num ci">—</td>'
    return f'<td class="num ci" data-low="{low!r}" data-high="{high!r}">[{_fixed(low)}, {_fixed(high)}]</td>'


def _sources(sources: tuple[str, ...]) -> str:
    if not sources:
        return ""
    items = "".join(f"<li>{_esc(s)}</li>" for s in sources)
    return f'<dl class="provenance"><dt>sources</dt><dd><ul>{items}</ul></dd></dl>'


# -- a task ----------------------------------------------------------------------------------------


def _task_section(i: int, task: TaskReport, report: ResultsReport) -> str:
    metrics = ", ".join(_esc(m) for m in task.main_metrics)
    out = [f'<section class="task" id="task-{i + 1}" data-task="{_esc(task.task)}" data-split="{_esc(task.split)}">',
           f"<h2>{_esc(task.task)} <small>({_esc(task.split)}) · {metrics}</small></h2>",
           _models_table(task), _forest(task, i)]
    if task.comparisons:
        out.append(_comparisons_table(task, report.significance, report.level))
    if task.note:
        out.append(f'<p class="caption note">{_esc(task.note)}</p>')
    out += [_parts_table(row) for row in task.rows if row.parts and row.parts.get("values")]
    out.append("</section>")
    return "\n".join(out)


def _models_table(task: TaskReport) -> str:
    levels = {r.level for r in task.rows if r.level is not None}
    ci = f"{levels.pop():.0%} CI" if len(levels) == 1 else "CI"
    head = (f"<tr><th>model</th><th>score</th><th>{ci}</th><th>n</th><th>main metric</th><th>source</th></tr>")
    body = [f'<tr><td class="name">{_esc(r.model)}</td>{_num(r.main_score)}{_interval(r.ci_low, r.ci_high)}'
            f'{_num(r.n_units)}<td>{_esc(r.main_metric)}</td><td class="src">{_esc(r.source)}</td></tr>'
            for r in task.rows]
    return f'<table class="models"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def _comparisons_table(task: TaskReport, significance: float, level: float) -> str:
    head = f"<tr><th>a</th><th>b</th><th>a − b</th><th>{level:.0%} CI</th><th>p (Holm)</th><th></th></tr>"
    body = []
    for c in task.comparisons:
        marked = _significant(c, significance)
        row_class = ' class="significant"' if marked else ""
        body.append(f'<tr{row_class}><td class="name">{_esc(c.a)}</td>'
                    f'<td class="name">{_esc(c.b)}</td>{_num(c.difference, "+.4f")}{_interval(c.ci_low, c.ci_high)}'
                    f'{_num(c.p_value)}<td class="mark">{"*" if marked else ""}</td></tr>')
    how = "from the results' file" if task.comparisons_from == "given" else "computed on the per-unit scores"
    caption = (f"Every pair ({how}): the difference of their main scores, its paired bootstrap interval and the "
               f"Holm-corrected p-value of the paired randomization test; * p ≤ {significance:g}.")
    return (f'<h3>Comparisons</h3><table class="comparisons"><thead>{head}</thead><tbody>{"".join(body)}</tbody>'
            f'</table><p class="caption">{caption}</p>')


def _significant(c: Comparison, significance: float) -> bool:
    return c.p_value is not None and c.p_value <= significance


def _parts_table(row: ModelRow) -> str:
    parts = row.parts or {}
    by = parts.get("by") or "part"
    head = f"<tr><th>{_esc(by)}</th><th>n</th><th>score</th><th>CI</th></tr>"
    body = [f'<tr><td class="name">{_esc(v.get("part", ""))}</td>{_num(v.get("n"))}{_num(v.get("main_score"))}'
            f'{_interval(v.get("ci_low"), v.get("ci_high"))}</tr>' for v in parts.get("values", [])]
    macro = parts.get("macro")
    if isinstance(macro, dict) and macro.get("main_score") is not None:
        body.append(f'<tr class="macro"><td>macro average</td><td class="num"></td>{_num(macro["main_score"])}'
                    f'{_interval(macro.get("ci_low"), macro.get("ci_high"))}</tr>')
    return (f'<h3>{_esc(row.model)} by {_esc(by)}</h3><table class="parts" data-model="{_esc(row.model)}">'
            f'<thead>{head}</thead><tbody>{"".join(body)}</tbody></table>')


# -- the forest plot -------------------------------------------------------------------------------


def _ticks(low: float, high: float) -> list[float]:
    """About five round tick values covering [low, high]."""
    step = 10 ** math.floor(math.log10((high - low) / 5))
    for factor in (1, 2, 5, 10):
        if (high - low) / (step * factor) <= 6:
            step *= factor
            break
    first = math.ceil(low / step - 1e-9)
    return [round(k * step, 12) for k in range(first, math.floor(high / step + 1e-9) + 1)]


def _forest(task: TaskReport, index: int) -> str:
    """Each model's score (dot) and interval (whisker) on one axis, as inline SVG."""
    rows = task.rows
    ends = [x for r in rows for x in (r.main_score, r.ci_low, r.ci_high) if x is not None and math.isfinite(x)]
    low, high = min(ends), max(ends)
    pad = (high - low) * 0.06 if high > low else max(abs(high) * 0.05, 0.05)
    low, high = low - pad, high + pad
    height = _TOP + _ROW * len(rows) + _BOTTOM
    right = _WIDTH - _RIGHT

    def x(v: float) -> float:
        return round(_LABELS + (v - low) / (high - low) * (right - _LABELS), 2)

    bottom = _TOP + _ROW * len(rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="forest plot of {_esc(task.task)}" '
           f'viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" height="{height}" font-family="system-ui,sans-serif" '
           f'font-size="12">']
    for t in _ticks(low, high):
        out.append(f'<line x1="{x(t)}" y1="{_TOP}" x2="{x(t)}" y2="{bottom}" stroke="#e4e4e4"/>'
                   f'<text x="{x(t)}" y="{bottom + 16}" text-anchor="middle" fill="#444">{t:g}</text>')
    out.append(f'<line x1="{_LABELS}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>')
    metric = ", ".join(task.main_metrics)
    out.append(f'<text x="{(_LABELS + right) / 2}" y="{bottom + 36}" text-anchor="middle" fill="#222">'
               f'{_esc(metric)}</text>')
    for k, r in enumerate(rows):
        y = _TOP + _ROW * k + _ROW / 2
        name = r.model if len(r.model) <= _MAX_LABEL else r.model[:_MAX_LABEL - 1] + "…"
        out.append(f'<g class="model"><title>{_esc(r.model)}: {_fixed(r.main_score)}</title>'
                   f'<text x="{_LABELS - 10}" y="{y + 4}" text-anchor="end" fill="#222">{_esc(name)}</text>')
        if r.ci_low is not None and r.ci_high is not None:
            a, b = x(r.ci_low), x(r.ci_high)
            out.append(f'<line x1="{a}" y1="{y}" x2="{b}" y2="{y}" stroke="#4c72b0" stroke-width="2"/>'
                       f'<line x1="{a}" y1="{y - 5}" x2="{a}" y2="{y + 5}" stroke="#4c72b0" stroke-width="2"/>'
                       f'<line x1="{b}" y1="{y - 5}" x2="{b}" y2="{y + 5}" stroke="#4c72b0" stroke-width="2"/>')
        out.append(f'<circle cx="{x(r.main_score)}" cy="{y}" r="5" fill="#c44e52"/></g>')
    out.append("</svg>")
    caption = ("Main score (dot) and its bootstrap interval (whiskers) per model."
               if any(r.ci_low is not None for r in rows) else "Main score per model (the results carry no interval).")
    return f'<figure id="forest-{index + 1}">{"".join(out)}<figcaption>{caption}</figcaption></figure>'
