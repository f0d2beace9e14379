"""The ``repspace`` command line: a thin skin over the Python API.

Every command parses its options, calls one library function and prints the
result (a rich table, or ``--json``). Errors from the library become one line
on stderr and a non-zero exit code: control characters escaped, cut to
:data:`~repspace.core.printable.MESSAGE_LIMIT` characters, and paths shown
relative to the working directory (or home) where they are inside it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["main", "app"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (errors print one line on stderr)."""
    from repspace.core.errors import RepspaceError

    try:
        build_app()(args=argv, prog_name="repspace", standalone_mode=False)
    except RepspaceError as e:
        _error_line(f"error: {e}")
        return e.exit_code
    except KeyboardInterrupt:
        _error_line("interrupted")
        return 130
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    except Exception as e:  # usage errors arrive here in non-standalone mode
        return _last_resort(e)
    return 0


def _error_line(text: str) -> None:
    """One line on stderr: controls escaped, capped, absolute paths under the working directory (or home) shortened."""
    from repspace.core.printable import one_line, shown_paths
    from repspace.interfaces.cli._common import err

    err.print(one_line(shown_paths(text)), highlight=False)


def _last_resort(e: Exception) -> int:
    """One line on stderr for what the library did not turn into a :class:`RepspaceError`.

    Usage errors (a bad option value, a missing argument) print click's message on one
    line; an abort (a prompt answered no) prints ``aborted``; running out of memory, a
    file the system refuses, or too deeply nested input say so; a full disk (``ENOSPC``,
    SQLite's ``SQLITE_FULL``) says "disk full". Anything else is a bug: one line names it,
    and ``REPSPACE_TRACEBACK=1`` shows the traceback.
    """
    import os

    import click
    import typer

    from repspace.core.errors import is_disk_full
    from repspace.core.printable import shown_path

    line = _error_line
    # typer >= 0.29 raises its own copies of click's exceptions, all TyperExceptions; a usage error has a ctx
    if isinstance(e, (click.exceptions.ClickException, typer.TyperException)):
        ctx = getattr(e, "ctx", None)
        where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        line(f"error: {e.format_message()}{where}")
        return e.exit_code
    if isinstance(e, (click.exceptions.Abort, typer.Abort)):
        line("aborted")
        return 1
    if os.environ.get("REPSPACE_TRACEBACK"):
        raise e
    if isinstance(e, MemoryError):
        line("error: out of memory (try a smaller batch, fewer items, or a machine with more memory)")
        return 1
    if isinstance(e, RecursionError):
        line("error: the input is nested too deeply to read")
        return 1
    filename = getattr(e, "filename", None)
    shown = shown_path(os.fsdecode(filename)) if isinstance(filename, (str, bytes)) and filename else ""
    if is_disk_full(e):
        line(f"error: disk full{f' writing {shown}' if shown else ''}: free some space and run again")
        return 1
    if isinstance(e, OSError):
        line(f"error: {e.strerror or e}{':' if shown else ''}{' ' + shown if shown else ''}")
        return 1
    line(f"error: unexpected {type(e).__name__}: {e} (a bug: please report it; REPSPACE_TRACEBACK=1 shows where)")
    return 1


def __getattr__(name: str):  # lazy: importing repspace.interfaces.cli does not build the app
    if name == "app":
        return build_app()
    raise AttributeError(name)


def build_app() -> Any:
    """The Typer app with every command registered (each command module adds its own on import)."""
    from repspace.interfaces.cli import (  # noqa: F401 - imported to register their commands
        align,
        align_more,
        analyze,
        analyze_concepts,
        analyze_compat,
        analyze_chain,
        analyze_dimension,
        analyze_features,
        analyze_local,
        bench,
        compare,
        demo,
        derive,
        diagnose,
        distill,
        encoders,
        eval,
        eval_tasks,
        eval_threshold,
        eval_report,
        eval_fewshot,
        eval_intrinsic,
        eval_probing,
        eval_robustness,
        index,
        ingest,
        interpret,
        interpret_axes,
        interpret_dictionary,
        interpret_universality,
        layers,
        layers_deviation,
        layers_lens,
        layers_pooling,
        layers_profile,
        learn,
        learn_derived,
        learn_graphs,
        rerank,
        search,
        serve,
        spaces,
        transform,
        upgrade,
    )
    from repspace.interfaces.cli._app import app

    return app
