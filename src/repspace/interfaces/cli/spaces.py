"""Commands about spaces: list, describe, export, delete."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from repspace.core.errors import InputError
from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import note, open_store, out, print_json

JSON = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


@app.command("spaces")
def spaces_cmd(json: JSON = False) -> None:
    """List the spaces in the store.

    Example: repspace spaces --json
    """
    infos = open_store(create=False).spaces()
    if json:
        print_json([i.to_dict() for i in infos])
        return
    table = Table("name", "items", "dim", "metric", "encoder", "generation")
    for i in infos:
        table.add_row(i.name, str(i.count), str(i.dim), i.metric.value, str(i.provenance.get("encoder", "")),
                      str(i.generation))
    out.print(table)


@app.command("info")
def info_cmd(space: Annotated[str, typer.Argument(help="Space name.")], json: JSON = False) -> None:
    """Describe a space: size, dimension, metric and the recipe that made it.

    A sparse space also shows its non-zeros, empty rows and expected FLOPs (sparse.*); a
    multi-vector space its tokens per item (mean, max) and bytes (multivector.*).

    Example: repspace info glove --json
    """
    from repspace.workflows.describe import describe_space

    described = describe_space(open_store(create=False).space(space))
    info = described.info
    if json:
        print_json(described.to_dict())
        return
    table = Table(show_header=False)
    for key in ("name", "count", "dim", "metric", "dtype", "generation", "created_at", "updated_at"):
        value = getattr(info, key)
        table.add_row(key, str(value.value if hasattr(value, "value") else value))
    for key, value in info.provenance.items():
        table.add_row(f"provenance.{key}", str(value))
    if described.sparse is not None:
        table.add_row("layout", "sparse")
        for key, value in described.sparse.to_dict().items():
            shown = f"{value:.4g}" if isinstance(value, float) else str(value)
            if key == "empty_rows" and value:
                shown += " (rows with no non-zero weight: they match no query)"
            table.add_row(f"sparse.{key}", shown)
    if described.multivector is not None:
        table.add_row("layout", "multivector")
        for key, value in described.multivector.to_dict().items():
            table.add_row(f"multivector.{key}", f"{value:.4g}" if isinstance(value, float) else str(value))
    out.print(table)


@app.command("export")
def export_cmd(
    space: Annotated[str, typer.Argument(help="Space name.")],
    path: Annotated[Path, typer.Argument(help="Output file (.parquet); a missing folder is created.")],
    flatten: Annotated[bool, typer.Option(
        "--flatten/--no-flatten",
        help="Also write each top-level metadata key as a typed column (keys of mixed types as JSON text).")] = True,
    json: JSON = False,
) -> None:
    """Write a space (ids, texts, vectors, metadata) to Parquet for pandas, polars, LanceDB or Atlas.

    The vector field's metadata names the metric (LanceDB: search with the
    distance_type it gives). The whole metadata is always in the JSON column
    `metadata`.

    Examples: repspace export docs docs.parquet ; repspace export docs out/docs.parquet --no-flatten
    """
    from repspace.workflows.export import export_parquet

    result = export_parquet(open_store(create=False).space(space), path, flatten=flatten)
    if json:
        print_json(result)
    else:
        note(f"wrote {result['rows']} rows to {result['path']} (metric {result['metric']})")


@app.command("delete")
def delete_cmd(
    space: Annotated[str, typer.Argument(help="Space name.")],
    ids: Annotated[Optional[list[str]], typer.Argument(help="Item ids to delete (none: the whole space).")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete a whole space without asking.")] = False,
    missing_ok: Annotated[bool, typer.Option("--missing-ok", help="Ignore ids that are not in the space.")] = False,
    json: JSON = False,
) -> None:
    """Delete items from a space, or the whole space.

    Examples: repspace delete docs id1 id2 ; repspace delete docs --yes
    """
    store = open_store(create=False)
    sp = store.space(space)
    if ids:
        n = sp.delete(ids, missing_ok=missing_ok)
        result = {"space": space, "deleted": n}
    else:
        if not yes:
            if not sys.stdin.isatty():
                raise InputError(f"refusing to delete space {space!r} without --yes")
            typer.confirm(f"Delete space {space!r} and all its items?", abort=True)
        info = store.delete_space(space)
        result = {"space": space, "deleted_space": True, "items": info.count}
    if json:
        print_json(result)
    else:
        note(", ".join(f"{k}={v}" for k, v in result.items()))
