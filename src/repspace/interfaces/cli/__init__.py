"""The ``repspace`` command line: a thin skin over the Python API.

Every command parses its options, calls one library function and prints the
result (a rich table, or ``--json``). Errors from the library become one line
on stderr and a non-zero exit code.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["main", "app"]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (errors print one line on stderr)."""
    from repspace.core.errors import RepspaceError
    from repspace.interfaces.cli._common import err

    try:
        build_app()(args=argv, prog_name="repspace", standalone_mode=False)
    except RepspaceError as e:
        err.print(f"error: {e}", highlight=False, markup=False)
        return e.exit_code
    except KeyboardInterrupt:
        err.print("interrupted", highlight=False)
        return 130
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    except Exception as e:  # usage errors arrive here in non-standalone mode
        import click
        from typer._click import (
            exceptions as typer_click,  # typer >= 0.29 raises its own copies of click's
        )

        if isinstance(e, (click.exceptions.ClickException, typer_click.ClickException)):
            e.show(file=sys.stderr)
            return e.exit_code
        if isinstance(e, (click.exceptions.Abort, typer_click.Abort)):
            err.print("aborted", highlight=False)
            return 1
        raise
    return 0


def __getattr__(name: str):  # lazy: importing repspace.interfaces.cli does not build the app
    if name == "app":
        return build_app()
    raise AttributeError(name)


def build_app() -> Any:
    """The Typer app with every command registered (each command module adds its own on import)."""
    from repspace.interfaces.cli import (  # noqa: F401 - imported to register their commands
        align,
        bench,
        compare,
        demo,
        diagnose,
        distill,
        encoders,
        eval,
        index,
        ingest,
        search,
        spaces,
        transform,
        upgrade,
    )
    from repspace.interfaces.cli._app import app

    return app
