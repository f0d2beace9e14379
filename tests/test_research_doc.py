"""docs/RESEARCH.md names only what exists: every function, command, option and test of its tables.

Each table row maps a method of the research to its public function(s), its CLI command (or ``-``) and the
test(s) that check it against an independent reference. A row naming something that is not there (a renamed
function, a removed option, a test that moved) would send a reader to nothing, so every name is resolved here:
functions by importing the public module and reading its ``__all__``, commands by running ``repspace ... --help``
through Typer's ``CliRunner`` (one process) and walking click's command tree for the options, tests by parsing
their file with ``ast``.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "RESEARCH.md"
#: The public capability modules (``src/repspace/<name>.py``): a function path must start with one of them.
PUBLIC = frozenset(p.stem for p in (ROOT / "src" / "repspace").glob("*.py") if p.stem != "__init__")
CELL_SPLIT = re.compile(r"(?<!\\)\|")  # a pipe inside a cell is written \|
CODE = re.compile(r"`([^`]+)`")
PAPER = re.compile(r"\bS\d{3}\b")
COLUMNS = ("method", "function", "cli", "test")


@dataclass(frozen=True)
class Row:
    """One method's row: the names its cells give in backticks, and where it is in the page."""

    line: int
    method: str
    functions: tuple[str, ...]
    commands: tuple[str, ...]
    cli_cell: str
    tests: tuple[str, ...]

    def __str__(self) -> str:
        return f"docs/RESEARCH.md:{self.line} ({self.method[:60]})"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in CELL_SPLIT.split(line.strip().strip("|"))]


def parse_rows(text: str) -> list[Row]:
    """The rows of every table whose header has Method, Function, CLI and Test columns."""
    rows: list[Row] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        header = [c.lower() for c in _cells(lines[i])] if lines[i].lstrip().startswith("|") else []
        where = {name: next((j for j, c in enumerate(header) if c.startswith(name)), None) for name in COLUMNS}
        if not header or None in where.values():
            i += 1
            continue
        i += 2  # the header and its |---| line
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            cells = _cells(lines[i])
            assert len(cells) == len(header), f"docs/RESEARCH.md:{i + 1}: {len(cells)} cells, header has {len(header)}"
            rows.append(Row(
                line=i + 1,
                method=cells[where["method"]],
                functions=tuple(CODE.findall(cells[where["function"]])),
                commands=tuple(CODE.findall(cells[where["cli"]])),
                cli_cell=cells[where["cli"]],
                tests=tuple(CODE.findall(cells[where["test"]])),
            ))
            i += 1
    return rows


@cache
def rows() -> tuple[Row, ...]:
    return tuple(parse_rows(DOC.read_text(encoding="utf-8")))


def function_problem(path: str) -> str | None:
    """Why ``repspace.<module>.<name>[.<attribute>...]`` does not name a public object, or None when it does."""
    parts = path.split(".")
    if len(parts) < 3 or parts[0] != "repspace" or parts[1] not in PUBLIC:
        return f"{path!r} is not repspace.<public module>.<name> (public modules: {', '.join(sorted(PUBLIC))})"
    module = importlib.import_module(f"repspace.{parts[1]}")
    if parts[2] not in module.__all__:
        return f"{parts[2]!r} is not in repspace.{parts[1]}.__all__"
    obj = module
    for i, part in enumerate(parts[2:], start=2):
        if not hasattr(obj, part):
            return f"{'.'.join(parts[:i])} has no attribute {part!r}"
        obj = getattr(obj, part)
    return None


@cache
def _cli() -> tuple[Any, Any, Any]:
    """The Typer app, its click command tree and a runner, built once."""
    import typer.main
    from typer.testing import CliRunner

    from repspace.interfaces.cli import app

    return app, typer.main.get_command(app), CliRunner()


@cache
def _help(path: tuple[str, ...]) -> tuple[int, str]:
    """Exit code and output of ``repspace PATH --help``, run once per command."""
    app, _, runner = _cli()
    result = runner.invoke(app, [*path, "--help"])
    return result.exit_code, result.output


def command_problem(command: str) -> str | None:
    """Why ``repspace SUB [SUB] [--option [value] ...]`` is not a command with those options, or None."""
    _, root, _ = _cli()
    words = command.split()
    if not words or words[0] != "repspace":
        return f"{command!r} does not start with 'repspace'"
    first_option = next((i for i, w in enumerate(words) if w.startswith("-")), len(words))
    path = words[1:first_option]
    options = [w for w in words[first_option:] if w.startswith("-")]
    cmd = root
    for i, word in enumerate(path):
        if not hasattr(cmd, "commands"):  # a leaf command (typer >= 0.29 has its own copy of click's classes)
            return f"'repspace {' '.join(path[:i])}' takes no subcommand, and {word!r} would be one"
        if word not in cmd.commands:
            return f"'repspace {' '.join(path[:i + 1])}' is not a command"
        cmd = cmd.commands[word]
    code, output = _help(tuple(path))
    if code != 0 or "Usage:" not in output:
        return f"'repspace {' '.join(path)} --help' exited {code}: {output.strip()[:200]}"
    known = {opt for param in cmd.params for opt in (*param.opts, *param.secondary_opts)}
    missing = [o for o in options if o not in known]
    if missing:
        return f"'repspace {' '.join(path)}' has no option {', '.join(missing)}"
    return None


