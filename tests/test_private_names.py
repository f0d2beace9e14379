"""Private *names* stay in their package, as import-linter keeps private *modules* there.

import-linter checks modules; ``from repspace.engines.search.hubness import _helper`` names a
public module and so passes it. This test reads every module of the package and fails on an
underscore name imported from another package (the same package's own helpers are fine).
"""

from __future__ import annotations

import ast
from pathlib import Path

import repspace

SRC = Path(repspace.__file__).resolve().parent


def _package(module: str) -> str:
    return module.rsplit(".", 1)[0]


def test_no_module_imports_a_private_name_from_another_package() -> None:
    offences = []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        here = module if path.name == "__init__.py" else _package(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("repspace"):
                continue
            source = node.module or ""
            source_pkg = source if (SRC.parent / source.replace(".", "/")).is_dir() else _package(source)
            if source_pkg == here or here.startswith(source_pkg + "."):
                continue  # its own package, or a subpackage using its parent's helpers
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    offences.append(f"{path.relative_to(SRC.parent)}:{node.lineno} imports {alias.name} from {source}")
    assert offences == [], "\n".join(offences)
