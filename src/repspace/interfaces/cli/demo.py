"""``repspace demo``: the main job on data every install has."""

from __future__ import annotations

from typing import Annotated

import typer

from repspace.interfaces.cli._app import app
from repspace.interfaces.cli._common import note, open_store, print_json, progress_bar


@app.command("demo")
def demo_cmd(
    quick: Annotated[bool, typer.Option("--quick", help="500 docstrings and no GloVe (seconds, not minutes).")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print what was done as JSON.")] = False,
) -> None:
    """Embed the standard library's docstrings with MiniLM, store 400k GloVe vectors, and search both.

    Offline; a few minutes on 2 cores; running it again re-embeds nothing.

    Example: repspace --store demo.db demo
    """
    from repspace.workflows.demo import run_demo

    store = open_store()
    note(f"store: {store.path}")
    with progress_bar(json) as bar:
        result = run_demo(store, say=(lambda s: None) if json else print, progress=bar, quick=quick)
    if json:
        print_json(result.to_dict())