@cache
def _tests_in(file: Path) -> frozenset[str]:
    tree = ast.parse(file.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names.update(f"{node.name}::{m.name}" for m in node.body
                         if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"))
    return frozenset(names)


def named_test_problem(node_id: str) -> str | None:
    """Why ``tests/<path>.py::<name>`` (or ``::<Class>::<name>``) is not a test in that file, or None."""
    file, sep, name = node_id.partition("::")
    if not (sep and file.startswith("tests/") and file.endswith(".py") and name):
        return f"{node_id!r} is not tests/<path>.py::<test name>"
    path = ROOT / file
    if not path.is_file():
        return f"{file} does not exist"
    if name not in _tests_in(path):
        return f"{file} has no test {name!r}"
    return None



def test_the_page_has_its_tables() -> None:
    found = rows()
    assert len(found) >= 40, f"only {len(found)} rows parsed from {DOC}: has the table header changed?"
    assert len({r.line for r in found}) == len(found)


def test_every_row_names_a_paper_a_function_and_a_test() -> None:
    problems = []
    for row in rows():
        if not PAPER.search(row.method):
            problems.append(f"{row}: the method cites no S-id")
        if not row.functions or not all(f.startswith("repspace.") for f in row.functions):
            problems.append(f"{row}: the function cell needs `repspace.<module>.<name>` names only")
        if not row.tests:
            problems.append(f"{row}: no test named (a method without a test goes in 'Not done')")
        if not row.commands and row.cli_cell != "-":
            problems.append(f"{row}: the CLI cell is neither `repspace ...` nor -")
    assert not problems, "\n".join(problems)


def test_every_function_is_a_public_name() -> None:
    problems = [f"{row}: {p}" for row in rows() for f in row.functions if (p := function_problem(f))]
    assert not problems, "\n".join(problems)


def test_every_command_and_option_exists() -> None:
    problems = [f"{row}: {p}" for row in rows() for c in row.commands if (p := command_problem(c))]
    assert not problems, "\n".join(problems)


def test_every_named_test_exists() -> None:
    problems = [f"{row}: {p}" for row in rows() for t in row.tests if (p := named_test_problem(t))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("check", "name", "message"), [
    (function_problem, "repspace.search.no_such_function", "not in repspace.search.__all__"),
    (function_problem, "repspace.search.FunnelIndex.no_such_method", "has no attribute 'no_such_method'"),
    (function_problem, "repspace.engines.search.mmr", "not repspace.<public module>.<name>"),
    (function_problem, "repspace.search._stages", "not in repspace.search.__all__"),
    (command_problem, "repspace no-such-command", "is not a command"),
    (command_problem, "repspace eval no-such-task", "is not a command"),
    (command_problem, "repspace search extra", "takes no subcommand"),
    (command_problem, "repspace search --no-such-option", "has no option --no-such-option"),
    (command_problem, "search --mmr", "does not start with 'repspace'"),
    (named_test_problem, "tests/engines/search/test_mmr.py::test_no_such_test", "has no test 'test_no_such_test'"),
    (named_test_problem, "tests/engines/search/test_no_such_file.py::test_x", "does not exist"),
    (named_test_problem, "tests/engines/search/test_mmr.py", "is not tests/<path>.py::<test name>"),
])
def test_the_checks_reject_what_does_not_exist(check, name, message) -> None:
    problem = check(name)
    assert problem is not None and message in problem, problem


@pytest.mark.parametrize(("check", "name"), [
    (function_problem, "repspace.search.mmr"),
    (function_problem, "repspace.search.FunnelIndex.search"),
    (command_problem, "repspace eval retrieval --hybrid --lexical-weight 0.5"),
    (command_problem, "repspace learn word2vec --sg"),
    (named_test_problem, "tests/engines/search/test_mmr.py::test_matches_from_scratch_reference"),
])
def test_the_checks_accept_what_exists(check, name) -> None:
    assert check(name) is None


def test_a_table_row_is_parsed_cell_by_cell_with_escaped_pipes() -> None:
    page = "\n".join([
        "| Method (paper) | Function | CLI | Test | Reference | Ours |",
        "|---|---|---|---|---|---|",
        r"| An axis (S099) | `repspace.interpret.axis`, `repspace.interpret.polar` | - | "
        r"`tests/a.py::test_b` | abs \|ρ\| 0.27 | 0.57 |",
        "",
        "| Not | a | method | table |",
    ])
    (row,) = parse_rows(page)
    assert row.line == 3 and row.method == "An axis (S099)" and row.cli_cell == "-" and row.commands == ()
    assert row.functions == ("repspace.interpret.axis", "repspace.interpret.polar")
    assert row.tests == ("tests/a.py::test_b",)
