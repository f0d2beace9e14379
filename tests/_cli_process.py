"""The real ``repspace`` command for the security tests (tests/security/test_cli_*.py).

:func:`cli` runs it as a child process (the interpreter running the tests, so a
``PYTHONPATH`` naming another source tree is inherited); :func:`run` calls
``main()`` in this process, for the many cases where a process per case would
only cost time. :func:`store_dump` is the whole logical content of a store, to
show that a refused command changed nothing.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from repspace.interfaces.cli import main

#: The script a child runs: the installed console script does exactly this.
_MAIN = "import sys; from repspace.interfaces.cli import main; sys.exit(main())"


@dataclass(frozen=True)
class Result:
    """What a run of the command gave: its exit code and what it wrote on stdout and stderr."""

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
    """``main(["-q", *args])`` in this process."""
    code = main(["-q", *args])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


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
