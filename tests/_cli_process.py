"""The real ``repspace`` command, for every test that runs it (tests/interfaces/cli, tests/security ...).

:func:`cli` runs it as a child process (the interpreter running the tests, so a
``PYTHONPATH`` naming another source tree is inherited); :func:`run` and
:func:`run_quiet` call ``main()`` in this process, for the many cases where a
process per case would only cost time. :func:`store_dump` is the whole logical
content of a store, to show that a refused command changed nothing.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from repspace.interfaces.cli import main

#: The script a child runs: the installed console script does exactly this.
_MAIN = "import sys; from repspace.interfaces.cli import main; sys.exit(main())"


class Result(NamedTuple):
    """What a run of the command gave: its exit code and what it wrote on stdout and stderr.

    A named tuple, so a test may read ``r.code`` or unpack ``code, out, err = run(...)``.
    """

    code: int
    out: str
    err: str


def cli(*args: str, cwd: str | Path | None = None, env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """``repspace ARGS...`` in a child process (``-q``: no progress bars), decoded as UTF-8 (bad bytes escaped)."""
    proc = subprocess.run([sys.executable, "-c", _MAIN, "-q", *args], capture_output=True, cwd=cwd,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}, timeout=timeout)
    return Result(proc.returncode, proc.stdout.decode("utf-8", "backslashreplace"),
                  proc.stderr.decode("utf-8", "backslashreplace"))


def run(capsys, *args: str) -> Result:
    """``repspace ARGS...`` as ``main(list(args))`` in this process, its output read through pytest's ``capsys``."""
    code = main(list(args))
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def run_quiet(capsys, *args: str) -> Result:
    """``repspace -q ARGS...`` in this process: no progress bars or notes on stderr (warnings still show)."""
    return run(capsys, "-q", *args)


def one_error_line(r: Result, code: int, *fragments: str) -> None:
    """Exit ``code``, nothing on stdout, one ``error: ...`` line on stderr holding every fragment, no traceback."""
    assert r.code == code and r.out == "", r
    lines = r.err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: "), r.err
    assert not r.err.startswith("error: unexpected ") and "Traceback" not in r.err, r.err
    for f in fragments:
        assert f in r.err, (f, r.err)


def store_dump(db: str | Path) -> list[str]:
    """Every table's rows of the store (SQL text, blobs in hex), or ``[]`` when there is no store file."""
    if not Path(db).exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()
