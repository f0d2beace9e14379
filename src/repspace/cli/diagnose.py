"""``repspace diagnose``: the geometry of a stored space, in one table or as JSON."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.cli._app import app
from repspace.cli._common import open_store, out, print_json


@app.command("diagnose")
def diagnose_cmd(
    space: Annotated[str, typer.Argument(help="The space.")],
    k: Annotated[int, typer.Option("-k", help="Neighbourhood size of the hubness metrics.")] = 10,
    exact: Annotated[Optional[bool], typer.Option("--exact/--hnsw",
                                                  help="Exact or HNSW neighbour graphs (default: exact up to "
                                                       "50,000 items).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON (METRICS.md names).")] = False,
) -> None:
    """Hubness, isotropy, intrinsic dimension, rank, spectrum and uniformity of a space, with readings.

    Examples:

      repspace diagnose docs

      repspace diagnose glove -k 20 --json
    """
    from repspace.diagnose import diagnose_space

    report = diagnose_space(open_store().space(space), k=k, exact=exact)
    if json:
        print_json(report.to_dict())
        return
    data = report.to_dict()
    table = Table("metric", "value", title=f"{space}: {report.n:,} × {report.d} ({report.metric})")
    for key, value in data.items():
        if key in ("readings", "n", "d", "metric") or isinstance(value, list):
            continue
        if isinstance(value, dict):
            value = value.get("value", value)
        table.add_row(key, f"{value:.4g}" if isinstance(value, float) else str(value))
    out.print(table)
    for line in report.readings:
        out.print(f"- {line}")
