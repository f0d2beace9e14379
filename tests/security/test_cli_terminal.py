"""The terminal is not an attack surface (issue 29, part 2).

Whatever a store holds, the CLI shows it as text: Rich markup (``[bold]``, ``[link=...]``) and ``:emoji:`` codes are
printed as written, and control characters (``ESC`` sequences, OSC-8 hyperlinks, the C1 CSI, BEL) are shown as
escapes, in every table and line. ``--json`` stays exact JSON. The error line is one line, its controls escaped,
capped, and with paths relative to the working directory.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from _cli_process import cli, one_error_line, run_quiet

from repspace import Store
from repspace.interfaces.cli import main

#: What a terminal acts on: ESC (CSI, OSC-8 hyperlinks), the one-byte C1 CSI, BEL, a carriage return.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Longest error line accepted: printable.MESSAGE_LIMIT (1,000 characters) and what a cut line says of its length.
LONGEST_ERROR = 1_100
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\"
ITEMS = [
    ("[bold]", f"{OSC8} and \x1b[31mred\x1b[0m", {"k": "\x1b[5mblink", "[b]": ":smile:"}),
    ("[/bold]", "[red]x[/red] [link=https://evil.example/]here[/link]", {"n": 1}),
    ("bell", "ring\x07 \x9b2J cleared? \rback", {"tag": "[/]"}),
    (":thumbs_up:", "emoji code", {}),
]


@pytest.fixture()
def db(tmp_path: Path) -> str:
    path = tmp_path / "s.db"
    store = Store(path)
    sp = store.create_space("s", dim=3)
    x = np.random.default_rng(1).standard_normal((len(ITEMS), 3)).astype(np.float32) + 1.0
    sp.add([i for i, _, _ in ITEMS], x, texts=[t for _, t, _ in ITEMS], metadata=[m for _, _, m in ITEMS])
    store.close()
    return str(path)


def _query() -> str:
    return json.dumps([1.0, 1.0, 1.0])


def test_search_shows_markup_and_escape_sequences_as_text(db):
    r = cli("--store", db, "search", "s", "--vector", _query(), "-k", "10", env={"COLUMNS": "1000"})  # a pipe
    assert r.code == 0 and r.err == "", r
    assert RAW.search(r.out) is None, RAW.findall(r.out)
    for shown in ("[bold]", "[/bold]", "[red]x[/red]", "[link=https://evil.example/]here[/link]", ":thumbs_up:",
                  "\\x1b]8;;https://evil.example/\\x1b\\click me", "\\x1b[31mred", "ring\\x07", "\\x9b2J",
                  "\\rback", ":smile:", "[/]"):
        assert shown in r.out, shown


def test_search_json_is_the_exact_data_and_never_a_raw_control(db):
    r = cli("--store", db, "search", "s", "--vector", _query(), "-k", "10", "--json")
    assert r.code == 0, r
    assert RAW.search(r.out) is None  # C0 as JSON's \u001b, and DEL and C1 too (\u009b)
    got = {h["id"]: (h["text"], h["metadata"]) for h in json.loads(r.out)}
    assert got == {i: (t, m) for i, t, m in ITEMS}


def test_every_table_and_line_escapes_data(capsys, db, tmp_path):
    name = tmp_path / "[red]evil\x1b]8;;x\x07.jsonl"  # a file name is data too: info shows it (provenance.source)
    name.write_text(json.dumps({"id": "[bold]", "vec": [1.0, 2.0]}) + "\n", encoding="utf-8")
    r = run_quiet(capsys, "--store", db, "ingest", "f", str(name), "--vector-col", "vec")
    assert r.code == 0, r.err
    r = run_quiet(capsys, "--store", db, "info", "f")
    assert r.code == 0 and "[red]evil\\x1b]8;;x\\x07.jsonl" in r.out and RAW.search(r.out) is None, r.out
    r = run_quiet(capsys, "--store", db, "interpret", "axis", "s", "--pos", "[bold]", "--neg", "[/bold]")
    assert r.code == 0, r.err
    assert "[bold]" in r.out and "[/bold]" in r.out and RAW.search(r.out) is None
    code = main(["--store", db, "export", "s", str(tmp_path / "[blink]out\x1b[2J.parquet")])  # a note on stderr
    err = capsys.readouterr().err
    assert code == 0 and "[blink]out\\x1b[2J.parquet" in err and RAW.search(err) is None, err


def test_the_error_line_is_one_line_with_controls_escaped(tmp_path):
    bad = tmp_path / "no\nsuch\x1b[2J\x9bfile.jsonl"
    r = cli("--store", str(tmp_path / "s.db"), "ingest", "s", str(bad), cwd=tmp_path)
    one_error_line(r, 3, "no such file: no\\nsuch\\x1b[2J\\x9bfile.jsonl")
    assert RAW.search(r.err) is None


def test_the_error_line_names_paths_relative_to_the_working_directory(tmp_path):
    r = cli("--store", str(tmp_path / "typo" / "s.db"), "info", "s", cwd=tmp_path)
    one_error_line(r, 3, "no store at typo/s.db ")
    assert str(tmp_path) not in r.err


def test_the_error_line_is_capped(capsys, db):
    huge = "x" * 100_000
    r = cli("--store", db, "info", huge)  # an argument of 100,000 characters, echoed in the error
    one_error_line(r, 3, "no space 'xxx")
    assert len(r.err) <= LONGEST_ERROR, len(r.err)
    r = run_quiet(capsys, "--store", db, "search", "s", "--id", "y" * 10_000_000)  # 10 MB, in process
    one_error_line(r, 3, "is not in space 's'")
    assert len(r.err) <= LONGEST_ERROR, len(r.err)
