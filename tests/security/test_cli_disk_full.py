"""A full disk is "disk full", exit 1, and the store intact (issue 29, part 2).

The real thing, not a mock: a tmpfs of 1 MiB is mounted in a private mount namespace (``unshare``; as an
unprivileged user with ``--user --map-root-user``), the store lives on it, and the real ``repspace ingest``
writes into it until the file system is full. SQLite then fails with ``SQLITE_FULL`` (usually at COMMIT, writing
the WAL) and a file write with ``ENOSPC``; each must be one line saying "disk full", exit 1, and the store must
still open with every item it had (``PRAGMA integrity_check``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: Runs inside the namespace, the tmpfs mounted at argv[1]; writes what it saw as JSON to argv[2].
DRIVER = textwrap.dedent('''
    import json, sqlite3, subprocess, sys
    from pathlib import Path

    disk, report = Path(sys.argv[1]), Path(sys.argv[2])
    work = report.parent
    db = disk / "s.db"
    MAIN = "import sys; from repspace.interfaces.cli import main; sys.exit(main())"

    def cli(*args):
        p = subprocess.run([sys.executable, "-c", MAIN, "-q", "--store", str(db), *args], capture_output=True,
                           text=True, timeout=300, cwd=work)
        return {"code": p.returncode, "out": p.stdout, "err": p.stderr}

    def listing():
        r = cli("search", "s", "--vector", json.dumps([1.0] * 8), "--exact", "-k", "100000", "--json")
        return sorted((h["id"], h["text"]) for h in json.loads(r["out"])) if r["code"] == 0 else r

    small = work / "small.jsonl"
    small.write_text("".join(json.dumps({"id": f"s{i}", "text": f"kept {i}", "vec": [1.0 + i] * 8}) + "\\n"
                             for i in range(20)))
    out = {"first": cli("ingest", "s", str(small), "--vector-col", "vec")}
    out["before"] = listing()
    for round in range(40):
        big = work / "big.jsonl"
        big.write_text("".join(json.dumps({"id": f"b{round}-{i}", "text": "x" * 2000, "vec": [2.0 + i] * 8}) + "\\n"
                               for i in range(100)))
        out["full"] = cli("ingest", "s", str(big), "--vector-col", "vec")
        if out["full"]["code"] != 0:
            break
        out["before"] = listing()
    out["export"] = cli("export", "s", str(disk / "out.parquet"))
    with sqlite3.connect(db) as c:
        out["integrity"] = c.execute("PRAGMA integrity_check").fetchone()[0]
    out["after"] = listing()
    report.write_text(json.dumps(out))
''')


def _in_namespace(tmp_path: Path) -> dict:
    """Run the driver on a 1 MiB tmpfs in a private mount namespace; skip where the system allows none."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("unshare or mount is not installed: no way to mount a small file system for this test")
    disk, report, driver = tmp_path / "disk", tmp_path / "report.json", tmp_path / "driver.py"
    disk.mkdir()
    driver.write_text(DRIVER)
    script = f'mount -t tmpfs -o size=1m tmpfs "{disk}" || exit 97; exec "{sys.executable}" "{driver}" "{disk}" "{report}"'
    tries = [["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
             ["unshare", "--mount", "sh", "-c", script]]  # root without user namespaces
    refusals = []
    for command in tries:
        p = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if report.exists():
            return json.loads(report.read_text())
        if p.returncode not in (1, 97):  # 1: unshare refused; 97: mount refused
            raise AssertionError(f"the driver failed: {p.stderr[-3000:]}")
        refusals.append(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
    pytest.skip(f"this system permits no private tmpfs mount (unshare/mount refused: {'; '.join(refusals)})")


def test_a_full_disk_is_one_line_exit_1_and_the_store_intact(tmp_path):
    seen = _in_namespace(tmp_path)
    assert seen["first"]["code"] == 0, seen["first"]
    full = seen["full"]
    assert full["code"] == 1 and full["out"] == "", full
    assert full["err"].startswith("error: disk full") and full["err"].count("\n") == 1, full["err"]
    assert "unexpected" not in full["err"] and "bug" not in full["err"]
    assert "disk/s.db" in full["err"] and str(tmp_path) not in full["err"]  # relative to where the user stands
    export = seen["export"]
    assert export["code"] == 1 and export["err"].startswith("error: disk full"), export
    assert export["err"].count("\n") == 1
    assert seen["integrity"] == "ok"
    assert isinstance(seen["before"], list) and len(seen["before"]) >= 20
    assert seen["after"] == seen["before"]  # every item kept, the refused batch wholly out
