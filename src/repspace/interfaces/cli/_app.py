"""The root Typer app and its global options."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from repspace.interfaces.cli._common import settings
from repspace.interfaces.cli.options import GroupedTyper

app = typer.Typer(
    name="repspace",
    help=(
        "repspace: embed, store and search representation spaces.\n\n"
        "Examples:\n\n"
        "  repspace demo\n\n"
        "  repspace ingest docs docs.jsonl --text-col body\n\n"
        "  repspace search docs 'how do I parse dates' -k 5 --where \"year >= 2020\""
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(
    store: Annotated[
        Optional[Path],
        typer.Option("--store", envvar="REPSPACE_STORE", help="Store file (default: ~/.local/share/repspace/store.db)."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or notes on stderr (warnings still show).")] = False,
    threads: Annotated[
        Optional[int], typer.Option("--threads", min=1, help="CPU threads for encoders, BLAS and FAISS.")
    ] = None,
) -> None:
    """Global options apply to every command."""
    settings.store, settings.quiet, settings.threads = store, quiet, threads
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if threads is not None:
        from repspace.core.threads import set_threads

        set_threads(threads)


def command_group(name: str, help: str) -> GroupedTyper:
    """The group ``repspace NAME ...`` of subcommands, added to the root app (called bare, it shows its help);
    its commands may name option groups (:mod:`~repspace.interfaces.cli.options`)."""
    group = GroupedTyper(help=help, no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(group, name=name)
    return group
