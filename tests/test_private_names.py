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


# ------------------------------------------------------------------ private attributes of other modules

_ACCESSORS = frozenset({"getattr", "setattr", "hasattr", "delattr"})

#: Offences in files being rewritten by others right now; they are fixed there.
ALLOWED: frozenset[str] = frozenset()  # issue 30: being rewritten


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _own_names(tree: ast.AST) -> set[str]:
    """The names a module defines itself: defs, classes, assigned names, imports, ``self._x``/``cls._x``."""
    names: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif (isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del))
              and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls")):
            names.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.alias):
            names.add(n.asname or n.name.split(".")[-1])
    return names


def private_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, what)`` of every private attribute the module does not define itself: ``obj._x``,
    ``getattr(obj, "_x")`` (and ``setattr``/``hasattr``/``delattr``), and private modules of other packages."""
    own = _own_names(tree)
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and _private(n.attr) and n.attr not in own:
            found.append((n.lineno, f".{n.attr}"))
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _ACCESSORS
              and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)
              and _private(n.args[1].value) and n.args[1].value not in own):
            found.append((n.lineno, f'{n.func.id}(..., "{n.args[1].value}")'))
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]
            for m in modules:
                if not m.startswith("repspace") and any(_private(part) for part in m.split(".")):
                    found.append((n.lineno, f"import {m}"))
    return sorted(found)


def test_private_reads_are_found() -> None:
    code = 'import a._b\nx.check()\ny._hidden\ngetattr(z, "_lib")\nself._mine = 1\nself._mine\nhasattr(q, "__len__")\n'
    assert private_reads(ast.parse(code)) == [(1, "import a._b"), (3, "._hidden"), (4, 'getattr(..., "_lib")')]


def test_no_module_reads_a_private_attribute_of_another_module() -> None:
    offences = []
    for path in sorted(SRC.rglob("*.py")):
        where = str(path.relative_to(SRC.parent))
        for line, what in private_reads(ast.parse(path.read_text(encoding="utf-8"))):
            if f"{where} {what}" not in ALLOWED:
                offences.append(f"{where}:{line} {what}")
    assert offences == [], "\n".join(offences)
