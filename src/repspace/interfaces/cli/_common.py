"""Shared pieces of the CLI: the store option, output, progress and error lines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import (
    Progress as Bars,
)

from repspace.core.errors import InputError
from repspace.core.progress import Progress

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


@dataclass
class Settings:
    """Global options, set by the root callback."""

    store: Path | None = None
    quiet: bool = False
    threads: int | None = None


settings = Settings()


def open_store(*, create: bool = True) -> Any:
    """The store of ``--store``; commands that only read pass ``create=False`` (a mistyped path is
    then an error, not a new empty store)."""
    from repspace.workflows.store import Store

    return Store(settings.store, create=create)


def print_json(data: Any) -> None:
    """JSON on stdout (one document), nothing else."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def show_progress() -> bool:
    return not settings.quiet and err.is_terminal


@contextmanager
def progress_bar(json_mode: bool = False) -> Iterator[Progress | None]:
    """A ``(phase, done, total)`` callback drawing rich bars on stderr, or None when quiet."""
    if json_mode or not show_progress():
        yield None
        return
    bars = Bars(
        TextColumn("{task.description:>8}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TimeRemainingColumn(), console=err, transient=False,
    )
    tasks: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bars.add_task(phase, total=total)
        bars.update(tasks[phase], completed=done, total=total)

    with bars:
        yield update


def note(message: str) -> None:
    """A line for people on stderr (suppressed by --quiet)."""
    if not settings.quiet:
        err.print(message, highlight=False)


def warn(message: str) -> None:
    """A warning line on stderr, shown even with --quiet."""
    err.print(f"warning: {message}", highlight=False, style="yellow")


def parse_layers(text: str) -> str | list[int]:
    """``--layers``: ``all`` or comma-separated layer indexes (negative from the end)."""
    if text.strip() == "all":
        return "all"
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--layers must be 'all' or comma-separated integers, not {text!r}") from None
