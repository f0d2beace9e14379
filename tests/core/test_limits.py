"""The tunables live once, in :mod:`repspace.core.limits`, each with a ``#:`` comment saying what it bounds."""

from __future__ import annotations

import ast
from pathlib import Path

import repspace
from repspace.core import limits

SRC = Path(repspace.__file__).parent
LIMITS = SRC / "core" / "limits.py"


def _assigned(tree: ast.Module) -> dict[str, int]:
    """Module-level names bound by an assignment (not an import), with their line numbers."""
    names: dict[str, int] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Name):
                names[target.id] = node.lineno
    return names


def _constants() -> dict[str, int]:
    return {name: line for name, line in _assigned(ast.parse(LIMITS.read_text())).items() if name.isupper()}


def test_limits_defines_constants():
    names = _constants()
    assert {"DEFAULT_EF", "MAX_EF", "EXACT_MAX_ITEMS", "RESCORE_ENTRIES", "DEFAULT_ENCODER"} <= set(names)
    assert all(hasattr(limits, name) for name in names)


def test_every_limit_has_a_doc_comment():
    lines = LIMITS.read_text().splitlines()
    missing = [name for name, line in _constants().items() if not lines[line - 2].lstrip().startswith("#:")]
    assert not missing, f"constants of core/limits.py without a '#:' comment: {missing}"


def test_no_module_defines_a_limit_again():
    names = set(_constants())
    again = []
    for path in sorted(SRC.rglob("*.py")):
        if path == LIMITS:
            continue
        for name, line in _assigned(ast.parse(path.read_text(encoding="utf-8"))).items():
            if name in names:
                again.append(f"{path.relative_to(SRC.parent)}:{line}: {name}")
    assert not again, "defined again instead of imported from repspace.core.limits:\n" + "\n".join(again)
