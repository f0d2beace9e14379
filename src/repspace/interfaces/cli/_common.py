"""Shared pieces of the CLI: the store option, output, progress and error lines.

Everything the CLI prints for people goes through :data:`out` (stdout) or
:data:`err` (stderr), two :class:`DataConsole` objects: every string they draw,
in a table cell, a title or a line, is shown as it is (never read as Rich markup
or emoji codes) with its control characters escaped (``\\x1b``), so that ids,
texts and metadata cannot style, move, link or rewrite the terminal. Styling is
the CLI's own business: it passes ``style=`` or builds a ``rich.text.Text``.
``--json`` output is written by :func:`print_json`, exact JSON.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
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
from repspace.core.printable import escape_controls, excerpt
from repspace.core.progress import Progress

if TYPE_CHECKING:
    from repspace.workflows.evaluate import EvalReport

#: The SPACE argument of the commands that read one stored space.
SpaceArg = Annotated[str, typer.Argument(help="The space.")]

#: ``--ray-address`` of the commands whose ``--backend ray`` runs a pass on a Ray cluster.
RayAddress = Annotated[Optional[str], typer.Option(help="With --backend ray: the cluster, host:port, "
                                                        "ray://host:port or auto (default: $RAY_ADDRESS, "
                                                        "else a local Ray).")]

#: ``--layers`` of the commands that read an encoder's layers (``--encoder``).
EncoderLayers = Annotated[str, typer.Option(help="With --encoder: 'all' or layer indexes like 0,3,-1.")]

#: ``--texts`` of the commands that read an encoder's layers (``--encoder``).
EncoderTexts = Annotated[Optional[Path], typer.Option(help="With --encoder: the texts (.txt one per line, .jsonl, "
                                                           ".csv or .parquet).")]

#: ``--json`` of the commands whose JSON keys are METRICS.md's names.
MetricsJson = Annotated[bool, typer.Option("--json", help="Print JSON (METRICS.md names).")]

#: Characters JSON may leave raw in a string that a terminal acts on (DEL and the C1 controls: U+009B is a CSI).
_RAW_CONTROLS_IN_JSON = re.compile("[\x7f-\x9f]")


class DataConsole(Console):
    """A Rich console for data: a string is drawn as it is, with its control characters escaped.

    Rich reads every string it renders (table cells, titles, ``print``) as
    markup (``[bold]``, ``[link=...]``) and replaces ``:emoji:`` codes, and passes
    ``ESC`` and the other controls to the terminal. Here :meth:`render_str`, the
    one door all of those go through, turns both off and escapes the controls.

    Examples
    --------
    >>> import io
    >>> c = DataConsole(file=io.StringIO(), width=60)
    >>> c.print("[bold]id[/bold] :smile: \\x1b[31mred\\x1b]8;;http://x\\x07")
    >>> c.file.getvalue()
    '[bold]id[/bold] :smile: \\\\x1b[31mred\\\\x1b]8;;http://x\\\\x07\\n'
    """

    def render_str(self, text: str, **options: Any) -> Any:
        options["markup"] = False
        options["emoji"] = False
        return super().render_str(escape_controls(text), **options)


out = DataConsole(soft_wrap=True)
err = DataConsole(stderr=True, soft_wrap=True)


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
    """JSON on stdout (one document), nothing else.

    Characters are written as they are (UTF-8), except that DEL and the C1
    controls are written as JSON escapes (``\\u009b``) like the C0 ones
    (``\\u001b``): the same JSON value, which a terminal cannot act on.

    Examples
    --------
    >>> print_json({"id": "café/北", "text": "\\x1b[31m\\x9b"})
    {
      "id": "café/北",
      "text": "\\u001b[31m\\u009b"
    }
    """
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    text = _RAW_CONTROLS_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    sys.stdout.write(text + "\n")


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


def show_saved(report: EvalReport, output_dir: Path | None = None) -> None:
    """The tail of an eval command: a line for the results ``--save`` recorded in the store and one for the MTEB
    result files ``--output-dir`` wrote (none when nothing was), so every eval command words them alike."""
    if report.saved:
        n = len(report.saved)
        note(f"recorded {n} result{'s' if n != 1 else ''} in {settings.store or 'the store'}")
    if report.written:
        n = len(report.written)
        note(f"wrote {n} MTEB result file{'s' if n != 1 else ''} under {output_dir}")


def warn(message: str) -> None:
    """A warning line on stderr, shown even with --quiet."""
    err.print(f"warning: {message}", highlight=False, style="yellow")


def comma_list(text: str) -> list[str]:
    """The items of a comma-separated option (``--measures``, ``--pos`` ...), stripped, empty ones left out.

    Examples
    --------
    >>> comma_list(" good, great,,")
    ['good', 'great']
    """
    return [p.strip() for p in text.split(",") if p.strip()]


def parse_layers(text: str) -> str | list[int]:
    """``--layers``: ``all`` or comma-separated layer indexes (negative from the end)."""
    if text.strip() == "all":
        return "all"
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--layers must be 'all' or comma-separated integers, not {excerpt(text)}") from None
