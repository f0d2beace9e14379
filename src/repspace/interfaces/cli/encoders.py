"""``repspace encoders``: what can turn texts into vectors here."""

from __future__ import annotations

from rich.table import Table

from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import out, print_json
from repspace.interfaces.cli.options import Json


@app.command("encoders")
def encoders_cmd(json: Json = False) -> None:
    """List the encoder specs that --encoder accepts.

    Example: repspace encoders --json
    """
    from repspace.engines.encoders import list_encoders

    entries = list_encoders()
    if json:
        print_json(entries)
        return
    table = Table("spec", "description", "example")
    for e in entries:
        table.add_row(e["usage"], e["description"], e["example"])
    out.print(table)
