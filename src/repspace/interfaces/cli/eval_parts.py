"""The table of a result split by a column (``repspace eval TASK DATA --by COLUMN``): a row per part, and the
macro average."""

from __future__ import annotations

from typing import Any

from rich.table import Column, Table

from repspace.interfaces.cli._common import note, out


def _ci(interval: Any) -> str:
    return "" if interval is None else f"[{interval.low:.4f}, {interval.high:.4f}]"


def print_parts(report: Any, *, swept: bool = False) -> None:
    """Under the results: for each result with parts, its parts' n, main score and 95% CI, then the macro average.

    A sweep's results (one per codec) are not tabled part by part: a note points to ``--json``.
    """
    results = [r for r in report.results if r.parts is not None]
    if not results:
        return
    if swept:
        note(f"the parts by {results[0].parts.by} of each setting are in --json (repspace.parts)")
        return
    for r in results:
        p = r.parts
        with_ci = p.macro_interval is not None or any(v.interval is not None for v in p.values)
        subject = f": {r.info['subject']}" if len(report.results) > 1 and r.info.get("subject") else ""
        table = Table(p.by, "n", r.main_metric, *([Column("95% CI", no_wrap=True)] if with_ci else []),
                      title=f"{r.task_name} ({r.split}) by {p.by}{subject}")
        for v in p.values:
            table.add_row(v.part, str(v.n), f"{v.main_score:.4f}", *([_ci(v.interval)] if with_ci else []),
                          end_section=v is p.values[-1])
        table.add_row("macro average", f"{p.n_parts} parts", f"{p.macro:.4f}",
                      *([_ci(p.macro_interval)] if with_ci else []))
        out.print(table)
    note("macro average: the mean of the parts' scores (each part weighs the same); its CI resamples units "
         "within each part")
